"""The architecture's rules, checked on the source: the import contracts (import-linter, pyproject.toml) and the
rules a contract cannot say, read from each module's syntax tree (run by scripts/check-architecture).

The pure packages (PURE, in layer order) read nothing from the machine: they are handed facts, a plan, a log's
stream, this machine's identities, and judge them. Each may import only the modules on ALLOWED (plus EXTRA for its
package), and the project's pure packages at or below its layer; none may open a file, import a module by name, run
a process, reach the network, read the environment, load native code or a GPU library. Those reads happen in the
gatherers (doctor.facts) and the probe (doctor.probe), and the command layer passes the data in.

Not pure, and why (NOT_PURE): gatherers read the machine (that is their job); the probe spawns a child that loads
torch and the engines on the GPU; the run layer runs them (threads, a temp folder); the TUI draws on a terminal
(textual, threads, the paths of the save dialog: it is checked for machine access, not held to the allow-list); the
CLI and commands read argv and write the files the user names; the package's own doctor/__init__.py is its start-up
guard (a quiet Ctrl-C when it is the program), so the version a pure module reads lives in doctor/version.py.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

# rule id -> what it forbids (the id is printed with every broken rule)
RULES: dict[str, str] = {
    "import-contract": "an import contract in pyproject.toml is broken (lint-imports)",
    "pure-allow-list": "a pure package imports a module that is not on its allow-list",
    "project-layer": "a pure package imports a part of the project that is not pure or not below it",
    "file-access": "a pure package (or the TUI) opens or reads files: open(), io's file classes, os/codecs.open, pathlib, a path's read/write methods",
    "dynamic-import": "a pure package (or the TUI) imports by name or runs code from a string: __import__(), importlib, exec, eval",
    "process": "a pure package (or the TUI) runs or inspects processes: subprocess, multiprocessing, psutil, signal",
    "network": "a pure package (or the TUI) reaches the network: socket, urllib, http, huggingface_hub",
    "environment": "a pure package (or the TUI) reads the host: os (os.environ, os.getenv, any os.*), sys, getpass, platform",
    "native-code": "a pure package (or the TUI) loads native code: ctypes, cffi",
    "gpu-library": "a pure package (or the TUI) imports a GPU library: torch, flash_attn, pynvml, an engine",
    "textual-in-core": "the headless core imports textual (only doctor.tui and the CLI's launcher may)",
    "imports-cli": "a part below the command line imports it (doctor.cli, doctor.commands)",
    "gatherer-imports-checks": "a gatherer (doctor.facts) imports checks: facts are read, not judged",
}

# The pure units, bottom layer first: each may import the pure units before it (and itself), nothing above.
PURE: tuple[str, ...] = ("doctor.version", "doctor.model", "doctor.knowledge", "doctor.engines", "checks", "doctor.plan", "doctor.logscan",
                         "doctor.probe.hoststate", "doctor.verdict", "doctor.render")
# A pure unit's pure units it may still not import (the forbidden contracts say why: renderers draw data only).
NOT_BELOW: dict[str, frozenset[str]] = {
    "doctor.render": frozenset({"checks", "doctor.logscan", "doctor.probe.hoststate", "doctor.verdict"}),
}
NOT_PURE: dict[str, str] = {
    "doctor.facts": "gatherers: the only code that reads the machine, a model folder or a saved report",
    "doctor.probe": "the timed probe: a child process that loads torch and an engine on the GPU "
                    "(its pure judgement of the runs, doctor.probe.hoststate, is held to the pure rules)",
    "doctor.run": "runs the gatherers, checks and probe: threads, a temp folder for the probe's model",
    "doctor.tui": "the screens: textual, threads, the save dialog's paths (held to the machine rules, not the allow-list)",
    "doctor.cli": "the command line: argv, stdout, signals, the files the user names",
    "doctor.commands": "the subcommands, on the CLI's vocabulary",
}
WIDGETS = ("doctor.tui",)
GATHERERS = ("doctor.facts",)
COMMAND_LINE = ("doctor.cli", "doctor.commands")
ENTRY = frozenset({"doctor", "doctor.__main__"})  # the package's entry points (exactly these modules) start the CLI
TEXTUAL_ALLOWED = ("doctor.tui", "doctor.cli", "doctor.commands")
TUI_MAY_USE = frozenset({"pathlib"})  # the save dialog's paths; what `s` writes goes through Session.save

# Modules a pure package may import: the standard library's pure ones and pure third-party libraries.
ALLOWED: frozenset[str] = frozenset({
    "__future__", "abc", "bisect", "codecs", "collections", "contextlib", "copy", "dataclasses", "datetime", "decimal",
    "difflib", "enum", "fnmatch", "fractions", "functools", "hashlib", "heapq", "io", "itertools", "json", "math",
    "numbers", "operator", "posixpath", "re", "shlex", "statistics", "string", "struct", "textwrap", "time",
    "traceback", "types", "typing", "typing_extensions", "unicodedata", "packaging",
})
# ... and for one package, more (with the reason).
EXTRA: dict[str, dict[str, str]] = {
    "doctor.logscan": {"ahocorasick_rs": "one-pass keyword search over a log's bytes, a compiled string matcher"},
}
# Allowed modules of which only some names are pure: name -> (the names allowed, the rule a different one breaks).
ONLY: dict[str, tuple[frozenset[str], str]] = {
    "io": (frozenset({"StringIO", "BytesIO"}), "file-access"),  # buffers in memory; FileIO, open, ... are files
    "posixpath": (frozenset({"basename", "dirname", "join", "split", "splitext", "normpath", "isabs", "commonpath",
                             "commonprefix", "sep"}), "file-access"),  # string functions; exists, realpath, ... are not
    "time": (frozenset({"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns"}), "pure-allow-list"),  # timing its own work
    "traceback": (frozenset({"walk_tb"}), "file-access"),  # format_* reads source files (linecache)
}
DENIED_NAMES: dict[str, dict[str, str]] = {"codecs": {"open": "file-access", "EncodedFile": "file-access"}}

# Modules that reach the machine, by top-level name -> the rule importing one breaks.
MACHINE: dict[str, str] = {
    **dict.fromkeys(("pathlib", "shutil", "glob", "tempfile", "mmap", "fileinput", "linecache", "zipfile", "tarfile",
                     "sqlite3", "shelve", "dbm", "yaml"), "file-access"),
    **dict.fromkeys(("importlib", "imp", "pkgutil", "runpy", "zipimport"), "dynamic-import"),
    **dict.fromkeys(("subprocess", "multiprocessing", "pty", "signal", "psutil", "resource"), "process"),
    **dict.fromkeys(("socket", "ssl", "urllib", "http", "ftplib", "smtplib", "requests", "httpx", "huggingface_hub",
                     "selectors", "select"), "network"),
    **dict.fromkeys(("os", "sys", "getpass", "platform", "pwd", "grp", "locale", "sysconfig", "platformdirs"),
                    "environment"),
    **dict.fromkeys(("ctypes", "_ctypes", "cffi"), "native-code"),
    **dict.fromkeys(("torch", "flash_attn", "pynvml", "triton", "exllamav2", "llama_cpp", "bitsandbytes",
                     "transformers", "accelerate", "cupy", "numba", "tensorrt", "vllm", "gguf"), "gpu-library"),
}
MACHINE_BUILTINS = {"open": "file-access", "__import__": "dynamic-import", "exec": "dynamic-import", "eval": "dynamic-import",
                    "compile": "dynamic-import", "input": "environment"}  # code from a string can import anything
# Methods of a path object that touch the file system (a pure package may be handed a path, never read through it).
PATH_METHODS = frozenset({"read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "rglob", "is_file",
                          "is_dir", "exists", "mkdir", "unlink", "touch", "expanduser", "samefile", "is_symlink",
                          "readlink", "lstat", "chmod", "resolve", "rmdir", "symlink_to", "hardlink_to"})
PACKAGES = ("doctor", "checks")


@dataclass(frozen=True, order=True)
class Broken:
    path: str  # relative to the root, with / separators
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.message}"


# -- which rules a module is held to -------------------------------------------------------------------------------
def _under(module: str, units: tuple[str, ...]) -> str | None:
    """The longest unit that is `module` or a package above it."""
    hits = [u for u in units if module == u or module.startswith(u + ".")]
    return max(hits, key=len) if hits else None


def pure_unit(module: str) -> str | None:
    return _under(module, PURE)


def module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(root: Path) -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "__pycache__" not in path.parts:
                yield path


# -- reading one module ----------------------------------------------------------------------------------------------
def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, less the bodies of `if TYPE_CHECKING:` (annotations only, as the contracts read them)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


@dataclass(frozen=True)
class Imported:
    module: str  # what is imported, absolute: "os", "doctor.facts.gather", "io"
    names: tuple[str, ...]  # for `from M import a, b`: a, b; () for `import M`
    line: int


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(tree: ast.AST, module: str, is_package: bool, root: Path) -> Iterator[Imported]:
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Imported(alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            target = node.module if not node.level else _resolve(module, is_package, node.level, node.module)
            if not target:
                continue
            names = tuple(a.name for a in node.names)
            if target.split(".")[0] in PACKAGES:  # `from doctor.probe import hoststate`: the submodule is the target
                subs = [f"{target}.{n}" for n in names if _exists(root, f"{target}.{n}")]
                if subs and len(subs) == len(names):
                    for sub in subs:
                        yield Imported(sub, (), node.lineno)
                    continue
            yield Imported(target, names, node.lineno)


def _exists(root: Path, module: str) -> bool:
    path = root.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the module it names (`import io`, `import os.path as p`), for reading `io.FileIO(...)`."""
    names: dict[str, str] = {}
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:  # `from os import path`: path names the module os.path
                names.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
    return names


# -- the rules ---------------------------------------------------------------------------------------------------------
def _top(module: str) -> str:
    return module.split(".")[0]


def _import_rule(imp: Imported, module: str, rel: str) -> Broken | None:
    """The one rule an import breaks in `module` (the most specific), or None."""
    top = _top(imp.module)
    say = f"imports {imp.module}" + (f" ({', '.join(imp.names)})" if imp.names else "")
    unit = pure_unit(module)
    widget = _under(module, WIDGETS)
    if top == "textual" and not (_under(module, TEXTUAL_ALLOWED) or module in ENTRY):
        return Broken(rel, imp.line, "textual-in-core", f"{module} {say}: the headless core never imports textual")
    if _under(imp.module, COMMAND_LINE) and not (_under(module, COMMAND_LINE) or module in ENTRY):
        return Broken(rel, imp.line, "imports-cli", f"{module} {say}: only the command line itself imports the CLI")
    if _under(module, GATHERERS) and top == "checks":
        return Broken(rel, imp.line, "gatherer-imports-checks", f"{module} {say}: facts are read, not judged")
    if unit is None and widget is None:
        return None
    if top in MACHINE and not (widget and top in TUI_MAY_USE):
        return Broken(rel, imp.line, MACHINE[top], f"{module} {say}, which reaches the machine")
    for name in imp.names:
        if top in ONLY and name not in ONLY[top][0] and (unit or ONLY[top][1] != "pure-allow-list"):
            return Broken(rel, imp.line, ONLY[top][1], f"{module} imports {name} from {imp.module}: "
                                                       f"only {', '.join(sorted(ONLY[top][0]))} are pure")
        if name in DENIED_NAMES.get(top, {}):
            return Broken(rel, imp.line, DENIED_NAMES[top][name], f"{module} imports {name} from {imp.module}")
    if unit is None or top in ALLOWED or top in EXTRA.get(_under(module, tuple(EXTRA)) or "", {}):
        return None
    if top in PACKAGES:
        target = pure_unit(imp.module)
        if target is None:
            return Broken(rel, imp.line, "project-layer", f"{module} {say}: {_unit_of(imp.module)} is not pure "
                                                          f"({NOT_PURE.get(_unit_of(imp.module), 'not on the pure list')})")
        if PURE.index(target) > PURE.index(unit) or target in NOT_BELOW.get(unit, ()):
            return Broken(rel, imp.line, "project-layer", f"{module} {say}: {unit} may import only the pure parts below it")
        return None
    return Broken(rel, imp.line, "pure-allow-list", f"{module} {say}: not on the allow-list of a pure package "
                                                    "(scripts/architecture_rules.py ALLOWED)")


def _unit_of(module: str) -> str:
    return _under(module, tuple(NOT_PURE)) or module


def _call_rules(tree: ast.AST, module: str, rel: str, aliases: dict[str, str]) -> Iterator[Broken]:
    """Machine access through names already imported: open(), __import__(), io.FileIO(...), os.environ, a path's
    read_text(); in pure packages (all of it) and the TUI (all but a path's methods)."""
    pure = pure_unit(module) is not None
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MACHINE_BUILTINS:
            if node.func.id not in aliases:  # a local function of that name is not the built-in
                rule = MACHINE_BUILTINS[node.func.id]
                yield Broken(rel, node.lineno, rule, f"{module} calls the built-in {node.func.id}()")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            named = aliases[node.value.id]
            top = _top(named)
            if top in MACHINE and not (not pure and top in TUI_MAY_USE):
                continue  # the import itself is reported
            if top in ONLY and named == top and node.attr not in ONLY[top][0] and (pure or ONLY[top][1] != "pure-allow-list"):
                yield Broken(rel, node.lineno, ONLY[top][1], f"{module} uses {named}.{node.attr}: "
                                                            f"only {', '.join(sorted(ONLY[top][0]))} are pure")
            elif node.attr in DENIED_NAMES.get(top, {}):
                yield Broken(rel, node.lineno, DENIED_NAMES[top][node.attr], f"{module} uses {named}.{node.attr}")
        elif pure and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PATH_METHODS:
            yield Broken(rel, node.lineno, "file-access", f"{module} calls .{node.func.attr}(): a path's file-system "
                                                          "method (the gatherer reads the file and passes the data in)")


def check_module(root: Path, path: Path) -> list[Broken]:
    rel = path.relative_to(root).as_posix()
    module = module_name(path.relative_to(root))
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    except SyntaxError as exc:
        return [Broken(rel, exc.lineno or 0, "syntax", str(exc.msg))]
    broken = []
    for imp in imports_of(tree, module, path.name == "__init__.py", root):
        found = _import_rule(imp, module, rel)
        if found:
            broken.append(found)
    if pure_unit(module) or _under(module, WIDGETS):
        broken.extend(_call_rules(tree, module, rel, _aliases(tree)))
    return broken


def check_tree(root: Path) -> list[Broken]:
    """Every AST rule over every module of the project under `root`."""
    return sorted(b for path in python_files(root) for b in check_module(root, path))


# -- the import contracts (import-linter) -------------------------------------------------------------------------------
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"
_HOP = re.compile(r"^\s*-?\s*(?P<src>[\w.]+) -> (?P<dst>[\w.]+) \(l\.(?P<line>\d+)")


def check_contracts(root: Path) -> tuple[list[Broken], int]:
    """Run lint-imports on the tree under `root`; each broken contract's imports as Broken, and how many contracts."""
    env = dict(os.environ, COLUMNS="1000", PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    try:
        run = subprocess.run([sys.executable, "-c", LINT, "--no-logo"], cwd=root, env=env, capture_output=True,
                             text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return [Broken("pyproject.toml", 0, "import-contract", "lint-imports ran over 300 s")], 0
    statuses = {m["name"]: m["status"] for m in re.finditer(r"^(?P<name>\S.*?) (?P<status>KEPT|BROKEN)\b", run.stdout, re.M)}
    broken_names = [n for n, s in statuses.items() if s == "BROKEN"]
    if run.returncode != 0 and not broken_names:
        tail = (run.stdout + run.stderr).strip().splitlines()[-1:] or ["no output"]
        fix = " (install the test extras: python3 -m pip install -e \".[test]\")" if "importlinter" in tail[0] else ""
        return [Broken("pyproject.toml", 0, "import-contract", f"lint-imports failed: {tail[0]}{fix}")], len(statuses)
    report = run.stdout.split("Broken contracts", 1)[-1]
    found = []
    for name in broken_names:
        start = report.find(f"\n{name}\n")
        ends = [report.find(f"\n{other}\n", start + 1) for other in broken_names if other != name]
        section = report[start:min([e for e in ends if e > start], default=len(report))]
        hops = [m for m in map(_HOP.match, section.splitlines()) if m and m.group(0).lstrip().startswith("-")]
        for m in hops:
            path = _path_of(root, m["src"])
            found.append(Broken(path, int(m["line"]), "import-contract", f"{name}: {m['src']} imports {m['dst']}"))
        if not hops:
            found.append(Broken("pyproject.toml", 0, "import-contract", f"{name}: BROKEN ({' '.join(section.split())[:300]})"))
    return sorted(found), len(statuses)


def _path_of(root: Path, module: str) -> str:
    path = root.joinpath(*module.split("."))
    if (path / "__init__.py").is_file():
        return (path / "__init__.py").relative_to(root).as_posix()
    return path.with_suffix(".py").relative_to(root).as_posix()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="check-architecture", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root (default: here)")
    parser.add_argument("--no-contracts", action="store_true", help="the AST rules only, without lint-imports")
    parser.add_argument("--rules", action="store_true", help="list the rules and exit")
    parser.add_argument("files", nargs="*", type=Path, help="check only these modules with the AST rules (default: all)")
    args = parser.parse_args(argv)
    if args.rules:
        for rule, text in RULES.items():
            print(f"{rule}: {text}")
        return 0
    root = args.root.resolve()
    if not all((root / p).is_dir() for p in PACKAGES):
        print(f"check-architecture: {root} holds no doctor/ and checks/: run it from the repository root", file=sys.stderr)
        return 2
    broken, contracts = ([], 0) if args.no_contracts else check_contracts(root)
    modules = [(root / f).resolve() for f in args.files] or list(python_files(root))
    broken = sorted(set(broken) | {b for path in modules for b in check_module(root, path)})
    for b in broken:
        print(b)
    kept = (f"{contracts} import contracts and " if not args.no_contracts else "") + f"{len(RULES) - 1} rules over {len(modules)} modules"
    if broken:
        print(f"check-architecture: {len(broken)} broken ({kept}); the rules: scripts/check-architecture --rules",
              file=sys.stderr)
        return 1
    print(f"check-architecture: all kept ({kept})")
    return 0
