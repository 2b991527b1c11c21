"""CUDA's numbering under CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES (indices, UUIDs, MIG ids, bad entries)."""

from __future__ import annotations

from doctor.knowledge.arithmetic.gpu_numbering import cuda_numbering
from doctor.model.facts import GpuFacts

GPUS = (GpuFacts(index=0, name="V100", uuid="GPU-aaaa1111", compute_capability="7.0"),
        GpuFacts(index=1, name="2080 Ti", uuid="GPU-bbbb2222", compute_capability="7.5"),
        GpuFacts(index=2, name="A100", uuid="GPU-cccc3333", compute_capability="8.0", mig_mode="enabled",
                 mig_devices=("MIG-dddd4444", "MIG-eeee5555")))


def order(env, gpus=GPUS):
    return [(d.cuda_index, d.nvml_index, d.mig) for d in cuda_numbering(gpus, env).devices]


def test_fastest_first_by_default_and_pci_order_on_request():
    assert [n for _, n, _ in order({}, GPUS[:2])] == [1, 0]
    assert [n for _, n, _ in order({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, GPUS[:2])] == [0, 1]
    assert cuda_numbering(GPUS[:2], {}).differs
    assert not cuda_numbering(GPUS[:2], {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}).differs


def test_visible_devices_indices_uuid_prefixes_and_mig():
    env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert order({**env, "CUDA_VISIBLE_DEVICES": "1"}) == [(0, 1, None)]
    assert order({**env, "CUDA_VISIBLE_DEVICES": "GPU-bbbb,aaaa1111"}) == [(0, 1, None), (1, 0, None)]
    assert order({**env, "CUDA_VISIBLE_DEVICES": "MIG-eeee5555"}) == [(0, 2, "MIG-eeee5555")]


def test_cuda_stops_at_the_first_bad_entry():
    n = cuda_numbering(GPUS, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "0,7,1"})
    assert [d.nvml_index for d in n.devices] == [0] and "index 7 does not exist" in n.problems[0]
    assert cuda_numbering(GPUS, {"CUDA_VISIBLE_DEVICES": "GPU-ffff"}).problems


def test_torch_device_list_confirms_the_modelled_order():
    assert not cuda_numbering(GPUS[:2], {}, ("7.5", "7.0")).modelled
    assert cuda_numbering(GPUS[:2], {}, ("7.0", "7.5")).modelled
