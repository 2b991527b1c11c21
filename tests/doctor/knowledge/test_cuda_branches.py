"""R580 and its end of life are data in doctor/knowledge/cuda.py; gpu-present reads them from there."""

import checks.env.gpu_present as gpu_present
import doctor.knowledge.cuda as cuda


def test_the_last_legacy_branch_comes_from_the_branch_table():
    assert cuda.LAST_LEGACY_BRANCH == 580
    assert cuda.LEGACY_ARCHITECTURES == ("Maxwell", "Pascal", "Volta")
    assert cuda.legacy_architectures() == "Maxwell, Pascal and Volta"
    assert cuda.legacy_architectures("or") == "Maxwell, Pascal or Volta"
    assert cuda.LAST_LEGACY_BRANCH_EOL[0].startswith("R580 ")


def test_gpu_present_words_follow_the_data(monkeypatch):
    monkeypatch.setattr(gpu_present, "LAST_LEGACY_BRANCH", 590)
    fix, _ = gpu_present._fix_for("libnvidia-ml.so.1 not found")
    assert "R590 branch or older" in fix and "R580" not in fix
    said = gpu_present._driver_too_new("595.10", ["10de:1db4"])
    assert said is not None and "after R590" in said
    assert gpu_present._driver_too_new("585.10", ["10de:1db4"]) is None


def test_no_hard_coded_branch_left_in_gpu_present():
    import inspect

    assert "580" not in inspect.getsource(gpu_present)
