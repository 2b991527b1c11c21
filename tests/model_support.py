"""Shared by the tests/test_model_*.py files: fixture paths, a V100 machine, running the model checks directly."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import replace
from pathlib import Path

from conftest import MACHINES, ROOT

from checks.manifest import MODEL_CHECKS
from checks.runner import run_checks
from doctor.facts.modeldir.directory import attach_model
from doctor.facts.replay import load_document
from doctor.model.plan import Plan

MODELS = ROOT / "fixtures" / "models"
V100 = load_document(str(MACHINES / "v100-pcie-16gb-healthy.json")).facts
NO_GPU = load_document(str(MACHINES / "no-nvml.json")).facts


def findings(path: str | Path, facts=V100, **plan_kw) -> dict:
    """Run the model checks on `path` as the pipeline would: {check id: Finding}."""
    plan = Plan(model_path=str(path), **plan_kw)
    f = attach_model(replace(facts, model=None), str(path))
    return {x.id: x for x in run_checks(f, plan, MODEL_CHECKS)}


def tree_digest(root: Path) -> str:
    """Names, sizes, mtimes and contents of every file below `root`: any write shows up."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        st = p.stat()
        h.update(f"{p.relative_to(root)}|{p.is_dir()}|{st.st_mode}|{st.st_mtime_ns if p.is_file() else 0}".encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def copy_fixture(name: str, dest: Path) -> Path:
    shutil.copytree(MODELS / name, dest)
    return dest


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
