"""Which card the route is for, and the route itself: the one call checks and the pipeline share."""

from __future__ import annotations

from checks.base import CheckContext
from checks.prescription.route import prescribe
from checks.prescription.target import target_plan
from doctor.knowledge.gpus import spec_for_pci
from doctor.model.facts import Facts
from doctor.model.plan import Plan
from doctor.model.prescription import Prescription
from doctor.model.unknown import known


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
        return target_plan(planned[0], planned[1])
    card = route_card(facts, plan)
    return prescribe(facts, *card) if card else None
