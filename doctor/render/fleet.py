"""A fleet as a table (host × GPU, worst first), the causes hosts share, and the slow outliers: text, Markdown, JSON."""

from __future__ import annotations

from doctor.model.fleet import Fleet, FleetRow
from doctor.model.serialize import strict_json, to_jsonable
from doctor.render.untrusted import json_for_terminal, md_text

SYMBOL = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "–", "error": "☠", "info": "i", "unreadable": "?"}
COLUMNS = ("", "host", "gpu", "card", "driver", "torch", "tok/s", "of ceiling", "top cause")
MAX_CAUSE = 70


def _speed(r: FleetRow) -> tuple[str, str]:
    share = r.share_of_ceiling
    none = "unknown" if r.speed_unknown else "–"
    return (f"{r.tok_s:.1f}" if r.tok_s is not None else none, f"{share:.0%}" if share is not None else none)


def _unknown_speed_lines(fleet: Fleet) -> list[str]:
    """Why a row's speed reads "unknown": the report's number could not be a real decode speed."""
    return [f"{r.host} GPU {'–' if r.gpu is None else r.gpu}: {r.speed_unknown}" for r in fleet.rows if r.speed_unknown]


def _cells(r: FleetRow) -> list[str]:
    cause = f"{r.top_check}: {r.top_cause}" if r.top_check else r.top_cause
    if len(cause) > MAX_CAUSE:
        cause = cause[:MAX_CAUSE - 1] + "…"
    return [SYMBOL.get(r.status, "?"), r.host, "–" if r.gpu is None else str(r.gpu), r.card, r.driver, r.torch,
            *_speed(r), cause]


def _counts(fleet: Fleet) -> str:
    by: dict[str, int] = {}
    for r in fleet.rows:
        by[r.status] = by.get(r.status, 0) + 1
    parts = [f"{by[s]} {s}" for s in ("fail", "error", "unreadable", "warn", "pass", "info", "skip") if by.get(s)]
    return f"{fleet.reports} report(s), {fleet.hosts} host(s), {len(fleet.rows)} GPU row(s): " + ", ".join(parts)


def _group_lines(fleet: Fleet, limit: int) -> list[str]:
    return [f"{len(g.hosts)} host(s): {g.check + ': ' if g.check else ''}{g.cause} [{g.status}]"
            + (f" — {', '.join(g.hosts[:5])}{', …' if len(g.hosts) > 5 else ''}") for g in fleet.groups[:limit]]


def _outlier_lines(fleet: Fleet) -> list[str]:
    return [f"{o.host} GPU {o.gpu}: {o.tok_s:.1f} tok/s, {o.ratio:.0%} of the median {o.median_tok_s:.1f} of {o.peers} "
            f"{o.card}{' × ' + o.model if o.model else ''}" for o in fleet.outliers]


def render_fleet_text(fleet: Fleet, max_rows: int = 200) -> str:
    rows = [list(COLUMNS)] + [_cells(r) for r in fleet.rows[:max_rows]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    lines = [f"v100-doctor fleet — {_counts(fleet)}", ""]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1] for row in rows]
    if len(fleet.rows) > max_rows:
        lines.append(f"… {len(fleet.rows) - max_rows} more row(s) (--json has them all)")
    if fleet.groups:
        lines += ["", "Shared causes (hosts, most first):"] + [f"  {l}" for l in _group_lines(fleet, 20)]
    if fleet.outliers:
        lines += ["", "Outliers (below 80 % of the median decode of the same card and model):"]
        lines += [f"  {l}" for l in _outlier_lines(fleet)]
    if unknown := _unknown_speed_lines(fleet):
        lines += ["", "Speeds read as unknown (the report's number cannot be a real one):"]
        lines += [f"  {l}" for l in unknown[:max_rows]]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return md_text(text)  # host and GPU names come from the reports: shown, never obeyed


def render_fleet_markdown(fleet: Fleet, max_rows: int = 200) -> str:
    out = [f"### v100-doctor fleet: {_counts(fleet)}", "", "| " + " | ".join(COLUMNS) + " |",
           "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(_md(c) for c in _cells(r)) + " |" for r in fleet.rows[:max_rows]]
    if fleet.groups:
        out += ["", "**Shared causes**", ""] + [f"- {_md(l)}" for l in _group_lines(fleet, 20)]
    if fleet.outliers:
        out += ["", "**Outliers** (below 80 % of the median of the same card and model)", ""]
        out += [f"- {_md(l)}" for l in _outlier_lines(fleet)]
    if unknown := _unknown_speed_lines(fleet):
        out += ["", "**Speeds read as unknown** (the report's number cannot be a real one)", ""]
        out += [f"- {_md(l)}" for l in unknown[:max_rows]]
    return "\n".join(out) + "\n"


def fleet_to_dict(fleet: Fleet) -> dict:
    data = to_jsonable(fleet)
    for row, r in zip(data["rows"], fleet.rows):
        row["share_of_ceiling"] = r.share_of_ceiling
    return {"schema": data.pop("schema"), "hosts": fleet.hosts, **data}


def render_fleet_json(fleet: Fleet) -> str:
    return json_for_terminal(strict_json(fleet_to_dict(fleet), indent=1, ensure_ascii=False)) + "\n"
