"""Bad and unusual logs: binary, empty, non-UTF-8, UTF-16, huge lines, and proof that the log is streamed, not loaded.

The 2 GB throughput run lives in benchmarks/explain_throughput.py (speed is measured there, not here);
here a log several times larger than the scanner's block is scanned under tracemalloc.
"""

from __future__ import annotations

import codecs
import io
import json
import tracemalloc

import pytest
from conftest import ROOT, run_cli

from doctor.commands.log_input import open_log
from doctor.facts.files import log_file
from doctor.logscan import source
from doctor.logscan.scanner import Scanner
from doctor.logscan.source import CHUNK, MAX_LINE, LogInputError

LOGS = ROOT / "fixtures" / "logs"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 1.06 GiB is free."


def scan(path, **kw):
    source = open_log(str(path), kw.pop("encoding", None))
    try:
        return Scanner(**kw).scan(source)
    finally:
        source.close()


@pytest.mark.parametrize("content,message", [
    (b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4, "looks like a binary file (a NUL byte at offset 7)"),
    (b"", "is empty, nothing to explain"),
    (b"\n\n   \n\t\n", "has only blank lines"),
    (bytes(range(1, 32)) * 100, "looks like a binary file"),
])
def test_unreadable_logs_say_why_and_exit_3(tmp_path, content, message):
    log = tmp_path / "x.log"
    log.write_bytes(content)
    proc = run_cli("explain", str(log), "--no-live")
    assert proc.returncode == 3, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_missing_file_directory_and_unknown_encoding_exit_3(tmp_path):
    assert "no such file" in run_cli("explain", str(tmp_path / "nope.log")).stderr
    proc = run_cli("explain", str(tmp_path))
    assert proc.returncode == 3 and "is a directory" in proc.stderr
    (tmp_path / "a.log").write_text(OOM + "\n")
    proc = run_cli("explain", str(tmp_path / "a.log"), "--encoding", "klingon")
    assert proc.returncode == 3 and "unknown encoding 'klingon'" in proc.stderr


def test_non_utf8_log_is_still_explained_with_a_clear_note(tmp_path):
    log = tmp_path / "latin1.log"
    log.write_bytes("Démarrage du serveur…\n".encode("cp1252") + OOM.encode() + b"\n" + "Erreur fatale à la ligne 3\n".encode("latin-1"))
    proc = run_cli("explain", str(log), "--no-live", "--json")
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["log"]["undecodable_lines"] == 1 and doc["log"]["encoding"] == "utf-8"  # line 1 has no keyword: not examined
    assert [m["signature"] for m in doc["matches"]] == ["cuda-oom"]
    assert doc["unexplained"]["groups"][0]["example"] == "Erreur fatale \ufffd la ligne 3"
    assert "1 examined line(s) of" in proc.stderr and "--encoding" in proc.stderr
    fixed = json.loads(run_cli("explain", str(log), "--no-live", "--json", "--encoding", "cp1252").stdout)
    assert fixed["log"]["undecodable_lines"] == 0
    assert fixed["unexplained"]["groups"][0]["example"] == "Erreur fatale à la ligne 3"


def test_gbk_log_with_encoding(tmp_path):
    log = tmp_path / "gbk.log"
    log.write_bytes("训练报错：OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n".encode("gbk"))
    result = scan(log, encoding="gbk")
    assert [m.signature for m in result.matches] == ["cuda-home-not-set"]
    assert result.matches[0].text.startswith("训练报错") and result.stats.undecodable_lines == 0


@pytest.mark.parametrize("bom", [True, False])
def test_utf16_from_windows_powershell_is_transcoded(tmp_path, bom):
    log = tmp_path / "ps.log"
    text = "PS C:\\tabby> python main.py\r\n" + OOM + "\r\n"
    log.write_bytes((codecs.BOM_UTF16_LE if bom else b"") + text.encode("utf-16-le"))
    result = scan(log)
    assert result.stats.encoding == "utf-16-le"
    assert [(m.signature, m.first_line) for m in result.matches] == [("cuda-oom", 2)]
    assert result.matches[0].numbers["tried_mib"] == 2048.0


def _big_log(path, blocks: int) -> dict:
    """A log `blocks` scanner blocks long: ordinary lines, with known errors at known lines, one straddling a block edge."""
    filler = b"INFO:     Metrics: 512 tokens generated in 12.3 seconds (Generate: 41.6 T/s, Context: 1024 tokens)\n"
    per_block = CHUNK // len(filler)
    where = {}
    line = 0
    with open(path, "wb") as fh:
        for b in range(blocks):
            for i in range(per_block):
                line += 1
                if b == 1 and i == per_block // 2:
                    fh.write(OOM.encode() + b"\n")
                    where["oom"] = line
                elif b == 2 and i == per_block - 1:  # the 2.11 warning's last lines spill into the next block
                    fh.write(b"UserWarning: Found GPU0 Tesla V100-SXM2-16GB which is of compute capability (CC) 7.0.\n"
                             + b"- 7.5 which supports hardware CC >=7.5,<8.0\n" * 3
                             + b"Please follow the instructions to install a PyTorch release that supports one of these CUDA versions: 12.6\n")
                    where["warning"] = line
                    line += 4
                elif b == blocks - 1 and i == per_block - 1:
                    fh.write(b"x" * (3 * MAX_LINE) + b" RuntimeError: FlashAttention only supports Ampere GPUs or newer." + b"y" * MAX_LINE + b"\n")
                    where["long"] = line
                else:
                    fh.write(filler)
    where["lines"] = line
    return where


def test_a_log_many_blocks_long_is_streamed_in_bounded_memory(tmp_path):
    log = tmp_path / "big.log"
    where = _big_log(log, blocks=12)
    size = log.stat().st_size
    assert size > 11 * CHUNK
    tracemalloc.start()
    try:
        result = scan(log)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few blocks at once (the read, the cut block, its lower-case copy), never the file
    assert peak < 6 * CHUNK < size / 2, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.0f} MiB log: not streaming"
    found = {m.signature: m for m in result.matches}
    assert found["cuda-oom"].first_line == where["oom"]
    assert found["torch-capability-cc-list"].first_line == where["warning"]
    assert found["torch-capability-cc-list"].numbers["suggested_cuda"] == "12.6"  # read across the block edge
    assert found["flash-attn-needs-ampere"].first_line == where["long"]
    assert result.stats.lines == where["lines"] and result.stats.long_line_pieces >= 1
    assert result.stats.bytes == size


def test_stdlib_prefilter_finds_exactly_what_the_automaton_finds(tmp_path):
    log = tmp_path / "big.log"
    _big_log(log, blocks=3)
    for path in [log, *sorted(LOGS.glob("*.log"))]:
        fast, slow = scan(path), scan(path, accelerated=False)
        assert slow.stats.prefilter == "bytes.find"
        assert fast.matches == slow.matches and fast.unexplained == slow.unexplained, path


def test_open_log_errors_are_log_input_errors(tmp_path):
    with pytest.raises(LogInputError, match="no such file"):
        open_log(str(tmp_path / "missing.log"))


def test_a_large_log_or_stdin_asks_malloc_to_keep_freed_blocks(tmp_path, monkeypatch):
    """glibc's mallopt is asked to keep freed blocks' memory (no page faults per block) for a log over REUSE_FROM or
    stdin, never for a small file; without a C library or mallopt it is a no-op."""
    import ctypes

    assert log_file.BLOCK == source.CHUNK  # the gatherer sizes malloc's reuse for the scanner's blocks

    calls = []

    class FakeLibc:
        def mallopt(self, option, value):
            calls.append((option, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    small = tmp_path / "small.log"
    small.write_bytes(b"RuntimeError: x\n" * 10)
    list(open_log(str(small)).raw_chunks())
    assert calls == []
    monkeypatch.setattr(log_file, "REUSE_FROM", 100)
    list(open_log(str(small)).raw_chunks())
    assert calls == [(-3, 4 * source.CHUNK), (-1, 8 * source.CHUNK)]  # the scanner's blocks
    calls.clear()
    list(open_log("-", stdin=io.BytesIO(b"x\n")).raw_chunks())
    assert len(calls) == 2

    def no_libc(name):
        raise OSError("no C library")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    log_file.reuse_freed_blocks()  # no exception
