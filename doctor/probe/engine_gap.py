"""The engine gap, measured: the user's engine and the other installed engines on the doctor's synthetic model of the
same layer shape, each in its own format, on this card, one after another.

Transformers (bitsandbytes NF4 or FP16) on the FP16 synthetic Llama (doctor/probe/synthetic.py); llama.cpp on a
Q4_K_M GGUF of the same shape (doctor/probe/synthetic_gguf.py) through llama-cpp-python or llama-bench; ExLlamaV2 on
a 4-bit GPTQ model of the same shape (its own probe, doctor/probe/runner.py). An engine that is not installed is
said so, not estimated here: the verdict (doctor/verdict/engine_gap.py) estimates what was not measured.

    python3 -m doctor.probe.engine_gap [MODEL_DIR] [--synthetic-layers N] [--quant auto|nf4|fp16]
        [--compare-engines] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from importlib import util
from pathlib import Path
from typing import Any, Callable

from doctor.facts.modeldir.gguf_header import read_gguf
from doctor.knowledge.arithmetic.gguf_budget import GgufOption, gguf_budget
from doctor.model.engine_probe import EngineMeasurement, TransformersProbe, engine_probe_document
from doctor.model.serialize import strict_json
from doctor.probe.more_runs import add_timing_arguments, timing_from
from doctor.probe.synthetic import Shape
from doctor.probe.transformers import TransformersOptions, run_child, synthetic_model


def shape_of(model_dir: str) -> Shape:
    """The layer shape of a Transformers model directory, from its config.json."""
    cfg = json.loads((Path(model_dir) / "config.json").read_text())
    cfg = cfg.get("text_config", cfg)
    heads = int(cfg["num_attention_heads"])
    return Shape(hidden=int(cfg["hidden_size"]), intermediate=int(cfg["intermediate_size"]), heads=heads,
                 kv_heads=int(cfg.get("num_key_value_heads") or heads),
                 head_dim=int(cfg.get("head_dim") or int(cfg["hidden_size"]) // heads),
                 layers=int(cfg["num_hidden_layers"]), vocab=int(cfg["vocab_size"]))


def of_transformers(p: TransformersProbe) -> EngineMeasurement:
    return EngineMeasurement("transformers", "bitsandbytes NF4" if p.quant == "nf4" else "FP16", p.outcome,
                             p.median_tok_s, p.bytes_per_token, p.model_path, p.error)


def measure_llamacpp(folder: str, shape: Shape, say: Callable[[str], Any], runs: int = 5,
                     tokens: int = 128) -> EngineMeasurement | None:
    """llama.cpp on a Q4_K_M GGUF of this shape; None when neither llama-cpp-python nor llama-bench is installed."""
    from doctor.probe import llamacpp, synthetic_gguf  # lazy: the GGUF is written only when llama.cpp can run it

    if util.find_spec("llama_cpp") is None and shutil.which("llama-bench") is None:
        return None
    gguf_shape = replace(shape, vocab=max(shape.vocab, 260))  # the SentencePiece vocabulary needs its 259 fixed tokens
    say(f"writing a Q4_K_M GGUF of the same shape ({shape.layers} layers of {shape.hidden}/{shape.intermediate}) ...")
    g = synthetic_gguf.write(os.path.join(folder, "synthetic-q4_k_m.gguf"), gguf_shape)
    results = llamacpp.probe(g.path, llamacpp.ProbeOptions(tokens=tokens, runs=runs))
    r = results[-1]
    return EngineMeasurement("llama.cpp", "Q4_K_M GGUF", r.outcome, r.median_tok_s, gguf_read_bytes(g.path),
                             f"{g.label}, {r.backend}", r.error)


def gguf_read_bytes(path: str) -> int | None:
    """GPU bytes per decode token of a GGUF, by the GGUF budget's own arithmetic (its header only)."""
    f = read_gguf(path)
    if f.shape is None or f.weights is None:
        return None
    return int(gguf_budget(f.shape, f.weights, GgufOption(n_ctx=256)).read_gpu_bytes)


def measure_exllamav2(folder: str, shape: Shape, say: Callable[[str], Any], runs: int = 3,
                      tokens: int = 128) -> EngineMeasurement | None:
    """ExLlamaV2 on a 4-bit GPTQ model of this shape (its own probe); None when exllamav2 is not installed."""
    if util.find_spec("exllamav2") is None:
        return None
    from doctor.facts.engines.build_cache import exllamav2_location  # lazy: only where ExLlamaV2 is installed
    from doctor.probe import synthetic  # lazy: numpy and tokenizers only when a synthetic model is written
    from doctor.probe.protocol import ProbeSpec  # lazy: as the runner
    from doctor.probe.runner import run_probe  # lazy: the ExLlamaV2 probe only when it is compared

    say(f"writing a 4-bit GPTQ model of the same shape ({shape.layers} layers) for ExLlamaV2 ...")
    m = synthetic.build(os.path.join(folder, "synthetic-gptq"), "gptq", replace(shape, vocab=8192),
                        exllamav2_dir=exllamav2_location())
    report = run_probe(ProbeSpec(model_path=m.path, runs=runs, tokens=tokens, second_pass="never",
                                 measure_bandwidth=False, label=m.label))
    tok_s = report.result.decode_tok_s if report.ok and report.result is not None else None
    return EngineMeasurement("exllamav2", "4-bit GPTQ", "ok" if tok_s else report.status, tok_s, m.gpu_weight_bytes,
                             m.label, "" if tok_s else report.summary)


def measure_others(folder: str, shape: Shape, mine: str, say: Callable[[str], Any]) -> list[EngineMeasurement]:
    """The installed engines other than `mine` on the same layer shape, each in its own format (the engine gap,
    measured); an engine not installed is left out (the verdict estimates it, with its source)."""
    out: list[EngineMeasurement] = []
    if mine != "transformers" and util.find_spec("transformers") is not None:
        say(f"writing a random-weight FP16 model of the same shape ({shape.layers} layers) for Transformers ...")
        built = synthetic_model(os.path.join(folder, "synthetic-fp16"), shape.layers, shape)
        out.append(replace(of_transformers(run_child(built.path, TransformersOptions())), label=built.label))
    for name, measure in (("llama.cpp", measure_llamacpp), ("exllamav2", measure_exllamav2)):
        if name != mine:
            m = measure(folder, shape, say)
            if m is not None:
                out.append(m)
    for m in out:
        say(f"{m.engine}: {m.outcome} {m.tok_s} tok/s, {m.bytes_per_token} bytes/token ({m.label}) {m.error}")
    return out


def measure_same_shape(folder: str, model_dir: str | None, layers: int | None, o: Any, compare: bool,
                       say: Callable[[str], Any] = print, shape: Shape | None = None) -> dict[str, Any]:
    """Transformers on the user's model (or a synthetic one of `layers` layers of the 27B shape, or of `shape`), then,
    with `compare`, the other installed engines on the same shape. Returns {"shape", "transformers", "measurements"}."""
    if model_dir is None:
        say(f"writing a random-weight FP16 model of the 27B layer shape with {layers} layers ...")
        built = synthetic_model(os.path.join(folder, "synthetic-fp16"), layers or 8, shape)
        model_dir, shape = built.path, built.shape
    else:
        shape = shape_of(model_dir)
    say(f"probing {model_dir} with Transformers ({o.quant}) ...")
    t = run_child(model_dir, o)
    say(f"transformers: {t.outcome} ({t.backend}, {t.quant}) median {t.median_tok_s} tok/s, spread {t.spread_pct}%, "
        f"clock vs CUDA events {t.wall_vs_perf_pct}%, warm-up {t.warmup_tok_s} tok/s, {t.bytes_per_token} bytes/token "
        f"{t.error}")
    measured = [of_transformers(t)]
    if compare:
        for measure in (measure_llamacpp, measure_exllamav2):
            m = measure(folder, shape, say)
            if m is not None:
                say(f"{m.engine}: {m.outcome} {m.tok_s} tok/s, {m.bytes_per_token} bytes/token ({m.label}) {m.error}")
                measured.append(m)
    return {"shape": shape, "transformers": t, "measurements": measured}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m doctor.probe.engine_gap", description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", help="a Transformers model directory (or --synthetic-layers)")
    ap.add_argument("--synthetic-layers", type=int, default=None, metavar="N",
                    help="write a random-weight model of the 27B layer shape with N layers and probe it")
    ap.add_argument("--keep", default=None, metavar="DIR", help="write the synthetic models here and keep them")
    ap.add_argument("--quant", choices=("auto", "nf4", "fp16"), default="auto")
    ap.add_argument("--compare-engines", action="store_true",
                    help="also measure the same shape in llama.cpp (Q4_K_M GGUF) and ExLlamaV2 (4-bit GPTQ) where installed")
    add_timing_arguments(ap, warmup=128)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if bool(a.model) == bool(a.synthetic_layers):
        ap.error("give a model directory or --synthetic-layers N")
    o = TransformersOptions(quant=a.quant, timeout_s=a.timeout, **timing_from(a))
    folder = a.keep or tempfile.mkdtemp(prefix="v100-doctor-transformers-")
    try:
        doc = measure_same_shape(folder, a.model, a.synthetic_layers, o, a.compare_engines, say=print)
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if a.json:
        Path(a.json).write_text(strict_json(engine_probe_document("engine-gap", **doc), indent=1) + "\n")
    return 0 if doc["transformers"].outcome == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
