"""What a check is, and the small helpers every check uses to build its Finding."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from doctor.engines import EngineAdapter, InForce, adapter, in_force
from doctor.knowledge.gpus import spec_for_key
from doctor.model.facts import Facts, GpuFacts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.plan import Plan
from doctor.model.unknown import known


@dataclass
class CheckContext:
    """What a check sees: the facts, the user's plan, and the findings of checks before it."""

    facts: Facts
    plan: Plan
    prior: dict[CheckId, Finding] = field(default_factory=dict)

    @cached_property
    def engine(self) -> InForce:
        """The engine in force and the evidence for it (doctor/engines/in_force.py)."""
        return in_force(self.plan, self.facts)

    @property
    def adapter(self) -> EngineAdapter:
        """The engine in force's answers: a check asks these and never branches on the engine's name."""
        return adapter(self.engine.engine)

    def target_gpu(self) -> GpuFacts | None:
        return self.facts.gpu(self.plan.gpu_index)

    def card(self) -> tuple[str, str, bool] | None:
        """(cc, name, planned): the --target-gpu card from the knowledge base, else this machine's GPU."""
        spec = spec_for_key(self.plan.target_gpu) if self.plan.target_gpu else None
        if spec:
            return spec.cc, spec.name, True
        gpu = self.target_gpu()
        if gpu is None or not known(gpu.compute_capability):
            return None
        return gpu.compute_capability, gpu.name if known(gpu.name) else "this GPU", False


@dataclass(frozen=True)
class Check:
    """One check, all of it declared in its module's CHECK: the registry (checks/manifest.py) is written from these."""

    id: CheckId  # its module declares it by its text, CheckId("its-id"); everywhere else names the member
    title: str
    run: Callable[[CheckContext], Finding]
    depends_on: tuple[CheckId, ...] = ()
    # a dependency that did not pass blocks this check only when its status is in here
    blocked_by: tuple[Status, ...] = (Status.FAIL, Status.SKIP, Status.ERROR)
    order: int = 0  # its place in its group (the package it lives in); the groups run in checks.GROUPS order
    per_gpu: bool = False  # it looks at one card: on a host with several GPUs it runs once per GPU (checks/per_gpu.py)

    def __post_init__(self) -> None:
        # an id or a dependency that is no CheckId raises here, when the check's module loads
        object.__setattr__(self, "id", CheckId(self.id))
        object.__setattr__(self, "depends_on", tuple(CheckId(d) for d in self.depends_on))

    def finding(self, status: Status, summary: str, evidence: dict[str, Any] | None = None,
                fix: str = "", commands: tuple[str, ...] | list[str] = ()) -> Finding:
        return Finding(id=self.id, title=self.title, status=status, summary=summary,
                       evidence=dict(evidence or {}), fix=fix, commands=tuple(commands))
