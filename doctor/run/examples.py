"""The recorded examples shipped in the package (doctor/examples/*.json): listed, loaded, and replayed through
today's checks and verdict.

An example is a saved report (schema v100-doctor/report/1) whose source is "example:<name>" and
whose note says where its numbers come from. Replaying one re-runs today's checks on its facts
and computes the verdict live from its recorded probe, so nothing shown is a stored conclusion;
renderers label it RECORDED EXAMPLE, never this machine. They are package data read through
importlib.resources, so `demo` works the same from a wheel, pipx or uv tool as from a checkout.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from importlib import resources
from typing import TYPE_CHECKING, Iterator

from doctor.model.report import Report
from doctor.model.errors import ReplayError
from doctor.facts.replay import load_document

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable  # a pathlib.Path is one too (tests, the TUI's --replay)

EXAMPLES: Traversable = resources.files("doctor") / "examples"
ORDER = ("seed-1-transformers-bnb", "seed-2-exl2-4.25bpw", "seed-3-q8-cache-8192", "seed-4-exl2-3.75bpw",
         "h200-synthetic-gptq")  # the reference story's journey first, then a real recording


def example_names(folder: Traversable = EXAMPLES) -> list[str]:
    found = {p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json")} if folder.is_dir() else set()
    return [n for n in ORDER if n in found] + sorted(found - set(ORDER))


@contextmanager
def example_file(name: str, folder: Traversable = EXAMPLES) -> Iterator[str]:
    """A real path to the example for as long as the block runs (a zipped install gets a temporary copy)."""
    entry = folder / f"{name}.json"
    if not entry.is_file():
        raise ReplayError(f"no example named {name!r}; known: {', '.join(example_names(folder)) or 'none'}")
    with resources.as_file(entry) as path:
        yield str(path)


def load_example(name: str, folder: Traversable = EXAMPLES) -> Report:
    """The example as recorded (probe included); ReplayError when it is missing or damaged."""
    with example_file(name, folder) as path:
        loaded = load_document(path)
    if loaded.report is None:
        raise ReplayError(f"example {name}: not a whole report")
    return replace(loaded.report, source=f"example:{name}", note=loaded.note)


def replay_example(name: str, folder: Traversable = EXAMPLES) -> Report:
    """Today's checks on the example's facts, then its recorded probe folded in (verdict computed now)."""
    from doctor.run.pipeline import diagnose
    from doctor.run.probe_stage import with_probe

    recorded = load_example(name, folder)
    report = diagnose(recorded.plan, recorded.facts, source=f"example:{name}", note=recorded.note)
    return with_probe(report, recorded.probe) if recorded.probe is not None else report
