"""The probe's install commands: torch from the route's index first, never from exllamav2's dependencies."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES

from checks.prescription.machine import machine_prescription
from checks.prescription.probe_install import probe_install_commands
from doctor.facts.replay import load_document
from doctor.knowledge.messages import PROBE_ENGINE_INSTALL as ENGINE
from doctor.model.facts import TorchFacts
from doctor.model.plan import Plan
from doctor.model.unknown import known


def commands_for(name: str, without_torch: bool = False) -> list[str]:
    facts = load_document(str(MACHINES / name)).facts
    if without_torch:
        facts = replace(facts, python=replace(facts.python, torch=TorchFacts(installed=False, reason="not installed")))
    torch = facts.python.torch
    version = str(torch.version) if torch.installed and known(torch.version) else None
    return probe_install_commands(machine_prescription(facts, Plan()), version)


@pytest.mark.parametrize("name, without_torch, index", [
    ("v100-pcie-16gb-healthy.json", True, "whl/cu126"),  # no torch yet: the sm_70 build comes first
    ("v100-torch-2.11-cu130.json", False, "whl/cu126"),  # the CUDA 13 torch is replaced first
    ("v100-r470-torch-2.5.1-cu124.json", False, "whl/cu118"),  # an old driver: the torch it can run
    ("p40-r470-torch-2.1-cu121.json", True, "whl/cu118"),
])
def test_torch_comes_first_from_the_index_with_this_cards_kernels(name, without_torch, index):
    lines = commands_for(name, without_torch)
    torch_line = next(i for i, line in enumerate(lines) if "--index-url" in line)
    engine_line = next(i for i, line in enumerate(lines) if line.startswith(ENGINE))
    assert torch_line < engine_line and index in lines[torch_line]
    pinned = lines[engine_line].split('"torch==', 1)[1].rstrip('"')
    assert f'"torch=={pinned}"' in lines[torch_line]  # exllamav2 is installed keeping exactly that torch


def test_a_torch_that_fits_is_kept_as_it_is():
    lines = commands_for("v100-r580-torch-2.11-cu126-healthy.json")
    assert not any("--index-url" in line for line in lines)
    assert lines[-1] == f'{ENGINE} "torch==2.11.0+cu126"'


def test_without_a_known_card_pip_is_not_left_to_pick_a_torch():
    assert probe_install_commands(None, None) == ["# first a CUDA build of torch for this card: see cuda-pairing", ENGINE]
