"""Which engine server answers at --engine-url: Ollama's native API (/api/version, /api/tags, /api/ps) or an
OpenAI-compatible one (/v1/models), and which engine behind it (llama-server, vLLM, TabbyAPI, LM Studio). Asked once,
before the checks, so they judge that engine; never raises: a server that cannot be asked is an EngineServer whose
`problem` says why and what to do (the probe's finding, exit 3)."""

from __future__ import annotations

import socket
import urllib.parse
from typing import Any

from doctor.model.engines import SERVER_ENGINE, EngineServer
from doctor.model.ids import Engine
from doctor.probe.served.http import ServerError, request_json

ASK_S = 5.0  # each metadata request, whole answer included
PORTS = "Ollama http://HOST:11434, llama-server http://HOST:8080, vLLM http://HOST:8000, TabbyAPI http://HOST:5000, " \
        "LM Studio http://HOST:1234"
OWNED_BY = {"llamacpp": "llama-server", "vllm": "vllm", "tabbyapi": "tabbyapi"}  # /v1/models' owned_by, lower-cased


def url_problem(url: str) -> str:
    """'' for a URL the probe can ask; else why not, in one line."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (f"--engine-url {url!r} is not an http(s) URL of a server; give its base URL, e.g. "
                "http://127.0.0.1:11434 (Ollama) or http://127.0.0.1:8080 (llama-server)")
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return f"--engine-url {url!r}: the port is not a number; e.g. http://127.0.0.1:11434"
    return ""


def base_url(url: str) -> str:
    """The server's root: a trailing slash, /v1 or /api given by habit is dropped."""
    base = url.strip().rstrip("/")
    for tail in ("/v1", "/api"):
        if base.endswith(tail):
            base = base[: -len(tail)]
    return base


def is_local(url: str) -> bool:
    """The server runs on this host: loopback, this host's name, or one of its addresses."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    if host in ("localhost", "0.0.0.0", "::1", "::") or host.startswith("127."):
        return True
    try:
        name = socket.gethostname()
        mine = {name.lower(), socket.getfqdn().lower(), *socket.gethostbyname_ex(name)[2]}
        return host in mine or socket.gethostbyname(host) in mine or socket.gethostbyname(host).startswith("127.")
    except OSError:
        return False


def _fix_for(err: ServerError, url: str) -> str:
    if err.outcome == "unreachable":
        return (f"{err.problem}; start the server (`ollama serve`, `llama-server -m MODEL --port 8080`, `vllm serve "
                f"MODEL`) or give the URL it listens on ({PORTS})")
    if err.outcome == "timeout":
        return f"{err.problem}; check that {url} is the engine's server and that it is not busy, then run again"
    return f"{err.problem}; --engine-url must name an engine's server ({PORTS})"


def identify(url: str, timeout_s: float = ASK_S) -> EngineServer:
    """Ask the server who it is; the answer, or an EngineServer with the problem."""
    problem = url_problem(url)
    if problem:
        return EngineServer(url=url, problem=problem)
    base = base_url(url)
    local = is_local(base)
    try:
        return _ollama(base, local, timeout_s) or _openai(base, local, timeout_s) or EngineServer(
            url=base, local=local, problem=f"{base} answers, but neither Ollama's /api/version nor an OpenAI-compatible "
            f"/v1/models: --engine-url must name an engine's server ({PORTS})")
    except ServerError as err:
        err.problem = err.problem.replace(f"{base}/api/version", base)
        return EngineServer(url=base, local=local, problem=_fix_for(err, base))


def _optional(url: str, timeout_s: float) -> Any:
    """An endpoint a flavour may not have: None for an HTTP error or an answer that is not JSON; a server that
    cannot be reached or times out still raises (no point asking the next)."""
    try:
        return request_json(url, timeout_s=timeout_s)
    except ServerError as err:
        if err.outcome in ("unreachable", "timeout"):
            raise
        return None


def _ollama(base: str, local: bool, timeout_s: float) -> EngineServer | None:
    version = _optional(f"{base}/api/version", timeout_s)
    if not isinstance(version, dict) or not isinstance(version.get("version"), str):
        return None
    tags = _optional(f"{base}/api/tags", timeout_s)
    ps = _optional(f"{base}/api/ps", timeout_s)
    return EngineServer(url=base, api="ollama", flavour="ollama", engine=Engine.OLLAMA, version=version["version"][:40],
                        models=_names(tags, "models", "name"), loaded=_names(ps, "models", "name"), local=local)


def _openai(base: str, local: bool, timeout_s: float) -> EngineServer | None:
    models = _optional(f"{base}/v1/models", timeout_s)
    if not isinstance(models, dict) or not isinstance(models.get("data"), list):
        return None
    names = _names(models, "data", "id")
    owners = {str(m.get("owned_by", "")).lower() for m in models["data"] if isinstance(m, dict)}
    flavour = next((OWNED_BY[o] for o in owners if o in OWNED_BY), "")
    version = ""
    if not flavour:
        if isinstance(v := _optional(f"{base}/version", timeout_s), dict) and isinstance(v.get("version"), str):
            flavour, version = "vllm", v["version"][:40]  # vLLM's /version
        elif isinstance(p := _optional(f"{base}/props", timeout_s), dict) and "default_generation_settings" in p:
            flavour = "llama-server"
        elif isinstance(lm := _optional(f"{base}/api/v0/models", timeout_s), dict) and isinstance(lm.get("data"), list):
            flavour = "lm-studio"  # LM Studio's REST API beside its OpenAI-compatible one
    elif flavour == "vllm" and isinstance(v := _optional(f"{base}/version", timeout_s), dict):
        version = str(v.get("version", ""))[:40]
    flavour = flavour or "openai-compatible"
    return EngineServer(url=base, api="openai", flavour=flavour, engine=SERVER_ENGINE.get(flavour), version=version,
                        models=names, loaded=names, local=local)


def _names(doc: Any, key: str, field: str) -> tuple[str, ...]:
    items = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return ()
    return tuple(str(m[field])[:200] for m in items[:200] if isinstance(m, dict) and isinstance(m.get(field), str))
