"""doctor/probe/served/timing.py against fake Ollama, llama-server and vLLM servers: the server's own clock where it
gives one, the wall clock of a stream where it does not, more runs while they spread, and hostile answers as one-line
outcomes (never a traceback)."""

from __future__ import annotations

from dataclasses import replace

from engine_server_support import GIB, FakeServer, Reply, ollama_routes, openai_routes

from doctor.probe.served.identify import identify
from doctor.probe.served.timing import ServerOptions, time_server

FAST = ServerOptions(tokens=32, runs=3, warmup_s=3, run_s=3, ask_s=2, settle_s=5)


def timed(routes, o=FAST):
    with FakeServer(routes) as s:
        return time_server(identify(s.url), o), s.calls


def test_ollama_is_timed_by_its_own_eval_counters_and_says_what_is_loaded():
    p, calls = timed(ollama_routes(rates=[30.0, 30.0, 31.0, 30.5], size=18 * GIB, size_vram=9 * GIB))
    assert p.outcome == "ok" and p.clock == "server" and p.median_tok_s == 30.5 and len(p.runs) == 3
    assert (p.resident_bytes, p.vram_bytes, p.model_bytes, p.n_ctx) == (18 * GIB, 9 * GIB, 16 * GIB, 8192)
    assert p.parameters == {"num_ctx": "8192"} and p.details["quantization_level"] == "Q4_K_M"
    generate = [b for m, path, b in calls if path == "/api/generate"]
    assert len(generate) == 4 and all(b["stream"] is False and b["options"]["num_predict"] == 32 for b in generate)


def test_runs_that_spread_over_ten_percent_get_more_runs():
    p, _ = timed(ollama_routes(rates=[30.0, 30.0, 40.0, 30.0, 30.0, 30.0, 30.0]))
    assert len(p.runs) > 3 and p.asked_runs == 3 and p.outcome == "ok"
    assert p.spread_pct is not None and p.spread_pct <= 10  # the last three agree


def test_llama_server_is_timed_by_its_timings():
    p, _ = timed(openai_routes("llama-server", rates=[40.0]))
    assert p.outcome == "ok" and p.clock == "server" and p.median_tok_s == 40.0
    assert p.model_bytes == 16 * GIB and p.n_ctx == 8192 and p.model_path.endswith(".gguf")


def test_vllm_without_timings_is_timed_by_the_wall_clock_of_its_stream():
    p, calls = timed(openai_routes("vllm", rates=[50.0], timings=False))
    assert p.outcome == "ok" and p.clock == "wall" and p.n_ctx == 8192
    assert 20 < p.median_tok_s <= 55  # 20 ms between tokens (sleep only overshoots), on a loaded 2-core machine
    assert any(b and b.get("stream") and b.get("ignore_eos") for _, path, b in calls if path == "/v1/completions")


def test_wrong_types_are_a_bad_answer_in_one_line():
    def gen(body):
        return {"done": True, "eval_count": "128", "eval_duration": 1_000_000_000}

    p, _ = timed(ollama_routes(generate=gen))
    assert p.outcome == "bad-answer" and "eval_count='128'" in p.error and p.input_error and "\n" not in p.error


def test_nan_in_a_generate_answer_is_a_bad_answer():
    p, _ = timed(ollama_routes(generate=lambda _: Reply(200, b'{"eval_count": NaN, "eval_duration": 1}')))
    assert p.outcome == "bad-answer" and "not JSON" in p.error


def test_a_slow_drip_is_a_timeout_not_a_hang():
    p, _ = timed(ollama_routes(generate=lambda _: Reply(200, b'{"eval_count": 32, "eval_duration": 1000000000}',
                                                        drip_s=0.2)), ServerOptions(tokens=32, warmup_s=1, run_s=1))
    assert p.outcome == "timeout" and p.seconds < 4


def test_a_huge_answer_is_a_bad_answer():
    p, _ = timed(ollama_routes(generate=lambda _: Reply(200, b'{"response": "' + b"a" * (5 * 1024 * 1024) + b'"}')))
    assert p.outcome == "bad-answer" and "MiB" in p.error


def test_the_engines_error_is_the_outcome_not_an_input_error():
    p, _ = timed(ollama_routes(generate=lambda _: Reply(500, b'{"error": "model requires more system memory"}')))
    assert p.outcome == "error" and not p.input_error and "more system memory" in p.error


def test_a_model_that_stops_at_once_is_said_so():
    p, _ = timed(ollama_routes(generate=lambda b: {"eval_count": 2, "eval_duration": 10_000_000}))
    assert p.outcome == "error" and "stopped after 2 tokens" in p.error


def test_several_models_none_loaded_asks_which():
    routes = ollama_routes()
    routes[("GET", "/api/ps")] = lambda _: {"models": []}
    routes[("GET", "/api/tags")] = lambda _: {"models": [{"name": "a:7b"}, {"name": "b:27b"}]}
    p, calls = timed(routes)
    assert p.outcome == "no-model" and "ollama run a:7b" in p.error and p.input_error
    assert not any(path == "/api/generate" for _, path, _b in calls)


class _Series:
    """What the sampler's stop() returns, for gpu_summary: GPU 0's samples every 10 ms over 10 s."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.samples = [SimpleNamespace(t_s=i / 100, sm_clock_mhz=1380.0, mem_clock_mhz=877.0, util_gpu_pct=93.0,
                                        memory_used_mib=15000.0) for i in range(1000)]

    def gpu(self, index):
        return self


class _Sampler:
    def __init__(self, asked: list) -> None:
        self.asked = asked

    def stop(self):
        return _Series()


def test_nvml_is_summarised_over_the_timed_windows_when_the_server_is_on_this_host():
    import time as _time

    asked: list = []

    def slow(body):
        _time.sleep(0.1)
        return {"eval_count": 32, "eval_duration": 1_000_000_000}

    def factory(index, pid):
        asked.append((index, pid))
        return _Sampler(asked)

    with FakeServer(ollama_routes(generate=slow)) as s:
        server = identify(s.url)
        p = time_server(server, ServerOptions(tokens=32, runs=3, gpu_index=1), factory)
        remote = time_server(replace(server, local=False), ServerOptions(tokens=32, runs=3), factory)
    assert asked and asked[0][0] == 1  # the plan's GPU, once: not for the server on another host
    assert len(asked) == 1 and remote.gpu_samples == 0
    assert p.gpu_samples == 1000 and 0 < p.gpu_decode_samples < 1000 and p.gpu_sm_clock_mhz == 1380.0
    assert p.gpu_util_pct == 93.0 and p.gpu_memory_used_mib == 15000.0
