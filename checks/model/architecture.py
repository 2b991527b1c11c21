"""`architecture`: whether the engine in force, at its installed version, loads the model's architecture.

A model's format can be fine while its architecture is one the engine has never heard of: llama.cpp stops with
"unknown model architecture", vLLM refuses it, ExLlamaV2 loads it as Llama and fails or writes nonsense. The engine
answers for itself (EngineAdapter.judge_architecture, from doctor/knowledge/architectures.py); a version the doctor
cannot read is unknown, never a pass.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.model.common import AFTER_MODEL_PATH, unreadable_reason
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.unknown import known


def run(ctx: CheckContext) -> Finding:
    model = ctx.facts.model
    if model is None or not model.exists or model.problem:
        return CHECK.finding(Status.SKIP, f"skipped: {unreadable_reason(model, ctx.plan)}")
    engine, adapter = ctx.engine, ctx.adapter
    if adapter.arch_from_gguf:
        if model.gguf is None:
            return CHECK.finding(Status.SKIP, f"skipped: {adapter.label} loads GGUF files and this model is not one "
                                 "(quant-format says what runs it)")
        arch, where = model.gguf.architecture, "the GGUF's general.architecture"
    else:
        if model.config is None:
            return CHECK.finding(Status.SKIP, f"skipped: {adapter.label} reads config.json's architectures and this "
                                 "model has no config.json (quant-format says what runs it)")
        arch, where = model.config.architecture, "config.json's architectures"
    if not known(arch):
        return CHECK.finding(Status.INFO, f"unknown: {where} names no architecture ({arch.reason}), so whether "
                             f"{adapter.label} loads it cannot be judged", {"engine": str(engine.engine)})
    judged = adapter.judge_architecture(arch, ctx.facts)
    assumed = f" (judged as {engine.engine}: {engine.why})" if engine.assumed else ""
    ev = {**judged.evidence, "read_from": where, "chosen_because": engine.why}
    return CHECK.finding(judged.status, judged.summary + assumed, ev, judged.fix, judged.commands)


CHECK = Check(id=CheckId("architecture"), title="Model architecture vs the engine's version", run=run,
              **AFTER_MODEL_PATH, order=25)
