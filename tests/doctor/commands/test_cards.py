"""plan and fit with no --target-gpu answer for the cards NVML finds here, else the V100 16 GB and why."""

from __future__ import annotations

import argparse

import pytest

import doctor.commands.cards as cards_module
import doctor.facts.nvml.isolated as isolated
from doctor.commands import plan
from doctor.commands.cards import DEFAULT_CARD, detected_cards
from doctor.model.facts import GpuFacts, NvmlFacts


def nvml_with(*gpus: tuple[str, float]) -> NvmlFacts:
    return NvmlFacts(available=True, gpus=tuple(GpuFacts(index=i, name=n, memory_total_mib=m) for i, (n, m) in enumerate(gpus)))


@pytest.mark.parametrize("gpus,keys", [
    ((("Tesla V100-SXM2-32GB", 32768.0),), ("v100-sxm2-32gb",)),
    ((("Tesla P40", 24576.0), ("Tesla T4", 15360.0)), ("p40", "t4")),
])
def test_the_cards_nvml_finds_are_the_ones_planned(monkeypatch, gpus, keys):
    monkeypatch.setattr(isolated, "read_isolated", lambda: nvml_with(*gpus))
    cards, where = detected_cards()
    assert tuple(c.key for c in cards) == keys and where == "detected"


@pytest.fixture(autouse=True)
def a_driver_is_loaded(monkeypatch):
    """NVML is faked in these tests: the check for a loaded driver (absent on CI) must not cut it short."""
    monkeypatch.setattr(cards_module, "_no_nvidia_driver", lambda: False)


def test_a_host_with_no_nvidia_driver_plans_the_default_without_asking_nvml(monkeypatch):
    monkeypatch.setattr(cards_module, "_no_nvidia_driver", lambda: True)
    monkeypatch.setattr(isolated, "read_isolated", lambda: pytest.fail("NVML was asked"))
    cards, where = detected_cards()
    assert [c.key for c in cards] == [DEFAULT_CARD] and "no NVIDIA driver is loaded" in where


def test_no_nvml_plans_the_default_card_and_says_why(monkeypatch):
    monkeypatch.setattr(isolated, "read_isolated", lambda: NvmlFacts(available=False, reason="no NVIDIA driver"))
    cards, where = detected_cards()
    assert [c.key for c in cards] == [DEFAULT_CARD] and "no NVIDIA driver" in where and "--target-gpu" in where


def test_plan_without_target_gpu_plans_the_detected_card(monkeypatch, capsys):
    monkeypatch.setattr(isolated, "read_isolated", lambda: nvml_with(("Tesla P40", 24576.0)))
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    result = plan.make_plan(parser.parse_args(["Qwen/Qwen3-30B-A3B"]))
    assert {r.cards for r in result.rows} == {("p40",)}
    assert "planning for p40 (detected)" in capsys.readouterr().err
