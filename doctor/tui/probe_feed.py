"""The one place that knows the probe runner's and the verdict's data shapes, and turns them into
display data for the panels (ProbeView, VerdictView). No textual here."""

from __future__ import annotations

import argparse
from typing import Any

from doctor.tui.probe_state import ProbeView
from doctor.tui.verdict_state import VerdictView


def probe_arguments(args: argparse.Namespace) -> dict:
    return {"no_probe_reason": "the probe is not built yet in this version"}


def probe_view(probe: Any) -> ProbeView | None:
    return probe if isinstance(probe, ProbeView) else None


def verdict_view(verdict: Any) -> VerdictView | None:
    return verdict if isinstance(verdict, VerdictView) else None
