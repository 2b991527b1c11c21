"""No extra installs torch, directly or through exllamav2 (whose own dependency pulls PyPI's default, CUDA 13, torch).

The real resolution (`pip install --dry-run --report` of every extra) needs PyPI: benchmarks/extras_dry_run.sh runs it
and its output is recorded in benchmarks/results/extras_dry_run.txt.
"""

from __future__ import annotations

from conftest import ROOT
from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as tomli (the test extra installs it there)
    import tomli as tomllib  # type: ignore[no-redef]

PULLS_TORCH = {"torch", "exllamav2", "torchvision", "torchaudio", "flash-attn", "flash_attn", "xformers"}


def test_no_extra_names_torch_or_a_package_that_pulls_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = [Requirement(r) for group in project.get("optional-dependencies", {}).values() for r in group]
    requirements += [Requirement(r) for r in project["dependencies"]]
    assert requirements and not {r.name.lower() for r in requirements} & PULLS_TORCH
