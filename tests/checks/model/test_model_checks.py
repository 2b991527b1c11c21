"""Every model fixture through the five model checks on a V100 16 GB: the verdict and the evidence behind it."""

from __future__ import annotations

import os

import pytest
from model_support import MODELS, NO_GPU, V100, copy_fixture, findings, running_as_root, tree_digest

from checks.base import CheckContext
from checks.model.path_quirks import quirks, rename_command
from checks.registry import checks_for
from checks.runner import run_checks
from doctor.model.findings import Status
from doctor.model.plan import Plan

PASS, WARN, FAIL, SKIP, INFO = Status.PASS, Status.WARN, Status.FAIL, Status.SKIP, Status.INFO
ALL = ("model-path", "quant-format", "architecture", "dtype", "memory-budget", "ceiling")

# fixture -> plan -> {check: (status, {evidence key: value}, words in the summary)}
CASES = {
    "tiny-exl2": ({}, {"model-path": (PASS, {"kind": "directory"}, "headers sound"),
                       "quant-format": (PASS, {"format": "exl2", "cc": "7.0", "bits": 4.0}, "ExLlamaV2 fast"),
                       "dtype": (PASS, {"bf16_tensor_bytes": 0}, "no BF16"),
                       "memory-budget": (PASS, {"loader": "load_autosplit", "weights_source": "safetensors headers"}, "fits"),
                       "ceiling": (INFO, {"bandwidth_gbs": 900}, "decode ceiling")}),
    "tiny-gptq": ({}, {"quant-format": (PASS, {"format": "gptq"}, "GPTQ 4-bit, group 16, no act-order")}),
    "tiny-gptq-desc-act": ({}, {"quant-format": (PASS, {"format": "gptq"}, "reordered at load")}),
    "tiny-awq": ({}, {"quant-format": (FAIL, {"format": "awq", "cc": "7.0"}, "cannot-load"),
                      "memory-budget": (SKIP, {}, "ExLlamaV2 cannot load awq")}),
    # a bnb model is judged as Transformers' (issue 35): slow, not "ExLlamaV2 cannot load it"
    "tiny-bnb-nf4": ({}, {"quant-format": (WARN, {"format": "bnb-4bit", "engine": "transformers"}, "4 tok/s"),
                          "dtype": (WARN, {"bnb_compute_dtype": "bfloat16"}, "no native BF16"),
                          "memory-budget": (SKIP, {"engine": "transformers"}, "ExLlamaV2's VRAM budget")}),
    "tiny-fp16": ({}, {"quant-format": (WARN, {"format": "fp16"}, "torch.matmul"), "dtype": (PASS, {}, "no BF16")}),
    "tiny-bf16": ({}, {"dtype": (WARN, {"bf16_share": 1.0, "cc": "7.0"}, "no native BF16")}),
    "tiny-gguf": ({}, {"model-path": (PASS, {"kind": "directory"}, "GGUF file"),
                       "quant-format": (PASS, {"format": "gguf", "engine": "llama.cpp"}, "llama.cpp fast"),
                       "dtype": (SKIP, {}, "GGUF"), "memory-budget": (SKIP, {}, "gguf-budget budgets it"),
                       "ceiling": (INFO, {"counted": "GGUF file size (embedding included)"}, "llama.cpp")}),
    "tiny-sharded": ({}, {"model-path": (PASS, {"weight_files": 2}, "2 safetensors file(s)")}),
    "tiny-truncated": ({}, {"model-path": (FAIL, {"weight_files": 1}, "4,096 bytes missing"),
                            "memory-budget": (SKIP, {}, "damaged"), "ceiling": (SKIP, {}, "damaged")}),
    "tiny-malformed-config": ({}, {"model-path": (FAIL, {}, "broken JSON at line"),
                                   "memory-budget": (SKIP, {}, "no usable config.json")}),
    "qwen27b exl2": ({}, {"model-path": (WARN, {"path_whitespace": "␠"}, "ExLlamaV2 Python loader itself loads it")}),
    "qwen2-27b-exl2-3.75bpw": ({"max_seq_len": 8192, "cache_mode": "q8"}, {
        "model-path": (WARN, {"estimated_from_config": True}, "estimated from config.json"),
        "quant-format": (PASS, {"bits": 3.75}, "EXL2 (3.75 bpw, head 6 bits)"),
        "memory-budget": (PASS, {"max_seq_len": 8192, "cache_mode": "q8"}, "estimated from config"),
        "ceiling": (INFO, {"ceiling_tok_s_empty_cache": 72.0}, "the seed measured 64 tok/s")}),
    "qwen2-27b-exl2-4.25bpw": ({"max_seq_len": 8192, "cache_mode": "q8"}, {
        "memory-budget": (FAIL, {}, "does not fit"), "ceiling": (INFO, {"ceiling_tok_s_empty_cache": 63.9}, "63.9 tok/s")}),
    "qwen2.5-32b-instruct": ({"max_seq_len": 4096}, {"memory-budget": (FAIL, {"max_seq_len_that_fits": {m: 0 for m in ("fp16", "fp8", "q8", "q6", "q4")}},
                                                                        "does not fit"),
                                                     "dtype": (WARN, {"config_torch_dtype": "bfloat16"}, "no native BF16"),
                                                     "ceiling": (INFO, {}, "14.1 tok/s")}),
    "qwen3-32b": ({"max_seq_len": 4096}, {"memory-budget": (FAIL, {}, "estimated from config")}),
    "gemma-3-27b-it": ({"max_seq_len": 4096}, {"memory-budget": (FAIL, {}, "estimated from config"),
                                               "model-path": (WARN, {}, "config.json only")}),
}


def test_every_model_fixture_has_expectations():
    dirs = {p.name for p in MODELS.iterdir() if p.is_dir()}
    assert dirs == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_findings(name):
    plan_kw, expected = CASES[name]
    got = findings(MODELS / name, **plan_kw)
    assert list(got) == list(ALL)
    for check_id, (status, evidence, words) in expected.items():
        f = got[check_id]
        assert f.status is status, (check_id, f.summary)
        assert words in f.summary, (check_id, f.summary)
        for key, value in evidence.items():
            assert f.evidence.get(key) == value, (check_id, key, f.evidence.get(key))
        if status in (WARN, FAIL):
            assert f.fix, f"{check_id} says {status.value} without a fix"
    assert not [f for f in got.values() if f.status is Status.ERROR]


def test_seed_budget_fails_with_a_clear_margin_and_ordered_fixes():
    f = findings(MODELS / "qwen2-27b-exl2-3.75bpw", max_seq_len=32768, cache_mode="fp16")["memory-budget"]
    assert f.status is FAIL and f.evidence["margin_mib"] < -4096
    assert f.evidence["max_seq_len_that_fits"]["fp16"] >= 4096
    fix = f.fix
    assert fix.index("lower max_seq_len") < fix.index("quantize the cache") < fix.index("a smaller model")
    assert any("--max-seq-len" in c for c in f.commands)


def test_budget_table_and_components_are_in_the_evidence():
    f = findings(MODELS / "qwen2-27b-exl2-3.75bpw", max_seq_len=8192, cache_mode="q8")["memory-budget"]
    (gpu,) = f.evidence["per_gpu"]
    assert set(gpu) >= {"weights", "kv_cache", "cache_fp16_scratch", "fixed_scratch", "cuda_context", "transient", "margin_mib"}
    assert gpu["kv_cache"] == 1088 and gpu["cache_fp16_scratch"] == 32 and gpu["free_mib"] == 15840
    assert f.evidence["host_ram_embedding_mib"] == round(152064 * 5120 * 2 / 2 ** 20)


def test_no_max_seq_len_budgets_exllamav2s_default():
    f = findings(MODELS / "qwen2-27b-exl2-3.75bpw")["memory-budget"]
    assert f.status is FAIL and f.evidence["max_seq_len"] == 32768
    assert "max_position_embeddings" in f.summary


def test_tight_margin_warns(monkeypatch):
    import checks.model.memory_budget as mb

    monkeypatch.setattr(mb, "TIGHT_MARGIN_MIB", 10_000)
    f = findings(MODELS / "qwen2-27b-exl2-3.75bpw", max_seq_len=4096, cache_mode="q8")["memory-budget"]
    assert f.status is WARN and "can tip it over" in f.summary


def test_manual_load_is_offered_when_only_the_autosplit_reserve_breaks_it():
    f = findings(MODELS / "qwen2-27b-exl2-4.25bpw", max_seq_len=4096, cache_mode="q8")["memory-budget"]
    assert f.status is FAIL and f.evidence["margin_mib_with_manual_load"] > 0
    assert f.fix.startswith("Options, cheapest first: 1) load with model.load(gpu_split=")


# ---- planning for a card you do not have ------------------------------------------------------------------

def test_target_gpu_plans_on_a_machine_without_gpu():
    got = findings(MODELS / "qwen2-27b-exl2-3.75bpw", facts=NO_GPU, target_gpu="v100-pcie-16gb", max_seq_len=8192, cache_mode="q8")
    budget, ceiling = got["memory-budget"], got["ceiling"]
    assert budget.status is PASS and "planning target" in budget.summary and "not measured" in budget.summary
    assert budget.evidence["gpu_source"].startswith("planning target --target-gpu v100-pcie-16gb")
    assert budget.evidence["per_gpu"][0]["free_mib"] == 16160
    assert ceiling.status is INFO and "planning target" in ceiling.summary


def test_gpu_present_skips_instead_of_failing_when_planning():
    from checks.env.gpu_present import CHECK as GPU_PRESENT

    plan = Plan(model_path=str(MODELS / "tiny-exl2"), target_gpu="v100-pcie-16gb")
    f = GPU_PRESENT.run(CheckContext(facts=NO_GPU, plan=plan))
    assert f.status is SKIP and f.evidence["planning_target"] == "v100-pcie-16gb"
    assert GPU_PRESENT.run(CheckContext(facts=NO_GPU, plan=Plan())).status is FAIL  # without a plan it still fails


def test_no_gpu_and_no_target_skips_the_budget_with_the_way_out():
    f = findings(MODELS / "tiny-exl2", facts=NO_GPU)["memory-budget"]
    assert f.status is SKIP and "--target-gpu" in f.summary


def test_target_gpu_changes_the_verdict():
    p40 = findings(MODELS / "tiny-exl2", target_gpu="p40")["quant-format"]
    assert p40.status is WARN and "1/64 of FP32" in p40.summary
    t4 = findings(MODELS / "tiny-awq", target_gpu="t4")["quant-format"]
    assert any("vLLM: fast" in p for p in t4.evidence["paths"])


def test_one_severity_when_the_engine_cannot_load_the_model():
    """AWQ on a T4 fails like EXL3 does, though vLLM could run it: the plan's engine (ExLlamaV2) cannot; the fix names
    the engines that can, with their support on this card; on a V100 none can (issue 24)."""
    t4 = findings(MODELS / "tiny-awq", target_gpu="t4")["quant-format"]
    assert t4.status is FAIL and t4.evidence["plan_engine"] == "ExLlamaV2"
    assert t4.evidence["engines_that_can"] == ["vLLM: fast via AWQ kernel [P]"] and "vLLM: fast" in t4.fix
    v100 = findings(MODELS / "tiny-awq")["quant-format"]
    assert v100.status is FAIL and v100.evidence["engines_that_can"] == [] and "no engine known" in v100.summary
    gguf = findings(MODELS / "tiny-gguf")["quant-format"]  # judged as llama.cpp's, which runs it: not this failure
    assert gguf.status is PASS and "plan_engine" not in gguf.evidence


# ---- the path: what breaks, and the exact command ---------------------------------------------------------

def test_square_brackets_fail_with_the_exllamav2_error_and_a_rename(tmp_path):
    d = copy_fixture("tiny-exl2", tmp_path / "Model [4.0bpw]")
    got = findings(d)
    f = got["model-path"]
    assert f.status is FAIL and "No .safetensors files found" in f.summary
    assert f.evidence["path_glob"] == "[]"
    assert f"mv -- '{d}' {tmp_path}/Model-4.0bpw" in f.commands
    assert got["memory-budget"].status is PASS  # a path quirk does not hide the budget


def test_split_path_is_recognised():
    joined = str(MODELS / "qwen27b exl2")
    f = findings(joined, model_path_parts=(str(MODELS / "qwen27b"), "exl2"))["model-path"]
    assert f.status is WARN and f"did you mean {joined!r}?" in f.summary
    assert f"--model '{joined}'" in f.fix


def test_split_path_that_names_nothing():
    f = findings("/data/tmp/qwen27b exl2", model_path_parts=("/data/tmp/qwen27b", "exl2"))["model-path"]
    assert f.status is FAIL and "split the path into 2 arguments" in f.summary and f.evidence["input_error"]


def test_missing_path_suggests_a_near_match():
    f = findings(MODELS / "tiny-exl3")["model-path"]
    assert f.status is FAIL and "did you mean" in f.summary and str(MODELS / "tiny-exl2") in f.evidence["near_matches"]
    assert all(findings(MODELS / "tiny-exl3")[c].status is SKIP for c in ALL[1:])


def test_unreadable_directory(tmp_path, monkeypatch):
    d = copy_fixture("tiny-exl2", tmp_path / "locked")
    if running_as_root():  # root reads anything: make the OS say no the way it would to a user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **k: False if str(p) == str(d) else real(p, mode, **k))
    else:
        d.chmod(0)
    try:
        f = findings(d)["model-path"]
    finally:
        d.chmod(0o755)
    assert f.status is FAIL and "permission denied" in f.summary and f.evidence["input_error"]


def test_checks_never_modify_the_model_directory(tmp_path):
    for name in ("tiny-exl2", "tiny-truncated", "tiny-malformed-config", "tiny-gptq-desc-act"):
        d = copy_fixture(name, tmp_path / name)
        before = tree_digest(d)
        findings(d, max_seq_len=4096)
        assert tree_digest(d) == before, name


@pytest.mark.parametrize("path, kinds", [
    ("/data/qwen 27b", {"whitespace"}), ("/m/Model[4.0bpw]", {"glob"}), ("/m/模型", {"non-ascii"}),
    ("/m/a$b;c", {"shell"}), ("/m/plain-name_1.0", set()),
])
def test_path_quirk_kinds(path, kinds):
    assert {q.kind for q in quirks(path)} == kinds


def test_rename_command_quotes_and_cleans():
    assert rename_command("/data/tmp/qwen27b exl2") == "mv -- '/data/tmp/qwen27b exl2' /data/tmp/qwen27b-exl2"
    assert rename_command("/m/Model [4.0bpw]/") == "mv -- '/m/Model [4.0bpw]' /m/Model-4.0bpw"


# ---- when the model checks run ------------------------------------------------------------------------------

def test_model_checks_are_left_out_without_model():
    ids = [c.id for c in checks_for(Plan())]
    assert not set(ALL) & set(ids)
    assert set(ALL) <= {c.id for c in checks_for(Plan(model_path="/x"))}


def test_asked_for_explicitly_without_model_they_skip_and_say_why():
    from checks.manifest import MODEL_CHECKS

    got = run_checks(V100, Plan(), MODEL_CHECKS)
    assert got[0].status is SKIP and "no --model given" in got[0].summary
    assert all(f.status is SKIP for f in got)


@pytest.mark.parametrize("target, status, words", [(None, FAIL, "use an EXL2 quant of the model with ExLlamaV2"),
                                                   ("a100-40gb", PASS, "ExLlamaV3 fast")])
def test_exl3_is_known_and_needs_cc_8(tmp_path, target, status, words):
    """EXL3 (quant_method exl3) is ExLlamaV3's format, which needs cc 8.0: on a V100 the way is EXL2 with ExLlamaV2."""
    import json

    cfg = json.loads((MODELS / "qwen2-27b-exl2-3.75bpw" / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "exl3", "bits": 4.0}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    f = findings(tmp_path, **({"target_gpu": target} if target else {}))["quant-format"]
    assert f.status is status and "not recognised" not in f.summary and words in f.summary + f.fix
    assert f.evidence["format"] == "exl3"
