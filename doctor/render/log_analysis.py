"""The log analysis as terminal text or Markdown: each known pitfall with its line, fix and the machine's answer, then what stayed unexplained."""

from __future__ import annotations

from doctor.model.log_analysis import LogAnalysis, LogEngine, MatchGroup, UnexplainedGroup
from doctor.render.common import WIDTH, wrap
from doctor.render.untrusted import md_code, md_fence, md_text

SYMBOL = {"error": "✗", "warning": "!", "info": "i"}
VERDICT = {"confirmed": "confirmed", "ruled-out": "ruled out", "cannot-tell": "cannot tell"}
SHOWN_GROUPS = 15  # unexplained kinds listed in text; -v lists all kept


def clip(text: str, limit: int) -> str:
    """A quoted log line within `limit` characters, its cut marked with "…" (never cut without saying so)."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def unexplained_label(g: UnexplainedGroup) -> str:
    """An unexplained line's place and kind, and that it was not recognised (explain never quotes a line silently)."""
    count = f" (×{g.count})" if g.count > 1 else ""
    return f"line {g.first_line}{count} {g.kind}, {g.explanation.split(':')[0]}"


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


def header(a: LogAnalysis) -> str:
    s = a.log
    enc = s.encoding + (f", {s.undecodable_lines} line(s) not valid {s.encoding} (shown as �)" if s.undecodable_lines else "")
    return f"{s.name}: {s.lines:,} lines, {_size(s.bytes)}, {enc} · facts: {a.facts_source}"


def _lines(m: MatchGroup) -> str:
    shown = ", ".join(str(n) for n in m.lines)
    return f"line {shown}" if m.count == 1 else f"{m.count}× (lines {shown}{', …' if m.count > len(m.lines) else ''})"


def _numbers(m: MatchGroup) -> str:
    return ", ".join(f"{k}={v}" for k, v in m.numbers.items())


def engine_line(e: LogEngine) -> str:
    """Which engine the fixes speak for, and what showed it."""
    if e.engine is None:
        return f"engine: not named by the log ({e.why}); fixes are worded for any engine" + (
            " (the log shows PyTorch)" if e.torch else "")
    distinct = {x.why: x for x in reversed(e.lines)}  # the first line of each kind of evidence
    shown = "; ".join(f"line {x.line}: {x.why}" for x in sorted(distinct.values(), key=lambda x: x.line)[:2])
    return f"engine: {e.label}, from {e.why}" + (f" ({shown})" if shown else "")


def causes_first(a: LogAnalysis) -> list[tuple[MatchGroup, list[MatchGroup]]]:
    """Each match that follows from no other, in line order, with the matches that follow from it (directly or not)."""
    by = {m.signature: m for m in a.matches}

    def root(m: MatchGroup) -> MatchGroup:
        seen = {m.signature}
        while m.consequence_of in by and m.consequence_of not in seen:
            m = by[m.consequence_of]
            seen.add(m.signature)
        return m

    groups: dict[str, list[MatchGroup]] = {}
    for m in sorted(a.matches, key=lambda m: m.first_line):
        top = root(m)
        groups.setdefault(top.signature, [])
        if top is not m:
            groups[top.signature].append(m)
    return [(by[sig], after) for sig, after in sorted(groups.items(), key=lambda kv: by[kv[0]].first_line)]


def summary_line(a: LogAnalysis) -> str:
    verdicts = [m.confirmation.verdict for m in a.matches if m.confirmation]
    knock_on = sum(1 for m in a.matches if m.consequence_of)
    parts = [f"{len(a.matches)} known pitfall message(s)" + (f" ({knock_on} of them consequences of another)" if knock_on
                                                              else "")]
    for v in ("confirmed", "ruled-out", "cannot-tell"):
        if verdicts.count(v):
            parts.append(f"{verdicts.count(v)} {VERDICT[v]}")
    u = a.unexplained
    parts.append(f"{u.error_lines} error-looking and {u.warning_lines} warning-looking line(s) left unexplained")
    return ", ".join(parts) + "."


def render_text(a: LogAnalysis, verbose: bool = False, width: int = WIDTH) -> str:
    """Every line wraps at `width` on whole words (the terminal's width on a terminal); commands stay whole."""
    out = wrap(f"v100-doctor explain — {header(a)}", "", "  ", width)
    out += wrap(engine_line(a.engine), "", "  ", width)
    if a.plan_hints:
        out += wrap("plan read from the log: " + ", ".join(f"{h.field} {h.value} (line {h.line})" for h in a.plan_hints),
                    "", "  ", width)
    out.append("")
    if a.matches:
        out.append("Known pitfalls:")
    for m, after in causes_first(a):
        out += wrap(f"line {m.first_line}: {clip(m.text, 160)}", f"[{SYMBOL[m.severity]}] ", "    ", width)
        out += wrap(f"{m.check} — {m.title}", "    pitfall: ", "             ", width)
        if m.confirmation:
            out += wrap(f"{VERDICT[m.confirmation.verdict]}: {m.confirmation.reason}", "    machine: ", "             ", width)
        out += wrap(m.fix, "    fix: ", "         ", width)
        out += [f"      $ {c}" for c in m.commands]
        if m.numbers:
            out += wrap(f"numbers: {_numbers(m)}", "    ", "      ", width)
        out += wrap(f"seen {_lines(m)} · {m.engine} · reported at {m.source}", "    ", "      ", width)
        for c in after:
            out += wrap(f"line {c.first_line}: {clip(c.text, 140)}", "    then ", "         ", width)
            out += wrap(f"{c.check} — {c.title} (a consequence of the above: the same fix)", "         ", "           ", width)
    u = a.unexplained
    out += [""] + wrap(f"Unexplained: {u.error_lines} error-looking, {u.warning_lines} warning-looking line(s) in "
                       f"{len(u.groups)} kind(s) that no known pitfall's message matches; the other "
                       f"{a.log.ordinary_lines + a.log.framing_lines:,} line(s) are ordinary output or traceback framing.",
                       "", "  ", width)
    shown = u.groups if verbose else u.groups[:SHOWN_GROUPS]
    for g in shown:
        out += wrap(f"{unexplained_label(g)}: {clip(g.example, 150)}", "  ", "    ", width)
    hidden = len(u.groups) - len(shown)
    if hidden:
        out.append(f"  … {hidden} more kind(s) ({sum(g.count for g in u.groups[len(shown):])} lines): use -v or --json")
    if u.lines_in_dropped_groups:
        out.append(f"  … and {u.lines_in_dropped_groups} more line(s) of rarer kinds, counted but not listed")
    out += [""] + wrap(f"Summary: {summary_line(a)}", "", "  ", width)
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return md_text(text).strip()


def render_markdown(a: LogAnalysis) -> str:
    out = [f"### v100-doctor explain: {md_text(summary_line(a))}", "", f"_{md_text(header(a))}_", "",
           md_text(engine_line(a.engine)), ""]
    if a.plan_hints:
        out += ["Plan read from the log: " + ", ".join(f"`{h.field}` {h.value} (line {h.line})" for h in a.plan_hints), ""]
    if a.matches:
        out += ["| | line | pitfall | machine | message |", "|---|---|---|---|---|"]
        for m in sorted(a.matches, key=lambda m: m.first_line):
            verdict = VERDICT[m.confirmation.verdict] if m.confirmation else "not checked"
            after = f" (follows from `{m.consequence_of}`)" if m.consequence_of else ""
            out.append(f"| {SYMBOL[m.severity]} | {m.first_line} | `{m.check}`{after} | {verdict} | "
                       f"{md_code(m.matched.strip())} |")
        out += ["", "<details><summary>Fixes and evidence</summary>", ""]
        for m in sorted((m for m in a.matches if not m.consequence_of), key=lambda m: m.first_line):
            out += [f"#### line {m.first_line}: {md_code(m.signature)} ({md_text(m.engine)})", "", f"- **pitfall**: {_cell(m.title)}"]
            if m.confirmation:
                out.append(f"- **machine**: {VERDICT[m.confirmation.verdict]} — {_cell(m.confirmation.reason)}")
            if m.numbers:
                out.append(f"- **numbers**: {_cell(_numbers(m))}")
            out += [f"- **seen**: {md_text(_lines(m))}", f"- **reported at**: {md_text(m.source)}", "", f"**Fix:** {md_text(m.fix)}"]
            if m.commands:
                out += ["", *md_fence(m.commands, "sh")]
            out.append("")
        out += ["</details>", ""]
    u = a.unexplained
    if u.groups:
        out += [f"**Unexplained** ({u.error_lines} error-looking, {u.warning_lines} warning-looking lines):", ""]
        out += [f"- {md_text(unexplained_label(g))}: {md_code(clip(g.example, 150))}" for g in u.groups[:SHOWN_GROUPS]]
        if len(u.groups) > SHOWN_GROUPS or u.lines_in_dropped_groups:
            more = sum(g.count for g in u.groups[SHOWN_GROUPS:]) + u.lines_in_dropped_groups
            out.append(f"- … {more} more line(s) of other kinds (see the JSON)")
        out.append("")
    return "\n".join(out)
