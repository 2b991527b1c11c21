"""Bounded HTTP for an engine server: every request has a deadline for the whole answer (a server that drips one
byte a second cannot hold the run), every answer a size cap, and JSON must be plain JSON (no NaN, no Infinity). Each
failure is a ServerError whose `outcome` and one-line `problem` say what went wrong and what to do."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Iterator

from doctor.model.serialize import strict_json

MAX_JSON_BYTES = 4 * 1024 * 1024  # an engine's metadata and a 128-token answer are a few KiB; more is not its API


class ServerError(Exception):
    """The server could not be asked, or its answer was not what its API promises."""

    def __init__(self, outcome: str, problem: str, body: str = "") -> None:
        super().__init__(problem)
        self.outcome = outcome  # unreachable | timeout | bad-answer | wrong-api | no-model | error
        self.problem = problem
        self.body = body[:500]  # the start of what it answered, for the evidence
        self.status = 0  # the HTTP status, when it answered one


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(raw: bytes, url: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ServerError("bad-answer", f"{url} answered with something that is not JSON ({exc})",
                          raw[:500].decode("utf-8", "replace")) from None


class _Deadline:
    def __init__(self, seconds: float, url: str) -> None:
        self.end, self.seconds, self.url = time.monotonic() + seconds, seconds, url

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise ServerError("timeout", f"{self.url} did not answer in full within {self.seconds:g} s")
        return left


def _open(url: str, body: dict | None, deadline: _Deadline) -> Any:
    data = strict_json(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json",
                                                          "Accept": "application/json, text/event-stream"})
    try:
        return urllib.request.urlopen(req, timeout=deadline.left())  # noqa: S310 - the URL the user named
    except urllib.error.HTTPError as exc:
        raw = _read_some(exc, deadline)
        err = ServerError("error", f"{url} answered HTTP {exc.code}: {_message(raw) or exc.reason}", raw.decode("utf-8", "replace"))
        err.status = exc.code
        raise err from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise ServerError("timeout", f"{url} did not answer within {deadline.seconds:g} s") from None
        raise ServerError("unreachable", f"cannot reach {url}: {getattr(reason, 'strerror', None) or reason}") from None
    except (socket.timeout, TimeoutError):
        raise ServerError("timeout", f"{url} did not answer within {deadline.seconds:g} s") from None
    except (OSError, ValueError) as exc:  # a reset connection, a malformed URL that got past the parser
        raise ServerError("unreachable", f"cannot reach {url}: {exc}") from None


def _read_some(resp: Any, deadline: _Deadline, cap: int = 4096) -> bytes:
    try:
        return bytes(resp.read(cap) or b"")
    except (OSError, ValueError):
        return b""


def _message(raw: bytes) -> str:
    """An engine's error answer in one line: {"error": "..."} (Ollama), {"error": {"message": ...}} (OpenAI)."""
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return raw.decode("utf-8", "replace").strip().splitlines()[0][:200] if raw.strip() else ""
    err = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(err, dict):
        err = err.get("message")
    if not isinstance(err, str) and isinstance(doc, dict):
        err = doc.get("detail") or doc.get("message")
    return str(err)[:200] if err else ""


def _read_all(resp: Any, deadline: _Deadline, cap: int, url: str) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = _next_chunk(resp, deadline, url)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > cap:
            raise ServerError("bad-answer", f"{url} answered more than {cap // (1024 * 1024)} MiB; an engine's API "
                              "answer is a few KiB: this is not the engine's API", b"".join(chunks)[:500].decode("utf-8", "replace"))
        chunks.append(chunk)
        deadline.left()


def _next_chunk(resp: Any, deadline: _Deadline, url: str) -> bytes:
    """What has arrived (b"" at the end), waiting at most what is left of the deadline."""
    _set_timeout(resp, deadline)
    try:
        return bytes(resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536))
    except (socket.timeout, TimeoutError):
        deadline.left()
        raise ServerError("timeout", f"{url} stopped sending mid-answer") from None
    except OSError as exc:
        raise ServerError("unreachable", f"{url} closed the connection mid-answer: {exc}") from None


def _set_timeout(resp: Any, deadline: _Deadline) -> None:
    """Each socket read waits at most what is left of the deadline."""
    sock = getattr(getattr(getattr(resp, "fp", None), "raw", None), "_sock", None)
    if sock is not None:
        try:
            sock.settimeout(max(0.05, deadline.left()))
        except OSError:
            pass


def request_json(url: str, body: dict | None = None, timeout_s: float = 5.0, cap: int = MAX_JSON_BYTES) -> Any:
    """GET (body None) or POST `url` and return its JSON; ServerError for anything else."""
    deadline = _Deadline(timeout_s, url)
    with _open(url, body, deadline) as resp:
        raw = _read_all(resp, deadline, cap, url)
    return parse_json(raw, url)


def stream_json(url: str, body: dict, timeout_s: float, cap: int = MAX_JSON_BYTES) -> Iterator[tuple[float, Any]]:
    """POST `url` and yield (monotonic time of arrival, event) for each server-sent `data: {...}` line (OpenAI's
    streaming) or JSON line (Ollama's), until `data: [DONE]` or the end; the same deadline and cap as one answer."""
    deadline = _Deadline(timeout_s, url)
    size = 0
    with _open(url, body, deadline) as resp:
        buffer = b""
        while True:
            chunk = _next_chunk(resp, deadline, url)
            now = time.monotonic()
            size += len(chunk)
            if size > cap:
                raise ServerError("bad-answer", f"{url} streamed more than {cap // (1024 * 1024)} MiB for a short answer")
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                text = line.strip()
                if text.startswith(b"data:"):
                    text = text[5:].strip()
                if not text or text.startswith(b":") or text.startswith(b"event:"):
                    continue
                if text == b"[DONE]":
                    return
                yield now, parse_json(text, url)
            if not chunk:
                return
            deadline.left()
