"""A probe that did not finish becomes a finding named after the pitfall that stopped it.

CUDA out of memory -> memory-budget (with the numbers), "FlashAttention only supports Ampere
GPUs or newer" -> flash-attn, "no kernel image is available" -> cuda-pairing, a failed JIT
build -> cuda-pairing with the build log's tail, a missing package -> exllamav2-ready, a model
directory ExLlamaV2 cannot read -> model-load. A probe finding supersedes the static check of
the same id: it was measured, the check only predicted (merge_findings keeps the prediction in
the evidence).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from doctor.knowledge.attention import FLASH_ATTN_COMMANDS, flash_attn_fix
from doctor.knowledge.messages import JIT_BUILD_FIX, MODEL_FOLDER_FIX, OOM_FIX, PROBE_ENGINE_INSTALL
from doctor.knowledge.signatures import oom_figures
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId, FailureKind
from doctor.model.probe_results import ProbeReport

TITLES = {
    CheckId.MEMORY_BUDGET: "Memory budget (measured by the probe)",
    CheckId.FLASH_ATTN: "flash-attn vs this card (seen by the probe)",
    CheckId.CUDA_PAIRING: "Driver, CUDA and PyTorch pairing (seen by the probe)",
    CheckId.EXLLAMAV2_READY: "ExLlamaV2 ready to probe",
    CheckId.MODEL_LOAD: "ExLlamaV2 can load the model",
    CheckId.PROBE: "Timed ExLlamaV2 probe",
}


def _finding(check_id: CheckId, status: Status, summary: str, evidence: dict, fix: str = "", commands: tuple[str, ...] = ()) -> Finding:
    return Finding(id=check_id, title=TITLES[check_id], status=status, summary=summary, evidence=evidence, fix=fix,
                   commands=commands)


def failure_finding(probe: ProbeReport, max_seq_len: int | None = None, cache_mode: str = "fp16",
                    install: tuple[str, ...] = (PROBE_ENGINE_INSTALL,), card: tuple[str, str] | None = None) -> Finding:
    """The finding for a probe that failed, timed out, crashed or was cancelled; `card` (cc, name): the card it ran
    on, which a fix names instead of an example card."""
    kind, msg = probe.error_kind, probe.summary
    ev: dict[str, Any] = {"probe_status": probe.status, "phase": probe.error_phase, "error": msg}
    tail = probe.error_detail.strip()
    if kind == FailureKind.OOM:
        ev.update(oom_figures(tail + "\n" + msg))
        ev.update(max_seq_len=max_seq_len, cache_mode=cache_mode)
        smaller = f"--max-seq-len {max(2048, (max_seq_len or 8192) // 2)}" if max_seq_len else "--max-seq-len 4096"
        return _finding(CheckId.MEMORY_BUDGET, Status.FAIL, f"the model did not fit: {msg}", ev,
                        "Weights, cache and scratch do not fit in this card's memory. " + OOM_FIX,
                        (f"v100-doctor probe --model MODEL {smaller} --cache-mode q8",))
    if kind == FailureKind.FLASH_ATTN:
        return _finding(CheckId.FLASH_ATTN, Status.FAIL, f"ExLlamaV2 crashed in flash-attn: {msg}", ev,
                        flash_attn_fix(None, card[0], card_name=card[1]) if card else flash_attn_fix(), FLASH_ATTN_COMMANDS)
    if kind == FailureKind.NO_KERNEL_IMAGE:
        return _finding(CheckId.CUDA_PAIRING, Status.FAIL, f"no CUDA kernel for this card: {msg}", ev,
                        "torch (or an extension) was built without code for this card's architecture; see the "
                        "cuda-pairing check for a torch build that has it.")
    if kind == FailureKind.JIT_BUILD:
        ev["build_log_tail"] = tail[-1500:]
        return _finding(CheckId.CUDA_PAIRING, Status.FAIL, f"ExLlamaV2's extension could not be built: {msg}", ev,
                        JIT_BUILD_FIX + " The build log's tail is in the evidence.")
    if kind in (FailureKind.NOT_INSTALLED, FailureKind.NO_CUDA):
        return _finding(CheckId.EXLLAMAV2_READY, Status.FAIL, msg, ev,
                        "The probe needs torch with CUDA, exllamav2 and tokenizers in the Python that runs the doctor; "
                        "torch first, from the index that has this card's kernels.", install)
    if kind == FailureKind.MODEL_LOAD:
        ev["log_tail"] = tail[-1500:]
        return _finding(CheckId.MODEL_LOAD, Status.FAIL, msg, ev,
                        MODEL_FOLDER_FIX)
    if kind == FailureKind.CANCELLED:
        return _finding(CheckId.PROBE, Status.SKIP, f"the probe was cancelled during {probe.error_phase}", ev)
    if kind == FailureKind.TIMEOUT:
        return _finding(CheckId.PROBE, Status.FAIL, msg, ev,
                        "A phase ran past its time limit. A first import JIT-builds ExLlamaV2 (2-3 minutes); a stale "
                        "'lock' file in ~/.cache/torch_extensions makes it wait forever.")
    ev["log_tail"] = tail[-1500:]
    return _finding(CheckId.PROBE, Status.ERROR, f"the probe failed: {msg}", ev,
                    "An unexpected failure; the log tail is in the evidence. Please report it with the --json output.")


def merge_findings(findings: tuple[Finding, ...], new: list[Finding]) -> tuple[Finding, ...]:
    """Measured findings replace predicted ones of the same id (in place); others are appended."""
    out = list(findings)
    for f in new:
        idx = next((i for i, old in enumerate(out) if old.id == f.id), None)
        if idx is None:
            out.append(f)
        else:
            before = out[idx]
            out[idx] = replace(f, evidence={**f.evidence, "predicted_before_probe": f"{before.status.value}: {before.summary}"})
    return tuple(out)
