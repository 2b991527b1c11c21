"""The Transformers probe's child: load a model with HF Transformers (bitsandbytes NF4 when installed) and time decode.

Runs only as `python -X faulthandler -m doctor.probe.transformers_child ...` (doctor/probe/transformers.py starts
it); one JSON object per line on stdout, Transformers' own logging on stderr. The protocol is the other probes':
a prompt prefilled twice (the first settles the prompt path), a warm-up generation (its speed and page faults are
reported: a first-use cost shows there), then `runs` generations of `tokens` new tokens (more while their spread is
over the settle line, doctor/probe/more_runs.py). Each is what users run: `model.generate()`, greedy, EOS never
stopping it, from the same prompt. A streamer stamps each new token when generate() hands it over (after its own
read of the token to the host); decode tok/s = (tokens - 1) / (last stamp - first stamp), the prompt's prefill left
out. The second clock is CUDA events recorded at the same two stamps. (Until issue 35 the probe timed bare forward
passes + argmax: 17-19% faster than generate() on the H200, whose own per-token work it missed.)
Bytes read per token are counted on the loaded model: every parameter and buffer on the card (bitsandbytes' packed
4-bit data and its absmax/code), less the embedding table but one row of it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import traceback
from typing import Any

from doctor.probe.child_events import not_installed, say, start
from doctor.probe.more_runs import timed_runs


def _version(name: str) -> str:
    from importlib import metadata  # lazy: only the child reads the engine's versions

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def weight_bytes(model: Any, torch: Any) -> tuple[int, int]:
    """(every parameter and buffer on the GPU, bytes read per decode token) of a loaded model, in bytes."""
    seen: dict[int, Any] = {}  # id -> tensor: holding each one keeps its id from being reused by the next
    total = 0

    def add(t: Any) -> None:
        nonlocal total
        if t is None or not getattr(t, "is_cuda", False) or id(t) in seen:
            return
        seen[id(t)] = t
        total += t.numel() * t.element_size()

    for p in model.parameters():
        add(p)
        qs = getattr(p, "quant_state", None)  # bitsandbytes Params4bit: absmax (and the nested state) beside the data
        while qs is not None:
            add(getattr(qs, "absmax", None))
            add(getattr(qs, "code", None))
            qs = getattr(qs, "state2", None)
    for b in model.buffers():
        add(b)
    emb = model.get_input_embeddings().weight
    emb_bytes = emb.numel() * emb.element_size() if emb.is_cuda else 0
    row = emb.shape[-1] * emb.element_size()
    return total, total - emb_bytes + row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--quant", choices=("auto", "nf4", "fp16"), default="auto")
    ap.add_argument("--gpu", type=int, default=0)
    a = start(ap, argv, warmup=128)
    try:
        import torch  # lazy: the child exists to import the engine; the doctor never does
        import transformers  # lazy: as torch
    except ImportError as exc:
        return not_installed("Transformers (with torch)", exc)
    quant = a.quant
    if quant in ("auto", "nf4"):
        try:
            import bitsandbytes  # noqa: F401  # lazy: only to see whether 4-bit loading is possible
            quant = "nf4"
        except ImportError as exc:
            if quant == "nf4":
                return not_installed("bitsandbytes", exc)
            quant = "fp16"
    versions = {n: _version(n) for n in ("transformers", "bitsandbytes", "torch", "accelerate")}
    say(event="versions", quant=quant, versions=versions)
    if not torch.cuda.is_available():
        say(event="error", kind="no-cuda", message="torch sees no CUDA device")
        return 4
    say(event="phase", phase="load")
    try:
        import accelerate  # noqa: F401  # lazy: device_map needs it; without it an FP16 model is moved by hand
        kw: dict[str, Any] = {"device_map": {"": a.gpu}}
    except ImportError:
        kw = {}
    major_minor = tuple(int(x) for x in transformers.__version__.split(".")[:2] if x.isdigit())
    kw["dtype" if major_minor >= (4, 56) else "torch_dtype"] = torch.float16
    if quant == "nf4":
        kw["quantization_config"] = transformers.BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.float16)
    t = time.perf_counter()
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(a.model, **kw)
        if "device_map" not in kw:
            model = model.to(torch.device("cuda", a.gpu))
    except torch.cuda.OutOfMemoryError as exc:
        say(event="error", kind="oom", message=_first_line(exc))
        return 5
    except Exception as exc:  # noqa: BLE001 - the engine refused the model: its own words, one line; traceback on stderr
        traceback.print_exc()
        say(event="error", kind="model-load", message=f"{type(exc).__name__}: {_first_line(exc)}")
        return 5
    model.eval()
    gpu_bytes, per_token = weight_bytes(model, torch)
    n_vocab = int(model.config.vocab_size)
    say(event="loaded", load_s=round(time.perf_counter() - t, 3), gpu_weight_bytes=gpu_bytes, bytes_per_token=per_token,
        layers=int(model.config.num_hidden_layers))
    dev = torch.device("cuda", a.gpu)
    prompt = torch.tensor([[3 + (i * 7919) % max(n_vocab - 3, 1) for i in range(a.prompt)]], device=dev)

    def prefill() -> tuple[Any, Any]:
        out = model(input_ids=prompt, use_cache=True)
        return out.past_key_values, out.logits[:, -1:].argmax(-1)

    try:
        from transformers.generation.streamers import BaseStreamer  # lazy: as transformers
    except ImportError:  # an older or stand-in transformers: generate() only calls put() and end()
        BaseStreamer = object

    class Stamps(BaseStreamer):  # type: ignore[misc,valid-type,unused-ignore]  # BaseStreamer is Any without transformers installed (CI), a class with it
        """generate()'s streamer: the prompt first (skipped), then each new token, already read to the host."""

        def __init__(self) -> None:
            self.times: list[float] = []
            self.events: list[Any] = []
            self.prompt_seen = False

        def put(self, value: Any) -> None:
            if not self.prompt_seen:
                self.prompt_seen = True
                return
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            self.events.append(ev)
            self.times.append(time.perf_counter())

        def end(self) -> None:
            pass

    mask = torch.ones_like(prompt)

    def window(n: int) -> dict:
        stamps = Stamps()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        model.generate(prompt, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                       streamer=stamps, pad_token_id=0)
        torch.cuda.synchronize(dev)
        if len(stamps.times) < 2:
            raise RuntimeError(f"generate() handed over {len(stamps.times)} new tokens of {n}")
        wall = stamps.times[-1] - stamps.times[0]
        ms = stamps.events[0].elapsed_time(stamps.events[-1])
        k = len(stamps.times) - 1
        return {"tokens": len(stamps.times), "tok_s_wall": k / wall, "tok_s_perf": 1000.0 * k / ms if ms > 0 else None,
                "faults_per_token": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / n}

    try:
        with torch.inference_mode():
            say(event="phase", phase="prefill")
            for _ in range(2):
                prefill()
                torch.cuda.synchronize(dev)
            say(event="phase", phase="warmup")
            say(event="warmup", **window(a.warmup))
            say(event="phase", phase="decode", total=a.runs)
            timed_runs(window, a.runs, a.tokens, say, a.settle_pct, a.settle_budget)
    except torch.cuda.OutOfMemoryError as exc:
        say(event="error", kind="oom", message=_first_line(exc))
        return 5
    except Exception as exc:  # noqa: BLE001 - the engine's own error, reported as one line; the traceback goes to stderr
        traceback.print_exc()
        say(event="error", kind="engine", message=f"{type(exc).__name__}: {_first_line(exc)}")
        return 6
    say(event="done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
