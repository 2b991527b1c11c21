"""The Transformers probe: time decode through HF Transformers (bitsandbytes NF4 when installed, else FP16) on this
card, in a child with a deadline, as the other probes do.

The child (doctor/probe/transformers_child.py) loads the model, counts the bytes it reads per token, prefills a
prompt, runs a warm-up generation (its speed and page faults: a first-use cost shows there), then timed
`generate()` calls, as users run it, each on two clocks (more while their spread is over the settle line). Here:
NVML is sampled while it runs, leading runs off the later median are dropped and counted (settling), the spread is
reported, a child that dies without a word is "died-silently" with its signal and last log lines.
No download: `--synthetic-layers N` writes a random-weight FP16 Llama of the reference story's 27B layer shape
(doctor/probe/synthetic.py) with N layers, which bitsandbytes quantizes to NF4 as it loads.
Run it, with the other installed engines on the same shape, through doctor/probe/engine_gap.py or
`v100-doctor probe --engine transformers`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any, Callable

from doctor.model.engine_probe import TransformersProbe
from doctor.probe.llamacpp import _died, _sampler, gpu_summary, json_events, sample_run, spawn_engine_child, summarize
from doctor.probe.more_runs import TimedRunOptions


@dataclass(frozen=True)
class TransformersOptions(TimedRunOptions):
    quant: str = "auto"  # auto: nf4 when bitsandbytes imports, else fp16


def read_events(lines: list[str], mono0: float | None = None) -> dict[str, Any]:
    """The child's JSON lines, gathered: samples, the warm-up window, versions, bytes, error, done."""
    got: dict[str, Any] = {"runs": [], "faults": [], "error": "", "done": False}
    for ev in json_events(lines):
        kind = ev.get("event")
        if kind == "sample":
            got["runs"].append(sample_run(ev, mono0))
            got["faults"].append(round(float(ev.get("faults_per_token") or 0.0), 1))
        elif kind == "warmup":
            got["warmup"] = ev
        elif kind == "versions":
            got["versions"], got["quant"] = ev.get("versions") or {}, ev.get("quant", "")
        elif kind == "loaded":
            got["loaded"] = ev
        elif kind == "error":
            got["error"], got["kind"] = f"{ev.get('kind')}: {ev.get('message')}", ev.get("kind")
        elif kind == "done":
            got["done"] = True
    return got



def run_child(model_dir: str, o: TransformersOptions = TransformersOptions(), python: str = sys.executable,
              extra_env: dict | None = None, sampler: Callable[[int, int], Any] = _sampler) -> TransformersProbe:
    cmd = [python, "-X", "faulthandler", "-m", "doctor.probe.transformers_child", "--model", model_dir,
           "--quant", o.quant, "--gpu", str(o.gpu_index), *o.child_args()]
    base = TransformersProbe(backend="transformers", outcome="error", model_path=model_dir, prompt_tokens=o.prompt,
                             warmup_tokens=o.warmup)
    ran = spawn_engine_child(cmd, o.timeout_s, o.gpu_index, extra_env, sampler)
    if isinstance(ran, str):
        return replace(base, outcome="not-installed", error=ran)
    got = read_events(ran.lines, ran.mono0)
    quant = got.get("quant", "")
    loaded, warm = got.get("loaded") or {}, got.get("warmup") or {}
    probe = replace(base, backend="transformers+bitsandbytes" if quant == "nf4" else "transformers", quant=quant,
                    versions=got.get("versions") or {}, layers=int(loaded.get("layers") or 0),
                    bytes_per_token=loaded.get("bytes_per_token"), gpu_weight_bytes=loaded.get("gpu_weight_bytes"),
                    warmup_tok_s=round(float(warm["tok_s_wall"]), 2) if warm.get("tok_s_wall") else None,
                    warmup_faults_per_token=round(float(warm.get("faults_per_token") or 0.0), 1) if warm else None,
                    faults_per_token=tuple(got["faults"]), returncode=ran.returncode, log_tail=ran.tail,
                    seconds=ran.seconds, **gpu_summary(ran.series, o.gpu_index, got["runs"]))
    if ran.ended:
        return summarize(replace(probe, outcome="timeout", error=f"no result within {o.timeout_s:g} s"), got["runs"], o.runs)
    if got["error"]:
        outcome = "not-installed" if got.get("kind") == "not-installed" else "error"
        return replace(probe, outcome=outcome, error=got["error"])
    if not got["done"] or ran.returncode != 0:
        return summarize(replace(probe, outcome="died-silently", error=_died(ran.returncode, ran.tail)), got["runs"], o.runs)
    return summarize(replace(probe, outcome="ok"), got["runs"], o.runs)


def synthetic_model(out_dir: str, layers: int, shape: Any = None) -> Any:
    """The reference story's 27B layer shape (5120/21760, 40 heads, 8 KV heads; or `shape`) with `layers` layers,
    FP16."""
    from doctor.probe import synthetic  # lazy: numpy and tokenizers only when a synthetic model is written

    return synthetic.build(out_dir, "fp16", replace(shape or synthetic.QWEN_27B_LIKE, layers=layers))
