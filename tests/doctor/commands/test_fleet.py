"""`v100-doctor fleet`: rows per host × GPU, shared causes, outliers, text/JSON/Markdown, broken files as rows."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from conftest import MACHINES, ROOT, run_cli

from doctor.facts.replay import load_document
from doctor.model.report import report_to_dict
from doctor.render.fleet import fleet_to_dict, render_fleet_markdown, render_fleet_text
from doctor.run.fleet import collect
from doctor.run.pipeline import diagnose


def report(name: str, hostname: str | None = None, tok_s: float | None = None) -> dict:
    loaded = load_document(str(MACHINES / f"{name}.json"))
    doc = report_to_dict(diagnose(loaded.plan, loaded.facts, source=f"replay:{name}"))
    if hostname:
        doc["facts"]["host"]["hostname"] = hostname
    if tok_s is not None:
        doc["plan"]["model_path"] = "/models/qwen27b-exl2"
        doc["verdict"] = {"measured_tok_s": tok_s, "ceiling_tok_s": 70.9}
    return doc


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet")
    for i in range(3):
        (d / f"cu130-{i}.json").write_text(json.dumps(report("v100-torch-2.11-cu130", f"bad{i}")))
    for i, speed in enumerate((64.0, 63.5, 65.0, 30.0)):
        (d / f"ok-{i}.json").write_text(json.dumps(report("v100-pcie-16gb-healthy", f"good{i}", speed)))
    (d / "mixed.json").write_text(json.dumps(report("mixed-2080ti-v100", "mixed")))
    (d / "broken.json").write_text("{not json")
    buf = io.BytesIO(json.dumps(report("dgx1-8x-v100", "dgx")).encode())
    with tarfile.open(d / "dgx-bundle.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("v100-doctor-bundle/report.json")
        info.size = len(buf.getvalue())
        tar.addfile(info, buf)
    return d


def test_rows_groups_and_outliers(fleet_dir):
    fleet = collect([str(fleet_dir)], jobs=1)
    assert fleet.reports == 10 and fleet.unreadable == 1
    hosts = {r.host for r in fleet.rows}
    assert {"bad0", "good3", "mixed", "dgx", "broken.json"} <= hosts
    assert [r.gpu for r in fleet.rows if r.host == "dgx"] == list(range(8))  # read from inside the bundle
    mixed = {r.gpu: r for r in fleet.rows if r.host == "mixed"}
    assert mixed[1].status == "fail" and mixed[1].top_check == "cuda-pairing" and mixed[0].status == "pass"
    top = fleet.groups[0]
    assert top.check == "cuda-pairing" and top.hosts == ("bad0", "bad1", "bad2", "mixed")
    assert top.cause.startswith("torch 2.11.0+cu130 has no kernel for sm_70")
    (slow,) = fleet.outliers
    assert slow.host == "good3" and slow.peers == 4 and slow.median_tok_s == pytest.approx(63.75)
    good = next(r for r in fleet.rows if r.host == "good0")
    assert good.share_of_ceiling == pytest.approx(64.0 / 70.9)


def test_renderings_and_json_schema(fleet_dir):
    import jsonschema

    fleet = collect([str(fleet_dir)], jobs=1)
    text = render_fleet_text(fleet)
    assert "4 host(s): cuda-pairing: torch 2.11.0+cu130 has no kernel for sm_70" in text
    assert "good3 GPU 0: 30.0 tok/s, 47% of the median 63.8" in text
    assert "| ✗ | mixed | 1 | Tesla V100-PCIE-16GB |" in render_fleet_markdown(fleet)
    doc = json.loads(json.dumps(fleet_to_dict(fleet)))
    jsonschema.validate(doc, json.loads((ROOT / "doctor" / "schema" / "fleet-1.json").read_text()))
    assert doc["schema"] == "v100-doctor/fleet/1"


def test_parallel_workers_give_the_same_fleet(fleet_dir, monkeypatch):
    import doctor.run.fleet as engine

    monkeypatch.setattr(engine, "PARALLEL_FROM", 1)
    assert collect([str(fleet_dir)], jobs=2) == collect([str(fleet_dir)], jobs=1)


def test_cli_over_fixtures_and_reports(fleet_dir, tmp_path):
    out = tmp_path / "fleet.json"
    proc = run_cli("fleet", str(fleet_dir / "mixed.json"), str(MACHINES / "v100-sxm2-4x-nvlink.json"), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "cuda-pairing: torch 2.11.0+cu130 has no kernel for sm_70" in proc.stdout
    assert len(json.loads(out.read_text())["rows"]) == 6  # 2 GPUs + 4 GPUs (the fixture replayed with today's checks)
    assert run_cli("fleet", str(tmp_path / "nothing-here")).returncode == 3


def test_fleet_over_the_live_h200_and_the_fixtures():
    fleet = collect([str(MACHINES / "h200-live-per-gpu.json"), str(MACHINES)], jobs=1)
    live = [r for r in fleet.rows if r.source.endswith("h200-live-per-gpu.json")]
    assert live and all(r.card == "NVIDIA H200" and r.status == "pass" for r in live)
    assert fleet.unreadable == 0 and {r.host for r in fleet.rows if r.card == "Tesla V100-SXM2-16GB"}
    assert fleet.groups[0].hosts and fleet.groups[0].status == "fail"


def test_fleet_json_and_markdown_hide_home_paths_but_keep_host_names(tmp_path):
    """Issue 25 item 6: fleet's outputs go through the redactor too (its rows name the reports' files)."""
    home = tmp_path / "plantuser"
    (home / "reports").mkdir(parents=True)
    (home / "reports" / "node7.json").write_text((MACHINES / "v100-pcie-16gb-healthy.json").read_text())
    env = {"HOME": str(home)}
    for fmt in ("--json", "--markdown"):
        out = run_cli("fleet", str(home / "reports"), fmt, env=env).stdout
        assert "gpu-box" in out and str(home) not in out, fmt
    kept = run_cli("fleet", str(home / "reports"), "--json", "--no-redact", env=env).stdout
    assert str(home) in kept  # the search above can fail


TOKEN = "hf_FAKEtokenDoNotUse0123456789abcdefXYZ"


def _unredacted_reports(d, n: int = 2) -> None:
    """Reports as `-o --no-redact` writes them: a token in a model path, an env value and a finding's summary."""
    for i in range(n):
        doc = report("v100-torch-2.11-cu130", f"node{i}")
        doc["plan"]["model_path"] = f"/home/alice/models/{TOKEN}/qwen"
        doc["findings"][0]["summary"] = f"HF_TOKEN={TOKEN} was read; the wheel has no sm_70 kernel"
        doc["findings"][0]["status"] = "fail"
        (d / f"r{i}.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("fmt", [(), ("--json",), ("--markdown",)], ids=["text", "json", "markdown"])
def test_fleet_redacts_reports_written_with_no_redact_in_every_output(tmp_path, fmt):
    """Issue 39: whatever the reports were written with, fleet shows and writes them redacted by default."""
    _unredacted_reports(tmp_path)
    out = tmp_path / "fleet.json"
    proc = run_cli("fleet", str(tmp_path), *fmt, "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    for shown in (proc.stdout, out.read_text()):
        assert TOKEN not in shown and "/home/alice" not in shown and "node0" in shown
        assert "redacted-secret" in shown
    kept = run_cli("fleet", str(tmp_path), *fmt, "--no-redact").stdout
    assert TOKEN in kept  # the search above can fail


def test_parallel_workers_redact_too(tmp_path, monkeypatch):
    import doctor.run.fleet as engine

    _unredacted_reports(tmp_path, 4)
    monkeypatch.setattr(engine, "PARALLEL_FROM", 1)
    fleet = collect([str(tmp_path)], jobs=2)
    assert fleet == collect([str(tmp_path)], jobs=1)
    assert TOKEN not in json.dumps(fleet_to_dict(fleet))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 1e308, "fast", True, [64]])
def test_absurd_recorded_speeds_are_unknown_with_why_and_json_stays_strict(tmp_path, value):
    """Issue 39: a report's numbers are input: NaN or 1e308 tok/s become unknown (why), never NaN or 309 digits."""
    import jsonschema

    doc = report("v100-pcie-16gb-healthy", "weird", 64.0)
    doc["verdict"]["measured_tok_s"] = value
    (tmp_path / "weird.json").write_text(json.dumps(doc))  # json.dumps writes NaN and Infinity, as a careless tool might
    proc = run_cli("fleet", str(tmp_path), "--json")
    data = json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"{c} in fleet --json"))
    (row,) = data["rows"]
    assert row["tok_s"] is None and row["share_of_ceiling"] is None and "measured_tok_s" in row["speed_unknown"]
    jsonschema.validate(data, json.loads((ROOT / "doctor" / "schema" / "fleet-1.json").read_text()))
    text = run_cli("fleet", str(tmp_path)).stdout
    (line,) = [l for l in text.splitlines() if l.split()[1:2] == ["weird"]]  # the table's row: unknown, never a number
    assert line.split()[7:9] == ["unknown", "unknown"] and "%" not in line, line
    assert "weird GPU 0: recorded measured_tok_s" in text
    assert max(len(w) for w in text.split()) < 80  # no 309-digit speed


def test_absurd_gpu_indexes_are_no_gpu_index(tmp_path):
    doc = report("v100-pcie-16gb-healthy", "weird", 64.0)
    doc["plan"]["gpu_index"] = 1e308
    doc["facts"]["nvml"]["gpus"][0]["index"] = float("nan")
    (tmp_path / "weird.json").write_text(json.dumps(doc))
    proc = run_cli("fleet", str(tmp_path), "--json")
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert all(r["gpu"] is None or isinstance(r["gpu"], int) for r in json.loads(proc.stdout)["rows"])
