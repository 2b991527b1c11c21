"""The recorded examples in fixtures/examples/: listed, loaded, and replayed through today's checks and verdict.

An example is a saved report (schema v100-doctor/report/1) whose source is "example:<name>" and
whose note says where its numbers come from. Replaying one re-runs today's checks on its facts
and computes the verdict live from its recorded probe, so nothing shown is a stored conclusion;
renderers label it RECORDED EXAMPLE, never this machine.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from doctor.model.report import Report
from doctor.model.errors import ReplayError
from doctor.facts.replay import load_document

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"
ORDER = ("seed-1-transformers-bnb", "seed-2-exl2-4.25bpw", "seed-3-q8-cache-8192", "seed-4-exl2-3.75bpw",
         "h200-synthetic-gptq")  # the reference story's journey first, then a real recording


def example_names(folder: Path = EXAMPLES) -> list[str]:
    found = {p.stem for p in folder.glob("*.json")}
    return [n for n in ORDER if n in found] + sorted(found - set(ORDER))


def load_example(name: str, folder: Path = EXAMPLES) -> Report:
    """The example as recorded (probe included); ReplayError when it is missing or damaged."""
    path = folder / f"{name}.json"
    if not path.exists():
        raise ReplayError(f"no example named {name!r}; known: {', '.join(example_names(folder)) or 'none'}")
    loaded = load_document(str(path))
    if loaded.report is None:
        raise ReplayError(f"{path}: not a whole report")
    return replace(loaded.report, source=f"example:{name}", note=loaded.note)


def replay_example(name: str, folder: Path = EXAMPLES) -> Report:
    """Today's checks on the example's facts, then its recorded probe folded in (verdict computed now)."""
    from doctor.run.pipeline import diagnose
    from doctor.run.probe_stage import with_probe

    recorded = load_example(name, folder)
    report = diagnose(recorded.plan, recorded.facts, source=f"example:{name}", note=recorded.note)
    return with_probe(report, recorded.probe) if recorded.probe is not None else report
