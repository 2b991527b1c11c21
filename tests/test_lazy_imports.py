"""A function-level import says why it is one: `# lazy: <reason>` on its line or the line above.

Imports belong at the top of a module, where a reader sees what it depends on. The exceptions are the seams that
keep start-up fast (textual, torch and other heavy or optional third-party packages; the heavy internal parts a
plain run never needs) and they are few; each names its reason so the next reader does not hoist it, and an
import that lost its reason is hoisted instead of kept out of habit.
"""

from __future__ import annotations

import ast

from conftest import ROOT

MARK = "# lazy:"


def unexplained(source: str) -> list[tuple[int, str]]:
    """(line, import) of each import inside a function that carries no `# lazy: <reason>` on its line or above it."""
    lines = source.splitlines()
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and in_function:
                here = lines[child.lineno - 1]
                above = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                said = [text.split(MARK, 1)[1].strip() for text in (here, above if above.startswith(MARK) else "")
                        if MARK in text]
                if not any(said):
                    out.append((child.lineno, ast.unparse(child)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return out


def test_every_function_level_import_says_why():
    missing = [f"{path.relative_to(ROOT)}:{line}: {text}"
               for package in ("doctor", "checks") for path in sorted((ROOT / package).rglob("*.py"))
               for line, text in unexplained(path.read_text())]
    assert not missing, "function-level imports without '# lazy: <reason>' (hoist them, or say why):\n" + "\n".join(missing)


def test_the_rule_sees_a_bare_import_and_accepts_a_reason():
    source = ("import os\n\n"
              "def a():\n    import json\n\n"
              "def b():\n    import textual  # lazy: the TUI loads only when it opens\n\n"
              "def c():\n    # lazy: torch takes seconds; only the probe child needs it\n    import torch\n\n"
              "def d():\n    import yaml  # lazy:\n\n"
              "def e():\n    x = 1  # lazy: not about the import below\n    import csv\n")
    assert [line for line, _ in unexplained(source)] == [4, 14, 18]

