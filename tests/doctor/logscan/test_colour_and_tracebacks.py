"""Two log habits that must not change the count (issue 24's "Colour codes" and "One error, one count"):
ANSI colour codes around the level and the time, as vLLM's ColoredFormatter writes them on a TTY
(https://docs.vllm.ai/en/latest/api/vllm/logging_utils/formatter/), and a traceback logged line by line under
a prefix, as vLLM V1's EngineCore does (https://github.com/vllm-project/vllm/issues/27729)."""

from __future__ import annotations

import io
import re
from dataclasses import asdict

from conftest import run_cli

from doctor.commands.log_input import open_log
from doctor.logscan.lines import kind_of, strip_sgr
from doctor.logscan.scanner import Scanner

RED, GREEN, GREY, RESET = "\x1b[31m", "\x1b[32m", "\x1b[90m", "\x1b[0m"


def coloured(level: str, colour: str, message: str, tag: str = "core.py:708") -> str:
    return (f"(EngineCore_DP0 pid=54) {colour}{level}{RESET} {GREY}10-28 23:01:07{RESET} {GREY}[{tag}]{RESET} "
            f"{message}\n")


# Frames of vLLM 0.11's EngineCore start-up, each re-prefixed, ending in the bf16 refusal on a V100 (issue 27729's
# prefix and first frames; the root cause is vLLM's check_if_supports_dtype wording, vllm-project/vllm#946).
TRACEBACK = [
    "EngineCore failed to start.",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core',
    "    engine_core = EngineCoreProc(*args, **kwargs)",
    "                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 498, in __init__',
    "    super().__init__(vllm_config, executor_class, log_stats,",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/executor/executor_base.py", line 54, in __init__',
    "    self._init_executor()",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/platforms/cuda.py", line 487, in check_if_supports_dtype',
    "    raise ValueError(",
]
ROOT_CAUSE = "ValueError: tensor layout mismatch in the engine's warm-up"  # no row knows it: it stays unexplained


def vllm_log(colour: bool, cause: str = ROOT_CAUSE) -> bytes:
    out = [coloured("INFO", GREEN, "vLLM API server version 0.11.0", "api_server.py:1839")]
    out += [coloured("ERROR", RED, m) for m in TRACEBACK + [cause]]
    text = "".join(out)
    return (text if colour else strip_sgr(text)).encode()


def scan(data: bytes) -> dict:
    result = asdict(Scanner().scan(open_log("-", stdin=io.BytesIO(data))))
    result["stats"].pop("seconds"), result["stats"].pop("mb_per_s"), result["stats"].pop("bytes")
    return result


def test_a_coloured_error_is_classified_as_without_colour():
    line = coloured("ERROR", RED, "Engine stopped unexpectedly.")  # only its level says error
    assert "\x1b" in line and kind_of(line.rstrip()) == kind_of(strip_sgr(line).rstrip()) == "error"
    assert kind_of(coloured("INFO", GREEN, "Loading weights failed over to a second path").rstrip()) == "ordinary"


def test_a_coloured_log_scans_as_its_plain_twin_and_shows_no_escape_codes():
    coloured_scan, plain_scan = scan(vllm_log(True)), scan(vllm_log(False))
    assert coloured_scan == plain_scan
    assert not any("\x1b" in g["example"] for g in coloured_scan["unexplained"]["groups"])


def test_the_exit_code_of_a_coloured_log_equals_the_plain_ones(tmp_path):
    codes = []
    for colour in (True, False):
        log = tmp_path / f"{colour}.log"
        text = coloured("INFO", GREEN, "ready", "api_server.py:1") + coloured("ERROR", RED, "Engine stopped.")
        log.write_text(text if colour else strip_sgr(text))
        proc = run_cli("explain", str(log), "--no-live")
        assert "\x1b[" not in proc.stdout, proc.stdout
        codes.append(proc.returncode)
    assert codes[0] == codes[1] == 1, codes  # 1: unexplained error-looking lines


def test_a_prefixed_traceback_is_one_error():
    for colour in (True, False):
        result = scan(vllm_log(colour))
        unexplained = result["unexplained"]
        assert unexplained["error_lines"] == 1, unexplained
        assert unexplained["groups"][0]["example"].endswith(ROOT_CAUSE)
        assert result["stats"]["framing_lines"] == len(TRACEBACK)


def test_a_prefixed_traceback_with_a_known_cause_leaves_no_error():
    bf16 = ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla "
            "V100-SXM2-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the "
            "`dtype` flag in CLI, for example: --dtype=half.")
    result = scan(vllm_log(True, bf16))
    assert result["unexplained"]["error_lines"] == 0
    assert [m["signature"] for m in result["matches"]] == ["vllm-bf16-needs-cc80"]


def test_an_error_line_without_a_traceback_below_still_counts():
    data = (coloured("ERROR", RED, "EngineCore failed to start.") + coloured("INFO", GREEN, "shutting down")) * 3
    assert scan(data.encode())["unexplained"]["error_lines"] == 3


def test_caption_and_no_caption_repeated_scan_the_same_remembered_or_not():
    """The caption rule reads the next line; remembered outcomes must be replayed only where that line agrees."""
    data = (vllm_log(True) + coloured("ERROR", RED, "EngineCore failed to start.").encode()
            + coloured("INFO", GREEN, "x").encode()) * 50
    runs = []
    for remember in (True, False):
        result = asdict(Scanner(remember=remember).scan(open_log("-", stdin=io.BytesIO(data))))
        result["stats"].pop("seconds"), result["stats"].pop("mb_per_s")
        runs.append(result)
    assert runs[0] == runs[1]
    assert runs[0]["unexplained"]["error_lines"] == 100
    assert re.search(r"EngineCore failed", str(runs[0]["unexplained"]["groups"]))
