"""An engine's timed probe that gave no speed, said as what happened (the engine died, timed out, is not installed),
never as a slow engine: the verdict every engine's judgement starts with (doctor/verdict/llamacpp.py, transformers.py)."""

from __future__ import annotations

from doctor.model.engine_probe import LlamaCppProbe, TransformersProbe
from doctor.model.engine_verdict import EngineVerdict


def unmeasured(probe: LlamaCppProbe | TransformersProbe, label: str, engine: str) -> EngineVerdict:
    """The verdict of a probe that did not end "ok" with a median speed."""
    what = {"died-silently": f"{label} died without an error of its own (not a slow engine)",
            "timeout": f"{label} gave no result in time", "not-installed": f"{label} is not installed"}
    return EngineVerdict(probe.outcome, f"{what.get(probe.outcome, 'the probe failed')}: {probe.error}", engine=engine)
