"""What an unexplained line is: words, not substrings; INFO/DEBUG lines never error-looking; prefixes set aside."""

from __future__ import annotations

import pytest

from doctor.logscan.lines import continuation, kind_of, split_prefix


@pytest.mark.parametrize("line", [
    "INFO 11-02 09:14:10 config.py:887] Defaulting to use mp for distributed inference",
    "Chunked prefill is enabled by default for models with max_model_len > 32K.",
    "`low_cpu_mem_usage` was None, now default to True since model is quantized.",
    "INFO:     If you are running out of memory, consider decreasing `gpu_memory_utilization`",
    "DEBUG 03-01 10:00:00 [core.py:12] retrying after a failed health probe",
    "16:01:22-482919 INFO     Loaded \"model\" in 35.61 seconds; no errors",
    "Dec 03 05:31:07 gpu-box kernel: nvidia-uvm: Loaded the UVM driver, major device number 508.",
])
def test_ordinary_lines(line):
    assert kind_of(line) == "ordinary"


@pytest.mark.parametrize("line", [
    "RuntimeError: Engine core initialization failed.",
    "torch.OutOfMemoryError: boom",  # a CamelCase part
    "code = cudaErrorUnsupportedPtxVersion [ 222 ]",
    "CUDA_ERROR_OUT_OF_MEMORY while calling cuMemAlloc",
    "Segmentation fault (core dumped)",
    "python3[2211]: segfault at 8 ip 00007f3c2a1b4e10",
    "ERROR 09-16 17:46:22 [core.py:718] EngineCore stopped",  # by its level
    "tabbyapi-1  | AssertionError: Insufficient something",
    "[   34.190000] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed!",
])
def test_error_looking_lines(line):
    assert kind_of(line) == "error"


@pytest.mark.parametrize("line", [
    "WARNING 11-02 09:14:40 serving_embedding.py:199] embedding_mode is False.",
    "/usr/lib/python3/site.py:12: UserWarning: something deprecated here",
])
def test_warning_looking_lines(line):
    assert kind_of(line) == "warning"


@pytest.mark.parametrize("line,level,message", [
    ("tabbyapi-1  | INFO:     Model successfully loaded.", "INFO", "Model successfully loaded."),
    ("Dec 02 22:52:41 gpu-box kernel: NVRM: Xid (PCI:0000:3b:00): 79", "", "NVRM: Xid (PCI:0000:3b:00): 79"),
    ("Dec  2 22:52:41 gpu-box python3[2211]: Traceback", "", "Traceback"),
    ("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0", "", "NVRM: The NVIDIA GPU 0000:b3:00.0"),
    ("16:01:22-486307 WARNING  You are potentially exposing the web UI", "WARNING", "You are potentially exposing the web UI"),
    ("vllm-1  | (EngineCore_DP0 pid=585) ERROR 09-16 17:46:22 [core.py:718] RuntimeError: x", "ERROR", "RuntimeError: x"),
])
def test_prefixes_are_set_aside(line, level, message):
    assert split_prefix(line) == (level, message)


@pytest.mark.parametrize("line,rest", [
    ("tabbyapi-1  | memory)", "memory)"),  # a container tag only: the message above goes on
    ("               NVRM: fallen off the bus and is not responding to commands.",
     "NVRM: fallen off the bus and is not responding to commands."),
    ("  'the current GPU. Min capability: 75. ', 'Current capability: 70.')",
     "'the current GPU. Min capability: 75. ', 'Current capability: 70.')"),
    ("'the current GPU. Min capability: 75. ', 'Current capability: 70.')", None),  # plain, unindented: a new line
    ("tabbyapi-1  | INFO:     Loading model", None),  # a level: a new record
    ("Dec 02 22:52:41 gpu-box kernel: NVRM: GPU", None),  # a timestamp: a new record
    ("[ 1843.439662] NVRM: The NVIDIA probe routine failed", None),
    ('  File "/app/main.py", line 181, in <module>', None),
    ("   ", None),
])
def test_continuation_lines(line, rest):
    assert continuation(line) == rest


def _word_cases() -> list[str]:
    from conftest import ROOT

    lines = [line for p in sorted((ROOT / "fixtures" / "logs").rglob("*.log"))
             for line in p.read_text(encoding="utf-8", errors="replace").splitlines()]
    crafted = ["error", "Error", "ERROR", "xerror", "xError", "XError", "_error", "9error", "RuntimeError", "cudaErrorUnknown",
               "defaulting", "Default", "segfault", "SegFault", "aSegfault", "asegfault", "out of memory", "OUT OF MEMORY",
               "outofmemory", "Outofmemory", "warn", "Warning", "forewarned", "preWarn", "PREWARN", "pre-warn", "",
               "errorerror", "xerrorError", "xerror error", "failfail", "ab-abort", "\u212ailled", "\u212aILLED now",
               "caf\u00e9 failed", "na\u00efve Error", "\u017fegfault", "Fatal\u0131ty", "mIErrors"]
    return lines + crafted + [c.upper() for c in crafted] + [c.lower() for c in crafted] + [c.title() for c in crafted]


def test_word_starts_answer_as_their_regex():
    """The str.find path of ERROR_WORDS/WARNING_WORDS (ASCII lines) says what the regex that defines them says, on
    every fixture line and on edge cases: mid-word, CamelCase, digits and _ before a stem, non-ASCII (the regex)."""
    from doctor.logscan.lines import ERROR_WORDS, WARNING_WORDS

    cases = _word_cases()
    assert len(cases) > 500
    for words in (ERROR_WORDS, WARNING_WORDS):
        differing = [c for c in cases if words.found(c) != (words.regex.search(c) is not None)]
        assert differing == []
    assert sum(ERROR_WORDS.found(c) for c in cases) > 100 and sum(not ERROR_WORDS.found(c) for c in cases) > 100
