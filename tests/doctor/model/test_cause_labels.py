"""Every cause the verdict can name has a short label for the TUI's bars (doctor.model.verdict.CAUSE_LABELS)."""

from __future__ import annotations

import ast
import importlib
from enum import Enum

from conftest import ROOT

from doctor.model.verdict import CAUSE_LABELS

MODULES = ("doctor.verdict.causes", "doctor.verdict.build")  # where a Cause(...) is made


def _cause_ids(module_name: str) -> set[str]:
    """The first argument of every Cause(...) call in the module: a string literal, or a name the module imports."""
    module = importlib.import_module(module_name)
    tree = ast.parse((ROOT / (module_name.replace(".", "/") + ".py")).read_text())
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Cause" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant):
                value = arg.value
            else:  # e.g. CauseId.KV_READS
                value = eval(compile(ast.Expression(arg), module_name, "eval"), vars(module))  # noqa: S307 - our source
            ids.add(value.value if isinstance(value, Enum) else value)
    return ids


def test_every_cause_id_has_a_label():
    ids = set().union(*(_cause_ids(m) for m in MODULES))
    assert len(ids) >= 8  # kv-reads ... unexplained: the finder saw them all
    assert ids <= set(CAUSE_LABELS), sorted(ids - set(CAUSE_LABELS))
    assert all(label.strip() for label in CAUSE_LABELS.values())
