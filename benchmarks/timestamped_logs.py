"""Logs with a timestamp on every record, built from the project's own pastes (fixtures/logs/**/*.log), as users paste them.

Why: real logs carry a timestamp on each line (Ollama's `time=…`, journald, vLLM's logger, docker's `-t`, Python's
logging, a kernel-style `[seconds]`), so no two lines of a real paste are the same, where the generated logs of
explain_vs_grep.py repeat a handful of lines (issue 40). Each paste gets one of STYLES, in turn, and the clock moves
forward by a varying step on every line, so every timestamp differs.

What stays the same: the findings. A line that continues the record above it (an indented traceback source line, a
wrapped message: lines.continuation) gets no prefix, as real loggers print one record's lines; in the styles with a
level word the level is the one the line already reads as (an error-looking line ERROR, a warning WARNING, else INFO),
so a line is error-, warning-looking or ordinary with and without its timestamp. tests/doctor/logscan/
test_timestamped_logs.py checks that explain finds the same on each paste with and without them.

    python benchmarks/timestamped_logs.py OUT [--size-mb 200]     (writes OUT; prints its lines and bytes)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from doctor.logscan.lines import continuation, kind_of  # noqa: E402

PASTES = ROOT / "fixtures" / "logs"
START = 1_796_342_400  # 2026-12-04 00:00:00 UTC
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_LEVEL = {"error": "ERROR", "warning": "WARNING"}


def _clock(us: int) -> tuple[int, int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second, microsecond) of a time in microseconds since the epoch, UTC."""
    seconds, micro = divmod(us, 1_000_000)
    days, rest = divmod(seconds, 86_400)
    hour, rest = divmod(rest, 3_600)
    minute, second = divmod(rest, 60)
    # civil from days (Howard Hinnant's algorithm): no datetime object per line
    z = days + 719_468
    era, doe = divmod(z, 146_097)
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    return year, month, day, hour, minute, second, micro


def _iso(us: int, level: str, n: int) -> str:  # docker logs -t, GitHub Actions
    y, mo, d, h, mi, s, u = _clock(us)
    return f"{y}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{u:06}000Z "


def _journald(us: int, level: str, n: int) -> str:  # journalctl -u …
    _, mo, d, h, mi, s, _ = _clock(us)
    return f"{_MONTHS[mo - 1]} {d:02} {h:02}:{mi:02}:{s:02} gpu-host python3[{4100 + n % 7}]: "


def _pylog(us: int, level: str, n: int) -> str:  # Python logging's default asctime
    y, mo, d, h, mi, s, u = _clock(us)
    return f"{y}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02},{u // 1000:03} "


def _epoch(us: int, level: str, n: int) -> str:  # a kernel-style seconds stamp
    return f"[{us // 1_000_000}.{us % 1_000_000:06}] "


def _ollama(us: int, level: str, n: int) -> str:  # Ollama's logfmt (its msg= is left out: it would quote the line)
    y, mo, d, h, mi, s, u = _clock(us)
    return f"time={y}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{u // 1000:03}Z level={level[:4]} source=server.go:{400 + n % 90} "


def _vllm(us: int, level: str, n: int) -> str:  # vLLM's logger
    _, mo, d, h, mi, s, _ = _clock(us)
    return f"{level} {mo:02}-{d:02} {h:02}:{mi:02}:{s:02} [engine.py:{100 + n % 400}] "


STYLES: dict[str, Callable[[int, str, int], str]] = {
    "iso": _iso, "journald": _journald, "pylog": _pylog, "epoch": _epoch, "ollama": _ollama, "vllm": _vllm}


def pastes() -> list[Path]:
    return sorted(PASTES.rglob("*.log"))


class Stamper:
    """Prefixes each record's first line of a paste with the next timestamp of one style."""

    def __init__(self, start_us: int = START * 1_000_000):
        self.now = start_us
        self.n = 0
        self._plans: dict[str, list[tuple[str, str | None]]] = {}

    def _plan(self, text: str) -> list[tuple[str, str | None]]:
        """Each line with the level its prefix gets, or None when it continues the record above (no prefix)."""
        plan = self._plans.get(text)
        if plan is None:
            plan, previous = [], None
            for line in text.split("\n"):
                level = _LEVEL.get(kind_of(line, previous), "INFO") if continuation(line) is None else None
                plan.append((line, level))
                previous = line
            self._plans[text] = plan
        return plan

    def stamp(self, text: str, style: str) -> str:
        fmt = STYLES[style]
        out: list[str] = []
        for line, level in self._plan(text):
            if level is None:
                out.append(line)
                continue
            self.n += 1
            self.now += 1 + (self.n * 7919) % 48_611  # 1 us to 49 ms: a varying step, never 0
            out.append(fmt(self.now, level, self.n) + line)
        return "\n".join(out)


def plain_corpus(files: list[Path]) -> list[str]:
    return [f.read_text(encoding="utf-8", errors="replace").rstrip("\n") for f in files]


def copies(files: list[Path], size: int) -> Iterator[bytes]:
    """Timestamped copies of the pastes, each paste in the next style, until `size` bytes."""
    texts = plain_corpus(files)
    stamper, written, i = Stamper(), 0, 0
    names = list(STYLES)
    while written < size:
        style = names[(i % len(texts) + i // len(texts)) % len(names)]  # each paste in the next style, copy by copy
        piece = stamper.stamp(texts[i % len(texts)], style).encode() + b"\n"
        yield piece
        written += len(piece)
        i += 1


def write(path: Path, size: int, files: list[Path] | None = None) -> tuple[int, int]:
    """Write a timestamped log of at least `size` bytes; (lines, bytes)."""
    lines = written = 0
    with open(path, "wb") as fh:
        for piece in copies(files or pastes(), size):
            fh.write(piece)
            lines += piece.count(b"\n")
            written += len(piece)
    return lines, written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=float, default=200)
    a = ap.parse_args()
    lines, size = write(Path(a.out), int(a.size_mb * 1e6))
    print(f"{a.out}: {lines} lines, {size} bytes")


if __name__ == "__main__":
    main()
