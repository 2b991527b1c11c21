"""Every id a check, a dependency, a signature or a failure mapping names exists, and a misspelt one fails.

The ids are enums (doctor/model/ids.py). Check and Signature turn what they are given into members
when they are built, so a misspelt id stops the module from loading; the scan at the end makes sure
the places that name ids use the members, not bare text that only looks right.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checks.base import Check
from checks.per_gpu import PER_GPU_CHECK_IDS
from checks.registry import all_checks, check_ids
from doctor.knowledge.signatures import PROBE_KINDS, SIGNATURES, Signature
from doctor.model.findings import Finding, Status
from doctor.model.ids import PROBE_STAGE_IDS, CheckId, FailureKind

ROOT = Path(__file__).resolve().parents[2]


def _noop(ctx) -> Finding:
    return Finding(id=CheckId.THERMAL, title="t", status=Status.PASS, summary="s")


def test_every_check_id_is_registered_once_and_the_probe_stage_has_the_rest():
    ids = check_ids()
    assert all(type(i) is CheckId for i in ids)
    assert len(ids) == len(set(ids))
    assert set(ids) | PROBE_STAGE_IDS == set(CheckId) and not set(ids) & PROBE_STAGE_IDS


def test_every_dependency_is_a_check_that_runs_before_it():
    order = check_ids()
    for check in all_checks():
        for dep in check.depends_on:
            assert type(dep) is CheckId and dep in order[:order.index(check.id)], (check.id, dep)


def test_the_per_gpu_checks_are_registered_checks():
    assert set(PER_GPU_CHECK_IDS) <= set(check_ids()) and all(type(i) is CheckId for i in PER_GPU_CHECK_IDS)


def test_every_signature_names_registered_checks_and_known_kinds():
    registered = set(check_ids())
    for sig in SIGNATURES:
        assert sig.checks and all(type(c) is CheckId and c in registered for c in sig.checks), sig.id
        if sig.confirmed_by_evidence:
            check, key = sig.confirmed_by_evidence
            assert type(check) is CheckId and check in sig.checks and isinstance(key, str), sig.id
        assert sig.probe_kind is None or (type(sig.probe_kind) is FailureKind and sig.probe_kind in PROBE_KINDS)


@pytest.mark.parametrize("build", [
    lambda: Check(id="cuda-pairng", title="t", run=_noop),  # type: ignore[arg-type]
    lambda: Check(id=CheckId.FLASH_ATTN, title="t", run=_noop, depends_on=("compute-capabilty",)),  # type: ignore[arg-type]
    lambda: Signature("s", "torch", "x", "x", ("cuda-pairng",), "t", "f", "u", "P"),  # type: ignore[arg-type]
    lambda: Signature("s", "torch", "x", "x", (CheckId.CUDA_PAIRING,), "t", "f", "u", "P",
                      confirmed_by_evidence=("compute-capabilty", "triton")),  # type: ignore[arg-type]
    lambda: Signature("s", "torch", "x", "x", (CheckId.CUDA_PAIRING,), "t", "f", "u", "P", probe_kind="oomm"),  # type: ignore[arg-type]
    lambda: Signature("s", "torch", "x", "x", (CheckId.CUDA_PAIRING,), "t", "f", "u", "P",
                      probe_kind=FailureKind.TIMEOUT),  # a runner outcome, never recognised from a text
], ids=["check-id", "dependency", "signature-check", "confirmed-by", "probe-kind", "kind-not-from-text"])
def test_an_unknown_id_is_refused_when_built(build):
    with pytest.raises(ValueError):
        build()


def test_text_that_is_a_known_id_becomes_the_member():
    check = Check(id="thermal", title="t", run=_noop, depends_on=("gpu-present",))  # type: ignore[arg-type]
    assert check.id is CheckId.THERMAL and check.depends_on == (CheckId.GPU_PRESENT,)


# --- the places that name an id use the members --------------------------------------------------------------
# (call, positional argument or keyword) that hold an id; a str literal there is an id the types cannot check
ID_ARGUMENTS = {
    "Check": ({"id", "depends_on"}, ()),
    "Finding": ({"id"}, (0,)),
    "Cause": ({"id"}, (0,)),
    "Signature": ({"checks", "confirmed_by_evidence", "probe_kind"}, (4,)),
    "ProbeReport": ({"error_kind"}, ()),
    "ProbeFailure": ({"kind"}, (0,)),
    "_finding": ({"check_id"}, (0,)),
    "fail": ({"kind"}, (0,)),  # the probe worker's Worker.fail
    "finding": ({"check_id"}, (0,)),  # Report.finding
}


def _str_literals(node: ast.AST) -> list[ast.Constant]:
    """The text an argument can evaluate to: a literal, or one inside a tuple, a conditional or an `or`
    (not the keys of a lookup that computes it, such as err.get("kind"))."""
    if isinstance(node, ast.Constant):
        return [node] if isinstance(node.value, str) else []
    if isinstance(node, (ast.Tuple, ast.List)):
        return [c for e in node.elts for c in _str_literals(e)]
    if isinstance(node, ast.IfExp):
        return _str_literals(node.body) + _str_literals(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [c for v in node.values for c in _str_literals(v)]
    return []


def _bare_ids(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "error" and isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "em":
            keywords, positions = {"kind"}, (0,)  # the Emitter's error event
        elif name == "finding" and not (isinstance(node.func, ast.Attribute)
                                        and getattr(node.func.value, "id", "") == "report"):
            continue  # Check.finding takes a status, not an id
        elif name in ID_ARGUMENTS:
            keywords, positions = ID_ARGUMENTS[name]
        else:
            continue
        held = [node.args[i] for i in positions if i < len(node.args)]
        held += [kw.value for kw in node.keywords if kw.arg in keywords]
        for value in held:
            if name == "Signature" and isinstance(value, ast.Tuple) and len(value.elts) == 2:
                value = value.elts[0]  # confirmed_by_evidence: (check id, evidence key)
            found += [(c.lineno, c.value) for c in _str_literals(value)]
    return found


def test_no_id_is_named_by_bare_text_in_the_source():
    bare = []
    for path in sorted((ROOT / "doctor").rglob("*.py")) + sorted((ROOT / "checks").rglob("*.py")):
        for line, text in _bare_ids(ast.parse(path.read_text(), str(path))):
            bare.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert not bare, "name ids by their enum member (doctor/model/ids.py):\n" + "\n".join(bare)


def test_the_scan_finds_a_bare_id():
    planted = ast.parse('CHECK = Check(id="cuda-pairng", title="t", run=run, depends_on=("gpu-present",))\n'
                        'report.finding("memory-budget")\n'
                        'Signature("s", "e", "a", "p", ("cuda-pairng",), "t", "f", "u", "P", probe_kind="oom")\n'
                        'em.error("internal", "start", "m")\n'
                        'raise self.fail(kind if kind != FailureKind.INTERNAL else "jit-build", "m")\n'
                        'ProbeReport(error_kind=err.get("kind") or "failed")\n')
    assert [t for _, t in _bare_ids(planted)] == ["cuda-pairng", "gpu-present", "memory-budget", "cuda-pairng", "oom",
                                                 "internal", "jit-build", "failed"]
