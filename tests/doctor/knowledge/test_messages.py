"""The fix sentences that several parts print are written once (doctor/knowledge/messages.py) and used as written."""

from checks.prescription.probe_install import probe_install_commands
from doctor.knowledge.messages import JIT_BUILD_FIX, MODEL_FOLDER_FIX, OOM_FIX, PROBE_ENGINE_INSTALL
from doctor.knowledge.signatures import SIGNATURES
from doctor.model.probe_results import ProbeReport
from doctor.verdict.failures import failure_finding


def failed(kind: str) -> ProbeReport:
    return ProbeReport(status="failed", summary="boom", error_kind=kind, error_phase="load", error_detail="")


def test_every_out_of_memory_signature_gives_the_one_oom_fix():
    about_oom = [s for s in SIGNATURES if "quantize the cache (Q8/Q4)" in s.fix]
    assert len(about_oom) >= 5
    assert all(OOM_FIX in s.fix for s in about_oom), [s.fix for s in about_oom if OOM_FIX not in s.fix]


def test_a_probe_that_ran_out_of_memory_gives_the_same_fix():
    assert OOM_FIX in failure_finding(failed("oom"), 8192).fix


def test_the_jit_build_fix_is_one_sentence_everywhere():
    assert JIT_BUILD_FIX in failure_finding(failed("jit-build")).fix
    assert sum(JIT_BUILD_FIX in s.fix for s in SIGNATURES) >= 1
    assert not [s for s in SIGNATURES if "plus ninja" in s.fix and JIT_BUILD_FIX not in s.fix]


def test_the_probe_install_line_is_one_command_everywhere():
    assert failure_finding(failed("not-installed")).commands == (PROBE_ENGINE_INSTALL,)
    assert probe_install_commands(None, None)[-1] == PROBE_ENGINE_INSTALL
    assert probe_install_commands(None, "2.8.0+cu126")[-1] == f'{PROBE_ENGINE_INSTALL} "torch==2.8.0+cu126"'
    installs = [c for s in SIGNATURES for c in s.commands if c.startswith("pip install exllamav2")]
    assert installs and set(installs) == {PROBE_ENGINE_INSTALL}


def test_the_model_folder_fix_is_one_sentence_everywhere():
    assert failure_finding(failed("model-load")).fix == MODEL_FOLDER_FIX
    assert [s for s in SIGNATURES if "square brackets" in s.fix] == [s for s in SIGNATURES if s.fix == MODEL_FOLDER_FIX] != []
