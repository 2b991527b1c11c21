"""The nvcc rules shared by cuda-pairing and exllamav2-ready."""

from checks.env.jit_toolchain import nvcc_problems, toolkit_commands
from doctor.model.unknown import Unknown


def test_cuda13_cannot_target_volta():
    problems = nvcc_problems("7.0", "13.0", "13.0")
    assert len(problems) == 1 and "compute_70" in problems[0]


def test_major_mismatch_with_torch():
    problems = nvcc_problems("7.5", "12.4", "13.0")
    assert len(problems) == 1 and "mismatches" in problems[0]


def test_fitting_toolchain_and_unknown_nvcc():
    assert nvcc_problems("7.0", "12.1", "12.1") == []
    assert nvcc_problems("7.0", Unknown("no nvcc"), "12.1") == []


def test_toolkit_commands_pick_a_major_that_targets_the_card():
    assert "cuda-12" in toolkit_commands("7.0", "13.0")[1]
    assert "cuda-13" in toolkit_commands("9.0", "13.0")[1]
