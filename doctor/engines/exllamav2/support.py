"""ExLlamaV2's support table row: the oldest card it runs on, with its source (issue 27)."""

from __future__ import annotations

from doctor.knowledge.engines import EngineSupport

EXLLAMAV2 = EngineSupport(
    "exllamav2", "ExLlamaV2", "0.3.2 (the last release, 2025-07-13; only CI changes since)", "6.0", ("exl2", "gptq"),
    "no support below Pascal", "llama.cpp with a GGUF of the model",
    "https://github.com/turboderp-org/exllamav2/blob/master/.github/workflows/build-wheels-release.yml (wheels for "
    "6.0 6.1 7.0 7.5 ... 12.0+PTX); last tag v0.3.2", "S")

SUPPORT = (EXLLAMAV2,)
