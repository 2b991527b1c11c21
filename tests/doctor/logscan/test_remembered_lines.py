"""Remembering a line's outcome (issue 17: a line seen again, or seen with other numbers, is not classified again)
changes nothing: the scan with it equals the scan that classifies every line, on every fixture and on logs built to
trip it (digits that matter, context from the lines around, wrapped messages, caps, bad bytes)."""

from __future__ import annotations

import io
import re
from dataclasses import asdict

import pytest
from conftest import ROOT

from doctor.commands.log_input import open_log
from doctor.logscan import source
from doctor.logscan.scanner import Scanner

LOGS = sorted((ROOT / "fixtures" / "logs").rglob("*.log"))


def scans(data: bytes) -> tuple[dict, dict]:
    out = []
    for remember in (True, False):
        result = asdict(Scanner(remember=remember).scan(open_log("-", stdin=io.BytesIO(data))))
        result["stats"].pop("seconds"), result["stats"].pop("mb_per_s")
        out.append(result)
    return out[0], out[1]


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_fixture_logs_scan_the_same(path):
    fast, slow = scans(path.read_bytes() * 3)  # three times: every line is seen again
    assert fast == slow


TRICKY = [
    # digits that change the outcome: torch 2.10 is not a cu130 wheel, 2.11 is; "0x" is hex only with a 0
    b"Downloading torch-2.10.0-cp310-cp310-manylinux_2_28_x86_64.whl (530.6 MB) error\n"
    b"Downloading torch-2.11.0-cp310-cp310-manylinux_2_28_x86_64.whl (530.6 MB) error\n"
    b"RuntimeError: bad pointer 0x1f at 3\nRuntimeError: bad pointer 1x1f at 3\nRuntimeError: bad pointer 0x1f at 4\n",
    # context: the same indented line is framing under a frame and an error elsewhere
    b'  File "/a.py", line 3, in f\n    raise_error(1)\n    raise_error(1)\nx\n    raise_error(2)\n',
    # wrapped: the same first line, once not continued (remembered so) and then continued (not replayed)
    b"tabbyapi-1  | torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of\n"
    b"tabbyapi-1  | INFO:     next\n"
    b"tabbyapi-1  | torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of\n"
    b"tabbyapi-1  | memory)\n",
    # hints carry line numbers; bad bytes are counted per line
    b"max_seq_len: 4096 error\nmax_seq_len: 8192 error\n" + b"RuntimeError: caf\xe9 failed 1\n" * 3 + b"RuntimeError: caf\xe9 failed 2\n",
    # more distinct kinds than the groups keep
    b"".join(b"RuntimeError: failure kind '%d' %s\n" % (i, b"x" * (i % 7)) + b"ValueError error %d\n" % i for i in range(900)) * 2,
    # a backreference: two equal numbers are a full offload, two different ones a partial one (llama-partial-offload)
    b"load_tensors: offloaded 65/65 layers to GPU\nload_tensors: offloaded 48/65 layers to GPU\n" * 2,
    # the benchmark's dense log: every line distinct by its numbers
    b"".join(b"RuntimeError: step %d failed at token %d: tensor size mismatch %d != %d\n" % (i, i * 7, i % 977, i % 991)
             for i in range(5000)),
]


IDS = ["digits", "context", "wrapped", "hints-bytes", "caps", "backreference", "dense"]


@pytest.mark.parametrize("data", TRICKY, ids=IDS)
def test_tricky_logs_scan_the_same(data):
    fast, slow = scans(data)
    assert fast == slow


def shifted(data: bytes, by: int) -> bytes:
    """The log with every number plus `by`: the same lines with other digits (versions, compute capabilities, Xids)."""
    return re.sub(rb"\d+", lambda m: str(int(m.group(0)) + by).encode(), data)


PASTES = b"".join(p.read_bytes() for p in LOGS)
# the pastes, then with numbers shifted by 1 .. 6: each line seen again with other digits, some of which matter
SHIFTED = PASTES + b"".join(shifted(PASTES, by) for by in range(1, 7))


def test_the_pastes_with_other_numbers_scan_the_same():
    fast, slow = scans(SHIFTED)
    assert fast == slow


# as benchmarks/explain_real_pastes.py builds its log: the pastes again and again, every 7th copy with other numbers
REPEATED = PASTES * 6 + shifted(PASTES, 7)
# a new kind of line in each block, repeated through it (the dense log's new digit counts): read once, then replayed
NEW_PER_BLOCK = b"".join(b"RuntimeError: failed in %s\n" % bytes(97 + (g // 26 ** k) % 26 for k in range(3)) * 30
                         for g in range(1000))
# every line distinct, in its words too: nothing to replay
DISTINCT = b"".join(b"RuntimeError: failed in %s\n" % bytes(97 + (i // 26 ** k) % 26 for k in range(4)) for i in range(20_000))


@pytest.mark.parametrize("data", TRICKY + [PASTES, SHIFTED, REPEATED, DISTINCT],
                         ids=IDS + ["fixtures", "fixtures-shifted", "repeated", "distinct"])
def test_whole_blocks_replayed_at_once_scan_the_same(data, monkeypatch):
    """Small blocks, so that most blocks of the log (after the first 64 KiB) are replayed whole."""
    monkeypatch.setattr(source, "CHUNK", 2048)
    data = data * max(1, 300_000 // len(data))
    fast, slow = scans(data)
    assert fast == slow
    assert fast["stats"]["lines"] == data.count(b"\n")


@pytest.mark.parametrize("data,whole", [(TRICKY[-1], True), (TRICKY[4], True), (TRICKY[0], True), (TRICKY[1], True),
                                        (REPEATED, True), (NEW_PER_BLOCK, True), (DISTINCT, False)],
                         ids=["dense", "caps", "digits", "context", "pastes-shifted", "new-per-block", "distinct"])
def test_which_blocks_are_replayed_whole(data, whole, monkeypatch):
    """The tests above compare results; this one shows that they go through the whole-block replay (lines whose digits
    matter too, each variant looked up as itself; lines the lines around decide, with them; the pastes with other
    numbers, whose new lines are read one by one): most tries replay the block reading under a tenth of its lines one
    by one. A log of distinct lines is read line by line."""
    from doctor.logscan import remembered, scanner

    monkeypatch.setattr(source, "CHUNK", 2048)
    tries = []  # (lines read one by one or None, the block's lines)
    monkeypatch.setattr(scanner, "replay_block", lambda run, block: tries.append(
        (remembered.replay_block(run, block), block.count(b"\n"))) or tries[-1][0])
    Scanner().scan(open_log("-", stdin=io.BytesIO(data * max(1, 300_000 // len(data)))))
    assert tries
    assert (sum(read is not None and read * 10 < lines for read, lines in tries) > len(tries) // 2) is whole


def test_a_partial_offload_after_a_full_one_is_found():
    """Remembered under blanked digits, "offloaded 65/65" (no match) once hid the "48/65" after it."""
    data = b"load_tensors: offloaded 65/65 layers to GPU\nload_tensors: offloaded 48/65 layers to GPU\n"
    fast, _ = scans(data)
    assert [m["signature"] for m in fast["matches"]] == ["llama-partial-offload"]


def test_an_exception_line_followed_by_the_next_traceback_is_classified_once(monkeypatch):
    """A traceback's exception line, followed by the next traceback's header, is replayed: the header continues
    nothing and only changes an error-looking line it is the caption of (before round 3 of issue 29 each such line
    was classified again, 917 times in a 12 MB log of tracebacks). The result is the same as classifying every line."""
    tracebacks = (b'Traceback (most recent call last):\n  File "/a.py", line 3, in f\n    raise RuntimeError(msg)\n'
                  b"RuntimeError: CUDA error: out of memory\n"
                  b'Traceback (most recent call last):\n  File "/b.py", line 9, in g\n    check()\n'
                  b"ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your "
                  b"Tesla V100-SXM2-32GB GPU has compute capability 7.0.\n"
                  b"vllm-1  | ERROR 05-18 03:54:51 [core.py:448] EngineCore failed to start.\n") * 200
    fast, slow = scans(tracebacks)
    assert fast == slow
    from doctor.logscan import scanner

    classified = []
    original = scanner._Run._classify
    monkeypatch.setattr(scanner._Run, "_classify", lambda run, *args: classified.append(args[4]) or original(run, *args))
    Scanner().scan(open_log("-", stdin=io.BytesIO(tracebacks)))
    assert len(classified) < 20
