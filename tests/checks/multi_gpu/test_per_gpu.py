"""Several GPUs on one host: every GPU judged, worst first, exit code over all, --gpu narrows (issue 15)."""

from __future__ import annotations

import json

import pytest
from conftest import MACHINES, run_cli

from doctor.cli.output import exit_code_for
from doctor.facts.replay import load_document
from doctor.model.findings import Status
from doctor.model.report import report_to_dict
from doctor.model.source import replayed
from doctor.render.markdown import render_markdown
from doctor.render.text import render_text
from doctor.run.pipeline import diagnose

SINGLE_GPU = ["v100-pcie-16gb-healthy", "v100-torch-2.11-cu130", "p40-torch-cu126", "t4-flash-attn-2", "h200-live"]


def replay(name: str, **plan):
    loaded = load_document(str(MACHINES / f"{name}.json"))
    from dataclasses import replace

    return diagnose(replace(loaded.plan, **plan), loaded.facts, source=replayed(f"{name}"))


def test_mixed_box_fails_on_the_v100_by_default():
    report = replay("mixed-2080ti-v100")
    assert [g.index for g in report.gpus] == [1, 0]  # worst first
    v100, ti = report.gpus
    assert v100.status == Status.FAIL and v100.top().id == "cuda-pairing" and "sm_70" in v100.top().summary
    assert ti.status == Status.PASS and ti.name == "NVIDIA GeForce RTX 2080 Ti"
    assert report.finding("cuda-pairing").status == Status.PASS  # the host-wide list judged GPU 0
    assert exit_code_for(report) == 2
    text = render_text(report)
    assert text.index("[✗] GPU 1 Tesla V100-PCIE-16GB") < text.index("[✓] GPU 0 NVIDIA GeForce RTX 2080 Ti")
    assert "- [✗] GPU 1 Tesla V100" in render_markdown(report)


def test_gpu_flag_narrows_and_repeats():
    only_ti = replay("mixed-2080ti-v100", gpu_index=0, gpu_indices=(0,))
    assert only_ti.gpus == () and exit_code_for(only_ti) == 0
    only_v100 = replay("mixed-2080ti-v100", gpu_index=1, gpu_indices=(1,))
    assert only_v100.finding("cuda-pairing").status == Status.FAIL
    both = replay("dgx1-8x-v100", gpu_index=2, gpu_indices=(2, 5))
    assert sorted(g.index for g in both.gpus) == [2, 5]
    assert both.finding("gpu-topology").evidence["links"] == {"2-5": "SYS, P2P IOH topology not supported"}


def test_cli_gpu_flag_is_repeatable_and_exit_code_is_the_worst():
    proc = run_cli("--replay", str(MACHINES / "mixed-2080ti-v100.json"), "--gpu", "1", "--gpu", "0", "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and doc["plan"]["gpu_indices"] == [1, 0]
    assert [g["index"] for g in doc["gpus"]] == [1, 0]
    assert run_cli("--replay", str(MACHINES / "mixed-2080ti-v100.json"), "--gpu", "0").returncode == 0


def test_per_gpu_report_validates_and_replays(validate, tmp_path):
    report = replay("dgx1-8x-v100")
    doc = validate(report_to_dict(report))
    assert len(doc["gpus"]) == 8 and doc["facts"]["nvml"]["links"][0] == {"a": 0, "b": 1, "path": "single-switch",
                                                                          "nvlink_lanes": 1, "p2p": "ok"}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    again = load_document(str(path))
    assert again.report.gpus == report.gpus  # the per-GPU findings come back as saved


@pytest.mark.parametrize("name", SINGLE_GPU)
def test_single_gpu_fixtures_are_unchanged(name):
    report = replay(name)
    assert report.gpus == ()
    assert not {"gpu-numbering", "gpu-topology"} & {f.id for f in report.findings}


def test_dgx1_cube_mesh_and_tensor_parallel_without_p2p():
    report = replay("dgx1-8x-v100")
    topo = report.finding("gpu-topology")
    assert len(topo.evidence["nvlink_pairs"]) == 16  # six NVLinks per GPU to four peers: 8 * 4 / 2
    assert topo.evidence["links"]["0-3"] == "NV2" and topo.evidence["links"]["0-1"] == "NV1"
    assert "0-5" in topo.evidence["without_p2p"]
    tp = replay("dgx1-8x-v100", tensor_parallel=True)
    assert tp.finding("gpu-topology").status == Status.FAIL and exit_code_for(tp) == 2
    quad = replay("v100-sxm2-4x-nvlink", tensor_parallel=True)
    assert quad.finding("gpu-topology").status == Status.PASS  # the quad is fully NVLinked


def test_uuid_visible_devices_renumber_and_warn_with_a_split():
    report = replay("cuda-visible-uuids")
    n = report.finding("gpu-numbering")
    assert n.status == Status.INFO and n.evidence["cuda_order"][0].startswith("CUDA 0 = NVML 1")
    assert {g.index: g.cuda_index for g in report.gpus} == {0: 1, 1: 0}
    split = replay("cuda-visible-uuids", gpu_split=(8.0, 8.0))
    assert split.finding("gpu-numbering").status == Status.WARN


def test_mig_card_beside_others():
    report = replay("mig-a100-beside-v100s")
    n = report.finding("gpu-numbering")
    assert n.status == Status.WARN and "MIG" in n.summary
    assert "(MIG MIG-1b2f3e6a" in n.evidence["cuda_order"][0]


@pytest.mark.parametrize("name,code", [("mixed-2080ti-v100", 2), ("v100-sxm2-4x-nvlink", 0), ("dgx1-8x-v100", 0),
                                       ("cuda-visible-uuids", 0), ("mig-a100-beside-v100s", 1)])
def test_exit_code_is_the_worst_over_the_gpus(name, code):
    assert exit_code_for(replay(name)) == code
