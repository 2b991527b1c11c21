"""The llama.cpp probe's child: load a GGUF through llama-cpp-python's raw API and time decode windows.

Runs only as `python -X faulthandler -m doctor.probe.llamacpp_child ...` (doctor/probe/llamacpp.py starts it):
llama.cpp's own logger writes to stderr (llama_log_set(NULL); the parent parses its buffer lines from there),
one JSON object per line goes to stdout. Protocol, as the ExLlamaV2 probe's: a prompt twice (the first settles
the prompt path), a warm-up window, then `runs` windows of `tokens` tokens, each from an empty cache (more while
their spread is over the settle line, doctor/probe/more_runs.py); each step is llama_decode of one token and a
read of its logits (which synchronizes), timed by this process's clock and by llama.cpp's perf counters (llama_perf_context) over the same window.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time

from doctor.probe.child_events import not_installed, say, start
from doctor.probe.more_runs import timed_runs

FA = {"auto": -1, "off": 0, "on": 1}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--ngl", type=int, default=-1)
    ap.add_argument("--fa", choices=tuple(FA), default="on")
    ap.add_argument("--ctk", default="f16")
    ap.add_argument("--ctv", default="f16")
    ap.add_argument("--ubatch", type=int, default=512)
    a = start(ap, argv, warmup=64)
    try:
        import llama_cpp  # lazy: the child exists to import the engine; the doctor never does
    except ImportError as exc:
        return not_installed("llama-cpp-python", exc)
    llama_cpp.llama_log_set(ctypes.cast(None, llama_cpp.llama_log_callback), ctypes.c_void_p(0))  # type: ignore[arg-type]  # None: a NULL callback, as ctypes takes it
    llama_cpp.llama_backend_init()
    say(event="phase", phase="load")
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers = a.ngl if a.ngl >= 0 else 999
    t = time.perf_counter()
    model = llama_cpp.llama_model_load_from_file(a.model.encode(), mp)
    if not model:
        say(event="error", kind="model-load", message="llama_model_load_from_file returned NULL (see the log)")
        return 4
    load_s = time.perf_counter() - t
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = a.n_ctx, max(a.ubatch, a.prompt), a.ubatch, 1
    cp.flash_attn_type = FA[a.fa]
    cp.type_k = getattr(llama_cpp, f"GGML_TYPE_{a.ctk.upper()}")
    cp.type_v = getattr(llama_cpp, f"GGML_TYPE_{a.ctv.upper()}")
    cp.no_perf = False  # llama_context_default_params() turns the perf counters off
    cp.n_threads = max((os.cpu_count() or 2) // 2, 1)  # as Llama() sets it; the raw default of 4 can crawl
    cp.n_threads_batch = os.cpu_count() or 1
    ctx = llama_cpp.llama_init_from_model(model, cp)
    if not ctx:
        say(event="error", kind="context", message="llama_init_from_model returned NULL (see the log)")
        return 5
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    mem = llama_cpp.llama_get_memory(ctx)
    one = (llama_cpp.llama_token * 1)()

    def step(tok: int) -> int:
        one[0] = tok
        rc = llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(one, 1))
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        if llama_cpp.llama_get_logits_ith(ctx, -1)[0] != llama_cpp.llama_get_logits_ith(ctx, -1)[0]:  # reading waits
            raise RuntimeError("NaN logits")  # for the GPU; the next token needs no sampling: speed does not depend on it
        return 259 + (tok * 7919) % max(n_vocab - 259, 1)

    def window(n: int) -> dict:
        llama_cpp.llama_memory_clear(mem, True)
        llama_cpp.llama_perf_context_reset(ctx)
        tok = 1
        t0 = time.perf_counter()
        for _ in range(n):
            tok = step(tok)
        llama_cpp.llama_synchronize(ctx)
        wall = time.perf_counter() - t0
        p = llama_cpp.llama_perf_context(ctx)
        return {"tokens": n, "tok_s_wall": n / wall,
                "tok_s_perf": 1000.0 * p.n_eval / p.t_eval_ms if p.t_eval_ms > 0 else None}

    say(event="phase", phase="prefill", load_s=round(load_s, 3))
    for _ in range(2):
        llama_cpp.llama_memory_clear(mem, True)
        toks = (llama_cpp.llama_token * a.prompt)(*[259 + (i * 7919) % max(n_vocab - 259, 1) for i in range(a.prompt)])
        llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(toks, a.prompt))
        llama_cpp.llama_get_logits_ith(ctx, -1)
        llama_cpp.llama_synchronize(ctx)
    say(event="phase", phase="warmup")
    window(a.warmup)
    say(event="phase", phase="decode", total=a.runs)
    timed_runs(window, a.runs, a.tokens, say, a.settle_pct, a.settle_budget)
    llama_cpp.llama_free(ctx)
    llama_cpp.llama_model_free(model)
    say(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
