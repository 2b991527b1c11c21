"""The TUI's shape (issue 36, item 7): the app module keeps routing and lifecycle only, the rest lives in screens and
widgets of one concern each, and every function under doctor/tui is typed (what `mypy --disallow-untyped-defs
--disallow-incomplete-defs` asks, checked here without running mypy)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

TUI = ROOT / "doctor" / "tui"
MAX_APP_METHODS = 30  # 79 before the split (issue 36 counted 80)


def methods_of(path: Path, name: str) -> list[str]:
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return [f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_the_app_class_keeps_at_most_30_methods():
    methods = methods_of(TUI / "app.py", "DoctorApp")
    assert len(methods) <= MAX_APP_METHODS, f"{len(methods)} methods: {methods}"


def untyped(path: Path) -> list[str]:
    """Functions missing a return annotation or an argument's (self and cls excepted)."""
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
        bare = [a.arg for a in params if a.annotation is None and a.arg not in ("self", "cls")]
        if node.returns is None or bare:
            missing.append(f"{path.name}:{node.lineno} {node.name}({', '.join(bare)})")
    return missing


def test_every_function_under_doctor_tui_is_typed():
    assert [m for path in sorted(TUI.glob("*.py")) for m in untyped(path)] == []


def test_the_checker_sees_a_missing_annotation(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f(x, *rest: int) -> None: ...\nasync def g(y: int): ...\ndef h(self, **kw: str) -> int: ...\n")
    assert untyped(planted) == ["planted.py:1 f(x)", "planted.py:2 g()"]
