"""Whether the engine in force, at its installed version, loads the model's architecture: one rule for every engine,
read from doctor/knowledge/architectures.py. A version the doctor cannot read, or a row a source does not give,
is unknown with its reason, never a pass."""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from doctor.engines.judgement import Judgement
from doctor.knowledge.architectures import (
    ARCH_FIX,
    EXL2_LAST,
    EXL2_SOURCE,
    LLAMA_CPP_ARCHS,
    LLAMA_CPP_LIST_SOURCE,
    LLAMA_CPP_LIST_VERSION,
    ArchRow,
    rows_for,
)
from doctor.model.findings import Status
from doctor.model.unknown import Maybe, known


def _version(v: Maybe[str]) -> Version | None:
    if not known(v):
        return None
    try:
        return Version(str(v))
    except InvalidVersion:
        return None


def _unknown(why: str, evidence: dict[str, Any], fix: str = "") -> Judgement:
    return Judgement(Status.INFO, f"unknown: {why}", fix, evidence=evidence)


def judge(table: str, label: str, arch: str, installed: Maybe[str], package: str, versioned: str = "") -> Judgement:
    """`table`: the engine's rows (exllamav2, llama.cpp, ollama, vllm); `installed`: its version here, of `versioned`
    (llama.cpp's is llama-cpp-python's), `package`: what pip calls it."""
    rows = rows_for(table, arch)
    have = _version(installed)
    where = f"{versioned or label} {installed}" if have else label
    ev: dict[str, Any] = {"architecture": arch, "engine": table,
                          "installed_version": str(installed) if have else None,
                          "installed_unknown": None if have else (installed.reason if not known(installed) else str(installed)),
                          "rows": [{"since": r.since, "kind": r.kind, "source": r.source, "confidence": r.confidence}
                                   for r in rows]}
    fix = ARCH_FIX.get(table, "")
    if table == "exllamav2":
        return _exllamav2(arch, rows, have, where, ev, fix, package)
    listed_here = table == "llama.cpp" and have is not None and have >= Version(LLAMA_CPP_LIST_VERSION)
    if table in ("llama.cpp", "ollama") and (not rows or listed_here):
        return _gguf_list(table, label, arch, have, where, ev, fix)
    if not rows:
        return _unknown(f"the doctor has no row for {arch} under {label} (no source read says which version added it)",
                        ev, fix)
    row = rows[0]
    needed = _version(row.since) if not row.since.startswith("b") else None
    if needed is None:  # a llama.cpp build number: the installed build is not read
        return _unknown(f"{label} has run {arch} since build {row.since} [{row.confidence}] ({row.source}); the "
                        "installed build's number is not read here (`llama-server --version` prints it)", ev)
    if have is None:
        return _unknown(f"{label} runs {arch} from {row.since}; the installed version is unknown "
                        f"({ev['installed_unknown']})", ev, f"Use {label} {row.since} or newer.")
    if have >= needed:
        return Judgement(Status.PASS, f"{where} runs {arch} ({'added in' if row.kind == 'first' else 'shown running on'} "
                          f"{row.since} [{row.confidence}])", evidence=ev)
    if row.kind == "runs":
        return _unknown(f"{arch} is shown running on {label} {row.since} ({row.source}); whether {where} runs it is "
                        "not known", ev, f"Use {label} {row.since} or newer.")
    return Judgement(Status.FAIL, f"{where} predates {arch}: it was added in {label} {row.since} [{row.confidence}]",
                      f"Install {label} {row.since} or newer, which loads {arch}, keeping a version that still runs "
                      "this card (the engine check says which).", _upgrade(table, package, row.since), ev)


def _exllamav2(arch: str, rows: tuple[ArchRow, ...], have: Version | None, where: str, ev: dict[str, Any], fix: str,
               package: str) -> Judgement:
    if not rows:  # 0.3.2 is the last release: no version knows it
        return Judgement(Status.WARN, f"ExLlamaV2 does not know {arch}: it is not in the architecture list of "
                          f"{EXL2_LAST}, its last release ({EXL2_SOURCE}), so it would load it as Llama", fix, evidence=ev)
    since = rows[0].since
    if have is None:
        return _unknown(f"ExLlamaV2 has {arch} since {since}; its installed version is unknown "
                        f"({ev['installed_unknown']})", ev, f"Install exllamav2 {since} or newer.")
    if have < Version(since):
        return Judgement(Status.WARN, f"{where} predates {arch} (added in {since}), so it would load it as Llama",
                          f"Install ExLlamaV2 {since} or newer, which knows {arch} (the command below).",
                          _upgrade("exllamav2", package, since), ev)
    return Judgement(Status.PASS, f"{where} knows {arch} (since {since}, {EXL2_SOURCE})", evidence=ev)


def _gguf_list(table: str, label: str, arch: str, have: Version | None, where: str, ev: dict[str, Any],
               fix: str) -> Judgement:
    """llama.cpp's own list (as llama-cpp-python 0.3.36 vendors it) for a GGUF architecture with no versioned row."""
    listed = arch in LLAMA_CPP_ARCHS
    ev["llama_cpp_list"] = LLAMA_CPP_LIST_SOURCE
    newest = Version(LLAMA_CPP_LIST_VERSION)
    if table == "llama.cpp" and have is not None and have >= newest and listed:
        return Judgement(Status.PASS, f"{where}'s llama.cpp lists {arch}", evidence=ev)
    if listed:
        known_here = (f"so whether {where} runs it is not known" if have is not None
                      else f"and the installed version is unknown ({ev['installed_unknown']})")
        return _unknown(f"llama.cpp lists {arch} (as of llama-cpp-python {LLAMA_CPP_LIST_VERSION}); which {label} "
                        f"version first ran it is not in the doctor's table, {known_here}", ev)
    if table == "llama.cpp" and have is not None and have <= newest:
        return Judgement(Status.FAIL, f"{where}'s llama.cpp does not list {arch}: it stops with \"unknown model "
                          f"architecture: '{arch}'\"", fix, evidence=ev)
    return Judgement(Status.WARN, f"{arch} is not an architecture llama.cpp lists (as of llama-cpp-python "
                      f"{LLAMA_CPP_LIST_VERSION}); {where} would stop with \"unknown model architecture\" unless it is "
                      "newer than that list", fix, evidence=ev)


def _upgrade(table: str, package: str, since: str) -> tuple[str, ...]:
    return (f"pip install '{package}>={since}'",) if table in ("exllamav2", "vllm") else ()
