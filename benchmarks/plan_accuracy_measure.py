"""What one of `plan`'s options really takes and how fast it decodes, measured in the engine itself (issue 28).

One option per process (so each starts from a bare CUDA context), written apart from the doctor (it imports
nothing from `doctor/` or `checks/`): the plan's predictions are compared afterwards by
benchmarks/plan_accuracy_check.py.

  exl2  ExLlamaV2 0.3.2, as TabbyAPI loads it (gpu_split_auto: load_autosplit with a lazy cache of the mode).
  gguf  llama.cpp through llama-cpp-python's raw API, every layer on the GPU, n_batch = n_ubatch = 512
        (llama-server's micro-batch), flash attention as asked.

Protocol, the same for both: NVML's used memory is read before the engine touches the card (the baseline) and
sampled every 20 ms until the end; the whole context is prefilled once (the worst moment for memory: a full
cache, the largest attention), then the cache is cut back to half the context (the position at which `plan`
states its expected speed), W warm-up decode tokens, and R windows of T tokens, each from that same position.
Memory figures: NVML's peak less the baseline (everything the process took: CUDA context, allocator caches,
pools); ExLlamaV2: torch's peak allocated and reserved bytes; llama.cpp: the buffer sizes it printed.

  python3 benchmarks/plan_accuracy_measure.py exl2 --model DIR --ctx 4096 --cache fp16 --out r.json
  python3 benchmarks/plan_accuracy_measure.py gguf --model F.gguf --ctx 32768 --ctk q8_0 --fa on --out r.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import threading
import time

BUFFER = re.compile(r"(?P<dev>[\w.-]+) (?P<kind>model|KV|compute|output) buffer size\s*=\s*(?P<mib>[\d.]+) MiB")


class NvmlPeak:
    """NVML's used memory on one GPU: a baseline now, then the largest reading while running."""

    def __init__(self, index: int = 0, period_s: float = 0.02):
        import pynvml

        self.nv = pynvml
        pynvml.nvmlInit()
        self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.name = pynvml.nvmlDeviceGetName(self.h)
        self.total = pynvml.nvmlDeviceGetMemoryInfo(self.h).total
        self.baseline = self.used()
        self.peak = self.baseline
        self.period_s = period_s
        self.marks: dict[str, int] = {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def used(self) -> int:
        return int(self.nv.nvmlDeviceGetMemoryInfo(self.h).used)

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            self.peak = max(self.peak, self.used())

    def mark(self, name: str) -> int:
        u = self.used()
        self.peak = max(self.peak, u)
        self.marks[name] = u - self.baseline
        return u

    def stop(self) -> dict:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self.used())
        return {"gpu": self.name, "total_bytes": self.total, "baseline_used_bytes": self.baseline,
                "peak_used_bytes": self.peak, "peak_delta_bytes": self.peak - self.baseline,
                "delta_at_bytes": self.marks}


def _windows(step_window, runs: int) -> list[float]:
    return [step_window() for _ in range(runs)]


def _summary(speeds: list[float]) -> dict:
    med = statistics.median(speeds)
    return {"runs_tok_s": [round(s, 3) for s in speeds], "median_tok_s": round(med, 3),
            "spread_pct": round(100 * (max(speeds) - min(speeds)) / med, 2)}


def exl2(a: argparse.Namespace) -> dict:
    nv = NvmlPeak(a.gpu)
    import torch
    from exllamav2 import ExLlamaV2, ExLlamaV2Cache, ExLlamaV2Cache_Q4, ExLlamaV2Cache_Q6, ExLlamaV2Cache_Q8, ExLlamaV2Config

    # cuDNN attention builds a graph per new KV length (benchmarks/results/README.md: the first-model trap); the
    # doctor's fix is to turn it off, and this measures the speed that fix gives
    torch.backends.cuda.enable_cudnn_sdp(False)
    if a.torch_cap_mib:  # the allocator may hold this much at most: it frees its cached blocks and retries first
        torch.cuda.set_per_process_memory_fraction(a.torch_cap_mib * 2**20 / torch.cuda.get_device_properties(0).total_memory)
    caches = {"fp16": ExLlamaV2Cache, "q8": ExLlamaV2Cache_Q8, "q6": ExLlamaV2Cache_Q6, "q4": ExLlamaV2Cache_Q4}
    t = time.perf_counter()
    cfg = ExLlamaV2Config(a.model)
    cfg.max_seq_len = a.ctx
    model = ExLlamaV2(cfg)
    cache = caches[a.cache](model, max_seq_len=a.ctx, lazy=True)
    model.load_autosplit(cache)
    torch.cuda.synchronize()
    load_s = time.perf_counter() - t
    nv.mark("after_load")
    mem = {"allocated_after_load_bytes": torch.cuda.memory_allocated(),
           "load_peak_allocated_bytes": torch.cuda.max_memory_allocated(),
           "load_peak_reserved_bytes": torch.cuda.max_memory_reserved(),
           "cache_footprint_bytes": int(sum(cache.footprint())) if hasattr(cache, "footprint") else None}
    try:
        mem["model_footprint_bytes"] = int(sum(model.footprint())) if hasattr(model, "footprint") else None
    except Exception as exc:  # footprint() is informative only
        mem["model_footprint_bytes"] = f"unavailable: {exc}"
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (1, a.ctx), generator=gen)
    half = a.ctx // 2
    last = ids[:, half:half + 1]
    with torch.inference_mode():
        t = time.perf_counter()
        cache.current_seq_len = 0
        model.forward(ids[:, : a.ctx - 1], cache, preprocess_only=True)
        torch.cuda.synchronize()
        prefill_s = time.perf_counter() - t
        nv.mark("after_full_prefill")

        def steps(n: int) -> None:
            nonlocal last
            for _ in range(n):
                logits = model.forward(last, cache)
                last = logits[:, -1, :].argmax(-1, keepdim=True).cpu()

        def window() -> float:
            cache.current_seq_len = half
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            steps(a.tokens)
            torch.cuda.synchronize()
            return a.tokens / (time.perf_counter() - t0)

        cache.current_seq_len = half
        steps(a.warmup)
        torch.cuda.synchronize()
        speeds = _windows(window, a.runs)
    mem.update({"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
                "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
                "reserved_now_bytes": torch.cuda.memory_reserved()})
    u = nv.mark("end")
    # what lives outside torch's allocator (CUDA context, cuBLAS handles, kernel images): NVML less torch's reserve
    mem["outside_torch_bytes"] = u - nv.baseline - torch.cuda.memory_reserved()
    out = {"engine": "exllamav2", "model": a.model, "ctx": a.ctx, "cache": a.cache, "loader": "load_autosplit",
           "torch_cap_mib": a.torch_cap_mib,
           "load_s": round(load_s, 2), "prefill_tokens": a.ctx - 1, "prefill_s": round(prefill_s, 2),
           "decode_position": half, "warmup": a.warmup, "tokens": a.tokens, "torch": torch.__version__,
           "torch_memory": mem, **_summary(speeds)}
    out["nvml"] = nv.stop()
    return out


def gguf(a: argparse.Namespace) -> dict:
    nv = NvmlPeak(a.gpu)
    import ctypes

    import llama_cpp

    log_path = a.out + ".llama.log"
    # llama.cpp's own logger writes to stderr (no Python callback: issue 27 saw a silent death with one); this
    # process's stderr is sent to a file by the caller and parsed from there
    llama_cpp.llama_log_set(ctypes.cast(None, llama_cpp.llama_log_callback), ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()
    mp = llama_cpp.llama_model_default_params()
    mp.n_gpu_layers = 999
    t = time.perf_counter()
    model = llama_cpp.llama_model_load_from_file(a.model.encode(), mp)
    if not model:
        raise SystemExit("model load failed")
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = a.ctx, 512, 512, 1
    cp.flash_attn_type = {"auto": -1, "off": 0, "on": 1}[a.fa]
    cp.type_k = getattr(llama_cpp, f"GGML_TYPE_{a.ctk.upper()}")
    cp.type_v = getattr(llama_cpp, f"GGML_TYPE_{a.ctv.upper()}")
    cp.no_perf = False
    cp.n_threads = max((os.cpu_count() or 2) // 2, 1)
    cp.n_threads_batch = os.cpu_count() or 1
    ctx = llama_cpp.llama_init_from_model(model, cp)
    if not ctx:
        raise SystemExit("context creation failed")
    load_s = time.perf_counter() - t
    nv.mark("after_load")
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    mem = llama_cpp.llama_get_memory(ctx)

    def tok(i: int) -> int:
        return 259 + (i * 7919) % max(n_vocab - 259, 1)

    t = time.perf_counter()
    pos = 0
    while pos < a.ctx - 1:
        n = min(512, a.ctx - 1 - pos)
        arr = (llama_cpp.llama_token * n)(*[tok(pos + i) for i in range(n)])
        rc = llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(arr, n))
        if rc != 0:
            raise SystemExit(f"prefill llama_decode returned {rc} at {pos}")
        pos += n
    llama_cpp.llama_get_logits_ith(ctx, -1)
    llama_cpp.llama_synchronize(ctx)
    prefill_s = time.perf_counter() - t
    nv.mark("after_full_prefill")
    half = a.ctx // 2
    one = (llama_cpp.llama_token * 1)()

    def steps(n: int) -> None:
        for i in range(n):
            one[0] = tok(i)
            if llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(one, 1)) != 0:
                raise SystemExit("decode failed")
            llama_cpp.llama_get_logits_ith(ctx, -1)[0]  # reading the logits waits for the GPU

    perf: list[float] = []

    def window() -> float:
        llama_cpp.llama_memory_seq_rm(mem, 0, half, -1)
        llama_cpp.llama_synchronize(ctx)
        llama_cpp.llama_perf_context_reset(ctx)
        t0 = time.perf_counter()
        steps(a.tokens)
        llama_cpp.llama_synchronize(ctx)
        dt = time.perf_counter() - t0
        p = llama_cpp.llama_perf_context(ctx)
        perf.append(1000.0 * p.n_eval / p.t_eval_ms if p.t_eval_ms > 0 else 0.0)
        return a.tokens / dt

    llama_cpp.llama_memory_seq_rm(mem, 0, half, -1)
    steps(a.warmup)
    speeds = _windows(window, a.runs)
    pos_after = llama_cpp.llama_memory_seq_pos_max(mem, 0)
    nv.mark("end")
    llama_cpp.llama_free(ctx)
    llama_cpp.llama_model_free(model)
    sys.stderr.flush()
    out = {"engine": "llama.cpp", "model": a.model, "ctx": a.ctx, "cache_type_k": a.ctk, "cache_type_v": a.ctv,
           "flash_attn": a.fa, "n_batch": 512, "n_ubatch": 512, "load_s": round(load_s, 2),
           "prefill_tokens": a.ctx - 1, "prefill_s": round(prefill_s, 2), "decode_position": half,
           "last_position": pos_after, "warmup": a.warmup, "tokens": a.tokens,
           "llama_cpp_python": llama_cpp.__version__, **_summary(speeds),
           "perf_tok_s": [round(x, 3) for x in perf],
           "wall_vs_perf_pct": round(100 * (statistics.median(speeds) / statistics.median(perf) - 1), 2) if perf else None}
    out["nvml"] = nv.stop()
    out["log"] = log_path
    return out


def buffers(log_text: str) -> dict[str, dict[str, float]]:
    """llama.cpp's printed buffers, {kind: {device: MiB}} (summed per device)."""
    out: dict[str, dict[str, float]] = {}
    for m in BUFFER.finditer(log_text):
        d = out.setdefault(m.group("kind").lower(), {})
        d[m.group("dev")] = round(d.get(m.group("dev"), 0.0) + float(m.group("mib")), 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("engine", choices=("exl2", "gguf"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--ctx", type=int, required=True)
    ap.add_argument("--cache", default="fp16", choices=("fp16", "q8", "q6", "q4"), help="ExLlamaV2's cache mode")
    ap.add_argument("--ctk", default="f16")
    ap.add_argument("--ctv", default=None, help="default: as --ctk")
    ap.add_argument("--fa", default="on", choices=("on", "off", "auto"))
    ap.add_argument("--warmup", type=int, default=256, help="ExLlamaV2 tunes its matmuls for ~200 calls of a shape")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--torch-cap-mib", type=float, default=0,
                    help="ExLlamaV2: cap torch's allocator here (set_per_process_memory_fraction); 0: no cap")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    a.ctv = a.ctv or a.ctk
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = exl2(a) if a.engine == "exl2" else gguf(a)
    result["started_utc"] = started
    with open(a.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps({k: result.get(k) for k in ("engine", "ctx", "cache", "cache_type_k", "median_tok_s",
                                                 "spread_pct")} | {"nvml_peak_delta_mib":
                                                 round(result["nvml"]["peak_delta_bytes"] / 2**20, 1)}))


if __name__ == "__main__":
    main()
