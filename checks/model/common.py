"""What the model checks share: how they follow `model-path`, and why they skip when the model is unusable."""

from __future__ import annotations

from typing import TypedDict

from doctor.model.findings import Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import ModelFacts
from doctor.model.plan import Plan


class _After(TypedDict):
    depends_on: tuple[CheckId, ...]
    blocked_by: tuple[Status, ...]


# model-path failing for a path quirk (brackets, spaces) must not hide the budget: the later checks run
# unless model-path was skipped or crashed, and skip on their own when the model could not be read.
AFTER_MODEL_PATH: _After = {"depends_on": (CheckId.MODEL_PATH,), "blocked_by": (Status.SKIP, Status.ERROR)}


def unreadable_reason(model: ModelFacts | None, plan: Plan | None = None) -> str:
    if plan is not None and not plan.model_path:
        return "no --model given (pass --model PATH to check a model)"
    if model is None:
        return "the model directory was not read in this run"
    if not model.exists:
        return "there is no model at that path (see model-path)"
    return f"the model could not be read: {model.problem} (see model-path)" if model.problem else "no model facts"
