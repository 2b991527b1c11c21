"""The prescription: one ordered route (or two named alternatives) that fixes this machine.

Data only. `checks/prescription/` computes it from structured problems; the checks quote it and
the renderers print it once, at the end. Each step is a shell command or a manual action.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One structured problem, decided on facts, never on message text."""

    kind: str  # see checks/prescription/problems.py: KINDS
    detail: str  # one line for people
    subject: str = ""  # what is wrong: "torch", "driver", "nvcc", "companion"


@dataclass(frozen=True)
class Step:
    kind: str  # torch | toolkit | driver | companion | build
    changes: str  # what it changes on the machine
    why: str
    command: str = ""  # a shell line, safe to paste; empty when the step is an action
    action: str = ""  # a manual action (a driver install, a BIOS/BMC setting)
    cuda_major: int | None = None  # the CUDA major a torch or toolkit step lands on
    driver_branch: int | None = None  # the newest branch a driver step may install


@dataclass(frozen=True)
class Route:
    name: str  # "downgrade torch", "upgrade the driver", "fix the toolchain"
    cost: str  # what taking this route costs
    steps: tuple[Step, ...] = ()


@dataclass(frozen=True)
class Prescription:
    problems: tuple[Problem, ...] = ()
    routes: tuple[Route, ...] = ()  # one, or two alternatives (the first is preferred)
    note: str = ""  # why there is no route although there are problems

    @property
    def empty(self) -> bool:
        return not self.routes
