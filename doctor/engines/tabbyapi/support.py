"""TabbyAPI's support table rows: its main branch (EXL3 on exllamav3, Ampere and newer), exllamav3 itself, and
the exl2-checkpoint branch that keeps ExLlamaV2 (issue 27)."""

from __future__ import annotations

from doctor.knowledge.engines import EngineSupport

EXLLAMAV3 = EngineSupport(
    "exllamav3", "exllamav3", "up to 1.5.x", "8.0", ("exl3",),
    "the build fails (\"Feature 'cp.async' requires .target sm_80\"); Volta and Pascal stay rejected",
    "ExLlamaV2 0.3.2 (EXL2) or llama.cpp (GGUF)",
    "https://github.com/turboderp-org/exllamav3/issues/14 ; https://github.com/turboderp-org/exllamav3/releases/tag/v1.5.2 "
    "(experimental Turing) ; https://github.com/theroyallab/tabbyAPI/pull/463 (Volta rejected)", "S", experimental_from="7.5")

TABBYAPI_MAIN = EngineSupport(
    "tabbyapi-main", "TabbyAPI (main branch)", "main since c8b9a8f (2026-07-14): EXL3 only", "8.0", ("exl3",),
    "it refuses to start: \"All GPUs must be ampere (30 series) or newer\" (common/hardware.py)",
    "TabbyAPI's exl2-checkpoint branch (git checkout exl2-checkpoint) with an EXL2 model, or llama.cpp/YALS for GGUF",
    "https://github.com/theroyallab/tabbyAPI (README: ExLlamaV2 models preserved on the exl2-checkpoint branch; "
    "common/hardware.py)", "S")

TABBYAPI_EXL2_CHECKPOINT = EngineSupport(
    "tabbyapi-exl2-checkpoint", "TabbyAPI (exl2-checkpoint branch)", "the EXL2 branch, ExLlamaV2 0.3.x", "6.0",
    ("exl2", "gptq"), "as ExLlamaV2", "llama.cpp with a GGUF of the model",
    "https://github.com/theroyallab/tabbyAPI (README, exl2-checkpoint)", "S")

SUPPORT = (TABBYAPI_MAIN, EXLLAMAV3, TABBYAPI_EXL2_CHECKPOINT)
