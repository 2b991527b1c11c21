"""Issue 35's classes, one whole paste each (fixtures/logs/classes/, sources in FILE.log.src): the pitfall is named as
the cause with its knock-on messages under it, the engine is read from the log's own lines, and the fix is in that
engine's terms (no torch for llama.cpp and Ollama, no cmake for Ollama, the llama-cpp-python and LM Studio fixes for
those); the healthy start-ups give nothing."""

from __future__ import annotations

import pytest
from conftest import ROOT

from doctor.commands.log_input import open_log
from doctor.engines import adapter
from doctor.logscan.scanner import Scanner

CLASSES = ROOT / "fixtures" / "logs" / "classes"

# log -> (engine id, flavour, {signature: the signature it follows from}, a phrase the cause's fix must hold)
LOGS: dict[str, tuple[str | None, str, dict[str, str | None], str]] = {
    "llamafile-p100-no-device-code.log": ("llama.cpp", "", {"ggml-no-device-code": None}, "-DCMAKE_CUDA_ARCHITECTURES=60"),
    "ollama-v100-kernel-image-invalid.log": ("ollama", "", {"ggml-kernel-image-invalid": None,
                                                            "ggml-cuda-op-failed": "ggml-kernel-image-invalid"},
                                             "OLLAMA_VERSION="),
    "llama-cli-cpu-only-build.log": ("llama.cpp", "", {"llama-cpu-only-build": None}, "-DGGML_CUDA=ON"),
    "llama-cpp-python-zero-layers.log": ("llama.cpp", "llama-cpp-python", {"llama-zero-layers-offloaded": None},
                                         "n_gpu_layers=-1"),
    "llama-server-cuda-init-failed.log": ("llama.cpp", "", {"ggml-cuda-init-failed": None,
                                                            "llama-zero-layers-offloaded": "ggml-cuda-init-failed"},
                                          "nvidia-smi -L"),
    "lmstudio-v100-no-supported-cuda.log": ("llama.cpp", "LM Studio", {"lmstudio-no-cuda-gpus": None,
                                                                      "llama-zero-layers-offloaded": "lmstudio-no-cuda-gpus"},
                                            "Vulkan"),
    "ollama-no-compatible-gpus-docker.log": ("ollama", "", {"ollama-no-compatible-gpus": None,
                                                            "ollama-inference-on-cpu": "ollama-no-compatible-gpus"},
                                             "--gpus all"),
    "ollama-p40-driver-too-old.log": ("ollama", "", {"ollama-driver-too-old": None,
                                                     "cuda-driver-insufficient": "ollama-driver-too-old",
                                                     "ollama-inference-on-cpu": "ollama-driver-too-old"}, "required_driver"),
    "vllm-p100-cc-below-7.log": ("vllm", "", {"vllm-cc-below-7": None}, "GGUF"),
    "vllm-v100-gemma2-soft-cap.log": ("vllm", "", {"vllm-gemma2-soft-cap": None}, "vllm>=0.7,<0.20"),
    "vllm-libcudart-missing.log": ("vllm", "", {"libcudart-missing": None}, "vllm<0.20"),
    "hf-trainer-v100-bf16.log": ("transformers", "", {"hf-trainer-bf16-needs-ampere": None}, "fp16=True"),
    "bnb-4bit-float32-compute-t4.log": ("transformers", "", {"bnb-4bit-float32-compute": None},
                                        "bnb_4bit_compute_dtype=torch.float16"),
    "bnb-named-symbol-not-found.log": (None, "", {"bnb-named-symbol-not-found": None}, "pip install -U bitsandbytes"),
    "ollama-offload-num-ctx-64k.log": ("ollama", "", {"ollama-scheduler-offload": None,
                                                      "llama-partial-offload": "ollama-scheduler-offload"},
                                       "PARAMETER num_ctx 32000"),
    "ollama-offload-num-gpu-asked.log": ("ollama", "", {"ollama-scheduler-offload": None},
                                         "num_gpu 49 was asked and 48 fit"),
}
HEALTHY = {"ollama-v100-healthy-journald.log": ("ollama", ""),
           "ollama-new-engine-all-layers-healthy.log": ("ollama", ""),
           "llama-cpp-python-v100-healthy.log": ("llama.cpp", "llama-cpp-python"),
           "lmstudio-v100-vulkan-healthy.log": ("llama.cpp", "LM Studio")}


def scan(name: str, **kw):
    source = open_log(str(CLASSES / name))
    try:
        return Scanner(**kw).scan(source)
    finally:
        source.close()


def test_every_log_is_tested_and_has_its_sources():
    logs = {p.name for p in CLASSES.glob("*.log")}
    assert logs == set(LOGS) | set(HEALTHY)
    for log in logs:
        assert "https://" in (CLASSES / f"{log}.src").read_text(), log


@pytest.mark.parametrize("log", sorted(LOGS))
def test_the_cause_is_named_with_its_consequences_under_it_in_the_engines_terms(log):
    engine, flavour, findings, phrase = LOGS[log]
    result = scan(log)
    assert (result.engine.engine, result.engine.flavour) == (engine, flavour)
    assert engine is None or result.engine.lines, "the engine's evidence lines are reported"
    assert {m.signature: m.consequence_of for m in result.matches} == findings
    cause = next(m for m in result.matches if m.consequence_of is None)
    assert phrase in cause.fix + " ".join(cause.commands), cause.fix
    assert result.stats.lines > result.stats.matched_lines + 3  # a paste, not a quote
    if engine is not None and not adapter(engine).uses_torch:
        for m in result.matches:
            assert "torch" not in m.fix.lower() and "exllama" not in m.fix.lower(), (m.signature, m.fix)
            assert engine != "ollama" or ("cmake" not in m.fix and "-ngl" not in m.fix), (m.signature, m.fix)


@pytest.mark.parametrize("log", sorted(HEALTHY))
def test_healthy_startups_give_nothing_and_name_their_engine(log):
    result = scan(log)
    assert result.matches == ()
    assert result.unexplained.error_lines == 0 and result.unexplained.warning_lines == 0
    assert (result.engine.engine, result.engine.flavour) == HEALTHY[log]


def test_engine_flag_words_a_shared_fault_for_that_engine():
    """--engine overrides the log: the same cudaMalloc failure gets Ollama's settings or llama-server's flags."""
    oom = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory\n"
    import io

    def fix(engine):
        return Scanner(engine=engine).scan(open_log("-", stdin=io.BytesIO(oom.encode()))).matches[0].fix

    assert "num_ctx" in fix("ollama") and "-ngl" not in fix("ollama")
    assert "-ngl" in fix("llama.cpp") and "--max-model-len" in fix("vllm")
    neutral = Scanner().scan(open_log("-", stdin=io.BytesIO(oom.encode()))).matches[0]
    assert "--engine NAME" in neutral.fix and "max_seq_len" not in neutral.fix


def test_a_torch_program_that_names_no_engine_gets_neutral_fixes_but_torchs_own_wheel_fix():
    """No ExLlamaV2 words (max_seq_len, EXLLAMA_NO_FLASH_ATTN) for a torch log whose engine is not named; a missing
    kernel is still torch's (a wheel with the card's kernels)."""
    import io

    log = ("  File \"/venv/lib/python3.11/site-packages/torch/nn/functional.py\", line 5, in f\n"
           "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           "14.75 GiB of which 1.02 GiB is free.\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    result = Scanner().scan(open_log("-", stdin=io.BytesIO(log.encode())))
    assert result.engine.engine is None and result.engine.torch
    fixes = {m.signature: m.fix for m in result.matches}
    assert "EXLLAMA" not in fixes["flash-attn-needs-ampere"] and "--engine NAME" in fixes["flash-attn-needs-ampere"]
    assert "max_seq_len" not in fixes["cuda-oom"] and "--engine NAME" in fixes["cuda-oom"]
    assert "torch" in fixes["no-kernel-image"]


def test_the_engine_the_log_shows_is_the_one_the_checks_judge_unless_one_is_named():
    from doctor.commands.explain import plan_with_engine
    from doctor.model.ids import Engine
    from doctor.model.log_analysis import UNKNOWN_ENGINE
    from doctor.model.plan import Plan

    ollama = scan("ollama-no-compatible-gpus-docker.log").engine
    assert plan_with_engine(Plan(), ollama).engine == Engine.OLLAMA
    assert plan_with_engine(Plan(engine=Engine.LLAMA_CPP), ollama).engine == Engine.LLAMA_CPP
    assert plan_with_engine(Plan(), UNKNOWN_ENGINE).engine is None


@pytest.mark.parametrize("log, says, never", [
    ("ollama-offload-num-ctx-64k.log", ("44 of 81 layers", "19.5 GiB", "PARAMETER num_ctx 32000",
                                        "OLLAMA_KV_CACHE_TYPE=q8_0)"), ("OLLAMA_FLASH_ATTENTION=1", "-ngl", "-c ")),
    ("ollama-offload-num-gpu-asked.log", ("48 of 49 layers", "num_gpu 49 was asked",
                                          "OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1"),
     ("num_ctx", "-ngl")),
])
def test_ollamas_scheduler_line_is_judged_in_ollamas_terms_from_its_numbers(log, says, never):
    """Issue 35 item 5: msg=offload's layers, K/V size and the runner's context and flash attention word the fix:
    flash attention already on is not asked for again; a context of 2048 is not halved."""
    cause = next(m for m in scan(log).matches if m.consequence_of is None)
    for words in says:
        assert words in cause.fix, (words, cause.fix)
    for words in never:
        assert words not in cause.fix, (words, cause.fix)


def test_num_gpu_that_caps_the_split_is_named_as_the_cause():
    from doctor.engines.ollama.log import partial_offload

    fix = partial_offload({"requested": 20, "layers": 49, "gpu_layers": 20, "kv_mib": 608.0})
    assert fix is not None and "num_gpu 20" in fix.text and "caps it" in fix.text and "remove it" in fix.text
    assert partial_offload({"layers": 49, "gpu_layers": 20}) is None  # the runner's own line: the static fix
