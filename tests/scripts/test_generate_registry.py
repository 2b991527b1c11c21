"""The registries are written from the modules: up to date, a new check or engine is found, a bad declaration named."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from checks import GROUPS, manifest
from checks.registry import all_checks
from doctor.engines import ADAPTERS
from doctor.model.ids import PROBE_STAGE_IDS, CheckId, Engine

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("generate_registry", ROOT / "scripts" / "generate_registry.py")
assert _spec and _spec.loader
gen = importlib.util.module_from_spec(_spec)
sys.modules["generate_registry"] = gen
_spec.loader.exec_module(gen)

NEW_CHECK = '''"""`nvlink-errors`: planted by the test."""
from checks.base import Check
from doctor.model.ids import CheckId

CHECK = Check(id=CheckId("nvlink-errors"), title="NVLink errors", run=lambda ctx: None, depends_on=(CheckId.GPU_PRESENT,),
              order=15)
'''


def test_the_written_files_are_up_to_date():
    stale = [str(path.relative_to(ROOT)) for path, text in gen.written().items() if path.read_text() != text]
    assert not stale, f"run python3 scripts/generate_registry.py: out of date: {', '.join(stale)}"


def test_the_registry_is_every_check_module_in_group_order():
    groups = [c.run.__module__.split(".")[1] for c in all_checks()]
    assert groups == sorted(groups, key=GROUPS.index)
    for group in GROUPS:
        orders = [c.order for c in getattr(manifest, f"{group.upper()}_CHECKS")]
        assert orders == sorted(orders) and len(set(orders)) == len(orders), group
    assert set(CheckId) == {c.id for c in all_checks()} | PROBE_STAGE_IDS
    assert set(Engine) == set(ADAPTERS)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "checks", tmp_path / "checks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "doctor" / "engines", tmp_path / "doctor" / "engines", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "doctor" / "model").mkdir()
    shutil.copy(ROOT / "doctor" / "model" / "ids.py", tmp_path / "doctor" / "model" / "ids.py")
    return tmp_path


def test_a_new_check_module_is_registered_in_its_place(tree: Path):
    (tree / "checks" / "env" / "nvlink_errors.py").write_text(NEW_CHECK)
    files = gen.written(tree)
    assert '    NVLINK_ERRORS = "nvlink-errors"  # checks.env.nvlink_errors\n' in files[tree / "doctor" / "model" / "ids.py"]
    text = files[tree / "checks" / "manifest.py"]
    assert "from checks.env.nvlink_errors import CHECK as NVLINK_ERRORS\n" in text
    assert "ENV_CHECKS: tuple[Check, ...] = (GPU_PRESENT, NVLINK_ERRORS, COMPUTE_CAPABILITY," in text


def test_a_new_engine_package_is_registered(tree: Path):
    (tree / "doctor" / "engines" / "sglang").mkdir()
    (tree / "doctor" / "engines" / "sglang" / "adapter.py").write_text('class SgLang:\n    id = Engine("sglang")\n')
    files = gen.written(tree)
    assert '    SGLANG = "sglang"  # doctor.engines.sglang\n' in files[tree / "doctor" / "model" / "ids.py"]
    assert "sglang.ADAPTER" in files[tree / "doctor" / "engines" / "manifest.py"]
    assert "SGLANG_LOG" not in files[tree / "doctor" / "engines" / "manifest.py"]  # no log module: explain does not know it


@pytest.mark.parametrize("declaration, said", [
    ('CHECK = Check(id=CheckId.NVLINK_ERRORS, title="t", run=run, order=15)\n', 'declare the id as CheckId("its-id")'),
    ('CHECK = Check(id=CheckId("nvlink-errors"), title="t", run=run)\n', "order=N"),
])
def test_a_check_declared_wrong_is_named(tree: Path, declaration: str, said: str):
    (tree / "checks" / "env" / "nvlink_errors.py").write_text(declaration)
    with pytest.raises(gen.DeclarationError, match="checks/env/nvlink_errors.py:1") as err:
        gen.written(tree)
    assert said in str(err.value)


def test_a_check_outside_the_groups_is_named(tree: Path):
    (tree / "checks" / "extra").mkdir()
    (tree / "checks" / "extra" / "__init__.py").write_text("")
    (tree / "checks" / "extra" / "thing.py").write_text(NEW_CHECK)
    with pytest.raises(gen.DeclarationError, match="group 'extra' is not in GROUPS"):
        gen.written(tree)
