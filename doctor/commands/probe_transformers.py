"""`v100-doctor probe --synthetic --compare-engines` with ExLlamaV2 in force: every installed engine on the synthetic
27B-shape model in its own format (Transformers: NF4; llama.cpp: a Q4_K_M GGUF; ExLlamaV2: 4-bit GPTQ), the gap seen
from ExLlamaV2's side. The llama.cpp and Transformers probes themselves (and their --compare-engines) are stages of the
one Run (doctor/run/engine_stage.py); this comparison's JSON has a schema of its own, v100-doctor/engine-probe/1
(doctor/schema/engine-probe-1.json, kind "compare-engines").
Exit: 0 measured, 2 ExLlamaV2 failed here, 3 ExLlamaV2 is not installed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile

from doctor.commands.engine_output import emit_engine_probe
from doctor.facts.nvml.isolated import read_isolated
from doctor.knowledge.engine_efficiency import family
from doctor.knowledge.gpus import GpuSpec, spec_for_name
from doctor.model.engine_probe import EngineMeasurement, engine_probe_document
from doctor.model.exitcodes import ExitCode
from doctor.model.ids import Engine
from doctor.model.model_dir import ModelFacts
from doctor.model.plan import Plan
from doctor.model.unknown import known
from doctor.probe.engine_gap import measure_same_shape
from doctor.probe.transformers import TransformersOptions
from doctor.verdict.engine_gap import engine_gap

DEFAULT_LAYERS = 8  # 27B-shape layers of the synthetic model: ~6.4 GB in FP16, ~1.8 GB in NF4


def card(gpu_index: int) -> tuple[GpuSpec | None, str | None]:
    """This card's datasheet row and compute capability, from NVML."""
    gpu = next((g for g in read_isolated().gpus if g.index == gpu_index), None)  # in a child: NVML can hang or crash
    spec = spec_for_name(gpu.name, gpu.memory_total_mib if known(gpu.memory_total_mib) else None) \
        if gpu is not None and known(gpu.name) else None
    cc = gpu.compute_capability if gpu is not None and known(gpu.compute_capability) else (spec.cc if spec else None)
    return spec, cc


def _measure(args: argparse.Namespace, plan: Plan, model: ModelFacts | None, compare: bool) -> dict | int:
    """Every engine asked for, on the same shape; an exit code when the synthetic models cannot be written."""
    o = TransformersOptions(prompt=args.prompt_tokens, warmup=min(args.warmup, 256), tokens=args.tokens,
                            runs=max(args.runs, 3), gpu_index=plan.gpu_index)
    layers = args.synthetic_layers or DEFAULT_LAYERS
    folder = args.keep_synthetic or tempfile.mkdtemp(prefix="v100-doctor-transformers-")
    try:
        return measure_same_shape(folder, str(model.path) if model is not None else None, layers, o, compare,
                                  say=lambda text: print(f"v100-doctor: {text}", file=sys.stderr))
    except ImportError as exc:  # numpy/tokenizers (they come with transformers) write the synthetic models
        print(f"v100-doctor: the synthetic models need numpy and tokenizers (pip install transformers brings both): {exc}",
              file=sys.stderr)
        return ExitCode.USAGE
    except OSError as exc:
        print(f"v100-doctor: cannot write the synthetic models to {folder}: {exc.strerror or exc}; free some disk or "
              "give --keep-synthetic DIR on a larger disk", file=sys.stderr)
        return ExitCode.FAILURES
    finally:
        if not args.keep_synthetic:
            shutil.rmtree(folder, ignore_errors=True)


def run_compare(args: argparse.Namespace, plan: Plan) -> int:
    """probe --engine llama.cpp|ollama|exllamav2 --synthetic --compare-engines: every installed engine on the
    synthetic 27B-shape model in its own format, the gap seen from the plan's engine (Ollama runs llama.cpp)."""
    mine_name = {Engine.OLLAMA: "llama.cpp", None: "exllamav2", Engine.TABBYAPI: "exllamav2"}.get(plan.engine, str(plan.engine))
    doc = _measure(args, plan, None, True)
    if isinstance(doc, int):
        return doc
    measured: list[EngineMeasurement] = doc["measurements"]
    lines = [f"{m.engine} ({m.format}): {m.outcome}" + (f", {m.tok_s:g} tok/s" if m.tok_s else "")
             + (f", {m.bytes_per_token / 1e9:.2f} GB read per token" if m.bytes_per_token else "")
             + (f"; {m.error}" if m.error else "") for m in measured]
    mine = next((m for m in measured if m.engine == mine_name and m.outcome == "ok" and m.tok_s), None)
    spec, cc = card(plan.gpu_index)
    gap = None
    if mine is None or not mine.tok_s:
        lines.append(f"  {mine_name} could not be measured here (not installed, or it failed): no gap from its side")
    elif spec is not None and cc and mine.bytes_per_token:
        ceiling = spec.bandwidth_gbs * 1e9 / mine.bytes_per_token
        gap = engine_gap(mine_name, mine.tok_s, family(cc, spec.fp16_slow), ceiling,
                         tuple(m for m in measured if m is not mine))
        lines.append(f"  other engines here: {gap.summary}")
    emit_engine_probe(args, "\n".join(lines), engine_probe_document("compare-engines", engine=mine_name,
                                                                     measurements=measured, engine_gap=gap))
    if mine is None or not mine.tok_s:
        return ExitCode.USAGE if all(m.engine != mine_name for m in measured) else ExitCode.FAILURES
    return ExitCode.OK
