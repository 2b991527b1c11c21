"""Which card the route is for, and the route itself: the one call checks and the pipeline share."""

from __future__ import annotations

from dataclasses import replace

from checks.base import CheckContext
from checks.prescription.route import EngineNeeds, prescribe
from checks.prescription.target import target_plan
from doctor.knowledge.gpus import spec_for_pci
from doctor.model.facts import Facts
from doctor.model.plan import Plan
from doctor.model.prescription import Prescription, Route, Step
from doctor.model.unknown import known

PLAN_PARTS = {"torch": "torch", "toolkit": "nvcc", "driver": "driver"}  # a plan step's kind -> the part of the stack


def route_card(facts: Facts, plan: Plan) -> tuple[str, str] | None:
    """(cc, name): the judged GPU, else a known card on the PCI bus that the driver cannot see (R590 on a V100)."""
    card = CheckContext(facts=facts, plan=plan).card()
    if card:
        return card[0], card[1]
    pci = facts.host.nvidia_pci_devices
    specs = [s for d in (pci if known(pci) else ()) if (s := spec_for_pci(d))]
    return (specs[0].cc, specs[0].name) if specs else None


def machine_prescription(facts: Facts, plan: Plan) -> Prescription | None:
    """The machine's route; None when no card is known at all. A --target-gpu card gets a plan of what it will
    need (checks/prescription/target.py), never a route for this machine's software."""
    planned = CheckContext(facts=facts, plan=plan).card()
    if planned is not None and planned[2]:
        rx = target_plan(planned[0], planned[1])
        parts = CheckContext(facts=facts, plan=plan).adapter.cuda_stack
        steps = tuple(s for r in rx.routes[:1] for s in r.steps if PLAN_PARTS.get(s.kind, s.kind) in parts)
        return replace(rx, routes=tuple(replace(r, steps=steps) for r in rx.routes[:1])) if steps != rx.routes[0].steps else rx
    card = route_card(facts, plan)
    return prescribe(facts, *card, engine_needs(CheckContext(facts=facts, plan=plan), card[0], card[1])) if card else None


def engine_needs(ctx: CheckContext, cc: str, name: str) -> EngineNeeds:
    """What the engine in force runs on. With no engine named or found and no torch installed, only the driver is
    judged: llama.cpp and Ollama need no torch, so "install torch" would be a guess."""
    a = ctx.adapter
    parts = a.cuda_stack
    if ctx.engine.assumed and not ctx.facts.python.torch.installed:
        parts = frozenset({"driver"})
    route = None
    if a.pins_torch:  # vLLM: its release brings the torch it was built for
        j = a.judge_card(cc, name, ctx.facts)
        if j.commands:
            route = Route(name=f"install the last {a.label} release for {name}", cost=f"reinstalls {a.label} and the torch it "
                          "pins; keeps the driver", steps=tuple(Step(kind="engine", command=c, changes=f"{a.label} -> {c.split(' ')[-1]}",
                                                                   why=j.summary) for c in j.commands))
    return EngineNeeds(parts=parts, floor=a.driver_floor(cc, ctx.facts), engine_route=route)
