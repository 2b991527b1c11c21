"""An engine's own probe (issue 35) shows in the TUI as the ExLlamaV2 probe does: a saved llama.cpp or Transformers
report opens with its probe panel (the engine's runs and median) and its verdict panel (measured against the ceiling,
the engine's causes), from the report's own data; a report of an engine that was not run shows why."""

from __future__ import annotations

from pathlib import Path

from tui_support import run_app, settle

from doctor.model.source import SavedFile
from doctor.run.probe_stage import probe_checks
from doctor.run.run import Run
from doctor.run.session import Session
from doctor.tui.app import DoctorApp
from doctor.tui.probe_panel import ProbePanel
from doctor.tui.verdict_panel import VerdictPanel

REPORTS = Path(__file__).resolve().parents[3] / "fixtures" / "probes" / "engines" / "reports"


def panels(name: str):
    async def script(app, pilot):
        await settle(app, pilot)
        return app.query_one(ProbePanel).view, app.query_one(VerdictPanel).view

    return run_app(DoctorApp(Session(run=Run(SavedFile(str(REPORTS / f"{name}.json")), checks=probe_checks))), script,
                   size=(120, 40))


def test_a_recorded_llama_cpp_probe_fills_the_probe_and_verdict_panels():
    probe, verdict = panels("h200-llamacpp-q4km-probe")
    assert probe.state == "done" and probe.reported_tok_s == 94.3 and len(probe.tok_s) == 5
    assert verdict.measured_tok_s == 94.3 and verdict.ceiling_tok_s == 313.8
    assert verdict.headline.startswith("llama.cpp: 94.3 tok/s = 30% of the 313.8 tok/s ceiling")
    assert [c.label for c in verdict.causes] == ["kernel path", "engine"]


def test_a_recorded_transformers_probe_with_a_flagged_spread_says_so_on_screen():
    probe, verdict = panels("h200-transformers-nf4-spread-flagged")
    assert probe.state == "done" and probe.mem_clock_mhz is not None
    assert "flagged above 10%" in verdict.headline and "launch-bound" in [c.label for c in verdict.causes]


def test_an_engine_that_was_not_run_shows_why_and_no_figure():
    probe, verdict = panels("ollama-not-run")
    assert probe.state == "skipped" and "ollama" in probe.error and probe.reported_tok_s is None
    assert verdict is None


def test_a_recorded_server_probe_fills_the_probe_and_verdict_panels(tmp_path):
    """--engine-url (issue 35): a saved report of a timed Ollama server opens with its runs and its verdict."""
    from dataclasses import replace

    from conftest import MACHINES

    from doctor.facts.replay import load_document
    from doctor.model.engine_probe import LlamaCppRun, ServerProbe
    from doctor.model.engines import EngineServer
    from doctor.model.ids import Engine
    from doctor.model.probe_results import ProbeReport
    from doctor.model.report import report_to_json
    from doctor.run.engine_stage import with_engine_probe
    from doctor.run.pipeline import diagnose

    doc = load_document(str(MACHINES / "engine-hosts" / "v100-ollama-no-torch-healthy.json"))
    server = EngineServer("http://127.0.0.1:11434", "ollama", "ollama", Engine.OLLAMA, "0.12.3", local=True)
    plan = replace(doc.plan, engine_server=server)
    sp = ServerProbe(backend="Ollama 0.12.3 (/api/generate)", outcome="ok", url=server.url, flavour="ollama",
                     model="qwen3:27b", clock="server", runs=tuple(LlamaCppRun(128, r, r) for r in (35.0, 35.2, 34.9)),
                     median_tok_s=35.0, spread_pct=0.86, asked_runs=3, model_bytes=16 * 1024 ** 3, local=True)
    report = with_engine_probe(diagnose(plan, doc.facts), ProbeReport(status="ok", summary="35 tok/s", engine="ollama",
                                                                      server=sp))
    path = tmp_path / "ollama-server.json"
    path.write_text(report_to_json(report))

    async def script(app, pilot):
        await settle(app, pilot)
        return app.query_one(ProbePanel).view, app.query_one(VerdictPanel).view

    probe, verdict = run_app(DoctorApp(Session(run=Run(SavedFile(str(path)), checks=probe_checks))), script,
                             size=(120, 40))
    assert probe.state == "done" and probe.reported_tok_s == 35.0 and probe.tok_s == (35.0, 35.2, 34.9)
    assert verdict.measured_tok_s == 35.0 and verdict.headline.startswith("ollama: 35 tok/s = ")
