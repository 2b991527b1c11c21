"""engine-build where the engine judged is not installed: plainly skipped, or, where a server of that engine was
watched or asked at --engine-url on this machine, skipped saying that it runs from a build not on PATH (not "not
installed here" beside a running server)."""

from __future__ import annotations

from dataclasses import replace

from conftest import ROOT

from checks.base import CheckContext
from checks.engine import build
from checks.runner import run_one
from doctor.facts.replay import load_document
from doctor.model.engines import EngineServer
from doctor.model.findings import Status
from doctor.model.ids import Engine

WATCHED = load_document(str(ROOT / "fixtures" / "samples" / "h200-llamacpp-serving-watch.json"))


def test_a_watched_server_is_not_called_not_installed():
    f = run_one(build.CHECK, CheckContext(WATCHED.facts, WATCHED.plan))
    assert f.status == Status.SKIP and "llama.cpp serves at http://127.0.0.1:8089 from a build not found on PATH" in f.summary
    assert "not installed here" not in f.summary


def test_a_server_asked_at_engine_url_counts_only_when_it_is_here_and_of_that_engine():
    bare = replace(WATCHED.facts, samples=None)
    here = EngineServer("http://127.0.0.1:8080", "openai", "llama-server", Engine.LLAMA_CPP, local=True)
    f = run_one(build.CHECK, CheckContext(bare, replace(WATCHED.plan, engine_server=here)))
    assert "serves at http://127.0.0.1:8080" in f.summary
    elsewhere = replace(here, url="http://10.0.0.7:8080", local=False)
    g = run_one(build.CHECK, CheckContext(bare, replace(WATCHED.plan, engine=Engine.LLAMA_CPP, engine_server=elsewhere)))
    assert g.status == Status.SKIP and "is not installed here (nothing on PATH" in g.summary
