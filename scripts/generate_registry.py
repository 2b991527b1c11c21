#!/usr/bin/env python3
"""Write the registries from the modules themselves: adding a check or an engine is adding its module or package.

The pure packages may not walk folders or import by name (scripts/architecture_rules.py), so the walk happens here,
once, and its result is ordinary source that imports every module by name and that mypy reads:

- each check module (checks/<group>/<name>.py) declares `CHECK = Check(id=CheckId("its-id"), ..., order=N)`:
  `checks/manifest.py` imports every CHECK, group by group in the order of `GROUPS` (checks/__init__.py), each group
  sorted by `order`; the CheckId members of the checks (doctor/model/ids.py) are written from the declared texts;
- each engine package (doctor/engines/<pkg>/) declares its adapter class with `id = Engine("its-id")`:
  `doctor/engines/manifest.py` imports every package's ADAPTER and log module's LOG; the Engine members are written.

Run it after adding, renaming or removing a check or an engine: `python3 scripts/generate_registry.py`.
`tests/scripts/test_generate_registry.py` fails while a written file is out of date.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "# --- written by scripts/generate_registry.py from the {what}; do not edit by hand ---"
END = "# --- end of the written part ---"


class DeclarationError(Exception):
    """A module that looks like a check or an engine but does not declare what the registry needs."""


@dataclass(frozen=True)
class Declared:
    text: str  # the id's text, as reports and the command line spell it
    module: str  # the dotted module (a check) or package (an engine) that declares it
    order: int = 0

    @property
    def member(self) -> str:
        """The enum member's name: the text in upper case, every other character an underscore."""
        return re.sub(r"[^A-Z0-9]", "_", self.text.upper())


def _id_text(node: ast.expr | None, enum: str, where: str) -> str:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == enum
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    raise DeclarationError(f"{where}: declare the id as {enum}(\"its-id\") (its text, once, here)")


def _check(path: Path, module: str, root: Path) -> Declared | None:
    tree = ast.parse(path.read_text(), str(path))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["CHECK"]
                and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "Check"):
            where = f"{path.relative_to(root)}:{node.lineno}"
            kw = {k.arg: k.value for k in node.value.keywords}
            order = kw.get("order")
            if not (isinstance(order, ast.Constant) and isinstance(order.value, int)):
                raise DeclarationError(f"{where}: give the check its place in its group, order=N (a number)")
            return Declared(_id_text(kw.get("id"), "CheckId", where), module, order.value)
    return None


def _groups(root: Path) -> tuple[str, ...]:
    tree = ast.parse((root / "checks" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["GROUPS"]:
            return tuple(ast.literal_eval(node.value))
    raise DeclarationError("checks/__init__.py: GROUPS, the check groups in the order they run, is missing")


def declared_checks(root: Path = ROOT) -> dict[str, list[Declared]]:
    """Every check module's declaration, by group in the order the groups run, each sorted by its order."""
    groups = _groups(root)
    found: dict[str, list[Declared]] = {g: [] for g in groups}
    for folder in sorted(p for p in (root / "checks").iterdir() if (p / "__init__.py").is_file()):
        for path in sorted(folder.glob("*.py")):
            check = None if path.name == "__init__.py" else _check(path, f"checks.{folder.name}.{path.stem}", root)
            if check is None:
                continue
            if folder.name not in found:
                raise DeclarationError(f"{path.relative_to(root)}: its group {folder.name!r} is not in GROUPS "
                                       "(checks/__init__.py)")
            found[folder.name].append(check)
    for group, checks in found.items():
        checks.sort(key=lambda c: (c.order, c.text))
    return found


def declared_engines(root: Path = ROOT) -> list[Declared]:
    """Every engine package's declaration (its adapter's `id = Engine("...")`), in the order of the folders."""
    found = []
    for folder in sorted(p for p in (root / "doctor" / "engines").iterdir() if (p / "adapter.py").is_file()):
        tree = ast.parse((folder / "adapter.py").read_text())
        ids = [node.value for cls in tree.body if isinstance(cls, ast.ClassDef) for node in cls.body
               if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["id"]]
        if len(ids) != 1:
            raise DeclarationError(f"doctor/engines/{folder.name}/adapter.py: one adapter class with id = Engine(\"...\")")
        found.append(Declared(_id_text(ids[0], "Engine", f"doctor/engines/{folder.name}/adapter.py"),
                              f"doctor.engines.{folder.name}"))
    return found


def _members(declared: list[Declared], indent: str = "    ") -> list[str]:
    return [f'{indent}{d.member} = "{d.text}"  # {d.module}' for d in declared]


def _replace_block(text: str, what: str, lines: list[str]) -> str:
    begin = BEGIN.format(what=what)
    head, found, rest = text.partition(begin)
    if not found:
        raise DeclarationError(f"doctor/model/ids.py: the line {begin!r} is missing")
    indent = head[head.rfind("\n") + 1:]
    _, found, tail = rest.partition(END)
    if not found:
        raise DeclarationError(f"doctor/model/ids.py: the line {END!r} is missing after {begin!r}")
    return head + begin + "\n" + "\n".join(lines) + "\n" + indent + END + tail


def _tuple(name: str, items: list[str]) -> str:
    """`NAME: type = (a, b)`, one item a line when it would be long."""
    one = f"{name} = ({', '.join(items)}{',' if len(items) == 1 else ''})"
    return one if len(one) <= 120 else f"{name} = (\n" + "".join(f"    {i},\n" for i in items) + ")"


def _sorted_imports(lines: list[str]) -> list[str]:
    """`from X import Y` lines in the order ruff's isort keeps them: by module."""
    return sorted(lines, key=lambda line: line.split()[1])


def check_manifest(checks: dict[str, list[Declared]]) -> str:
    out = ['"""Every check, group by group in the order they run: written by scripts/generate_registry.py from each check',
           "module's CHECK (its id, its group's package, its order) and GROUPS (checks/__init__.py); do not edit by hand.",
           '"""', "", "from __future__ import annotations", ""]
    out += _sorted_imports(["from checks.base import Check"]
                           + [f"from {c.module} import CHECK as {c.member}" for group in checks.values() for c in group])
    out.append("")
    for group, declared in checks.items():
        out.append(_tuple(f"{group.upper()}_CHECKS: tuple[Check, ...]", [c.member for c in declared]))
    out += ["", "ALL_CHECKS: tuple[Check, ...] = (" + " + ".join(f"{g.upper()}_CHECKS" for g in checks) + ")", ""]
    return "\n".join(out)


def engine_manifest(engines: list[Declared], root: Path = ROOT) -> str:
    out = ['"""Every engine package, in the order of their folders: written by scripts/generate_registry.py; do not edit',
           'by hand."""', "", "from __future__ import annotations", ""]
    packages = [e.module.rsplit(".", 1)[1] for e in engines]
    logs = [p for p in packages if (root / "doctor" / "engines" / p / "log.py").is_file()]
    out += _sorted_imports([f"from doctor.engines import {', '.join(packages)}", "from doctor.engines.base import EngineAdapter",
                            "from doctor.engines.log_types import EngineLog"]
                           + [f"from doctor.engines.{p}.log import LOG as {p.upper()}_LOG" for p in logs])
    out += ["", _tuple("ENGINE_ADAPTERS: tuple[EngineAdapter, ...]", [f"{p}.ADAPTER" for p in packages]),
            _tuple("ENGINE_LOGS: tuple[EngineLog, ...]", [f"{p.upper()}_LOG" for p in logs]), ""]
    return "\n".join(out)


def written(root: Path = ROOT) -> dict[Path, str]:
    """Each file this script writes, with the text it should hold."""
    checks = declared_checks(root)
    engines = declared_engines(root)
    ids = root / "doctor" / "model" / "ids.py"
    text = _replace_block(ids.read_text(), "check modules", _members([c for g in checks.values() for c in g]))
    text = _replace_block(text, "engine packages", _members(engines))
    return {root / "checks" / "manifest.py": check_manifest(checks), ids: text,
            root / "doctor" / "engines" / "manifest.py": engine_manifest(engines, root)}


def main() -> int:
    try:
        files = written()
    except DeclarationError as exc:
        print(f"generate_registry: {exc}", file=sys.stderr)
        return 1
    for path, text in files.items():
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
