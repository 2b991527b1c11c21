"""Fixes that fit the paste: a Windows log gets Windows shell lines, and the settings the log printed are named.

A signature's fix is written once, for Linux shells. When the pasted lines are from Windows (a drive path such as
`C:\\ProgramData\\...`, a `(venv) F:\\tabbyAPI>` or `PS C:\\>` prompt, as in the public pastes of
https://github.com/theroyallab/tabbyAPI/issues/356 and https://github.com/LlamaChinese/Llama-Chinese/issues/123),
`export VAR=value` becomes cmd's `set VAR=value` (PowerShell: `$env:VAR = "value"`) and `unset VAR` becomes
`set VAR=`. A memory fix names the max_seq_len and cache_mode the log itself printed instead of a placeholder.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable

from doctor.model.ids import CheckId
from doctor.model.log_analysis import MatchGroup, PlanHint

WINDOWS_PASTE = re.compile(r"(?:^|[\s'\"(=])[A-Za-z]:\\[\w$ .-]|^\s*PS [A-Za-z]:\\|\\AppData\\|\\site-packages\\")
_VALUE = r"[A-Za-z_]\w*=(?:'[^']*'|\"[^\"]*\"|[^\s;,'\"]+)"
_EXPORT = re.compile(rf"\bexport ({_VALUE}(?: {_VALUE})*)")
_ASSIGN = re.compile(r"([A-Za-z_]\w*)=('[^']*'|\"[^\"]*\"|[^\s;,'\"]+)")
_UNSET = re.compile(r"\bunset ([A-Za-z_]\w*)")


def is_windows_paste(lines: list[str]) -> bool:
    return any(WINDOWS_PASTE.search(line) for line in lines)


def _pairs(assignments: str) -> list[tuple[str, str]]:
    return [(k, v.strip("'\"")) for k, v in _ASSIGN.findall(assignments)]


def windows_text(text: str) -> str:
    """A fix sentence with its POSIX shell lines in cmd's syntax (PowerShell's named once)."""
    def sub(m: re.Match) -> str:
        pairs = _pairs(m.group(1))
        cmd = " & ".join(f"set {k}={v}" for k, v in pairs)
        ps = "; ".join(f'$env:{k} = "{v}"' for k, v in pairs)
        return f"{cmd} (PowerShell: {ps})"
    return _UNSET.sub(r"set \1=", _EXPORT.sub(sub, text))


def windows_commands(commands: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for c in commands:
        m = _EXPORT.search(c)
        if m and c.strip().startswith("export"):
            out += [f"set {k}={v}" for k, v in _pairs(m.group(1))]
        else:
            out.append(_UNSET.sub(r"set \1=", c))
    return tuple(out)


def _log_settings(hints: Iterable[PlanHint]) -> str:
    seen: dict[str, Any] = {}
    for h in hints:
        seen.setdefault(h.field, h.value)
    named = [f"{k} {seen[k]}" for k in ("max_seq_len", "cache_mode") if k in seen]
    return f" This log runs {' and '.join(named)}." if named else ""


def fit_to_paste(matches: tuple[MatchGroup, ...], hints: tuple[PlanHint, ...] = (), head: tuple[str, ...] = ()) -> tuple[MatchGroup, ...]:
    """The matches with fixes in the paste's shell and with the settings the log printed. `head`: the log's first
    lines, where a paste shows its prompt or install paths even when the error line itself names no path."""
    windows = is_windows_paste([m.text for m in matches]) or is_windows_paste(list(head))
    settings = _log_settings(hints)
    out = []
    for m in matches:
        fix, commands = m.fix, m.commands
        if windows:
            fix, commands = windows_text(fix), windows_commands(commands)
        if settings and CheckId.MEMORY_BUDGET in m.checks:
            fix += settings
        out.append(replace(m, fix=fix, commands=commands) if (fix, commands) != (m.fix, m.commands) else m)
    return tuple(out)
