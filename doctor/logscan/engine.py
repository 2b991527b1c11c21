"""Which engine wrote the log, from its own lines, and each fix worded in that engine's terms.

The evidence is read from the lines already at hand, never from a further pass over the log: the first lines of the
paste (its start-up, where an engine prints its banner and its logger's format) and the lines the signatures matched.
Each engine's markers and fixes live with the engine (doctor/engines/<engine>/log.py); --engine overrides the log.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable

from doctor.engines import adapter
from doctor.engines.log_types import EngineLog, LogFix
from doctor.engines.logs import BY_ENGINE, ENGINE_LOGS, NEUTRAL
from doctor.knowledge.signatures import Signature
from doctor.model.ids import Engine
from doctor.model.log_analysis import UNKNOWN_ENGINE, EngineLine, LogEngine, MatchGroup

TORCH = re.compile(r"site-packages[/\\]torch[/\\]|\btorch\.(?:cuda|OutOfMemoryError)|\bimport torch\b|\bPyTorch\b")
SHOWN_LINES = 3  # evidence lines kept per engine
_ARCH_KEYS = ("arch", "cc", "card_cc", "arch_cc")


def infer_engine(lines: Iterable[tuple[int, str]], given: str | None = None) -> LogEngine:
    """The engine the log shows (numbered lines: the head and the matched lines), or --engine's when given."""
    numbered = list(lines)
    torch = any(TORCH.search(text) for _, text in numbered)
    if given:
        log = BY_ENGINE[Engine(given)]
        flavour, found = _flavour_and_lines(log, numbered)
        return LogEngine(log.engine.value, _label(log, flavour), flavour, "--engine", tuple(found), torch or log.uses_torch)
    evidence: dict[Engine, tuple[int, bool, str, list[EngineLine]]] = {}
    for log in ENGINE_LOGS:
        flavour, found = _flavour_and_lines(log, numbered)
        if found:
            decisive = any(m.decisive and m.regex.search(t) for m in log.markers for _, t in numbered)
            evidence[log.engine] = (_count(log, numbered), decisive, flavour, found)
    if not evidence:
        return replace(UNKNOWN_ENGINE, torch=torch)
    order = [log.engine for log in ENGINE_LOGS]
    decided = [e for e in order if e in evidence and evidence[e][1]]
    engine = decided[0] if decided else max(evidence, key=lambda e: (evidence[e][0], -order.index(e)))
    _, _, flavour, found = evidence[engine]
    log = BY_ENGINE[engine]
    return LogEngine(engine.value, _label(log, flavour), flavour, "the log's own lines", tuple(found[:SHOWN_LINES]),
                     torch or log.uses_torch)


def _flavour_and_lines(log: EngineLog, numbered: list[tuple[int, str]]) -> tuple[str, list[EngineLine]]:
    found: list[EngineLine] = []
    flavour = ""
    for lineno, text in numbered:
        for marker in log.markers:
            if marker.regex.search(text):
                flavour = flavour or marker.flavour
                if len(found) < SHOWN_LINES or marker.flavour:
                    found.append(EngineLine(lineno, text.strip()[:200], marker.why))
                break
    if flavour:  # the flavour's own line first: it is what decided the fixes
        found.sort(key=lambda e: not any(m.flavour == flavour and m.why == e.why for m in log.markers))
    return flavour, found


def _count(log: EngineLog, numbered: list[tuple[int, str]]) -> int:
    return sum(1 for _, text in numbered if any(m.regex.search(text) for m in log.markers))


def _label(log: EngineLog, flavour: str) -> str:
    return f"{log.label} ({flavour})" if flavour else log.label


def worded(matches: Iterable[MatchGroup], signatures: dict[str, Signature], engine: LogEngine) -> tuple[MatchGroup, ...]:
    """Each match's fix in the engine's terms where its signature has a fault class the engine answers; a neutral fix
    where the log names no engine (a torch program keeps torch's own wheel fix); else the row's own fix."""
    out = []
    for m in matches:
        sig = signatures.get(m.signature)
        fix = _fix_for(sig.fix_class, engine, m.numbers) if sig is not None and sig.fix_class else None
        if fix is None:
            out.append(m)
            continue
        arch = _arch(m.numbers)
        text = fix.text.replace("{arch}", arch)
        commands = tuple(c.replace("{arch}", arch) for c in fix.commands)
        out.append(replace(m, fix=text, commands=commands))
    return tuple(out)


# with no engine named but PyTorch in the log, these classes keep the row's own fix: it is torch's (a wheel with the
# card's kernels); the others' row fixes speak ExLlamaV2 (max_seq_len, EXLLAMA_NO_FLASH_ATTN), so a neutral one is given
TORCH_ROW_FIXES = frozenset({"no-kernel", "cuda-runtime-missing"})


def _fix_for(fault: str, engine: LogEngine, numbers: dict) -> LogFix | None:
    if engine.engine is not None:
        fix = BY_ENGINE[Engine(engine.engine)].fix(fault, engine.flavour, numbers)
        if fix is None and fault == "flash-attn":  # the adapter's own answer, as the flash-attn check prints it
            cc = numbers.get("card_cc")
            return LogFix(*adapter(engine.engine).flash_attn_refusal(str(cc) if cc else None))
        return fix
    return None if engine.torch and fault in TORCH_ROW_FIXES else NEUTRAL.get(fault)


def _arch(numbers: dict) -> str:
    """The card's compute capability without the dot, from the numbers the line carried (700 -> 70, "7.0" -> 70)."""
    for key in _ARCH_KEYS:
        value = numbers.get(key)
        if value is None:
            continue
        text = str(value)
        if re.fullmatch(r"\d+\.\d", text):
            return text.replace(".", "")
        if re.fullmatch(r"\d{3,4}", text) and text.endswith("0"):
            return text[:-1]
    return "<the card's compute capability without the dot: 70 for cc 7.0, 61 for 6.1>"
