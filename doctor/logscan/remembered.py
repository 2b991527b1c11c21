"""Lines seen before: their outcome is replayed instead of classified again, one line at a time or a whole block at once.

Why: on an error-dense log almost every line is examined, and Python's per-line work (decode, the
signature regexes, the line rules) was nearly all of `explain`'s time (issue 17: 100x grep). Most such
lines repeat, exactly or with other numbers. A line's outcome is remembered under its bytes with the
digits blanked when no digit can change it (no digit-bearing keyword or candidate row, no "0x"), else
under its exact bytes; never when the lines around it decided it (a traceback's indented source
line, a wrapped message, a plan hint with its line number).

A block whose every distinct line is remembered, and whose replay only counts, is replayed at once:
one `translate`, one `split` and one `Counter` in C instead of a Python loop over its lines. Groups
still short of their LIST_CAP line numbers get them in line order, so the result is the same as
classifying every line (tests/doctor/logscan/test_remembered_lines.py checks that).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Protocol

from doctor.logscan.lines import may_continue
from doctor.model.log_analysis import LIST_CAP

SEEN_BYTES = 8 << 20  # how much the remembered lines may hold (their bytes plus ~200 per entry); then no more are kept
BULK_DISTINCT_CAP = 4_096  # a block with more distinct lines than this is read line by line
FEW = 8  # lines looked up one by one in a block before an index of all is built
UNSEEN_CAP = 64  # a block with more lines not seen yet is read line by line
BLANK_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_QUANTIFIERS = re.compile(r"\\[dDwWsSbB]|\{\d+(?:,\d*)?\}")
UNEXAMINED = "unexamined"  # a line without any keyword: ordinary output, never looked at
CONTEXT = "context"  # a marker: the lines around this one decide it; its outcomes are kept under it with them
_TRACEBACK = b"Traceback (most recent call last):"
_BACKREFERENCE = re.compile(r"\(\?P=|\\[1-9]")


def reads_digits(pattern: str, anchors: tuple[str, ...]) -> bool:
    """Does a digit's value change what this row matches (a literal digit in its pattern or anchors, or a
    backreference: "offloaded 65/65" and "offloaded 48/65" differ only in whether two numbers are equal)?"""
    return (any(c.isdigit() for c in _QUANTIFIERS.sub("", pattern)) or any(c.isdigit() for a in anchors for c in a)
            or _BACKREFERENCE.search(pattern) is not None)


def any_digits(pattern: str) -> str | None:
    """The pattern with each literal digit made any digit, so it matches every line it matches with other digits
    (a superset): if it does not match a line, no variant of that line's digits can match the original either.
    None when that cannot be made safely (a negated class or negative lookaround holding a digit, an escaped digit,
    a backreference)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            if nxt.isdigit():
                return None  # a backreference or octal escape
            width = {"x": 4, "u": 6, "U": 10}.get(nxt, 2)
            out.append(pattern[i:i + width])
            i += width
        elif pattern.startswith("(?P=", i):
            return None  # a backreference: whether two numbers are equal cannot be loosened into a superset
        elif pattern.startswith("(?P<", i):  # a group's name may hold digits
            end = pattern.find(">", i)
            out.append(pattern[i:end + 1])
            i = end + 1
        elif pattern.startswith(("(?!", "(?<!"), i):
            depth, j = 0, i
            while j < n:
                depth += pattern[j] == "(" and pattern[j - 1:j] != "\\"
                depth -= pattern[j] == ")" and pattern[j - 1:j] != "\\"
                if depth == 0:
                    break
                j += 1
            if any(ch.isdigit() for ch in pattern[i:j]):
                return None
            out.append(pattern[i:i + 3])
            i += 3
        elif c == "{":  # a quantifier's counts stay
            end = pattern.find("}", i)
            end = n - 1 if end == -1 else end
            out.append(pattern[i:end + 1])
            i = end + 1
        elif c == "[":
            end = i + 1
            end += pattern[end:end + 1] == "^"
            end += pattern[end:end + 1] == "]"
            while end < n and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            body = pattern[i:end]
            if any(ch.isdigit() for ch in body):
                if body.startswith(("[^", "[]")):
                    return None
                body = "[\\d" + body[1:]
            out.append(body + "]")
            i = end + 1
        elif c.isdigit():
            out.append("\\d")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class Seen:
    """What one line came to."""

    raw: bytes | None  # the line itself when its digits matter; None when any digits give the same outcome
    undecodable: bool = False
    needs_no_continuation: bool = False  # a row was looked for over continuation lines and none followed
    matched: tuple[str, ...] = ()  # signature ids, or () for an unmatched line
    kind: str = UNEXAMINED  # unmatched: framing | error | warning | ordinary | unexamined
    group: tuple[str, str] | None = None  # the unexplained group it counts in
    text: str | None = None  # the line, for its group, when the lines around decided it (its group may not exist yet)
    hints: tuple[tuple[str, object], ...] = ()  # the plan settings it prints (replayed with a repeat's line number)
    before: int = 0  # kind CONTEXT: the outcome is remembered under the line with the one above (1) ...
    after: int = 0  # ... and this many lines below; raw is b"" when their digits matter
    needs_no_traceback: bool = False  # error- or warning-looking: it holds only while the next line starts no traceback


class _Group(Protocol):
    """A match or unexplained group of the scan: its exact count and up to LIST_CAP line numbers."""

    count: int
    lines: list[int]


class ScanState(Protocol):
    """What replaying lines reads and counts in one pass over a log (scanner.py's _Run is one): declared here, so
    this module never imports the scanner that imports it."""

    pending: list
    max_line: int
    last_line: bytes
    seen: dict[bytes, Seen]
    lines_before: int
    undecodable: int
    matched_lines: int
    framing_lines: int
    dropped: int
    kind_counts: dict[str, int]

    @property
    def matches(self) -> Mapping[str, _Group]: ...

    @property
    def unexplained(self) -> Mapping[tuple[str, str], _Group]: ...

    def unexamined(self, key: bytes, raw: bytes) -> Seen | None: ...

    def continues_as(self, nxt: bytes) -> bool: ...

    def traceback_below(self, nxt: bytes) -> bool: ...

    def unexamined_exact(self, raw: bytes) -> Seen | None: ...


Spans = list[tuple[int, int, list[bytes]]]


def replay_block(run: ScanState, block: bytes, keys: list[bytes] | None = None) -> bool | Spans:
    """Replay a whole block when every distinct line in it is remembered and replaying it only counts; False (and
    nothing changed) when it must be read line by line; or, when only lines not seen yet stand in the way, the byte
    spans (start, end, the blanked lines of the part before it) of their first sightings, the last one empty: those
    are read line by line, the parts between them tried again (with their lines: the block is not split again)."""
    if run.pending or not block.endswith(b"\n"):
        return False
    if keys is None:
        keys = block.translate(BLANK_DIGITS).split(b"\n")
        keys.pop()  # after the last newline
    counts = Counter(keys)
    if len(counts) > BULK_DISTINCT_CAP or max(map(len, counts)) > run.max_line:
        return False
    lines = _Lines(block, keys)
    plan: list[tuple[bytes, Seen, int]] = []
    unseen: list[int] = []  # line indices of first sightings
    markers: dict[bytes, Seen] = {}
    for key, n in counts.items():
        seen = run.seen.get(key)
        if seen is None:
            seen = run.unexamined(key, lines.some(key))
        if seen is not None and seen.kind == CONTEXT:
            markers[key] = seen
            continue
        if seen is None or seen.hints:  # read line by line: not seen yet, or its line number matters
            unseen.append(lines.first(key))
            if len(unseen) > UNSEEN_CAP:
                return False
            continue
        if seen.raw is not None and lines.exact_count(seen.raw) != n:
            return False  # the same line with other digits, and its digits matter
        plan.append((key, seen, n))
    resolved: dict[bytes, tuple[Seen, list[int]]] = {}
    if markers:
        unresolved = _resolve(run, lines, markers, resolved)
        if len(unseen) + len(unresolved) > UNSEEN_CAP:
            return False
        unseen += unresolved
    if unseen:
        return _unseen_spans(keys, sorted(unseen))
    if not _no_continuations(run, lines, plan):
        return False
    first = run.lines_before + 1
    for key, seen, n in plan:
        _count(run, seen, n)
    for seen, at in resolved.values():
        _count(run, seen, len(at))
    _line_numbers(run, keys, [(seen, n, key) for key, seen, n in plan] + [(seen, len(at), at) for seen, at in
                                                                         resolved.values()], first)
    run.lines_before += len(keys)  # the block's lines, counted here: the split already did
    return True


def _resolve(run: ScanState, lines: _Lines, markers: dict[bytes, Seen],
             resolved: dict[bytes, tuple[Seen, list[int]]]) -> list[int]:
    """Look up each occurrence of a line the lines around decide, with those lines (as scanner._Run._around builds
    the key), into `resolved` (key -> outcome and line indices); the indices that must be read line by line: outcome
    not remembered, the block ends before its lines do, a next line that changes it, a line number that matters."""
    keys = lines.keys
    last = len(keys)
    unresolved: list[int] = []
    for at in [i for i, k in enumerate(keys) if k in markers]:
        marker = markers[keys[at]]
        if at + marker.after >= last:
            unresolved.append(at)
            continue
        here = b"\n".join((lines.raw if marker.raw is not None else keys)[at:at + marker.after + 1])
        if not marker.before:
            around = b"\n\x01" + here
        else:
            above = keys[at - 1] if at else run.last_line.translate(BLANK_DIGITS) if run.lines_before else b"\x02"
            around = b"\n\x00" + above + b"\n" + here
        seen = run.seen.get(around)
        if seen is None and marker.raw is not None and not marker.before and not marker.after:
            seen = run.unexamined_exact(lines.raw[at])  # a line without keywords that shares a key with one that has
        if (seen is None or seen.hints or (seen.group is not None and seen.text is not None
                                           and seen.group not in run.unexplained)
                or (not marker.after and at + 1 < last and (
                    (seen.needs_no_continuation and run.continues_as(keys[at + 1]))
                    or (seen.needs_no_traceback and run.traceback_below(keys[at + 1]))))):
            unresolved.append(at)
            continue
        entry = resolved.get(around)
        if entry is None:
            resolved[around] = (seen, [at])
        else:
            entry[1].append(at)
    return unresolved


def _may_change_above(line: bytes) -> bool:
    """May this line decide the outcome of the one above it (continue it, or start the traceback it is the caption of)?"""
    return may_continue(line) or _TRACEBACK in line


def _unseen_spans(keys: list[bytes], unseen: list[int]) -> Spans | bool:
    """Byte spans (start, end) of the first sighting of each unseen kind of line, widened over lines that may continue
    the one above or start a traceback (so no wrapped message or caption is cut off what decides it) and merged; False when they cover the whole block."""
    spans: list[list[int]] = []
    for first in unseen:
        start, end = first, first + 1
        while start > 0 and _may_change_above(keys[start]):
            start -= 1
        while end < len(keys) and _may_change_above(keys[end]):
            end += 1
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    if spans[0][0] == 0 and spans[0][1] >= len(keys):
        return False
    out: Spans = []
    line, offset = 0, 0  # line indices -> byte offsets, in one pass
    for start, end in spans:
        offset += sum(map(len, keys[line:start])) + (start - line)
        begin = offset
        offset += sum(map(len, keys[start:end])) + (end - start)
        out.append((begin, offset, keys[line:start]))
        line = end
    total = offset + sum(map(len, keys[line:])) + (len(keys) - line)
    out.append((total, total, keys[line:]))
    return out


class _Lines:
    """A block's lines, raw, split only when needed."""

    def __init__(self, block: bytes, keys: list[bytes]):
        self.block, self.keys = block, keys
        self._raw: list[bytes] | None = None
        self._asked = self._firsts = 0
        self._first_at: dict[bytes, int] | None = None
        self._counts: Counter | None = None

    @property
    def raw(self) -> list[bytes]:
        if self._raw is None:
            self._raw = self.block.split(b"\n")
            self._raw.pop()
        return self._raw

    def some(self, key: bytes) -> bytes:
        """One raw line with these blanked bytes: the first. For the first few asked, found by its offset (blanking keeps
        every line's length), so the block is not split a second time; then from the split lines."""
        self._asked += 1
        if self._asked <= FEW:
            at = self.first(key)
            offset = sum(map(len, self.keys[:at])) + at
            return self.block[offset:offset + len(key)]
        return self.raw[self.first(key)]

    def first(self, key: bytes) -> int:
        """The index of the first line with these blanked bytes (one pass for all, once more than a few are asked)."""
        self._firsts += 1
        if self._firsts <= FEW:
            return self.keys.index(key)
        if self._first_at is None:
            self._first_at = {}
            for at, k in enumerate(self.keys):
                self._first_at.setdefault(k, at)
        return self._first_at[key]

    def exact_count(self, raw: bytes) -> int:
        if self._counts is None:
            self._counts = Counter(self.raw)
        return self._counts[raw]


def _no_continuations(run: ScanState, lines: _Lines, plan: list[tuple[bytes, Seen, int]]) -> bool:
    """True when no line after a line remembered as "holds while the next line does not change it" (no continuation
    followed, no traceback) changes it, checked as the line-by-line scan does (each distinct next line once), in one
    pass over the block; at once when no line of the block may continue another or start a traceback."""
    # asked of the distinct lines, not of the block's bytes: blanked digits change neither answer
    tracebacks = any(_TRACEBACK in key for key, _, _ in plan)
    wrapped = {key for key, seen, n in plan if seen.needs_no_continuation}
    if wrapped and not (tracebacks or any(may_continue(key) for key, _, _ in plan)):
        wrapped = set()
    captions = {key for key, seen, n in plan if seen.needs_no_traceback} if tracebacks else set()
    if not wrapped and not captions:
        return True
    keys = lines.keys  # blanked digits never change whether a line continues another or starts a traceback
    verdicts: dict[tuple[bytes, bool], bool] = {}
    for at in range(len(keys) - 1):
        key = keys[at]
        if key in wrapped or key in captions:
            wrap = key in wrapped
            nxt = keys[at + 1]
            changes = verdicts.get((nxt, wrap))
            if changes is None:
                changes = verdicts[nxt, wrap] = run.continues_as(nxt) if wrap else run.traceback_below(nxt)
            if changes:
                return False
    return True


def _count(run: ScanState, seen: Seen, n: int) -> None:
    if seen.undecodable:
        run.undecodable += n
    if seen.matched:
        run.matched_lines += n
        for sid in seen.matched:
            group = run.matches.get(sid)
            if group is None:
                run.dropped += n
            else:
                group.count += n
    elif seen.kind == "framing":
        run.framing_lines += n
    elif seen.group is not None:
        run.kind_counts[seen.kind] += n
        group = run.unexplained.get(seen.group)
        if group is None:
            run.dropped += n
        else:
            group.count += n


def _line_numbers(run: ScanState, keys: list[bytes], plan: list[tuple[Seen, int, bytes | list[int]]],
                  first: int) -> None:
    """Groups that still keep fewer than LIST_CAP line numbers get this block's, in line order (from each outcome's
    line indices, or from where its line's key occurs)."""
    wanting: dict[int, list[int]] = {}  # id(group) -> its new line numbers
    groups = {}
    for seen, n, where in plan:
        targets = ([run.matches.get(s) for s in seen.matched] if seen.matched
                   else [run.unexplained.get(seen.group)] if seen.group is not None else [])
        for group in targets:
            if group is None or len(group.lines) >= LIST_CAP:
                continue
            room = LIST_CAP - len(group.lines)
            found = wanting.setdefault(id(group), [])
            groups[id(group)] = group
            if isinstance(where, list):
                found.extend(first + at for at in where[:room])
                continue
            at = -1
            for _ in range(min(room, n)):
                at = keys.index(where, at + 1)
                found.append(first + at)
    for gid, numbers in wanting.items():
        group = groups[gid]
        group.lines.extend(sorted(numbers)[:LIST_CAP - len(group.lines)])
