"""LM Studio, a llama.cpp flavour: it runs GGUF models on llama.cpp runtimes of its own (CUDA 12, CUDA 13, Vulkan,
CPU), picked in its runtime settings, with its settings in each model's load settings or its CLI `lms`. What its
runtimes carry for the card, how they are swapped, and its settings' words. Sources: `lms load` flags --gpu (0-1, off,
max) and --context-length (https://lmstudio.ai/docs/cli/load); its CUDA runtime leaving out Volta
(https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1758)."""

from __future__ import annotations

from doctor.engines.base import CudaBuild, FixVocabulary
from doctor.knowledge.llamacpp_build import REBUILD_CMAKE
from doctor.model.facts import Facts

LMS_LOAD_DOC = "https://lmstudio.ai/docs/cli/load"
NO_VOLTA = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1758"
FLAVOURS = ("lm-studio", "LM Studio")  # how the server probe and the log scanner name it

VOCABULARY = FixVocabulary(
    settings_live_in="the model's load settings in LM Studio (or `lms load MODEL` flags)",
    context="Context Length {n} (`lms load MODEL --context-length {n}`)",
    gpu_layers="GPU Offload at {n} layers (`lms load MODEL --gpu max` for all of them)",
    kv_cache="Flash Attention on with K and V Cache Quantization Type {type}",
    smaller_model="a smaller GGUF quant of the model (Q3_K_M, IQ4_XS)", restart="reload the model",
    flash_attn_on="Flash Attention on in the model's load settings",
    fast_decode="GPU Offload at the maximum (`lms load MODEL --gpu max`) and Flash Attention on",
    fast_format="Download a GGUF quant of the model (Q4_K_M), which LM Studio runs on its llama.cpp runtime.")


def build(facts: Facts) -> CudaBuild | None:
    """The CUDA code of the runtime LM Studio loads GGUF models with (the selected one, else its CUDA runtimes)."""
    lm = facts.engines.lm_studio if facts.engines is not None else None
    if lm is None or not lm.installed:
        return None
    used = lm.in_use
    if used is not None and used.gpu == "cpu":  # its CPU runtime selected: the card silently unused
        return CudaBuild(True, (), f"LM Studio ({used.label}, selected)", owner="LM Studio", runner_word="")
    if used is not None and not used.gpu.startswith("cuda"):
        return CudaBuild(True, (), f"LM Studio ({used.label})", owner="LM Studio", runner_word="",
                         not_cuda=f"LM Studio runs GGUF models on its {used.label}, which needs no CUDA code of its own")
    runtimes = [used] if used is not None and used.gpu.startswith("cuda") else \
        [r for r in lm.runtimes if r.gpu.startswith("cuda")]
    libs = tuple(type(lib)(lib.path, lib.cubins, lib.ptx, r.label) for r in runtimes for lib in r.cuda_libraries)
    what = f"LM Studio ({', '.join(r.label for r in runtimes) or 'its CPU llama.cpp runtime only'})"
    return CudaBuild(True, libs, what, owner="LM Studio", runner_word="")


def runtime_fix(cc: str) -> tuple[str, tuple[str, ...]]:
    """(fix, commands) that give LM Studio a runtime for the card, in its own settings."""
    sm = cc.replace(".", "")
    cmake = REBUILD_CMAKE.format(arch=sm)
    volta = (f" (its CUDA runtime leaves out Volta, sm_70: {NO_VOLTA})" if sm == "70" else "")
    return (f"In LM Studio open the runtime settings (Ctrl+Shift+R, or `lms runtime`) and select a GPU llama.cpp runtime "
            f"with code for the card: a CUDA runtime built for sm_{sm}, or the Vulkan runtime{volta}; then set GPU "
            f"Offload to the maximum in the model's load settings (`lms load MODEL --gpu max`: {LMS_LOAD_DOC}). Or "
            f"serve the GGUF with llama-server built for the card: {cmake}", (cmake,))
