"""The recorded examples shipped in the package (doctor/examples/*.json): listed, loaded, and replayed through
today's checks and verdict.

An example is a saved report (schema v100-doctor/report/1) whose source is "example:<name>" and whose note
says where its numbers come from. Replaying one is a Run on it (doctor/run/run.py): today's checks on its
facts and today's verdict on its recorded probe, so nothing shown is a stored conclusion; renderers label it
RECORDED EXAMPLE, never this machine. Where the files live: doctor/facts/examples.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from doctor.facts.examples import EXAMPLES, ORDER, example_file, example_names
from doctor.facts.replay import load_document
from doctor.model.errors import ReplayError
from doctor.model.report import Report
from doctor.model.source import BundledExample, example
from doctor.run.run import Run

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable  # a pathlib.Path is one too (tests)

__all__ = ["EXAMPLES", "ORDER", "example_file", "example_names", "load_example", "replay_example"]


def load_example(name: str, folder: Traversable = EXAMPLES) -> Report:
    """The example as recorded (probe included); ReplayError when it is missing or damaged."""
    with example_file(name, folder) as path:
        loaded = load_document(path)
    if loaded.report is None:
        raise ReplayError(f"example {name}: not a whole report")
    return replace(loaded.report, source=example(name), note=loaded.note)


def replay_example(name: str, folder: Traversable = EXAMPLES) -> Report:
    """Today's checks on the example's facts, then its recorded probe judged by today's verdict."""
    return Run(BundledExample(name, None if folder is EXAMPLES else folder)).execute()
