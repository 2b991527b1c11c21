"""Stream a log once: keywords pick the candidate lines, signatures explain them, the rest is classified and grouped.

Memory stays bounded whatever the log's size: one block (4 MiB plus a partial line) at a time, groups
capped at GROUP_CAP per kind with exact counts, and remembered line outcomes (remembered.py) within SEEN_BYTES. Lines are numbered from 1, as editors do.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, KeysView

from doctor.knowledge.signatures import LOG_SIGNATURES, PLAN_HINTS, Signature
from doctor.knowledge.signatures import PlanHint as HintRule
from doctor.logscan.causes import link_consequences
from doctor.logscan.engine import infer_engine, worded
from doctor.logscan.keywords import KeywordFinder, SignatureIndex, minimal_keywords
from doctor.logscan.lines import (
    CLASSIFY_KEYWORDS,
    TRACEBACK_HEADER,
    continuation,
    kind_in_context,
    may_continue,
    shape,
    starts_a_traceback,
    strip_sgr,
)
from doctor.logscan.numbers import convert
from doctor.logscan.remembered import (
    BLANK_DIGITS,
    CONTEXT,
    SEEN_BYTES,
    Seen,
    any_digits,
    exact_key,
    prefix_end,
    reads_digits,
    replay_block,
)
from doctor.logscan.source import MAX_LINE, LogInputError, LogSource, blocks
from doctor.model.log_analysis import (
    GROUP_CAP,
    LIST_CAP,
    UNKNOWN_ENGINE,
    LogEngine,
    LogStats,
    MatchGroup,
    PlanHint,
    Unexplained,
    UnexplainedGroup,
)

Progress = Callable[[int, int | None], None]  # (bytes done, total bytes or None)
_TRACEBACK = TRACEBACK_HEADER.encode()
PREFIX_MEMO_BYTES = 1 << 20  # prefix_of's answers kept, roughly (then forgotten all at once)
JOIN_LINES = 4  # a wrapped message is looked for over at most this many continuation lines
BULK_SHARE = 0.25  # whole-block replay is tried when a quarter of the last block was examined (issue 17, CPU s over
# 200 MB: 1 line in 10 examined, line by line 1.12 vs whole blocks 1.37; every line, 6.15 vs 2.4)


@dataclass
class _Group:
    first_line: int
    text: str
    matched: str
    numbers: dict
    count: int = 0
    lines: list[int] = field(default_factory=list)

    def add(self, lineno: int) -> None:
        self.count += 1
        if len(self.lines) < LIST_CAP:
            self.lines.append(lineno)


@dataclass
class ScanResult:
    stats: LogStats
    matches: tuple[MatchGroup, ...]
    unexplained: Unexplained
    plan_hints: tuple[PlanHint, ...]
    engine: LogEngine = UNKNOWN_ENGINE


@dataclass
class _Pending:
    group: _Group
    regex: re.Pattern
    lines_left: int


class Scanner:
    def __init__(self, signatures: Iterable[Signature] = LOG_SIGNATURES, hints: Iterable[HintRule] = PLAN_HINTS,
                 accelerated: bool = True, remember: bool = True, engine: str | None = None):
        self.engine = engine  # --engine: the fixes are worded for it whatever the log shows
        self.remember = remember  # replay the outcome of a line seen before (False: classify every line, for tests)
        self.signatures = tuple(signatures)
        self.hints = tuple(hints)
        words = [a for s in self.signatures for a in s.anchors] + list(CLASSIFY_KEYWORDS) + [h.anchor for h in self.hints]
        self.finder = KeywordFinder(minimal_keywords(words), accelerated=accelerated)
        self.candidates = SignatureIndex(self.signatures, accelerated)
        self.digit_rows = frozenset(s.id for s in self.signatures if reads_digits(s.pattern, s.anchors))
        # a digit-reading row that cannot match a line even with any digits leaves that line's digits unread
        self.any_digits = {s.id: _compiled(any_digits(s.pattern), s.regex.flags) for s in self.signatures
                           if s.id in self.digit_rows}
        # a line holding one of these (digits blanked) might hold a digit-bearing keyword: its digits matter
        self.blanked_digit_words = tuple({w.encode().translate(BLANK_DIGITS) for w in words if any(c.isdigit() for c in w)}
                                         | {b"0x"})  # lines.shape() reads "0x" as hex
        self.digit_words = KeywordFinder(self.blanked_digit_words, accelerated=accelerated)  # one search, not 12 `in`s

    def scan(self, source: LogSource, progress: Progress | None = None) -> ScanResult:
        run = _Run(self, source)
        started = time.perf_counter()
        done = 0
        for block in blocks(source.raw_chunks()):
            run.block(block)
            done += len(block)
            if progress:
                progress(done, source.size)
        seconds = time.perf_counter() - started
        if not run.has_text:
            raise LogInputError(f"{source.name}: has only blank lines, nothing to explain")
        result = run.result(done, seconds)
        return self.judged(result, head_lines(source))

    def judged(self, result: ScanResult, head: list[str]) -> ScanResult:
        """The matches with their fixes in the words of the engine the log shows, and each knock-on message under its
        cause. Reads only the log's first lines (already sniffed) and the matched lines: no second pass."""
        by_id = {s.id: s for s in self.signatures}
        lines = list(enumerate(head, 1)) + [(m.first_line, m.text) for m in result.matches]
        engine = infer_engine(lines, self.engine)
        matches = link_consequences(worded(result.matches, by_id, engine), by_id)
        return replace(result, matches=matches, engine=engine)


HEAD_LINES = 200  # the start-up lines read for the engine's evidence


def head_lines(source: LogSource) -> list[str]:
    """The log's first lines as sniffed (64 KiB at most, already read), without colour codes."""
    return [strip_sgr(line) for line in source.head.decode(source.encoding, "replace").splitlines()[:HEAD_LINES]]


class _Run:
    """The state of one pass over one log."""

    def __init__(self, scanner: Scanner, source: LogSource):
        self.sc = scanner
        self.source = source
        self.codec = source.decode_as
        self.lines_before = 0  # newlines seen in earlier blocks
        self.last_line = b""  # the previous block's last line, for framing checks
        self.ends_with_newline = True
        self.has_text = False
        self.undecodable = 0
        self.long_pieces = 0
        self.matched_lines = 0
        self.framing_lines = 0
        self.kind_counts = {"error": 0, "warning": 0}
        self.dropped = 0
        self.matches: dict[str, _Group] = {}
        self.match_sig: dict[str, Signature] = {}
        self.unexplained: dict[tuple[str, str], _Group] = {}
        self.hints: dict[str, PlanHint] = {}
        self.pending: list[_Pending] = []
        self.seen: dict[bytes, Seen] = {}
        self.max_line = MAX_LINE
        self.continues_memo: dict[bytes, bool] = {}  # continues_as's answers, per line with digits blanked
        self.continuing_keys: set[bytes] = set()  # those answered yes
        self.prefix_memo: dict[bytes, int] = {}
        self.prefix_memo_bytes = 0
        self.remembered_bytes = 0  # what seen and continues_memo hold, roughly
        self.bulk_wait = self.bulk_backoff = 0  # blocks to read line by line before trying a whole block again
        self.examined_share = 0.0  # of the last block read line by line: when most lines are examined, try whole blocks

    # -- one block ----------------------------------------------------------------------------------
    def block(self, block: bytes) -> None:
        if not self.has_text and block.strip():
            self.has_text = True
        self._continue_pending(block)
        if not (self.sc.remember and self.examined_share >= BULK_SHARE) or self.bulk_wait:
            self.bulk_wait = max(self.bulk_wait - 1, 0)
            self._part(block, False)
            return
        read = replay_block(self, block)
        if read is None or read > len(block) // 400:
            # a failed try, or one that had to read many lines one by one (about a quarter of a block of 100-byte
            # lines), waits 1, 2, 4 ... blocks before the next (a log of distinct lines does not pay for it)
            self.bulk_backoff = min(max(2 * self.bulk_backoff, 1), 64)
            self.bulk_wait = self.bulk_backoff
        else:
            self.bulk_backoff = 0
        self._part(block, read is not None)

    def read_line(self, block: bytes, ls: int, le: int, lineno: int) -> None:
        """Read one line of a block that is replayed whole as the line-by-line scan reads it: only when it holds a
        keyword (a digit-bearing keyword may be in one variant of a line and not in another)."""
        hits = self.sc.finder.positions(block[ls:le].lower())
        if hits:
            self._line(block, ls, le, ls + hits[0], lineno)

    def _part(self, part: bytes, replayed: bool) -> None:
        """Finish a part of a block that was replayed whole, or read it line by line."""
        if not replayed:  # (a replayed part's lines were counted by replay_block)
            self._examine(part)
        self.ends_with_newline = part.endswith(b"\n")
        end = len(part) - 1 if self.ends_with_newline else len(part)
        self.last_line = part[part.rfind(b"\n", 0, end) + 1:end][-MAX_LINE:]

    def _examine(self, block: bytes) -> None:
        """Look at each line holding a keyword, one at a time."""
        low = block.lower()
        newlines_seen, counted_to, next_allowed, examined = 0, 0, 0, 0
        for pos in self.sc.finder.positions(low):
            if pos < next_allowed:
                continue
            ls = block.rfind(b"\n", 0, pos) + 1
            le = block.find(b"\n", pos)
            le = len(block) if le == -1 else le
            newlines_seen += block.count(b"\n", counted_to, ls)
            counted_to = ls
            lineno = self.lines_before + newlines_seen + 1
            self._line(block, ls, le, pos, lineno)
            next_allowed = le + 1
            examined += 1
        newlines = newlines_seen + (block.count(b"\n", counted_to) if counted_to else _newlines(block))
        self.lines_before += newlines
        self.examined_share = examined / max(newlines, 1)

    def _decode(self, raw: bytes) -> str:
        return strip_sgr(raw.decode(self.codec, errors="replace"))

    def _decode_examined(self, raw: bytes) -> str:
        """Decode a line the scanner looks at, counting it when its bytes are not valid in the encoding.
        (Only examined lines are validated: decoding every line of a 2 GB log would halve the throughput.)"""
        try:
            return strip_sgr(raw.decode(self.codec))
        except UnicodeDecodeError:
            self.undecodable += 1
            return strip_sgr(raw.decode(self.codec, errors="replace"))

    def _line(self, block: bytes, ls: int, le: int, hit: int, lineno: int) -> None:
        if le - ls > MAX_LINE:  # a huge line: look at a window around the keyword
            self.long_pieces += 1
            ls, le = max(ls, hit - MAX_LINE // 2), min(le, hit + MAX_LINE // 2)
            self._classify(block, ls, le, lineno, block[ls:le], None)
            return
        raw = block[ls:le]
        key = raw.translate(BLANK_DIGITS)
        seen = self.seen.get(key)
        if seen is not None and seen.kind == CONTEXT:  # the lines around decided it: look it up with them
            around = self._around(block, ls, le, seen)
            found = self.seen.get(around) if around is not None else None
            if found is not None and (seen.after or not self._changed_below(found, block, le)):
                self._replay(found, lineno)
            else:
                self._classify(block, ls, le, lineno, raw, key)
            return
        if seen is not None and (seen.raw is None or seen.raw == raw) and not self._changed_below(seen, block, le):
            self._replay(seen, lineno)
            return
        self._classify(block, ls, le, lineno, raw, key)

    def _around(self, block: bytes, ls: int, le: int, marker: Seen) -> bytes | None:
        """The line with the line above (marker.before=1) and the marker.after lines below it: the key of an outcome
        they decided (digits blanked; where they matter, as remembered.exact_key keys them); None when the block ends
        before those lines do."""
        end = le
        for _ in range(marker.after):
            if end + 1 >= len(block):
                return None
            nxt = block.find(b"\n", end + 1)
            end = len(block) if nxt == -1 else nxt
        if marker.raw is None:
            here = block[ls:end].translate(BLANK_DIGITS)
        else:
            below = block[le + 1:end].split(b"\n") if marker.after else []
            here = exact_key(self, block[ls:le], below, marker.whole)
        if not marker.before:
            return b"\n\x01" + here
        if ls:
            above = block[block.rfind(b"\n", 0, ls - 1) + 1:ls - 1]
        else:
            above = self.last_line if self.lines_before else b"\x02"
        return b"\n\x00" + above.translate(BLANK_DIGITS) + b"\n" + here

    def _classify(self, block: bytes, ls: int, le: int, lineno: int, raw: bytes, key: bytes | None) -> None:
        """Classify and record one examined line; remember the outcome under `key` when no context decided it."""
        before = self.undecodable
        text = self._decode_examined(raw).rstrip("\r")
        low = text.lower()
        hinted = self._hints(text, low, lineno)
        candidates = self.sc.candidates.of(low)
        found, joins = self._signatures(text, candidates, block, le)
        joined = None if joins is None else bool(joins)
        remember = self.sc.remember and key is not None and self.remembered_bytes < SEEN_BYTES
        undecodable = self.undecodable > before
        if found:
            self.matched_lines += 1
            for sig, m in found:
                self._record_match(sig, m, text, lineno, block, le)
            if remember and key is not None:  # (remember implies a key)
                seen = Seen(None, undecodable, joined is False, tuple(s.id for s, _ in found), hints=hinted)
                self._remember_outcome(block, ls, le, key, self._exactness(key, raw, low, candidates, text, joins, found),
                                       seen, 0, _below(joins))
            return
        kind, consulted = kind_in_context(text, lambda: self._previous_line(block, ls))
        caption = kind in self.kind_counts and self._next_starts_a_traceback(block, le)
        if caption:
            kind = "framing"  # a logged traceback's caption: its error is counted at its end
        group = None
        if kind == "framing":
            self.framing_lines += 1
        elif kind in self.kind_counts:
            self.kind_counts[kind] += 1
            group = (kind, shape(text))
            self._add_unexplained(group, lineno, text)
        if remember and key is not None:  # (remember implies a key)
            # an error- or warning-looking line holds only while no traceback follows it: the replay checks the next line
            seen = Seen(None, undecodable, joined is False, (), kind, group, text=text[:500] if consulted else None,
                        hints=hinted, needs_no_traceback=group is not None)
            self._remember_outcome(block, ls, le, key, self._exactness(key, raw, low, candidates, text, joins, found),
                                   seen, int(consulted), _below(joins, caption))

    def _exactness(self, key: bytes, raw: bytes, low: str, candidates: list[tuple[Signature, re.Pattern]], text: str,
                   joins: list[str] | None, found: list[tuple[Signature, re.Match]]) -> tuple[bool, bool]:
        """(whether the line's digits matter, whether its log prefix's digits may matter too); a plan hint's value
        is read from the line's digits: _remember_outcome keys a hint's line exact whatever this says."""
        exact = self._digits_matter(key, candidates, text, joins, found)
        return exact, self._prefix_read(key, raw, low, candidates, text, joins)

    def _prefix_read(self, key: bytes, raw: bytes, low: str, candidates: list[tuple[Signature, re.Pattern]], text: str,
                     joins: list[str] | None) -> bool:
        """Might the digits of the line's log prefix (its timestamp) change what it comes to? Only if a row that reads
        digits, loosened to any digits (remembered.any_digits: what it matches with some digits), matches from within
        the prefix, on the line or its joins; or a plan hint's anchor is there. (prefix_of already gave 0 where a
        digit-bearing keyword starts in it.) Else every variant of the line with other digits there alone comes to the
        same, and it is keyed with them blanked: a real log's lines differ by their timestamps (issue 40)."""
        cut = self.prefix_of(key)
        if not cut:
            return False
        head = raw[:cut]
        if not head.isascii() or b"\x1b" in head:
            return True  # (positions in the decoded text would differ from the bytes': not worth the care)
        for sig, _ in candidates:
            if sig.id not in self.sc.digit_rows:
                continue
            loose = self.sc.any_digits[sig.id]
            if loose is None:
                return True
            for t in (text, *(joins or ())):
                m = loose.search(t)
                if m is not None and m.start() < cut:
                    return True
        return any(0 <= low.find(h.anchor) < cut for h in self.sc.hints)

    def prefix_of(self, key: bytes) -> int:
        """How many bytes at the start of lines with this key (digits blanked) exact_key blanks: their log prefix, or 0
        where a digit-bearing keyword starts in it (other digits there might make the line hold a keyword, or not)."""
        cut = self.prefix_memo.get(key)
        if cut is None:
            cut = prefix_end(key)
            if cut:
                hits = self.sc.digit_words.positions(key.lower())
                if hits and hits[0] < cut:
                    cut = 0
            if self.prefix_memo_bytes > PREFIX_MEMO_BYTES:
                self.prefix_memo.clear()
                self.prefix_memo_bytes = 0
            self.prefix_memo[key] = cut
            self.prefix_memo_bytes += len(key) + 100
        return cut

    def _remember_outcome(self, block: bytes, ls: int, le: int, key: bytes, exactness: tuple[bool, bool], seen: Seen,
                          before: int, after: int) -> None:
        """Remember under the line's own key (digits blanked); or, when the line above or wrapped lines below decided
        it, or its digits matter, under the line with those lines (and the one that ended the wrap), digits kept where
        they matter, behind a marker on its own key saying which lines to take."""
        exact, whole = exactness
        exact = exact or bool(seen.hints)
        whole = whole and exact
        marker = self.seen.get(key)
        if marker is None or marker.kind != CONTEXT:
            if not before and not after and not exact:
                self._remember(key, seen)
                return
            if marker is not None:
                del self.seen[key]  # a plain outcome gives way to the marker: this line's context matters after all
            marker = Seen(b"" if exact else None, kind=CONTEXT, before=before, after=after, whole=whole)
            self._remember(key, marker)
        elif (marker.before < before or marker.after < after or (exact and marker.raw is None)
              or (whole and not marker.whole)):
            marker = replace(marker, before=max(before, marker.before), after=max(after, marker.after),
                             raw=b"" if exact else marker.raw, whole=whole or marker.whole)
            self.seen[key] = marker  # wider: the outcomes kept with less context around are no longer looked up
        if self.seen.get(key) is marker:
            around = self._around(block, ls, le, marker)
            if around is not None:
                self._remember(around, seen)

    def _add_unexplained(self, key: tuple[str, str], lineno: int, text: str | None) -> None:
        group = self.unexplained.get(key)
        if group is None:
            if text is None or len(self.unexplained) >= 2 * GROUP_CAP:
                self.dropped += 1
                return
            group = self.unexplained[key] = _Group(lineno, text[:500], "", {})
        group.add(lineno)

    def _replay(self, seen: Seen, lineno: int) -> None:
        """The recorded outcome of a line seen before. Its groups were made when it was first seen (or dropped by the
        caps then, and the caps only fill up), so replaying only counts."""
        if seen.undecodable:
            self.undecodable += 1
        self.replay_hints(seen.hints, lineno)
        if seen.matched:
            self.matched_lines += 1
            for sid in seen.matched:
                group = self.matches.get(sid)
                if group is None:
                    self.dropped += 1
                else:
                    group.add(lineno)
        elif seen.kind == "framing":
            self.framing_lines += 1
        elif seen.group is not None:
            self.kind_counts[seen.kind] += 1
            self._add_unexplained(seen.group, lineno, seen.text)

    def replay_hints(self, hints: tuple[tuple[str, object], ...], lineno: int) -> None:
        """The plan settings a line seen before prints, at this line's number (the last one printed wins)."""
        for name, value in hints:
            self.hints[name] = PlanHint(name, value, lineno)

    def unexamined(self, key: bytes, some_raw: Callable[[bytes], bytes]) -> Seen | None:
        """The outcome of a line without any keyword (never looked at), remembered when its digits cannot matter;
        None when the line holds a keyword (it must be examined) or might, with other digits. `some_raw` gives one
        line with this key: asked only when a digit-bearing keyword might be there (else every variant holds the
        same keywords as the key: blanking changes digits alone)."""
        low = key.lower()
        if not self.sc.digit_words.positions(low):
            if self.sc.finder.positions(low):
                return None
            seen = Seen(None)
            self._remember(key, seen)
            return seen
        raw = some_raw(key)
        if self.sc.finder.positions(raw.lower()):
            return None
        marker = Seen(b"", kind=CONTEXT)  # its digits matter: each variant is looked up as itself
        self._remember(key, marker)
        self.unexamined_exact(raw, exact_key(self, raw, (), False))
        return marker

    def unexamined_exact(self, raw: bytes, key: bytes) -> Seen | None:
        """unexamined() for one variant of a line whose digits matter, remembered under `key`, as _around keys it
        (exact_key)."""
        if self.sc.finder.positions(raw.lower()):
            return None
        seen = Seen(None)
        self._remember(b"\n\x01" + key, seen)
        return seen

    def _remember(self, key: bytes, seen: Seen) -> None:
        """Keep an outcome while the remembered lines stay within SEEN_BYTES (a log of only distinct lines stays bounded)."""
        size = len(key) + (len(seen.raw) if seen.raw is not None else 0) + 200
        if self.remembered_bytes + size <= SEEN_BYTES:
            self.remembered_bytes += size
            self.seen[key] = seen

    def _digits_matter(self, key: bytes, candidates: list[tuple[Signature, re.Pattern]], text: str, joins: list[str] | None,
                       found: list[tuple[Signature, re.Match]]) -> bool:
        """Could other digits in this line change its outcome: a digit-bearing keyword might be there, a candidate row
        that reads digits matched, or would match with some digits (its any-digit form matches the line or its joins)?
        Then it is remembered only as these exact bytes."""
        if self.sc.digit_words.positions(key.lower()):
            return True
        for sig, _ in candidates:
            if sig.id not in self.sc.digit_rows:
                continue
            loose = self.sc.any_digits[sig.id]
            if loose is None or any(s.id == sig.id for s, _ in found) or loose.search(text) or (
                    joins and any(loose.search(j) for j in joins)):
                return True
        return False

    def _changed_below(self, seen: Seen, block: bytes, le: int) -> bool:
        """Would the line after the one ending at `le` (within this block) change this remembered outcome: continue the
        line whose outcome held because none did, or start a traceback under an error-looking line?"""
        if not (seen.needs_no_continuation or seen.needs_no_traceback):
            return False
        at = le + 1
        if at >= len(block):
            return False
        end = block.find(b"\n", at)
        nxt = block[at:len(block) if end == -1 else end]
        return ((seen.needs_no_continuation and self.continues_as(nxt))
                or (seen.needs_no_traceback and self.traceback_below(nxt)))

    def traceback_below(self, nxt: bytes) -> bool:
        """Does this line start a traceback (so the line above is its caption)?"""
        return _TRACEBACK in nxt and starts_a_traceback(self._decode(nxt[:MAX_LINE]).rstrip("\r"))

    def _next_starts_a_traceback(self, block: bytes, le: int) -> bool:
        at = le + 1
        if at >= len(block):
            return False
        end = block.find(b"\n", at)
        return self.traceback_below(block[at:len(block) if end == -1 else end])

    def continues_as(self, nxt: bytes) -> bool:
        """Does this line continue the one above it (lines.continuation), so that a line remembered as not continued
        may change? (A traceback header under an error-looking line is traceback_below's: it changes only those, and
        they say so; a matched, ordinary or framing line stays what it was. Asking it here too, as before issue 29's
        round 3, made every exception line at a traceback's end, followed by the next traceback, classified again.)
        Remembered per line with its digits blanked (the answer does not depend on them: a timestamp's line is asked
        once), also when the first byte tells."""
        key = nxt.translate(BLANK_DIGITS)
        verdict = self.continues_memo.get(key)
        if verdict is None:
            verdict = may_continue(key) and continuation(self._decode(key[:MAX_LINE]).rstrip("\r")) is not None
            if self.remembered_bytes + len(key) + 100 <= SEEN_BYTES:
                self.remembered_bytes += len(key) + 100
                self.continues_memo[key] = verdict
                if verdict:
                    self.continuing_keys.add(key)
        return verdict

    def continuing(self, keys: KeysView[bytes]) -> set[bytes]:
        """Which of these keys (lines with digits blanked) continue the line above (continues_as), in set operations:
        each distinct line is asked once in a log."""
        for key in keys - self.continues_memo.keys():
            self.continues_as(key)
        return keys & self.continuing_keys

    def _previous_line(self, block: bytes, ls: int) -> str | None:
        if ls == 0:
            return self._decode(self.last_line).rstrip("\r") if self.lines_before else None
        start = block.rfind(b"\n", 0, ls - 1) + 1
        return self._decode(block[start:ls - 1][-MAX_LINE:]).rstrip("\r")

    # -- signatures and hints -------------------------------------------------------------------------
    def _signatures(self, text: str, candidates: list[tuple[Signature, re.Pattern]], block: bytes, le: int) -> tuple[list[tuple[Signature, re.Match]],
                                                                              list[str] | None]:
        """The rows that match the line, and the continuation lines read for them: None (not needed), [] (needed, but
        the next line starts a new record), else the line joined with 1, 2 ... of them."""
        found: list[tuple[Signature, re.Match]] = []
        joins: list[str] | None = None
        for sig, regex in candidates:
            m = regex.search(text)
            if m is None or (regex.groups and None in m.groups()):  # perhaps wrapped: its rest is on the next lines
                if joins is None:
                    joins = self._joins(text, block, le)
                m = _fullest(regex, joins, len(text), m)
            if m is None:
                continue
            overlaps = any(s.check == sig.check and m.start() < k.end() and k.start() < m.end() for s, k in found)
            if not overlaps:
                found.append((sig, m))
        return found, joins

    def _joins(self, text: str, block: bytes, le: int) -> list[str]:
        """The line joined with 1, 2 ... of the continuation lines below it (docker/journald-wrapped messages),
        each continuation with its own prefix set aside. Stops at the first line that starts a new record."""
        out, joined, at = [], text, le + 1
        for _ in range(JOIN_LINES):
            if at >= len(block):
                break
            end = block.find(b"\n", at)
            end = len(block) if end == -1 else end
            nxt = block[at:min(end, at + MAX_LINE)]
            rest = continuation(self._decode(nxt).rstrip("\r")) if may_continue(nxt) else None
            if rest is None:
                break
            joined = f"{joined.rstrip()} {rest}"
            out.append(joined)
            at = end + 1
        return out

    def _record_match(self, sig: Signature, m: re.Match, text: str, lineno: int, block: bytes, le: int) -> None:
        key = sig.id  # one group per signature: repeats (other numbers, other wording) add to its count
        group = self.matches.get(key)
        if group is None:
            if len(self.matches) >= GROUP_CAP:
                self.dropped += 1
                return
            group = self.matches[key] = _Group(lineno, text[:500], m.group(0)[:300], convert(m.groupdict()))
            self.match_sig[key] = sig
            if sig.followup_regex is not None:
                self._followup(_Pending(group, sig.followup_regex, sig.followup_lines), block, le + 1)
        group.add(lineno)

    def _followup(self, pending: _Pending, block: bytes, at: int) -> None:
        """Read numbers a multi-line message prints on its next lines (carried over a block edge), until every
        group of the follow-up pattern has a value or its lines are used up."""
        wanted = set(pending.regex.groupindex)
        while pending.lines_left > 0 and at < len(block) and not wanted <= set(pending.group.numbers):
            end = block.find(b"\n", at)
            end = len(block) if end == -1 else end
            m = pending.regex.search(self._decode(block[at:min(end, at + MAX_LINE)]))
            pending.lines_left -= 1
            if m:
                for name, value in convert(m.groupdict()).items():
                    pending.group.numbers.setdefault(name, value)
            at = end + 1
        if pending.lines_left > 0 and not wanted <= set(pending.group.numbers):
            self.pending.append(pending)

    def _continue_pending(self, block: bytes) -> None:
        pending, self.pending = self.pending, []
        for p in pending:
            self._followup(p, block, 0)

    def _hints(self, text: str, low: str, lineno: int) -> tuple[tuple[str, object], ...]:
        """Record the plan settings the line prints; (field, value) of each, replayed with the line number of a repeat."""
        found: list[tuple[str, object]] = []
        for hint in self.sc.hints:
            if hint.anchor in low:
                if m := re.search(hint.pattern, text, re.IGNORECASE):
                    value = m.group("value")
                    found.append((hint.field, int(value) if value.isdigit() else value.lower()))
        for name, value in found:
            self.hints[name] = PlanHint(name, value, lineno)
        return tuple(found)

    # -- the result -----------------------------------------------------------------------------------
    def result(self, nbytes: int, seconds: float) -> ScanResult:
        lines = self.lines_before + (0 if self.ends_with_newline else 1)
        unexplained_total = sum(self.kind_counts.values())
        stats = LogStats(
            name=self.source.name, bytes=nbytes if self.source.size is None else self.source.size, lines=lines,
            encoding=self.source.encoding, undecodable_lines=self.undecodable, long_line_pieces=self.long_pieces,
            matched_lines=self.matched_lines, framing_lines=self.framing_lines,
            ordinary_lines=max(lines - self.matched_lines - self.framing_lines - unexplained_total, 0),
            seconds=round(seconds, 3), mb_per_s=round(nbytes / 1e6 / seconds, 1) if seconds > 0 else None,
            prefilter=self.sc.finder.engine)
        matches = tuple(self._match_group(key, g) for key, g in self.matches.items())
        groups = sorted(self.unexplained.items(), key=lambda kv: (-kv[1].count, kv[1].first_line))
        kept = [UnexplainedGroup(kind, g.text, g.first_line, g.count, tuple(g.lines)) for (kind, _), g in groups[:GROUP_CAP]]
        dropped = self.dropped + sum(g.count for _, g in groups[GROUP_CAP:])
        unexplained = Unexplained(self.kind_counts["error"], self.kind_counts["warning"], tuple(kept), dropped)
        return ScanResult(stats, matches, unexplained, tuple(self.hints.values()))

    def _match_group(self, key: str, g: _Group) -> MatchGroup:
        sig = self.match_sig[key]
        return MatchGroup(signature=sig.id, engine=sig.engine, checks=sig.checks, severity=sig.severity,
                          title=sig.title, fix=sig.fix, commands=sig.commands, source=sig.source,
                          first_line=g.first_line, text=g.text, matched=g.matched, numbers=g.numbers,
                          count=g.count, lines=tuple(g.lines))


def _newlines(block: bytes) -> int:
    """How many lines end in a block: its length less the length without them. bytes.replace finds them with memchr,
    faster than bytes.count's byte-by-byte loop (0.036 against 0.048 s CPU per 100 MB of a quiet log; issue 29)."""
    return len(block) - len(block.replace(b"\n", b""))


def _compiled(pattern: str | None, flags: int) -> re.Pattern | None:
    try:
        return None if pattern is None else re.compile(pattern, flags)
    except re.error:
        return None


def _below(joins: list[str] | None, caption: bool = False) -> int:
    """How many lines below decided a line's outcome: the wrapped lines joined and the one that ended them; the
    traceback header under a caption; 0 when only the line itself did (a next line that may change it is checked
    on replay through Seen.needs_no_continuation)."""
    if joins:
        return min(len(joins) + 1, JOIN_LINES)
    return 1 if caption else 0


def _fullest(regex: re.Pattern, joins: list[str], start_before: int, best: re.Match | None) -> re.Match | None:
    """The match over the joined lines that starts in the line itself and fills the most groups (ties: the shortest join)."""
    def filled(m: re.Match | None) -> int:
        return -1 if m is None else sum(g is not None for g in m.groups())

    for joined in joins:
        m = regex.search(joined)
        if m is not None and m.start() < start_before and filled(m) > filled(best):
            best = m
    return best
