"""The doctor installed the way users install it: a built wheel in a fresh venv, no -e, run from outside the checkout.

The venv sees this environment's packages (textual, nvidia-ml-py, ...) through --system-site-packages, so the test
needs no network; the doctor itself comes only from the wheel, which the test checks by where `doctor` is imported
from. A file the program reads at run time but the wheel lacks (the demo's examples were one) fails here.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT

# one pytest-xdist worker runs the module (--dist loadgroup), so the wheel is built and installed once, not once per worker
pytestmark = pytest.mark.xdist_group("wheel")


def _clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _build_wheel(tmp: Path) -> Path:
    """The wheel of a copy of the source (pip builds in-tree: the checkout stays clean)."""
    src = tmp / "src"
    for name in ("doctor", "checks"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    # built as pip builds it for a user: in an isolated environment with the build-system's own setuptools (a venv's
    # setuptools 65 has no bdist_wheel, and the test must not depend on what this environment happens to hold)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--use-pep517",
                    "-w", str(tmp / "dist"), str(src)], check=True, env=_clean_env(), capture_output=True, timeout=300)
    return next((tmp / "dist").glob("v100_doctor-*.whl"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(tmp)
    env_dir = tmp / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # run from a venv (as the README advises), this environment's packages are in that venv, not in the base
    # interpreter's site-packages that --system-site-packages shows: a .pth names them (their own .pth files, such as
    # an editable install of the doctor, are not read, so `doctor` still comes only from the wheel)
    inner = next((env_dir / "lib").glob("python3*/site-packages"))
    (inner / "outer-environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    "--ignore-installed", str(wheel)], check=True, env=_clean_env(), capture_output=True, timeout=300)
    return env_dir


def _run(env_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(env_dir / "bin" / "v100-doctor"), *args], capture_output=True, text=True, cwd=cwd,
                          env=_clean_env(), timeout=120)


def test_the_wheel_holds_the_doctor_and_it_runs_from_there(installed, tmp_path):
    where = subprocess.run([str(installed / "bin" / "python"), "-c", "import doctor; print(doctor.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), check=True).stdout
    assert Path(where).resolve().is_relative_to(installed.resolve()), where  # not the checkout, not an editable install


def test_demo_lists_and_replays_every_packaged_example(installed, tmp_path):
    from doctor.run.examples import example_names

    demo = _run(installed, "demo", "--no-tui", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    names = example_names()
    assert len(names) >= 5 and all(f"example:{n}" in demo.stdout or n in demo.stdout for n in names)
    assert "RECORDED" in demo.stdout
    listed = _run(installed, "demo", "--list", cwd=tmp_path)
    assert [line.split()[0] for line in listed.stdout.splitlines() if not line.startswith(" ")] == names  # notes indented


def test_list_checks_and_a_replay_of_a_packaged_example(installed, tmp_path):
    listed = _run(installed, "--list-checks", cwd=tmp_path)
    assert listed.returncode == 0 and "cuda-pairing" in listed.stdout, listed.stderr
    shipped = next((installed / "lib").glob("python3*/site-packages/doctor/examples/seed-2-exl2-4.25bpw.json"))
    one = _run(installed, "demo", "seed-2-exl2-4.25bpw", "--json", cwd=tmp_path)
    assert one.returncode == 1 and '"source": "example:seed-2-exl2-4.25bpw"' in one.stdout, one.stderr  # its warning
    replay = _run(installed, "--replay", str(shipped), "--no-tui", cwd=tmp_path)
    assert replay.returncode == 1 and "RECORDED EXAMPLE (seed-2-exl2-4.25bpw)" in replay.stdout, replay.stderr
