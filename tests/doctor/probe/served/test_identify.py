"""doctor/probe/served/identify.py: which server answers at --engine-url, or why it cannot be asked (one line)."""

from __future__ import annotations

import pytest
from engine_server_support import FakeServer, Reply, closed_port_url, ollama_routes, openai_routes

from doctor.model.ids import Engine
from doctor.probe.served.identify import base_url, identify, url_problem


def test_ollama_is_known_by_its_version_endpoint_and_says_what_it_has_loaded():
    with FakeServer(ollama_routes()) as s:
        server = identify(s.url + "/")
    assert (server.api, server.flavour, server.engine, server.version) == ("ollama", "ollama", Engine.OLLAMA, "0.12.3")
    assert server.loaded == ("qwen3:27b",) and server.local and not server.problem


@pytest.mark.parametrize("flavour, engine", [("llama-server", Engine.LLAMA_CPP), ("vllm", Engine.VLLM),
                                             ("other", None)])
def test_an_openai_compatible_server_is_named_by_its_flavour(flavour, engine):
    with FakeServer(openai_routes(flavour)) as s:
        server = identify(s.url + "/v1")  # a /v1 given by habit is the same server
    assert server.api == "openai" and server.engine == engine and server.models == ("model-27b",)
    assert server.flavour == (flavour if engine else "openai-compatible")
    assert server.url.endswith(str(s.httpd.server_address[1]))


def test_llama_server_without_owned_by_is_known_by_its_props():
    routes = openai_routes("llama-server")
    routes[("GET", "/v1/models")] = lambda _: {"data": [{"id": "m"}]}
    with FakeServer(routes) as s:
        assert identify(s.url).flavour == "llama-server"


@pytest.mark.parametrize("routes, words", [
    ({}, "neither Ollama's /api/version nor an OpenAI-compatible /v1/models"),
    ({("GET", "/api/version"): lambda _: Reply(200, b"<html>a router's login page</html>", content_type="text/html"),
      ("GET", "/v1/models"): lambda _: Reply(200, b"<html>a router's login page</html>", content_type="text/html")},
     "neither Ollama's"),
    ({("GET", "/api/version"): lambda _: {"version": 12}}, "neither"),  # wrong type: not Ollama's answer
])
def test_a_server_that_is_not_an_engine_is_named_so(routes, words):
    with FakeServer(routes) as s:
        server = identify(s.url)
    assert words in server.problem and "--engine-url must name an engine's server" in server.problem
    assert server.engine is None and "\n" not in server.problem


def test_refused_names_the_url_and_how_to_start_a_server():
    server = identify(closed_port_url())
    assert server.problem.startswith("cannot reach http://127.0.0.1:") and "ollama serve" in server.problem


@pytest.mark.parametrize("url", ["ftp://host", "127.0.0.1:11434", "http://", "http://host:port"])
def test_a_url_that_is_not_one_is_refused_before_any_request(url):
    assert url_problem(url) and identify(url).problem == url_problem(url)


def test_base_url_drops_the_api_tails():
    assert base_url("http://h:8000/v1/") == base_url("http://h:8000/api") == "http://h:8000"
