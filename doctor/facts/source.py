"""A Source resolved, once: the facts, the plan, the recorded probe (if any), the note and the provenance.

Every face (the CLI, `demo`, the TUI and its `r`, `bundle`, `explain`, `fleet`) asks here; none reads a saved
file or tags a report's origin itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from doctor.facts.examples import EXAMPLES, example_file
from doctor.model.errors import ReplayError
from doctor.model.plan import Plan
from doctor.model.source import LIVE, BundledExample, Origin, Provenance, SavedFile, Source, TargetCard, ThisMachine, example, replayed

if TYPE_CHECKING:  # kept off the import path: a screen's first frame does not wait for the report model
    from doctor.model.facts import Facts
    from doctor.model.probe_results import ProbeReport
    from doctor.model.report import Loaded


@dataclass(frozen=True)
class GatherOptions:
    """How this machine's facts are gathered (a live source only)."""

    torch_timeout_s: float = 20.0
    nvml_timeout_s: float = 15.0  # the NVML child's deadline (doctor/facts/nvml/isolated.py)
    fresh: bool = False  # re-import torch even if the per-wheel cache has its static facts
    use_cache: bool = True
    torch_gatherer: Any = None  # a TorchGatherer already started (the CLI starts it before its heavy imports)
    reader: Callable[[], Facts] | None = None  # reads this machine's facts; None: doctor.facts.gather (tests: a recorded machine)


@dataclass(frozen=True)
class Resolved:
    facts: Facts
    plan: Plan
    provenance: Provenance
    note: str = ""
    probe: ProbeReport | None = None  # a probe recorded on the machine the facts came from; judged again today


def is_live(source: Source) -> bool:
    return isinstance(source, (ThisMachine, TargetCard))


def base_plan(source: Source) -> Plan:
    """The plan a source brings before the user's flags: a target card's key, or nothing yet (a file's plan is
    read with its facts)."""
    return Plan(target_gpu=source.key) if isinstance(source, TargetCard) else Plan()


def gather_live(options: GatherOptions = GatherOptions()) -> Facts:
    if options.reader is not None:
        return options.reader()
    from doctor.facts.gather import gather_facts  # lazy: a replay never reads this machine (NVML, torch, host)

    return gather_facts(torch_timeout_s=options.torch_timeout_s, fresh=options.fresh, use_cache=options.use_cache,
                        torch=options.torch_gatherer, nvml_timeout_s=options.nvml_timeout_s)


def resolve(source: Source, options: GatherOptions = GatherOptions()) -> Resolved:
    """The source's facts, plan, recorded probe, note and provenance. ReplayError for a file that cannot be used."""
    if is_live(source):
        return Resolved(facts=gather_live(options), plan=base_plan(source), provenance=LIVE)
    if isinstance(source, SavedFile):
        from doctor.facts.replay import load_document  # lazy: the report model (40 ms) loads when a run starts, after the TUI's first frame

        return from_loaded(load_document(source.path), replayed(source.path))
    if isinstance(source, BundledExample):
        return load_example(source)
    raise TypeError(f"not a source: {source!r}")


def from_loaded(loaded: Loaded, provenance: Provenance) -> Resolved:
    """A loaded document as a resolved source. A recorded example stays one, whatever file it is read from: its
    facts are never this machine's or the replayer's."""
    report = loaded.report
    if report is not None and report.source.origin is Origin.EXAMPLE:
        provenance = report.source
    return Resolved(facts=loaded.facts, plan=loaded.plan, provenance=provenance, note=loaded.note,
                    probe=report.probe if report is not None else None)


def load_example(source: BundledExample) -> Resolved:
    from doctor.facts.replay import load_document  # lazy: the report model (40 ms) loads when a run starts, after the TUI's first frame

    folder = EXAMPLES if source.folder is None else source.folder
    with example_file(source.name, folder) as path:
        loaded = load_document(path)
    if loaded.report is None:
        raise ReplayError(f"example {source.name}: not a whole report")
    return replace(from_loaded(loaded, example(source.name)), provenance=example(source.name))
