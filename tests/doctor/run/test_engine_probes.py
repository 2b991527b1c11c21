"""The llama.cpp, Transformers and Ollama probes as stages of the one Run (issue 35): `probe --model X.gguf`,
`probe --engine E --synthetic` and the main command with --model run the engine in force and write a
v100-doctor/report/1 that replays to the same verdict and exit code. Live runs here use stand-ins: a fake
libnvidia-ml.so.1 (tests/robustness/fake_libnvidia_ml.c: a V100 at 50% busy), a fake llama-bench on PATH and fake
torch/transformers/bitsandbytes; the recorded H200 reports in fixtures/probes/engines/reports/ replay the real thing."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from gguf_support import write_gguf

ROOT = Path(__file__).resolve().parents[3]
REPORTS = ROOT / "fixtures" / "probes" / "engines" / "reports"
FAKE_HF = ROOT / "tests" / "doctor" / "probe" / "probe_fakes" / "fake_hf"
sys.path.insert(0, str(ROOT / "tests" / "robustness"))
from fake_nvml_lib import build_fake_nvml  # noqa: E402

ROW = {"n_prompt": 0, "n_gen": 128, "samples_ts": [50.1, 50.3, 50.2]}

# recorded (or constructed, per each file's note): the exit code and the decode-speed/probe line they replay to
RECORDED = {"h200-llamacpp-q4km-probe": (0, "decode-speed", "pass"),
            "h200-llamacpp-synthetic-probe": (0, "decode-speed", "pass"),
            "h200-transformers-nf4-probe": (1, "decode-speed", "warn"),
            "h200-transformers-nf4-spread-flagged": (1, "decode-speed", "warn"),
            "ollama-not-run": (2, "probe", "fail")}


@pytest.fixture(scope="module")
def nvml(tmp_path_factory) -> Path:
    return build_fake_nvml(tmp_path_factory.mktemp("fake-nvml"))


def machine(tmp_path: Path, nvml: Path, bench_body: str | None = None, hf: bool = False) -> dict:
    """A fake V100 through NVML, llama-bench on PATH when asked (no llama-cpp-python), the fake HF stack when asked."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    if bench_body is not None:
        exe = bindir / "llama-bench"
        exe.write_text(f"#!/bin/sh\necho 'load_tensors: offloaded 5/5 layers to GPU' >&2\nsleep 0.2\n{bench_body}\n")
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    path = str(ROOT)
    if hf:
        site = tmp_path / "site"
        site.mkdir(exist_ok=True)
        for name in ("torch", "transformers", "bitsandbytes"):
            if not (site / name).exists():
                (site / name).symlink_to(FAKE_HF / name)
        path = f"{site}{os.pathsep}{ROOT}"
    return {"LD_LIBRARY_PATH": str(nvml), "FAKE_NVML": "ok", "PYTHONPATH": path, "FAKE_STEP_S": "0.001",
            "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path),
            "XDG_CACHE_HOME": str(tmp_path / ".cache")}


def replayed(path: Path, env: dict | None = None) -> tuple[int, dict]:
    proc = run_cli("--no-tui", "--replay", str(path), "--json", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_each_recorded_engine_probe_replays_to_its_verdict_and_exit_code(name, validate):
    recorded = json.loads((REPORTS / f"{name}.json").read_text())
    assert recorded["note"].startswith(("Recorded on the H200", "Constructed"))
    code, doc = replayed(REPORTS / f"{name}.json")
    validate(doc)
    want_code, finding, status = RECORDED[name]
    assert code == want_code and doc["schema"] == "v100-doctor/report/1"
    assert {f["id"]: f["status"] for f in doc["findings"]}[finding] == status
    if recorded.get("engine_verdict"):  # today's verdict on the recorded probe reaches the recorded verdict (its
        keys = ("outcome", "summary", "measured_tok_s", "ceiling_tok_s", "efficiency", "unsettled")  # sources' words may move)
        assert {k: doc["engine_verdict"][k] for k in keys} == {k: recorded["engine_verdict"][k] for k in keys}


def test_the_recorded_llama_cpp_probe_is_the_engine_measured_beside_its_ceiling():
    _, doc = replayed(REPORTS / "h200-llamacpp-q4km-probe.json")
    v, lp = doc["engine_verdict"], doc["probe"]["llamacpp"][-1]
    assert doc["probe"]["engine"] == "llama.cpp" and lp["backend"] == "llama-cpp-python" and lp["median_tok_s"] == 94.3
    assert v["summary"].startswith("94.3 tok/s = 30% of the 313.8 tok/s ceiling (4800 GB/s / 15.30 GB per token)")
    assert "llama.cpp itself: 30% of the ceiling" in " ".join(c["text"] for c in v["causes"])
    assert lp["gpu_decode_samples"] == 68 and lp["gpu_util_pct"] == 98.0 and lp["gpu_sm_clock_mhz"] == 1980.0


def test_nvml_is_summarised_for_a_launch_bound_transformers_probe():
    """The issue's H200 run showed utilisation and clocks as null over 558 samples: only samples over 50% busy
    counted, and a launch-bound Transformers decode never reached it."""
    _, doc = replayed(REPORTS / "h200-transformers-nf4-probe.json")
    t = doc["probe"]["transformers"]
    assert t["timing"] == "generate()" and t["gpu_samples"] > 400 and 100 < t["gpu_decode_samples"] < t["gpu_samples"]
    assert t["gpu_util_pct"] is not None and t["gpu_util_pct"] < 50 and t["gpu_sm_clock_mhz"] == 1980.0
    assert "busy only" in " ".join(c["text"] for c in doc["engine_verdict"]["causes"])


def test_a_spread_over_ten_percent_is_flagged_with_the_runs_it_took():
    _, doc = replayed(REPORTS / "h200-transformers-nf4-spread-flagged.json")
    t = doc["probe"]["transformers"]
    assert len(t["runs"]) > t["asked_runs"] == 3 and t["spread_pct"] > 10
    assert doc["engine_verdict"]["unsettled"].startswith(f"the runs spread 15% after {len(t['runs']) - 3} more runs")
    speed = next(f for f in doc["findings"] if f["id"] == "decode-speed")
    assert "flagged above 10%" in speed["summary"]


def test_ollama_without_its_server_is_not_run_and_gets_no_figure():
    code, doc = replayed(REPORTS / "ollama-not-run.json")
    probe = next(f for f in doc["findings"] if f["id"] == "probe")
    assert code == 2 and probe["title"] == "Timed Ollama (llama.cpp) probe" and "ollama/issues/8989" in probe["summary"]
    assert doc["engine_verdict"]["outcome"] == "not-run" and doc["engine_verdict"]["measured_tok_s"] is None
    assert not any(f["id"] == "decode-speed" for f in doc["findings"])


def test_probe_model_gguf_runs_llama_cpp_writes_a_report_and_replays_to_it(tmp_path, nvml, validate):
    """Before: a bare list without `schema` (--replay exited 3)."""
    env = machine(tmp_path, nvml, f"echo '{json.dumps(ROW)}'")
    model, out = write_gguf(tmp_path / "m.gguf"), tmp_path / "r.json"
    proc = run_cli("probe", "--model", str(model), "-o", str(out), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = validate(json.loads(out.read_text()))
    assert doc["schema"] == "v100-doctor/report/1" and doc["probe"]["engine"] == "llama.cpp"
    assert doc["probe"]["llamacpp"][-1]["backend"] == "llama-bench" and doc["probe"]["llamacpp"][-1]["median_tok_s"] == 50.2
    assert "Probe (llama.cpp)" in proc.stdout and "decode 50.2 tok/s (llama-bench" in proc.stdout
    assert "ExLlamaV2" not in proc.stdout
    code, again = replayed(out, env)
    assert code == proc.returncode and again["engine_verdict"] == doc["engine_verdict"]


def test_a_llama_cpp_that_dies_is_said_so_and_fails(tmp_path, nvml):
    env = machine(tmp_path, nvml, "kill -ABRT $$")
    proc = run_cli("probe", "--model", str(write_gguf(tmp_path / "m.gguf")), env=env)
    assert proc.returncode == 2 and "died-silently" in proc.stdout and "SIGABRT" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_json_is_the_report_alone(tmp_path, nvml):
    env = machine(tmp_path, nvml, f"echo '{json.dumps(ROW)}'")
    proc = run_cli("probe", "--model", str(write_gguf(tmp_path / "m.gguf")), "--json", env=env)
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "v100-doctor/report/1" and doc["engine_verdict"]["measured_tok_s"] == 50.2


def test_the_main_command_with_a_gguf_runs_llama_cpp_not_exllamav2(tmp_path, nvml):
    """Before: no probe at all, and "ExLlamaV2 is not ready"."""
    env = machine(tmp_path, nvml, f"echo '{json.dumps(ROW)}'")
    out = tmp_path / "main.json"
    proc = run_cli("--no-tui", "--model", str(write_gguf(tmp_path / "m.gguf")), "-o", str(out), env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["probe"]["engine"] == "llama.cpp" and doc["engine_verdict"]["measured_tok_s"] == 50.2
    assert not any(f["id"] == "probe" and "ExLlamaV2" in f["summary"] for f in doc["findings"])
    code, again = replayed(out, env)
    assert code == proc.returncode and again["engine_verdict"] == doc["engine_verdict"]


def test_probe_engine_llama_cpp_synthetic_runs_llama_cpp_on_a_gguf_it_writes(tmp_path, nvml, monkeypatch, capsys):
    """Before: it never ran llama.cpp (ExLlamaV2's probe instead, or "ExLlamaV2 is not ready")."""
    from doctor.cli.main import main
    from doctor.probe.synthetic import TINY
    from doctor.run import engine_stage

    for key, value in machine(tmp_path, nvml, f"echo '{json.dumps(ROW)}'").items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(engine_stage, "synthetic_shape", lambda: TINY)  # a small GGUF of the same writer
    out = tmp_path / "r.json"
    main(["probe", "--engine", "llama.cpp", "--synthetic", "--synthetic-layers", "2", "--keep-synthetic",
          str(tmp_path / "keep"), "-o", str(out)])
    doc = json.loads(out.read_text())
    lp = doc["probe"]["llamacpp"][-1]
    assert doc["probe"]["engine"] == "llama.cpp" and lp["synthetic"].startswith("synthetic Q4_K_M GGUF (2 layers")
    assert lp["shape"]["n_layer"] == 2 and (tmp_path / "keep" / "synthetic-q4_k_m.gguf").is_file()
    probe_status = {f["id"]: f["status"] for f in doc["findings"]}["decode-speed"]
    assert probe_status in ("pass", "warn")  # graded like any speed (it was "info" here, "warn" in the main run)
    # the same model and the same measurement in the main run: the same grade (doctor/verdict/speed_rule.py)
    again = tmp_path / "main.json"
    main(["--no-tui", "--model", str(tmp_path / "keep" / "synthetic-q4_k_m.gguf"), "-o", str(again)])
    ran = json.loads(again.read_text())
    assert ran["engine_verdict"]["measured_tok_s"] == doc["engine_verdict"]["measured_tok_s"]
    assert {f["id"]: f["status"] for f in ran["findings"]}["decode-speed"] == probe_status
    capsys.readouterr()


def test_probe_engine_transformers_writes_a_report_and_replays_to_it(tmp_path, nvml, validate):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                                   "hidden_size": 512, "intermediate_size": 1536,
                                                   "num_attention_heads": 8, "num_key_value_heads": 2,
                                                   "num_hidden_layers": 3, "vocab_size": 4096}))
    env = machine(tmp_path, nvml, hf=True)
    out = tmp_path / "r.json"
    proc = run_cli("probe", "--engine", "transformers", "--model", str(model), "--tokens", "16", "--warmup", "8",
                   "-o", str(out), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = validate(json.loads(out.read_text()))
    t = doc["probe"]["transformers"]
    assert doc["probe"]["engine"] == "transformers" and t["quant"] == "nf4" and t["timing"] == "generate()"
    assert "Probe (transformers)" in proc.stdout and "generate() timed" in proc.stdout
    code, again = replayed(out, env)
    assert code == proc.returncode and again["engine_verdict"] == doc["engine_verdict"]


def test_without_torch_the_transformers_probe_is_not_installed_and_fails(tmp_path, nvml):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                                   "hidden_size": 512, "num_attention_heads": 8,
                                                   "num_hidden_layers": 3, "vocab_size": 4096}))
    env = machine(tmp_path, nvml)
    proc = run_cli("probe", "--engine", "transformers", "--model", str(model), env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr + proc.stdout
    assert "torch" in proc.stdout


def test_a_synthetic_transformers_model_without_tokenizers_says_so_in_the_report(tmp_path, nvml):
    env = machine(tmp_path, nvml, hf=True)
    proc = run_cli("probe", "--engine", "transformers", "--synthetic", "--synthetic-layers", "1", env=env)
    assert "Traceback" not in proc.stderr + proc.stdout
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        assert proc.returncode == 2 and "needs numpy and tokenizers" in proc.stdout
    else:  # tokenizers here: the synthetic model is written and probed by the stand-ins
        assert "Probe (transformers)" in proc.stdout


def test_the_tuis_p_runs_the_engine_in_force_and_relays_its_phases(tmp_path, monkeypatch):
    """doctor/run/live_probe.py: `p` on a llama.cpp plan runs llama.cpp's probe (here a stand-in llama-bench), not
    ExLlamaV2's, with the stage's typed events for the probe panel."""
    import threading
    from dataclasses import replace

    from doctor.model.events import ProbeFinished, ProbePhase
    from doctor.model.source import SavedFile
    from doctor.run.live_probe import run_probe_for_tui
    from doctor.run.probe_stage import probe_checks
    from doctor.run.run import Run

    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "llama-bench"
    exe.write_text(f"#!/bin/sh\necho 'load_tensors: offloaded 5/5 layers to GPU' >&2\necho '{json.dumps(ROW)}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)  # no llama-cpp-python: llama-bench
    recorded = Run(SavedFile(str(REPORTS / "h200-llamacpp-q4km-probe.json")), checks=probe_checks).execute()
    model = write_gguf(tmp_path / "m.gguf")
    report = replace(recorded, plan=replace(recorded.plan, model_path=str(model)),
                     facts=replace(recorded.facts, model=None), probe=None, engine_verdict=None)
    events: list = []
    done = run_probe_for_tui(report, events.append, threading.Event())
    assert done.probe is not None and done.probe.engine == "llama.cpp" and done.probe.llamacpp[-1].backend == "llama-bench"
    assert done.engine_verdict is not None and done.engine_verdict.measured_tok_s == 50.2
    assert any(isinstance(e, ProbePhase) and "llama.cpp" in e.message for e in events)
    assert isinstance(events[-1], ProbeFinished)
