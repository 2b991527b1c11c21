"""Lines seen before: their outcome is replayed instead of classified again, one line at a time or a whole block at once.

Why: on an error-dense log almost every line is examined, and Python's per-line work (decode, the
signature regexes, the line rules) was nearly all of `explain`'s time (issue 17: 100x grep). Most such
lines repeat, exactly or with other numbers. A line's outcome is remembered under its bytes with the
digits blanked when no digit can change it (no digit-bearing keyword or candidate row, no "0x"), else
under its exact bytes; never when the lines around it decided it (a traceback's indented source
line, a wrapped message, a plan hint with its line number).

A block is replayed whole: the lines remembered plainly are counted at once (one `translate`, one
`split` and one `Counter` in C instead of a Python loop over its lines), lines whose digits matter
per variant; only the others (not seen yet, decided by the lines around, a line number that
matters, a next line that changes them) are looked at one by one, in line order, and read as the
line-by-line scan reads them when nothing remembered fits. Groups get their LIST_CAP line numbers
in line order, so the result is the same as classifying every line
(tests/doctor/logscan/test_remembered_lines.py checks that). Before issue 29's round 3 a block with
more than 64 such lines, or with a plan hint, was read line by line whole.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from itertools import compress, count
from typing import Callable, Container, KeysView, Mapping, Protocol, Sequence

from doctor.logscan.lines import PREFIX
from doctor.model.log_analysis import LIST_CAP

SEEN_BYTES = 8 << 20  # how much the remembered lines may hold (their bytes plus ~200 per entry); then no more are kept
BULK_DISTINCT_CAP = 4_096  # a block with more distinct lines than this is read line by line
READ_SHARE = 0.25  # a block with more of its lines to read one by one than this is read line by line instead
FEW = 8  # lines looked up one by one in a block before an index of all is built
BLANK_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_QUANTIFIERS = re.compile(r"\\[dDwWsSbB]|\{\d+(?:,\d*)?\}")
UNEXAMINED = "unexamined"  # a line without any keyword: ordinary output, never looked at
CONTEXT = "context"  # a marker: the lines around this one decide it; its outcomes are kept under it with them
_TRACEBACK = b"Traceback (most recent call last):"
_BACKREFERENCE = re.compile(r"\(\?P=|\\[1-9]")
PREFIX_BYTES = re.compile(PREFIX.pattern.encode(), re.VERBOSE)  # lines.PREFIX over bytes (ASCII classes): a log prefix


def prefix_end(key: bytes) -> int:
    """Where a line's log prefix (timestamp, level, logger and process tags) ends, 0 without one. Whatever its digits:
    the prefix's pattern reads a digit as any digit, so every line with this key (digits blanked) gives the same."""
    m = PREFIX_BYTES.match(key)
    return m.end() if m else 0


def stamped(line: bytes, prefix: int) -> bytes:
    """A line whose digits matter as it is keyed: its first `prefix` bytes (its log prefix: the timestamp that makes
    every line of a real log distinct) with their digits blanked, the message as it is (issue 40)."""
    return line[:prefix].translate(BLANK_DIGITS) + line[prefix:] if prefix else line


def exact_key(run: ScanState, line: bytes, below: Sequence[bytes], whole: bool) -> bytes:
    """The key of a line whose digits matter, with the lines below that decided it (`below`: wrapped lines and the one
    that ended them, or a traceback header under a caption). The line itself as it is, its log prefix's digits blanked
    unless they may matter (`whole`: run.prefix_of and the scanner's checks say when); a line below as it is when it
    continues the record (its message was read), else with every digit blanked: only whether it continues or starts a
    traceback was read of it, and neither depends on digits (lines.continuation, lines.starts_a_traceback)."""
    first = line if whole else stamped(line, run.prefix_of(line.translate(BLANK_DIGITS)))
    if not below:
        return first
    parts = [first]
    for nxt in below:
        blanked = nxt.translate(BLANK_DIGITS)
        parts.append(nxt if run.continues_as(blanked) else blanked)
    return b"\n".join(parts)


def reads_digits(pattern: str, anchors: tuple[str, ...]) -> bool:
    """Does a digit's value change what this row matches (a literal digit in its pattern or anchors, or a
    backreference: "offloaded 65/65" and "offloaded 48/65" differ only in whether two numbers are equal)?"""
    return (any(c.isdigit() for c in _QUANTIFIERS.sub("", pattern)) or any(c.isdigit() for a in anchors for c in a)
            or _BACKREFERENCE.search(pattern) is not None)


def any_digits(pattern: str) -> str | None:
    """The pattern with each literal digit made any digit, so it matches every line it matches with other digits
    (a superset): if it does not match a line, no variant of that line's digits can match the original either.
    A named backreference becomes any text and a negative lookaround holding a digit or one is left out: each only
    loosens it (a match of the original is one of the looser's, at the same start). None when that cannot be made
    safely (a negated class holding a digit, an escaped digit: a numbered backreference or an octal escape)."""
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
            out.append("(?s:.*?)")  # whether two numbers are equal, loosened: anything there
            i = pattern.index(")", i) + 1
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
            if any(ch.isdigit() for ch in pattern[i:j]) or "(?P=" in pattern[i:j]:
                i = j + 1  # left out: without it the pattern matches more
                continue
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


@dataclass
class Seen:
    """What one line came to. Never changed once made (replace() makes another); not a frozen dataclass, whose
    __init__ (object.__setattr__ per field) took 4 us, a fifth of classifying a line (issue 29)."""

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
    whole: bool = False  # kind CONTEXT with raw: its log prefix's digits may matter too (exact_key keeps them)


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

    def unexamined(self, key: bytes, some_raw: Callable[[bytes], bytes]) -> Seen | None: ...

    def continues_as(self, nxt: bytes) -> bool: ...

    def continuing(self, keys: KeysView[bytes]) -> set[bytes]: ...

    def traceback_below(self, nxt: bytes) -> bool: ...

    def unexamined_exact(self, raw: bytes, key: bytes) -> Seen | None: ...

    def prefix_of(self, key: bytes) -> int: ...

    def replay_hints(self, hints: tuple[tuple[str, object], ...], lineno: int) -> None: ...

    def read_line(self, block: bytes, ls: int, le: int, lineno: int) -> None: ...


def replay_block(run: ScanState, block: bytes) -> int | None:
    """Replay a whole block: the lines remembered plainly are counted at once; the others (not seen yet, decided by
    the lines around, a line number that matters, a next line that changes them) are looked at in line order, each
    replayed from what is remembered of it with its lines around or, failing that, read as the line-by-line scan reads
    it (run.read_line). Returns how many lines were read so; None (and nothing changed) when the block must be read
    line by line: a line too long, too many distinct lines, or more than READ_SHARE of its lines to read one by one."""
    if run.pending or not block.endswith(b"\n"):
        return None
    blanked = block.translate(BLANK_DIGITS)
    keys = blanked.split(b"\n")
    keys.pop()  # after the last newline
    counts = Counter(keys)
    if len(counts) > BULK_DISTINCT_CAP or max(map(len, counts)) > run.max_line:
        return None
    return _Replay(run, _Lines(block, blanked, keys), counts).replay()


def _where(keys: list[bytes], wanted: Container[bytes]) -> list[int]:
    """The indices of the lines whose key is in `wanted`, in one pass in C (no Python step per line)."""
    return list(compress(count(), map(wanted.__contains__, keys)))


class _Replay:
    """One block's replay (replay_block)."""

    def __init__(self, run: ScanState, lines: _Lines, counts: Counter):
        self.run, self.lines, self.counts = run, lines, counts
        self.block, self.keys = lines.block, lines.keys
        self.counted: dict[bytes, tuple[Seen, list[int]]] = {}  # occurrences replayed one by one: outcome, indices
        # variants of lines whose digits matter, keyed as exact_key does: outcome, the indices of their lines
        self.exact: dict[bytes, tuple[Seen, list[int]]] = {}
        self.exact_at: set[int] = set()  # the indices of those lines
        # the indices of lines whose next line continues them, or starts a traceback
        self.before_continued: set[int] = set()
        self.before_traceback: set[int] = set()

    def replay(self) -> int | None:
        run, keys, lines = self.run, self.keys, self.lines
        plan: dict[bytes, tuple[Seen, int]] = {}
        dynamic: dict[bytes, Seen | None] = {}  # looked at per occurrence: a marker, or None (not seen yet, or read)
        for key, n in self.counts.items():
            seen = run.seen.get(key)
            if seen is None:
                seen = run.unexamined(key, lines.some)
            if seen is not None and seen.kind == CONTEXT:
                dynamic[key] = seen
            elif seen is None or seen.hints or (seen.raw is not None and lines.exact_count(seen.raw) != n):
                dynamic[key] = None
            else:
                plan[key] = (seen, n)
        # each line not seen yet is read once (its other occurrences replay what that read remembered)
        unseen = sum(m is None for m in dynamic.values())
        if unseen > len(keys) * READ_SHARE:
            return None  # most of the block would be read one by one: line by line costs less (nothing changed yet)
        self._find_changes()
        if self.before_continued or self.before_traceback:
            # a plainly remembered line that a next line changes somewhere is looked at per occurrence
            continued = {keys[i] for i in self.before_continued}
            traceback = {keys[i] for i in self.before_traceback}
            for key in [k for k, (seen, _) in plan.items() if (seen.needs_no_continuation and k in continued)
                        or (seen.needs_no_traceback and k in traceback)]:
                dynamic[key] = None
                del plan[key]
        # where the lines looked at per occurrence are, in one pass in C (the exact ones are taken from these)
        self.at_dynamic = _where(keys, dynamic)
        self.keys_dynamic = list(map(keys.__getitem__, self.at_dynamic))
        if unseen + self._count_exact(dynamic) > len(keys) * READ_SHARE:
            return None
        read = self._one_by_one(dynamic) if dynamic else 0
        first = run.lines_before + 1
        entries: list[tuple[Seen, int, list[int] | tuple[list[bytes], bytes]]] = []
        for key, (seen, n) in plan.items():
            entries.append((seen, n, (keys, key)))
        for seen, where in self.exact.values():
            entries.append((seen, len(where), where))
        for seen, where in self.counted.values():
            entries.append((seen, len(where), where))
        for seen, n, _ in entries:
            _count(run, seen, n)
        _line_numbers(run, entries, first)
        run.lines_before += len(keys)  # the block's lines, counted here: the split already did
        return read

    def _find_changes(self) -> None:
        """Which lines have a next line that could change a remembered outcome: one that continues them (a wrapped
        message; continues_as, asked once per distinct line), or starts a traceback (the line is its caption).
        Blanked digits change neither answer."""
        run = self.run
        continues = run.continuing(self.counts.keys())
        starts = {k for k in self.counts if _TRACEBACK in k and run.traceback_below(k)}
        if not continues and not starts:
            return
        keys = self.keys
        at = _where(keys, continues | starts)
        above = (-1).__add__  # the line above each (-1 for the first line: never asked about)
        for found, into in ((continues, self.before_continued), (starts, self.before_traceback)):
            if found:
                into.update(map(above, compress(at, map(found.__contains__, map(keys.__getitem__, at)))))
                into.discard(-1)

    def _changed(self, seen: Seen, at: int) -> bool:
        """Would the next line change this remembered outcome (as scanner._Run._changed_below asks)?"""
        return ((seen.needs_no_continuation and at in self.before_continued)
                or (seen.needs_no_traceback and at in self.before_traceback))

    def _count_exact(self, dynamic: dict[bytes, Seen | None]) -> int:
        """Lines whose digits matter and whose outcome no line around decides, counted per variant (as exact_key keys
        it: the message as it is, a timestamp's digits blanked -> outcome, its lines) when remembered so and no next
        line changes them; a line whose every variant is so counted is no longer looked at per occurrence. Returns how
        many variants are left to look at."""
        wanted = {k for k, m in dynamic.items() if m is not None and m.raw is not None and not m.before and not m.after}
        if not wanted:
            return 0
        run, keys, raw = self.run, self.keys, self.lines.raw
        prefixes = {k: 0 if m.whole else run.prefix_of(k) for k in wanted if (m := dynamic[k]) is not None}
        variants: dict[bytes, list[int]] = {}
        chosen = map(wanted.__contains__, self.keys_dynamic)
        for i, key in compress(zip(self.at_dynamic, self.keys_dynamic), chosen):
            cut = prefixes[key]
            line = key[:cut] + raw[i][cut:] if cut else raw[i]  # (the key's prefix is the line's with digits blanked)
            where = variants.get(line)
            if where is None:
                variants[line] = [i]
            else:
                where.append(i)
        left: set[bytes] = set()  # keys with a variant that is looked at per occurrence
        unknown = 0  # variants left to look at one by one (each read once at least)
        for line, where in variants.items():
            seen = run.seen.get(b"\n\x01" + line)
            if seen is None:
                seen = run.unexamined_exact(raw[where[0]], line)  # a line without keywords that shares a key with one that has
            changed = seen is not None and (
                (seen.needs_no_continuation and not self.before_continued.isdisjoint(where))
                or (seen.needs_no_traceback and not self.before_traceback.isdisjoint(where)))
            if (seen is None or seen.hints or changed
                    or (seen.group is not None and seen.text is not None and seen.group not in run.unexplained)):
                left.add(keys[where[0]])
                unknown += 1
            else:
                self.exact[line] = (seen, where)
                self.exact_at.update(where)
        for key in wanted - left:
            del dynamic[key]
        return unknown

    def _one_by_one(self, dynamic: dict[bytes, Seen | None]) -> int:
        """Look at each occurrence of the lines not counted at once, in line order: replay it, or read it."""
        run, keys, counted = self.run, self.keys, self.counted
        first = run.lines_before + 1
        line, offset, read = 0, 0, 0  # a line index and its offset in the block (blanking keeps lengths)
        looked_at = compress(zip(self.at_dynamic, self.keys_dynamic), map(dynamic.__contains__, self.keys_dynamic))
        for at, key in looked_at:
            marker = dynamic[key]
            if marker is not None:
                if at in self.exact_at or self._resolve(marker, at):
                    continue
            else:
                seen = run.seen.get(key)  # perhaps remembered since, from an earlier occurrence in this block
                if seen is not None and seen.kind == CONTEXT:
                    dynamic[key] = seen
                    if self._resolve(seen, at):
                        continue
                elif seen is not None and not (seen.hints or seen.raw is not None or self._changed(seen, at)):
                    entry = counted.get(key)
                    if entry is None:
                        counted[key] = (seen, [at])
                    else:
                        entry[1].append(at)
                    continue
            offset += sum(map(len, keys[line:at])) + (at - line)
            line = at
            run.read_line(self.block, offset, offset + len(key), first + at)
            read += 1
        return read

    def _resolve(self, marker: Seen, at: int) -> bool:
        """Look up one occurrence of a line the lines around decide, with those lines (as scanner._Run._around builds
        the key), into `counted`; False when it must be read one by one: outcome not remembered, the block ends
        before its lines do, a next line that changes it. A plan hint it prints is recorded here, with its line
        number: these lines are looked at in line order, and the lines counted at once print none."""
        run, keys = self.run, self.keys
        if at + marker.after >= len(keys):
            return False
        if marker.raw is not None:
            raw = self.lines.raw
            here = exact_key(run, raw[at], raw[at + 1:at + marker.after + 1], marker.whole)
        else:
            here = b"\n".join(keys[at:at + marker.after + 1]) if marker.after else keys[at]
        if not marker.before:
            around = b"\n\x01" + here
        else:
            above = keys[at - 1] if at else run.last_line.translate(BLANK_DIGITS) if run.lines_before else b"\x02"
            around = b"\n\x00" + above + b"\n" + here
        seen = run.seen.get(around)
        if seen is None and marker.raw is not None and not marker.before and not marker.after:
            seen = run.unexamined_exact(self.lines.raw[at], here)  # a line without keywords that shares a key with one that has
        if (seen is None or (seen.group is not None and seen.text is not None and seen.group not in run.unexplained)
                or (not marker.after and self._changed(seen, at))):
            return False
        if seen.hints:
            run.replay_hints(seen.hints, run.lines_before + 1 + at)
        entry = self.counted.get(around)
        if entry is None:
            self.counted[around] = (seen, [at])
        else:
            entry[1].append(at)
        return True


class _Lines:
    """A block's lines, raw, split only when needed."""

    def __init__(self, block: bytes, blanked: bytes, keys: list[bytes]):
        self.block, self.blanked, self.keys = block, blanked, keys
        self._raw: list[bytes] | None = None
        self._asked = 0
        self._some: dict[bytes, bytes] | None = None
        self._counts: Counter | None = None

    @property
    def raw(self) -> list[bytes]:
        if self._raw is None:
            self._raw = self.block.split(b"\n")
            self._raw.pop()
        return self._raw

    def some(self, key: bytes) -> bytes:
        """One raw line with these blanked bytes. For the first few asked, the first, found in the blanked block
        (blanking keeps every line's length); then the last, from a map of all lines built in C."""
        self._asked += 1
        if self._asked <= FEW:
            blanked = self.blanked
            at = 0 if blanked.startswith(key + b"\n") else blanked.find(b"\n" + key + b"\n") + 1
            return self.block[at:at + len(key)]
        if self._some is None:
            self._some = dict(zip(self.keys, self.raw))
        return self._some[key]

    def raw_counts(self) -> Counter:
        if self._counts is None:
            self._counts = Counter(self.raw)
        return self._counts

    def exact_count(self, raw: bytes) -> int:
        return self.raw_counts()[raw]


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


def _line_numbers(run: ScanState, entries: list[tuple[Seen, int, list[int] | tuple[list[bytes], bytes]]],
                  first: int) -> None:
    """Groups that kept fewer than LIST_CAP line numbers before this block get this block's, merged in line order with
    those the lines read one by one gave them (from each outcome's line indices, or from where its line occurs)."""
    wanting: dict[int, list[int]] = {}  # id(group) -> its new line numbers
    groups = {}
    for seen, n, where in entries:
        targets = ([run.matches.get(s) for s in seen.matched] if seen.matched
                   else [run.unexplained.get(seen.group)] if seen.group is not None else [])
        for group in targets:
            if group is None:
                continue
            room = LIST_CAP - bisect_left(group.lines, first)  # (the numbers before `first` are from earlier blocks)
            if room <= 0:
                continue
            found = wanting.setdefault(id(group), [])
            groups[id(group)] = group
            if isinstance(where, list):
                found.extend(first + at for at in where[:room])
                continue
            within, line = where
            at = -1
            for _ in range(min(room, n)):
                at = within.index(line, at + 1)
                found.append(first + at)
    for gid, numbers in wanting.items():
        group = groups[gid]
        before = bisect_left(group.lines, first)
        group.lines[before:] = sorted(group.lines[before:] + numbers)[:LIST_CAP - before]
