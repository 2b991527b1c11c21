"""The one rule that grades a measured decode speed: the same measurement gets the same status in the main run,
in `probe` (on your model or a synthetic one), in a replay and for every engine.

A speed is judged against what its engine reaches on this card's architecture (doctor/knowledge/engine_efficiency.py:
the share of the bandwidth ceiling each engine's sources measured), not against the bare ceiling: ExLlamaV2 reaches
0.90 of it on a V100 and 0.28 on an H200, llama.cpp 0.66 and 0.31. Whether the model was synthetic does not change
the grade: a synthetic model of the same shape reads the same bytes per token, so it decodes at the same speed.
"""

from __future__ import annotations

from doctor.model.findings import Status

SHORTFALL = 0.85
"""A measured share below 0.85 x the engine's expected share warns. Why 0.85: the probe flags runs more than 10% apart
as unsettled (doctor/verdict/engine_probe.py FLAG_SPREAD_PCT), and the ceiling's arithmetic (datasheet bandwidth,
bytes per token) is good to a few percent, so a speed 15% short of the engine's figure is more than noise: something
in this setup costs speed. The reference V100 (64.05 of 70.9 tok/s, ExLlamaV2's 0.90) passes by a wide margin."""


def decode_speed_status(efficiency: float | None, expected: float | None, *, unsettled: bool = False,
                        offloaded: bool = False) -> Status:
    """The status of a measured decode speed: INFO when there is no ceiling to judge it by (the speed is still shown),
    WARN when the runs never settled, weights crossed PCIe every token, or the share of the ceiling is below
    SHORTFALL x what this engine reaches on this architecture; PASS otherwise."""
    if offloaded:  # a known cause, whatever the ceiling: weights in host memory set the speed
        return Status.WARN
    if efficiency is None or expected is None:
        return Status.INFO
    if unsettled or efficiency < SHORTFALL * expected:
        return Status.WARN
    return Status.PASS


def rule_evidence(expected: float | None, source: str) -> dict[str, object]:
    """What the finding's evidence says about the rule it was graded by."""
    bar = round(SHORTFALL * expected, 3) if expected is not None else None
    return {"expected_efficiency": expected, "warn_below_efficiency": bar, "expected_source": source,
            "rule": f"warn below {SHORTFALL:g} x the engine's expected share of the ceiling on this architecture"}
