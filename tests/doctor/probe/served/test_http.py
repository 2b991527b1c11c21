"""doctor/probe/served/http.py against a fake server's hostile answers: each is a ServerError with its outcome and a
one-line problem, within the deadline; never a hang, never a traceback from json or urllib."""

from __future__ import annotations

import time

import pytest
from engine_server_support import FakeServer, Reply, closed_port_url

from doctor.probe.served.http import ServerError, request_json, stream_json


def ask(routes, path="/x", timeout_s=2.0, body=None, cap=None):
    with FakeServer(routes) as s:
        kw = {"cap": cap} if cap else {}
        return request_json(s.url + path, body, timeout_s=timeout_s, **kw)


def test_plain_json_comes_back():
    assert ask({("GET", "/x"): lambda _: {"version": "0.12.3"}}) == {"version": "0.12.3"}


@pytest.mark.parametrize("body, words", [
    (b'{"eval_count": NaN}', "not JSON"), (b'{"eval_count": Infinity}', "not JSON"),
    (b"<html><body>Welcome to nginx</body></html>", "not JSON"), (b"\xff\xfe\x00", "not JSON"),
])
def test_an_answer_that_is_not_plain_json_is_a_bad_answer(body, words):
    with pytest.raises(ServerError) as e:
        ask({("GET", "/x"): lambda _: Reply(200, body)})
    assert e.value.outcome == "bad-answer" and words in e.value.problem and "\n" not in e.value.problem


def test_a_huge_body_is_cut_at_the_cap():
    with pytest.raises(ServerError) as e:
        ask({("GET", "/x"): lambda _: Reply(200, b"[" + b"1," * 600_000 + b"1]")}, cap=1024 * 1024)
    assert e.value.outcome == "bad-answer" and "more than 1 MiB" in e.value.problem


def test_a_slow_drip_ends_at_the_deadline_not_later():
    started = time.monotonic()
    with pytest.raises(ServerError) as e:
        ask({("GET", "/x"): lambda _: Reply(200, b'{"version": "' + b"x" * 200 + b'"}', drip_s=0.05)}, timeout_s=1.0)
    assert e.value.outcome == "timeout" and time.monotonic() - started < 3.0


def test_a_server_that_never_answers_times_out():
    def hang(_):
        time.sleep(3)
        return {}

    started = time.monotonic()
    with pytest.raises(ServerError) as e:
        ask({("GET", "/x"): hang}, timeout_s=0.5)
    assert e.value.outcome == "timeout" and time.monotonic() - started < 2.5


def test_refused_is_unreachable():
    with pytest.raises(ServerError) as e:
        request_json(closed_port_url() + "/api/version", timeout_s=1.0)
    assert e.value.outcome == "unreachable" and "cannot reach" in e.value.problem


def test_an_http_error_carries_the_engines_own_message():
    with pytest.raises(ServerError) as e:
        ask({("POST", "/x"): lambda _: Reply(500, b'{"error": "model requires more system memory (20 GiB)"}')}, body={})
    assert e.value.outcome == "error" and e.value.status == 500 and "more system memory" in e.value.problem


def test_a_stream_yields_each_event_and_stops_at_done():
    chunks = [b'data: {"choices": [{"text": "a"}]}\n\n', b": keep-alive\n\n", b'data: {"choices": [{"text": "b"}]}\n\n',
              b"data: [DONE]\n\n", b'data: {"never": 1}\n\n']
    with FakeServer({("POST", "/s"): lambda _: Reply(200, chunks=chunks, content_type="text/event-stream")}) as s:
        events = [e for _, e in stream_json(s.url + "/s", {}, timeout_s=2.0)]
    assert events == [{"choices": [{"text": "a"}]}, {"choices": [{"text": "b"}]}]
