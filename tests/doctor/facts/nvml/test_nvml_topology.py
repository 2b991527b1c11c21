"""The NVML gatherer records each pair's link (NVLink lanes, PCIe level, P2P) and MIG mode, tolerantly."""

from __future__ import annotations

import fake_nvml

from doctor.facts.nvml import gather_nvml
from doctor.model.unknown import Unknown


def test_pairs_nvlink_lanes_p2p_and_mig():
    facts = gather_nvml(fake_nvml.two_v100s_on_nvlink())
    assert len(facts.gpus) == 2
    (link,) = facts.links
    assert (link.a, link.b, link.path, link.nvlink_lanes, link.p2p) == (0, 1, "single-switch", 2, "ok")
    assert isinstance(facts.gpus[0].mig_mode, Unknown)


def test_one_gpu_has_no_links_and_old_bindings_do_not_crash():
    facts = gather_nvml(fake_nvml.v100())
    assert facts.available and facts.links == ()
    assert isinstance(facts.gpus[0].mig_mode, Unknown)  # nvmlDeviceGetMigMode missing: Unknown, not a crash
