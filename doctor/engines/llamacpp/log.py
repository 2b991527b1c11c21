"""How a llama.cpp log shows itself (llama-server, llama-cli; llama-cpp-python and LM Studio as flavours) and its fixes:
flags on llama-server's command line, Llama(...) arguments in llama-cpp-python, load settings in LM Studio, and
builds with the card's architecture. Never torch: llama.cpp carries its own CUDA kernels."""

from __future__ import annotations

from doctor.engines.llamacpp.adapter import LlamaCpp
from doctor.engines.log_types import EngineLog, LogFix, LogMarker, spelled
from doctor.knowledge.llamacpp_build import REBUILD_CMAKE, REBUILD_PIP

V = LlamaCpp.vocabulary
PY, LMS = "llama-cpp-python", "LM Studio"
CMAKE, PIP = REBUILD_CMAKE, REBUILD_PIP
CUDA12 = "with a CUDA 12.x toolkit (CUDA 13 cannot build sm_70 or older)"
LMS_RUNTIME = ("In LM Studio open the runtime settings (Ctrl+Shift+R) and select a GPU llama.cpp runtime: CUDA, or Vulkan "
               "where its CUDA runtime has no code for the card (it leaves out Volta, sm_70: "
               "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1758)")

MARKERS = (
    LogMarker(r"\b(?:llama_model_loader|llm_load_tensors|load_tensors|llama_new_context_with_model|llama_context|"
              r"llama_kv_cache\w*|ggml_cuda_init|print_info|load_backend|llama_model_load\w*):", "llama.cpp's loader lines"),
    LogMarker(r"\bmain: server is listening|\bllama-(?:server|cli)\b|\bsrv +\w+: |\bbuild: \d+ \(\w+\)",
              "llama-server's own prints"),
    LogMarker(r"llama[_-]cpp[_-]python|site-packages[/\\]llama_cpp\b|\bfrom llama_cpp import|\bllama_cpp\.Llama\b",
              "llama-cpp-python's package", flavour=PY, decisive=True),
    LogMarker(r"\bLM Studio\b|\bLM STUDIO\b|\blmstudio\b|\.lmstudio[/\\]", "LM Studio's lines", flavour=LMS, decisive=True),
)

FIXES = {
    "oom": LogFix(f"Make llama.cpp's buffers fit the card: fewer GPU layers ({spelled(V.gpu_layers, n='N')}, below the count "
                  f"it printed), a shorter context ({V.context.format(n=8192)}), a q8_0 K/V cache "
                  f"({spelled(V.kv_cache, type='q8_0')}), or {V.smaller_model}; {V.restart}. `v100-doctor --model FILE.gguf "
                  "--engine-config 'llama-server ...'` prints the budget and the layers that fit."),
    "no-kernel": LogFix(f"This llama.cpp build has no CUDA code for the card: rebuild it for the card's architecture {CUDA12}: "
                        f"{CMAKE}; or use a release built with it.", (CMAKE,)),
    "cpu-build": LogFix(f"This llama.cpp binary has no working CUDA backend, so every layer runs on the CPU whatever -ngl "
                        f"says: use a CUDA release build, or build it {CUDA12}: {CMAKE}; the "
                        "\"ggml_cuda_init: found 1 CUDA devices\" line shows it worked.", (CMAKE,)),
    "gpu-unused": LogFix(f"No layer went to the GPU: ask for all of them ({spelled(V.gpu_layers, n=99)}); if the log has no "
                         "\"ggml_cuda_init: found N CUDA devices\" line, the build has no CUDA backend: rebuild it "
                         f"{CUDA12}: {CMAKE}."),
    "partial-offload": LogFix(f"Raise {spelled(V.gpu_layers, n='N')} to the count llama.cpp prints after the slash if the "
                              "budget fits (gguf-budget says); otherwise make room for every layer: a shorter context "
                              f"({V.context.format(n=8192)}), a q8_0 K/V cache ({spelled(V.kv_cache, type='q8_0')}) or "
                              f"{V.smaller_model}."),
    "driver": LogFix("This llama.cpp build's CUDA runtime is newer than the NVIDIA driver supports: update the driver (CUDA "
                     "12.x needs >= 525.60.13; Volta and Pascal are supported through the R580 branch), or use a llama.cpp "
                     "build for the CUDA that `nvidia-smi` shows top right; in a container, run it with --gpus all."),
    "no-gpu": LogFix("llama.cpp found no CUDA device: `nvidia-smi -L` must list the card for the same user; unset a "
                     "CUDA_VISIBLE_DEVICES that hides it; in a container start it with --gpus all (NVIDIA Container "
                     "Toolkit)."),
}

FLAVOUR_FIXES = {
    PY: {
        "oom": LogFix("Make llama.cpp's buffers fit the card: fewer GPU layers (Llama(n_gpu_layers=N), below the count it "
                      "printed), a shorter context (n_ctx=8192), a q8_0 K/V cache (flash_attn=True, type_k=8, type_v=8), "
                      f"or {V.smaller_model}."),
        "no-kernel": LogFix(f"This llama-cpp-python build has no CUDA code for the card: reinstall it built for the card's "
                            f"architecture {CUDA12}: {PIP}", (PIP,)),
        "cpu-build": LogFix(f"The installed llama-cpp-python was built without CUDA (pip builds the CPU version unless told "
                            f"otherwise): reinstall it {CUDA12}: {PIP}; then pass n_gpu_layers=-1.", (PIP,)),
        "gpu-unused": LogFix("No layer went to the GPU: pass Llama(..., n_gpu_layers=-1) (its default, 0, keeps every layer "
                             "on the CPU); if the log has no \"ggml_cuda_init: found N CUDA devices\" line, the package "
                             f"was built without CUDA: {PIP}", (PIP,)),
        "partial-offload": LogFix("Raise Llama(n_gpu_layers=...) to the count llama.cpp prints after the slash (-1: all) if "
                                  "the budget fits; otherwise make room: a shorter n_ctx, a q8_0 K/V cache "
                                  f"(flash_attn=True, type_k=8, type_v=8) or {V.smaller_model}."),
        "driver": LogFix("This llama-cpp-python build's CUDA runtime is newer than the NVIDIA driver supports: update the "
                         f"driver, or reinstall it built with the CUDA toolkit the driver supports: {PIP}"),
    },
    LMS: {
        "oom": LogFix("In the model's load settings lower GPU Offload (layers) and Context Length, or turn on Flash "
                      "Attention with a Q8_0 K/V cache; or download a smaller quant of the model."),
        "no-kernel": LogFix(LMS_RUNTIME + "; or serve the GGUF with llama-server built for the card: " + CMAKE, (CMAKE,)),
        "cpu-build": LogFix(LMS_RUNTIME + ", then set GPU Offload to the maximum in the model's load settings."),
        "gpu-unused": LogFix("Set GPU Offload to the maximum in the model's load settings; if LM Studio still offloads "
                             "nothing, " + LMS_RUNTIME[0].lower() + LMS_RUNTIME[1:] + "."),
        "partial-offload": LogFix("Raise GPU Offload in the model's load settings to all layers if the budget fits; "
                                  "otherwise lower Context Length, use a Q8_0 K/V cache with Flash Attention, or a "
                                  "smaller quant."),
    },
}

LOG = EngineLog(LlamaCpp.id, "llama.cpp", MARKERS, FIXES, FLAVOUR_FIXES, precedence=20)
