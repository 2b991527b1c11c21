"""What a log line is, when no known signature matched it: framing, error-looking, warning-looking or ordinary.

The rules, in order (they are the documented meaning of "unexplained" in `explain --help`):
1. A log prefix is set aside first: timestamps, a level word (INFO/WARNING/ERROR ...), a logger tag
   such as vLLM's "[engine.py:448]", a rank ("[rank0]:"), a container or process tag
   ("vllm-1  | ", "(VllmWorker pid=42) "), docker build steps ("#9 88.16 "), journald/syslog
   ("Dec 03 05:31:07 host kernel: ", "... unit[pid]: "), the kernel's "[   34.190000] " and
   text-generation-webui's "16:01:22-482919 INFO ", Ollama's logfmt "time=… level=INFO source=routes.go:1 ". ANSI colour codes (SGR: "ESC[31m") are removed
   before anything is read, and the text is shown without them (strip_sgr).
2. Framing is never a problem by itself: Python traceback frames and their source lines, the
   "During handling of the above exception" joints, a bare "...Warning:" header whose message follows
   on the next lines, and torch's CUDA-error boilerplate ("CUDA kernel errors might be asynchronously
   reported", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with TORCH_USE_CUDA_DSA"),
   the "^^^^"/"~~~^^^" markers Python 3.11+ prints under a frame's source line, and a record's caption: a line
   whose next line is "Traceback (most recent call last):" (vLLM's "EngineCore failed to start." before the
   traceback it logs). One logged traceback is one error, counted at the exception line that ends it.
3. A line whose level is INFO or DEBUG is ordinary output, whatever its words.
4. Error-looking: a word of the message starts with error, exception, fatal, fail, abort, killed,
   assert, fault, segfault, critical or "out of memory" (any case; also a CamelCase part, as in
   "RuntimeError" or "cudaErrorUnknown"), or the prefix's level is ERROR/CRITICAL/FATAL. Words are
   matched, not substrings: "default" and "Defaulting" hold no "fault".
5. Warning-looking: a word (or CamelCase part) starts with "warn", or the prefix's level is WARNING.
6. Everything else is ordinary output: counted, not listed.
"""

from __future__ import annotations

import re
from typing import Callable

PREFIX = re.compile(
    r"""^(?:
        \s*\#\d+\ [\d.]+\ +                                   # docker buildkit step: "#9 88.16 "
      | \s*\d{4}-\d\d-\d\dT[\d:.]+Z\ +                        # GitHub Actions timestamp
      | \s*[A-Z][a-z]{2}\ +\d{1,2}\ \d\d:\d\d:\d\d\ [\w.-]+\ [\w.@/-]+(?:\[\d+\])?:\ +  # journald/syslog "Dec 03 05:31:07 host kernel: "
      | \s*\d\d:\d\d:\d\d-\d{6}\ +                          # text-generation-webui "16:01:22-482919 "
      | \s*[\w.-]+\s+\|\ ?                                    # docker compose: "vllm-1  | " (one space: the rest
      | \s*\(\w+\ pid=\d+(?:,\ ip=[\d.]+)?\)\ ?               # is the message's indentation) "(VllmWorkerProcess pid=90) "
      | \s*\[rank\d+\]:\ ?                                    # torch distributed
      | \s*time=\S+\ level=[A-Z]+\ (?:source=\S+\ )?           # Go's logfmt (Ollama): "time=… level=INFO source=x.go:1 "
      | \s*\d{4}-\d\d-\d\d[ T][\d:.,]+\ +                     # 2025-10-11 15:53:02.991
      | \s*\d\d-\d\d\ [\d:.]+\ +                              # vLLM's 05-18 03:54:51
      | \s*\[[\d\-:., T]+\]\ +                                # [2024-06-01 12:00:01]
      | \s*(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b:?\ *  # level word (TabbyAPI "INFO:     ")
      | \s*\[[\w./-]+:\d+\]\ ?                                # logger tag "[engine.py:448]"
    )+""",
    re.VERBOSE,
)
FRAME = re.compile(r'File "[^"]+", line \d+')
FRAMING = re.compile(
    r"^(?:Traceback \(most recent call last\):"
    r"|During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|CUDA kernel errors might be asynchronously reported at some other API call"
    r"|For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    r"|Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions"
    r"|warnings\.warn\(|_warn_unsupported_code\("
    r"|\S*:\d+: \w*Warning:\s*$"  # "/.../torch/cuda/__init__.py:283: UserWarning: " with the text below it
    r"|\w*Warning:\s*$"
    r"|[\^~]+$)"  # Python 3.11+'s markers under a frame's source line
)
SGR = re.compile(r"\x1b\[[0-9;]*m")
TRACEBACK_HEADER = "Traceback (most recent call last):"
_ERROR_STEMS = ("error", "exception", "fatal", "fail", "abort", "killed", "assert", "fault", "segfault", "critical")


class WordStarts:
    """Stems that begin a word ("failed", "ERROR_OUT") or a CamelCase part ("RuntimeError"), never mid-word ("default").

    `regex` is the definition. `found` answers the same for ASCII text (nearly every log line) with str.find and a look
    at the character before each hit: the regex's lookbehinds at every position made it 9 us a line, a third of
    classifying one (issue 29). Other text goes to the regex (its case-insensitive match knows the Kelvin sign)."""

    def __init__(self, stems: tuple[str, ...], phrases: tuple[str, ...] = ()):
        at_word = "|".join(stems + phrases)
        camel = "|".join(s.capitalize() for s in stems)
        self.regex = re.compile(rf"(?<![A-Za-z])(?i:{at_word})|(?<=[a-z])(?:{camel})")
        self._words = tuple((w, w.capitalize() if w in stems else None) for w in stems + phrases)

    def found(self, text: str) -> bool:
        if not text.isascii():
            return self.regex.search(text) is not None
        low = text.lower()
        for word, camel in self._words:
            at = low.find(word)
            while at != -1:
                if at == 0 or not text[at - 1].isalpha():  # (ASCII: a letter is [A-Za-z])
                    return True
                if camel is not None and text[at - 1].islower() and text.startswith(camel, at):
                    return True
                at = low.find(word, at + 1)
        return False


ERROR_WORDS = WordStarts(_ERROR_STEMS, ("out of memory",))
WARNING_WORDS = WordStarts(("warn",))
QUIET_LEVELS = ("INFO", "DEBUG")  # a line at these levels is never error- or warning-looking
# keywords the prefilter must find so that every error- or warning-looking line is seen
CLASSIFY_KEYWORDS = _ERROR_STEMS + ("out of memory", "warn")
_NEW_RECORD = re.compile(r"\d\d:\d\d|\[\s*\d+\.\d+\]|\b(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b")


def strip_sgr(text: str) -> str:
    """The text without ANSI colour codes (vLLM's ColoredFormatter wraps the level and the time in them on a TTY)."""
    return SGR.sub("", text) if "\x1b" in text else text


def starts_a_traceback(line: str) -> bool:
    """Is this line (prefix and colour aside) the header of a Python traceback?"""
    return split_prefix(strip_sgr(line))[1].strip() == TRACEBACK_HEADER


def split_prefix(line: str) -> tuple[str, str]:
    """(level word or "", the message with its indentation kept) for a line."""
    m = PREFIX.match(line)
    if not m:
        return "", line.rstrip()
    levels = re.findall(r"\b(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b", m.group(0))
    return (levels[-1] if levels else ""), line[m.end():].rstrip()


def kind_of(line: str, previous_line: str | None = None) -> str:
    """"framing" | "error" | "warning" | "ordinary" for a line no signature matched."""
    return kind_in_context(line, lambda: previous_line)[0]


def kind_in_context(line: str, previous_line: Callable[[], str | None]) -> tuple[str, bool]:
    """(kind, whether the line above was needed to tell): only an indented line can be a traceback's source line,
    so the line above is read (and its cost paid) for those alone."""
    level, message = split_prefix(strip_sgr(line))
    text = message.strip()
    consulted = False
    if FRAME.search(text) or FRAMING.match(text):
        return "framing", False
    if message[:1].isspace():
        consulted = True
        above = previous_line()
        if above is not None and FRAME.search(split_prefix(strip_sgr(above))[1]):
            return "framing", True
    if level in QUIET_LEVELS:
        return "ordinary", consulted
    if ERROR_WORDS.found(message) or level in ("ERROR", "CRITICAL", "FATAL"):
        return "error", consulted
    if WARNING_WORDS.found(message) or level in ("WARNING", "WARN"):
        return "warning", consulted
    return "ordinary", consulted


_MAY_START_A_CONTINUATION = frozenset(b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f(#[") | frozenset(range(0x80, 0x100))


def may_continue(raw: bytes) -> bool:
    """A cheap test on a line's bytes: False means `continuation` is surely None (no indentation, no tag it could
    carry: a first byte that is not whitespace, "(", "#", "[" or non-ASCII, and no "|")."""
    return bool(raw) and (raw[0] in _MAY_START_A_CONTINUATION or b"|" in raw)


def continuation(line: str) -> str | None:
    """The message of a line that continues the one above (a wrapped message), or None when it starts a new record.

    A continuation carries a container or process tag only ("tabbyapi-1  | memory)") or is indented
    ("               NVRM: fallen off the bus ..."); a line whose prefix has a timestamp or a level, a plain
    unindented line, a blank line or a traceback frame starts a new record."""
    line = strip_sgr(line)
    m = PREFIX.match(line)
    if m and _NEW_RECORD.search(m.group(0)):
        return None
    if not m and not line[:1].isspace():
        return None
    message = (line[m.end():] if m else line).strip()
    if not message or FRAME.search(message) or message.startswith("Traceback"):
        return None
    return message


_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"\d+(?:\.\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def shape(line: str) -> str:
    """A line with its prefix, numbers and quoted values blanked, so repeats of one message group together."""
    message = split_prefix(line)[1].strip()
    message = _HEX.sub("0x…", message)
    message = _QUOTED.sub("'…'", message)
    return _NUM.sub("N", message)[:200]
