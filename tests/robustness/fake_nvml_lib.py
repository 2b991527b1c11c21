"""Compile tests/robustness/fake_libnvidia_ml.c into a folder to put on LD_LIBRARY_PATH (skip without cc)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).with_name("fake_libnvidia_ml.c")


def build_fake_nvml(folder: Path) -> Path:
    """The folder holding libnvidia-ml.so.1 built from SOURCE."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the fake libnvidia-ml.so.1")
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-shared", "-fPIC", "-O0", "-o", str(folder / "libnvidia-ml.so.1"), str(SOURCE)], check=True,
                   capture_output=True, timeout=60)
    return folder
