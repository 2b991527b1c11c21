"""No import cycle among the project's own modules, lazy or not.

A function-level import hides a cycle from the interpreter (it works until someone hoists the import) but not
from the design: two modules that need each other are one concern split badly. grimp's graph holds every import,
module-level, inside functions and under TYPE_CHECKING, so a cycle through any of them is found here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

# Prints the import cycles of the packages found from the working directory, as JSON: a list of strongly connected
# components (each a sorted list of modules), each with one cycle through it as an example.
FIND_CYCLES = r"""
import json, grimp
g = grimp.build_graph("doctor", "checks", cache_dir=None)
edges = {m: sorted(g.find_modules_directly_imported_by(m)) for m in sorted(g.modules)}
index, low, stack, on_stack, found = {}, {}, [], set(), []
for root in edges:  # Tarjan's strongly connected components, iterative
    if root in index:
        continue
    work = [(root, 0)]
    while work:
        node, i = work.pop()
        if i == 0:
            index[node] = low[node] = len(index)
            stack.append(node); on_stack.add(node)
        if i < len(edges[node]):
            work.append((node, i + 1))
            nxt = edges[node][i]
            if nxt not in index:
                work.append((nxt, 0))
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
            continue
        if low[node] == index[node]:
            comp = []
            while True:
                m = stack.pop(); on_stack.discard(m); comp.append(m)
                if m == node:
                    break
            if len(comp) > 1 or node in edges[node]:
                found.append(sorted(comp))
        if work:
            parent = work[-1][0]
            low[parent] = min(low[parent], low[node])
out = []
for comp in found:
    a = comp[0]
    back = next(b for b in comp if a in edges[b])
    chain = g.find_shortest_chain(a, back) or (a,)
    out.append({"modules": comp, "example": list(chain) + [a]})
print(json.dumps(out))
"""


def _cycles(tree: Path) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    run = subprocess.run([sys.executable, "-c", FIND_CYCLES], cwd=tree, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_no_import_cycle_lazy_or_not():
    cycles = _cycles(ROOT)
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c["example"]) for c in cycles)


def test_a_lazy_cycle_is_found(tmp_path):
    """The finder sees a cycle that only a function-level import makes (so the first test can fail)."""
    for package in ("doctor", "checks"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    lines = tmp_path / "doctor" / "logscan" / "lines.py"  # scanner.py imports lines.py at module level
    lines.write_text(lines.read_text() + "\n\ndef _planted():\n    from doctor.logscan.scanner import Scanner\n\n"
                     "    return Scanner\n")
    cycles = _cycles(tmp_path)
    assert [c for c in cycles if {"doctor.logscan.lines", "doctor.logscan.scanner"} <= set(c["modules"])], cycles
    example = next(c["example"] for c in cycles if "doctor.logscan.lines" in c["modules"])
    assert example[0] == example[-1] and len(example) >= 3
