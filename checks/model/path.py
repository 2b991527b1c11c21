"""`model-path`: the model path exists, is readable, holds sound files, and has no characters that break tools.

Pure: what it says about the disk (near matches, a split path's first piece) was read by the gatherer
(doctor/facts/modeldir/directory.py) and recorded in ModelFacts, so a replay never looks at this machine.
"""

from __future__ import annotations

import posixpath  # the path's words only (dirname, basename): os would let a check reach the machine
import shlex

from checks.base import Check, CheckContext
from checks.model.path_quirks import parent_has_quirks, quirks, rename_command
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import ModelFacts
from doctor.model.units import gb

NO_MODEL = "no --model given"


def _split_hint(parts: tuple[str, ...], joined: str, exists: bool, first_exists: bool = False) -> tuple[str, str]:
    """(summary, fix) when the shell split an unquoted path into pieces; ('', '') otherwise."""
    if len(parts) < 2:
        return "", ""
    pieces = ", ".join(repr(p) for p in parts)
    if exists:
        return (f"your shell split the path into {len(parts)} arguments ({pieces}); joined they name an existing "
                f"directory: did you mean {joined!r}?",
                f"Quote the path: --model {shlex.quote(joined)}. The doctor joined the pieces, but other tools "
                "(test_inference.py -m, launchers) take only the first piece.")
    hint = f" (the first piece {parts[0]!r} exists on its own)" if first_exists else ""
    return (f"your shell split the path into {len(parts)} arguments ({pieces}) and joined they name nothing{hint}",
            "Quote the whole path, e.g. --model '/data/tmp/my model'.")


def _missing(path: str, parts: tuple[str, ...], m: ModelFacts, named_by: str) -> Finding:
    split_summary, split_fix = _split_hint(parts, path, False, m.first_piece_exists)
    near = list(m.near_matches)
    summary = split_summary or f"{path!r}: no such file or directory"
    fix = split_fix or "Pass the directory that holds config.json and the *.safetensors files (or a .gguf file)."
    if near:
        summary += f"; did you mean {near[0]!r}?"
    return CHECK.finding(Status.FAIL, summary, {"path": path, "exists": False, "near_matches": near,
                                                "input_error": f"{named_by} {summary}"}, fix,
                         [f"ls -la {shlex.quote(posixpath.dirname(path.rstrip('/')) or '.')}"])


def _contents(m: ModelFacts) -> tuple[list[str], list[str], dict[str, object]]:
    """(fail reasons, warn reasons, evidence) about what is inside the directory."""
    fails: list[str] = []
    warns: list[str] = []
    ev: dict[str, object] = {}
    if m.config_problem and m.gguf is None:  # a GGUF carries its own metadata; everything else needs config.json
        extra = ": ExLlamaV2 and transformers cannot load the directory without it" if m.config_problem.startswith("no config.json") else ""
        fails.append(m.config_problem + extra)
    if m.weights is not None:
        ev.update(weight_files=len(m.weights.shards), weight_bytes=m.weights.total_bytes, tensors=m.weights.tensor_count)
        fails += list(m.weights.problems)
    elif m.gguf is not None:
        ev.update(gguf_file=m.gguf.path, gguf_bytes=m.gguf.file_bytes)
        if m.gguf.problem:
            fails.append(m.gguf.problem)
    elif m.config is not None:
        warns.append("config.json only, no weight files: ExLlamaV2 would stop with \"No .safetensors files found\"; "
                     "the figures below are estimated from config.json")
        ev["estimated_from_config"] = True
    return fails, warns, ev


def run(ctx: CheckContext) -> Finding:
    path, parts = ctx.plan.model_path, ctx.plan.model_path_parts or ()
    if not path:
        return CHECK.finding(Status.SKIP, f"skipped: {NO_MODEL} (pass --model PATH to check a model)")
    m = ctx.facts.model
    if m is None:
        return CHECK.finding(Status.SKIP, "skipped: the model directory was not read in this run")
    if not m.exists:
        return _missing(path, parts, m, ctx.plan.model_path_from)
    if m.kind in ("unreadable", "file") or m.problem and m.kind == "directory":
        error = f"{ctx.plan.model_path_from} {path!r}: {m.problem}"
        return CHECK.finding(Status.FAIL, f"{path!r}: {m.problem}", {"path": path, "kind": m.kind, "input_error": error},
                             "Pass a model directory this user can read (config.json + *.safetensors), or a .gguf file.",
                             [f"ls -la {shlex.quote(path)}"])
    evidence: dict[str, object] = {"path": path, "resolved": m.resolved, "kind": m.kind, "bytes_read": m.bytes_read}
    fails: list[str] = []
    warns: list[str] = []
    commands: list[str] = []
    fix_parts: list[str] = []
    split_summary, split_fix = _split_hint(parts, path, True)
    if split_summary:
        warns.append(split_summary)
        fix_parts.append(split_fix)
        evidence["shell_pieces"] = list(parts)
    if m.kind == "safetensors-file":
        warns.append(m.problem)
        fix_parts.append(f"Use the directory: --model {shlex.quote(posixpath.dirname(path) or '.')}")
    # a glob pattern breaks ExLlamaV2's weight search; llama.cpp and Ollama open the GGUF file by its name
    q = [x for x in quirks(path) if x.kind != "glob" or "gguf" not in ctx.adapter.formats or ctx.engine.assumed]
    for quirk in q:
        evidence[f"path_{quirk.kind}"] = quirk.chars
        (fails if quirk.severity == "fail" and m.gguf is None else warns).append(f"path contains {quirk.kind} ({quirk.chars}): {quirk.breaks}")
    if q:
        commands += [f"v100-doctor --model {shlex.quote(path)}", rename_command(path)]
        fix_parts.append("Quote the path everywhere you pass it, or better, rename it to letters, digits, '.', '_' and '-' "
                         "(the doctor prints the command; it never renames anything).")
        if parent_has_quirks(path):
            fix_parts.append("A parent directory has such characters too: move the model out of it.")
    f2, w2, ev2 = _contents(m)
    fails += f2
    warns += w2
    evidence.update(ev2)
    if ev2.get("estimated_from_config"):
        fix_parts.append("Fine for planning. To run it, download the *.safetensors files (and tokenizer.json) into this "
                         "directory, then run the doctor again for figures from the real file headers.")
    if fails:
        fix_parts.insert(0, "Re-download the damaged file(s); check the download finished (compare sizes with the model page).")
        return CHECK.finding(Status.FAIL, "; ".join(fails + warns), evidence, " ".join(fix_parts), commands)
    if warns:
        return CHECK.finding(Status.WARN, "; ".join(warns), evidence, " ".join(fix_parts), commands)
    what = (f"{len(m.weights.shards)} safetensors file(s), {gb(m.weights.total_bytes, 2)} in {m.weights.tensor_count} tensors"
            if m.weights else f"GGUF file {posixpath.basename(m.gguf.path)}" if m.gguf else "config.json")
    return CHECK.finding(Status.PASS, f"{path}: {what}; headers sound (read {m.bytes_read / 1e6:.2f} MB, no weights loaded)",
                         evidence)


CHECK = Check(id=CheckId("model-path"), title="Model path and files", run=run, order=10)
