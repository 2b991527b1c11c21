"""What the probe needs to know before it runs, shared by the timed probe's stage (probe_stage.py), `probe --streams`
(streams_stage.py) and the TUI's probe: the engine in force, why the probe cannot run here, the model length it loads,
its spec, a synthetic model's size, the typed relay of the child's events, and the install commands and card a failure
finding names. Kept apart so neither stage imports the other."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any, Callable

from checks.prescription.probe_install import probe_install_commands
from doctor.engines.in_force import in_force
from doctor.model.events import ProbeEvent
from doctor.model.findings import Status
from doctor.model.ids import CheckId, Engine
from doctor.model.plan import Plan
from doctor.model.report import Report
from doctor.model.units import GIB, MIB
from doctor.model.unknown import known
from doctor.probe.protocol import ProbeSpec, screen_events
from doctor.probe.synthetic import target_bytes_for

ProbeSink = Callable[[ProbeEvent], None]  # a run's subscriber for the probe's typed events (the console, the TUI)


def engine_in_force(report: Report) -> tuple[str, str]:
    """(the engine the plan runs, why): --engine, the launch config, the model's format, what is installed."""
    chosen = report.engine_in_force or in_force(report.plan, report.facts)  # the engine the checks judged, as they did
    return ("exllamav2" if chosen.engine in (Engine.EXLLAMAV2, Engine.TABBYAPI) else str(chosen.engine)), chosen.why


def skip_reason(report: Report, synthetic: bool = False, engine: str = "exllamav2") -> str | None:
    """Why the probe of `engine` cannot run here, in one line; None when it can."""
    if not synthetic and not report.plan.model_path:
        return "no model was given (--model PATH); `v100-doctor probe --synthetic` measures the engine without one"
    model = report.facts.model
    if not synthetic and model is not None and model.kind == "hub-headers":
        repo, _, revision = model.path.partition("@")
        download = f"hf download {repo}" + (f" --revision {revision}" if revision else "")
        return (f"{model.path} is planned from its headers on the Hugging Face Hub; its weights are not here "
                f"({download}, then the same command measures it)")
    if report.plan.target_gpu:
        return (f"planning for {report.plan.target_gpu}, a card that is not this one; the same command without "
                "--target-gpu on a machine with that card measures it")
    elsewhere = "; on a machine with the card the same command measures it (`v100-doctor demo` shows recorded runs)"
    gpu = report.finding(CheckId.GPU_PRESENT)
    if gpu is not None and gpu.status is not Status.PASS:
        return f"no usable GPU ({gpu.summary}){elsewhere}"
    if gpu is None and not report.facts.nvml.gpus:
        return f"no usable GPU ({report.facts.nvml.reason or 'NVML reports none'}){elsewhere}"
    pairing = report.finding(CheckId.CUDA_PAIRING)
    if engine in ("llama.cpp", "ollama"):  # no torch, no ExLlamaV2: the probe itself says whether llama.cpp runs
        return None
    if pairing is not None and pairing.status is Status.FAIL:
        return f"torch cannot run on this card yet (cuda-pairing: {pairing.summary}); its fix first, then the probe"
    ready = report.finding(CheckId.EXLLAMAV2_READY)
    if engine == "exllamav2" and ready is not None and ready.evidence.get("probe_can_run") is False:
        return f"ExLlamaV2 is not ready (exllamav2-ready: {ready.summary}); its fix first, then the probe"
    return None


def budgeted_seq_len(report: Report) -> int | None:
    """The max_seq_len the memory budget judged (the user's, or ExLlamaV2's default), so the probe loads what was
    budgeted rather than a length of its own."""
    budget = report.finding(CheckId.MEMORY_BUDGET)
    seq = budget.evidence.get("max_seq_len") if budget is not None else None
    return report.plan.max_seq_len or (int(seq) if isinstance(seq, int) else None)


def spec_for(plan: Plan, max_seq_len: int | None = None, **overrides: Any) -> ProbeSpec:
    return ProbeSpec(model_path=plan.model_path or "", max_seq_len=plan.max_seq_len or max_seq_len, cache_mode=plan.cache_mode,
                     gpu_split=plan.gpu_split, gpu_index=plan.gpu_index, **overrides)


def synthetic_size_gb(report: Report, cap_gb: float | None = None) -> float:
    """A synthetic model sized for this card, its free RAM and the temp disk."""
    gpu = report.facts.gpu(report.plan.gpu_index)
    free = gpu.memory_free_mib * MIB if gpu and known(gpu.memory_free_mib) else None
    ram = report.facts.host.ram_available_mib * MIB if known(report.facts.host.ram_available_mib) else None
    try:
        disk = shutil.disk_usage(tempfile.gettempdir()).free
    except OSError:
        disk = None
    kw = {"cap_gb": cap_gb} if cap_gb else {}
    return round(target_bytes_for(free, ram, disk, **kw) / GIB, 2)


def typed_relay(on_event: ProbeSink) -> Callable[[dict], None]:
    """The runner's JSON-lines events as the typed events a subscriber gets (doctor.probe.protocol.screen_events)."""
    def relay(wire: dict) -> None:
        for event in screen_events(wire):
            on_event(event)

    return relay


def install_commands(report: Report) -> tuple[str, ...]:
    """The machine's torch route, then exllamav2 + tokenizers keeping that torch (checks/prescription/probe_install.py)."""
    torch = report.facts.python.torch
    version = str(torch.version) if torch.installed and known(torch.version) else None
    return tuple(probe_install_commands(report.prescription, version))


def card_of(report: Report) -> tuple[str, str] | None:
    """(cc, name) of the card the probe ran on, from the report's own facts."""
    gpu = report.facts.gpu(report.plan.gpu_index)
    if gpu is None or not known(gpu.compute_capability):
        return None
    return str(gpu.compute_capability), str(gpu.name) if known(gpu.name) else "this GPU"
