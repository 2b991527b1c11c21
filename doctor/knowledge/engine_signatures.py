"""llama.cpp and Ollama lines that `explain` recognises: the text, the pitfall, the fix (never torch), the source.

Rows are data in the shape of doctor/knowledge/signatures.py's Signature (which turns them into rows of its table);
kept here, apart from the torch/ExLlamaV2 rows, because their fixes are the engine's own flags and builds.
"""

from __future__ import annotations

from typing import Any

from doctor.knowledge.architectures import ARCH_FIX, EXL2_SOURCE
from doctor.knowledge.llamacpp_build import REBUILD_CMAKE
from doctor.model.ids import CheckId

LLAMA = "https://github.com/ggml-org/llama.cpp/blob/master"
OLLAMA = "https://github.com/ollama/ollama"
REBUILD = ("Rebuild llama.cpp with this card's architecture, with CUDA 12.x (CUDA 13 cannot build sm_70 or older): "
           + REBUILD_CMAKE.format(arch="<cc without the dot, e.g. 70 for a V100, 61 for a P40>") + "; or use a CUDA 12 "
           "release build. `v100-doctor --engine llama.cpp` reads which architectures the installed build has.")
FIT = ("Make llama.cpp's buffers fit the card: fewer GPU layers (-ngl), a shorter context (-c), a q8_0 K/V cache with "
       "flash attention (-ctk q8_0 -ctv q8_0 -fa on), or a smaller quant. `v100-doctor --model FILE.gguf --engine-config "
       "'llama-server ...'` prints the budget and the layers that fit.")
OLLAMA_V12 = ("Install Ollama's cuda_v12 runner beside cuda_v13 (the full Linux tarball or install script, not a "
              "CUDA-13-only image), or pin an Ollama release that still picks cuda_v12 for this card; check with "
              "`ls $(dirname $(readlink -f $(which ollama)))/../lib/ollama`.")

LMSTUDIO = "https://github.com/lmstudio-ai/lmstudio-bug-tracker"
# what leaves Ollama without a usable GPU; the CPU fallback and "no compatible GPUs" that follow are their consequences
OLLAMA_NO_GPU_CAUSES = ("ollama-skipping-cuda-device", "ollama-cuda-driver-unloadable", "ollama-driver-too-old",
                        "cuda-driver-insufficient", "ggml-cuda-init-failed", "ollama-cuda-init-failure")
# what leaves llama.cpp without a CUDA device: "offloaded 0/N layers" and "no usable GPU found" follow from them
LLAMA_NO_GPU_CAUSES = ("ggml-cuda-init-failed", "cuda-driver-insufficient", "no-cuda-gpus-available",
                       "ggml-no-cuda-arch", "lmstudio-no-cuda-gpus") + OLLAMA_NO_GPU_CAUSES[:3] + ("ollama-cuda-init-failure",)


def llama_no_kernel(id: str, engine: str, anchor: str, pattern: str, title: str, source: str,
                    checks: tuple[CheckId, ...] = (CheckId.ENGINE_BUILD,), **more: Any) -> dict:
    """A row for a llama.cpp build without code for the card (fix class "no-kernel"): the fix rebuilds it for the card."""
    return dict(id=id, engine=engine, anchor=anchor, pattern=pattern, checks=checks, title=title, fix=REBUILD,
                source=source, confidence="P", fix_class="no-kernel", **more)


def llama_oom(id: str, engine: str, anchor: str, pattern: str, title: str, source: str, **more: Any) -> dict:
    """A row for llama.cpp buffers that do not fit free VRAM (fix class "oom"): judged by the GGUF budget, fixed by FIT."""
    return dict(id=id, engine=engine, anchor=anchor, pattern=pattern, checks=(CheckId.GGUF_BUDGET,), title=title, fix=FIT,
                source=source, confidence="P", fix_class="oom", **more)


def unknown_architecture(id: str, engine: str, anchor: str, pattern: str, title: str, fix: str, source: str,
                         judged: str, writer: str = "one") -> dict:
    """A row for an architecture the engine does not know (issue 39), in the engine's own words; the fix is the
    architecture check's own. The check judges the `judged` installed here, not the `writer` that wrote the log."""
    return dict(id=id, engine=engine, anchor=anchor, pattern=pattern, checks=(CheckId.ARCHITECTURE,), title=title, fix=fix,
                source=source, confidence="P", rules_out_on_pass=False,
                pass_note=f"the check judges the {judged} installed here, not necessarily the {writer} that wrote the log")


ENGINE_SIGNATURE_ROWS: tuple[dict, ...] = (
    dict(id="llama-partial-offload", engine="llama.cpp", anchor="layers to gpu",
         pattern=r"offloaded (?!0/)(?P<gpu_layers>\d+)/(?!(?P=gpu_layers) )(?P<layers>\d+) layers to GPU",
         checks=(CheckId.ENGINE_LAUNCH, CheckId.GGUF_BUDGET),
         title="llama.cpp put only part of the model on the GPU: the other layers decode from host memory, at its speed",
         fix="Raise -ngl to the count llama.cpp prints after the slash if the budget fits (gguf-budget says); otherwise a "
             "smaller quant or context keeps every layer on the GPU. " + FIT.split(": ", 1)[1],
         source=f"{LLAMA}/src/llama-model.cpp (load_tensors: \"offloaded %d/%d layers to GPU\")", confidence="P",
         severity="warning",
         fix_class="partial-offload", consequence_of=("ollama-scheduler-offload",)),
    dict(id="ollama-scheduler-offload", engine="Ollama", anchor="msg=offload",
         pattern=r"msg=offload\b.*?layers\.requested=(?P<requested>-?\d+) layers\.model=(?P<layers>\d+) "
                 r"layers\.offload=(?!(?P=layers)\b)(?!0\b)(?P<gpu_layers>\d+)"
                 r"(?:.*?memory\.available=\"\[(?P<available>[^\]]*)\]\")?"
                 r"(?:.*?memory\.required\.full=\"(?P<required_full_mib>[\d.]+ ?[KMGT]?i?B)\")?"
                 r"(?:.*?memory\.required\.kv=\"(?P<kv_mib>[\d.]+ ?[KMGT]?i?B)\")?",
         followup=r"FlashAttention:(?P<flash_attn>\w+) KvSize:(?P<kv_size>\d+) KvCacheType:(?P<kv_type>\w*)"
                  r"|--ctx-size (?P<ctx_size>\d+)(?P<fa_flag>.*?--flash-attn\b)?",
         followup_lines=3,
         checks=(CheckId.ENGINE_LAUNCH, CheckId.GGUF_BUDGET),
         title="Ollama's scheduler put only part of the model on the GPU (layers.offload below layers.model): the other "
               "layers decode on the CPU, at host-memory speed",
         fix="Ollama chose this split itself: make room (a shorter num_ctx, OLLAMA_KV_CACHE_TYPE=q8_0 with "
             "OLLAMA_FLASH_ATTENTION=1, a smaller quant tag) rather than forcing num_gpu above its choice.",
         source=f"{OLLAMA}/blob/main/llm/server.go (slog \"offload\": layers.requested, layers.model, layers.offload, "
                f"memory.required.full, memory.required.kv) ; {OLLAMA}/issues/9181 ; {OLLAMA}/issues/11819",
         confidence="P", severity="warning", fix_class="partial-offload"),
    llama_no_kernel("ggml-no-cuda-arch", "llama.cpp (ggml-cuda)", "was not compiled with any cuda arch",
                    r"ggml was not compiled with any CUDA arch <= (?P<arch>\d+)",
                    "this llama.cpp build has no CUDA code for the card (the number is the card's cc x 100)",
                    f"{LLAMA}/ggml/src/ggml-cuda/common.cuh (\"ggml was not compiled with any CUDA arch <= %d\")"),
    llama_no_kernel("ggml-cuda-op-failed", "llama.cpp (ggml-cuda)", "ggml_cuda_compute_forward",
                    r"ggml_cuda_compute_forward: (?P<op>\w+) failed",
                    "a ggml CUDA kernel failed; the next line names the CUDA error (\"no kernel image\": the build lacks "
                    "this card's architecture)",
                    f"{LLAMA}/ggml/src/ggml-cuda/ggml-cuda.cu (ggml_cuda_compute_forward)",
                    consequence_of=("no-kernel-image", "ggml-kernel-image-invalid", "ggml-no-device-code", "cuda-oom-plain")),
    llama_oom("ggml-cuda-alloc-oom", "llama.cpp (ggml-cuda)", "cudamalloc failed",
              r"allocating (?P<size_mib>[\d.]+ ?MiB) on device (?P<device>\d+): cudaMalloc failed: out of memory"
              r"|llama runner process has terminated: cudaMalloc failed: out of memory",
              "llama.cpp could not allocate a CUDA buffer of this size: model, K/V and compute buffers exceed free VRAM",
              f"{LLAMA}/ggml/src/ggml-cuda/ggml-cuda.cu (ggml_backend_cuda_buffer_type_alloc_buffer) ; "
              f"{OLLAMA}/issues/9782 (Ollama's runner dying with it)"),
    llama_oom("ggml-buffer-alloc-failed", "llama.cpp (ggml-backend)", "failed to allocate",
              r"failed to allocate (?P<buffer>CUDA\d+|CUDA_Host) buffer of size (?P<bytes>\d+)",
              "llama.cpp could not allocate one of its buffers (bytes in the line)",
              f"{LLAMA}/ggml/src/ggml-backend.cpp (\"%s: failed to allocate %s buffer of size %zu\")",
              consequence_of=("ggml-cuda-alloc-oom", "cuda-oom-plain")),
    dict(id="llama-quant-v-needs-fa", engine="llama.cpp", anchor=("requires flash_attn", "requires flash attention"),
         pattern=r"V cache quantization requires flash_attn|quantized V cache (?:was requested, but this )?requires "
                 r"(?:flash_attn|Flash Attention)",
         checks=(CheckId.ENGINE_LAUNCH,),
         title="a quantized V cache was asked for without flash attention; llama.cpp refuses the context",
         fix="Add -fa on (llama.cpp's own flash attention: nothing to install), or keep the V cache at f16 (drop -ctv).",
         source=f"{LLAMA}/src/llama-context.cpp (llama_init_from_model); https://github.com/ggml-org/llama.cpp/issues/10378 ; "
                "https://github.com/ggml-org/llama.cpp/issues/28524", confidence="P"),
    dict(id="ollama-skipping-cuda-device", engine="Ollama", anchor="skipping cuda device",
         pattern=r"skipping CUDA device(?:.*?cc=(?P<cc>\d+))?(?:.*?archs=\"\[(?P<archs>[\d ]+)\]\")?"
                 r"(?:.*?libDirs=\"\[[^\]]*?(?P<runner>cuda_v\d+)\]\")?",
         followup=r"cc=(?P<cc>\d+).*?archs=\"\[(?P<archs>[\d ]+)\]\"", followup_lines=1,
         checks=(CheckId.ENGINE, CheckId.ENGINE_BUILD),
         title="Ollama skipped the card: its CUDA runner has no code for this compute capability (cc x 100)",
         fix=OLLAMA_V12, source=f"{OLLAMA}/issues/17841 ; {OLLAMA}/issues/17766 (Pascal skipped with only cuda_v13)",
         confidence="P",
         fix_class="no-kernel"),
    dict(id="ollama-no-gpu-library", engine="Ollama", anchor="compatible gpu libraries",
         pattern=r"msg=\"compatible gpu libraries\" compatible=\[\]",
         checks=(CheckId.ENGINE, CheckId.ENGINE_BUILD),
         title="Ollama found no GPU library it can use for the card, so every model runs on the CPU (no error is printed)",
         fix=OLLAMA_V12 + " Then restart the service and look for library=CUDA in its \"inference compute\" line.",
         source=f"{OLLAMA}/issues/10833 ; {OLLAMA}/issues/17766", confidence="P", severity="warning",
         consequence_of=("ollama-skipping-cuda-device", "ollama-driver-too-old")),
    dict(id="ollama-inference-on-cpu", engine="Ollama", anchor="library=cpu",
         pattern=r"msg=\"inference compute\" id=\S+ library=cpu\b(?:.*?total=\"(?P<host_memory>[\d.]+ \w+)\")?",
         checks=(CheckId.ENGINE, CheckId.ENGINE_BUILD),
         title="Ollama's runner fell back to the CPU (library=cpu): it found no GPU it can use, so every model runs "
               "in host memory at a few tokens per second, and no error is printed",
         fix="The lines just above this one say why: \"unable to load cuda driver library\" or \"cuda driver library "
             "init failure\" means the NVIDIA driver's libcuda is missing, too old or not the kernel module's (make "
             "`nvidia-smi` work; in a container start it with --gpus all through the NVIDIA Container Toolkit); "
             "\"skipping CUDA device\" or compatible=[] means no installed runner has code for this card (" + OLLAMA_V12
             + "); CUDA_VISIBLE_DEVICES=-1 or OLLAMA_NUM_GPU=0 hide it on purpose. Restart the service and look for "
             "library=cuda in the \"inference compute\" line.",
         source=f"{OLLAMA}/blob/main/app/server/server_test.go (TestGetInferenceComputer, its cpu case) ; "
                f"{OLLAMA}/issues/9496 ; {OLLAMA}/issues/16970 (the line since the llama-server runners)",
         confidence="P", severity="warning", rules_out_on_pass=False,
         pass_note="the checks see this machine's card and Ollama's runners, not the Ollama process that wrote the log "
                   "(a container, a service with its own environment); the line itself says it ran on the CPU",
         fix_class="gpu-unused", consequence_of=OLLAMA_NO_GPU_CAUSES + ("ollama-no-compatible-gpus", "ollama-no-gpu-library")),
    dict(id="ollama-cuda-driver-unloadable", engine="Ollama", anchor="unable to load cuda driver library",
         pattern=r"unable to load cuda driver library\"(?![^\n]*init failure: \d) library=(?P<library>\S+)"
                 r"(?: error=\"(?P<error>[^\"]*))?",
         checks=(CheckId.CUDA_PAIRING,),
         title="Ollama could not load the NVIDIA driver's libcuda named here (the error says why: a symbol an old driver "
               "lacks, a 32-bit or truncated file), so it looks no further for this GPU and falls back to the CPU",
         fix="Install or update the NVIDIA driver so that libcuda.so.1 is the kernel module's own and new enough for "
             "Ollama's CUDA runner (`nvidia-smi` must work; https://docs.ollama.com/gpu names the minimum driver); in a "
             "container, start it with --gpus all through the NVIDIA Container Toolkit instead of copying libcuda into "
             "the image. "
             "Then restart the service and look for library=cuda in its \"inference compute\" line.",
         source=f"{OLLAMA}/issues/6626 ; {OLLAMA}/issues/5493", confidence="P", rules_out_on_pass=False,
         pass_note="the checks read this machine's driver, not the libcuda the Ollama process loaded (a container or "
                   "a copied libcuda can differ); the error in the line is Ollama's own"),
    # issue 39: the libcuda Ollama found loaded but cuInit failed; the number is the CUDA driver's CUresult
    dict(id="ollama-cuda-init-failure", engine="Ollama", anchor=("init failure: ", "cuinit err: "),
         pattern=r"(?:cuda driver library|nvcuda|nvml vram) init failure: (?P<cuda_error>\d+)|cuInit err: (?P<cuinit_error>\d+)",
         checks=(CheckId.GPU_PRESENT, CheckId.CUDA_PAIRING),
         title="the NVIDIA driver's libcuda loaded but would not start (cuInit failed with the CUDA error code in the "
               "line), so Ollama finds no GPU and runs on the CPU",
         fix="The number is the CUDA driver's error code (CUresult): 999 (CUDA_ERROR_UNKNOWN), most often after a "
             "suspend/resume: reload the UVM module (sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm); 802 "
             "(CUDA_ERROR_SYSTEM_NOT_READY): a driver daemon is not running, on an NVSwitch system (HGX/DGX, "
             "A100/H100/H200 SXM boards) nvidia-fabricmanager of the driver's own version; 3 (CUDA_ERROR_NOT_INITIALIZED): "
             "look for NVRM or Xid lines in `sudo dmesg`; 100 (CUDA_ERROR_NO_DEVICE): no card is visible to the process "
             "(CUDA_VISIBLE_DEVICES, a container without --gpus all); 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH): the "
             "libcuda is not the kernel module's version (reinstall the driver; in a container, the NVIDIA Container "
             "Toolkit). `nvidia-smi` must work first; then restart the service and look for library=cuda in its "
             "\"inference compute\" line.",
         source="https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUresult) ; "
                "https://docs.ollama.com/gpu (Linux Suspend Resume) ; "
                f"{OLLAMA}/issues/1877 (999) ; {OLLAMA}/issues/12173 and {OLLAMA}/issues/5567 (802) ; "
                f"{OLLAMA}/issues/12136 (802: fabric manager) ; {OLLAMA}/issues/11593 (3)",
         confidence="P", rules_out_on_pass=False,
         pass_note="the checks read this machine's driver now, not the state the Ollama process met when it started "
                   "(a suspend/resume, a fabric manager that was not running yet)"),
    # issue 39: an architecture the engine does not know, in each engine's own words; the fix is the check's own
    unknown_architecture(
        "llama-unknown-architecture", "llama.cpp", "unknown model architecture",
        r"unknown model architecture: '(?P<architecture>[^']+)'",
        "this llama.cpp build does not know the GGUF's architecture (general.architecture): it predates the model, so the "
        "model cannot load",
        ARCH_FIX["llama.cpp"],
        f"{LLAMA}/src/llama-model.cpp (\"unknown model architecture: '\") ; "
        f"{OLLAMA}/issues/15625 ('qwen35moe' in Ollama) ; https://github.com/unslothai/unsloth/pull/4790 ('gemma4')",
        judged="llama.cpp", writer="build"),
    unknown_architecture(
        "exllamav2-unknown-architecture", "ExLlamaV2", "unknown architecture",
        r"!! Warning, unknown architecture: (?P<architecture>\S+)",
        "ExLlamaV2 does not know the model's architecture (config.json's architectures) and loads it as Llama: it then "
        "fails on missing tensors or writes nonsense",
        ARCH_FIX["exllamav2"], f"{EXL2_SOURCE} (the warning and \"Loading as LlamaForCausalLM\")", judged="exllamav2"),
    unknown_architecture(
        "vllm-unsupported-architecture", "vLLM", "are not supported for now",
        r"Model architectures \[(?P<architectures>[^\]]*)\] are not supported for now",
        "this vLLM's model registry does not have the model's architecture (config.json's architectures), so it refuses "
        "to load it",
        ARCH_FIX["vllm"],
        "https://github.com/vllm-project/vllm/issues/27314 (DeepseekOCRForCausalLM) ; "
        "https://docs.vllm.ai/en/latest/usage/troubleshooting.html (Model not supported)",
        judged="vLLM"),
    # --- issue 35: wordings and classes seen in real pastes, each verified in the public thread named -------------
    dict(id="llama-zero-layers-offloaded", engine="llama.cpp", anchor="layers to gpu",
         pattern=r"offloaded 0/(?P<layers>\d+) layers to GPU",
         checks=(CheckId.ENGINE_LAUNCH, CheckId.ENGINE_BUILD),
         title="llama.cpp put no layer on the GPU: the whole model runs on the CPU (GPU layers not asked for, or a build "
               "or driver that gives it no CUDA device)",
         fix="Ask for every layer (-ngl 99); if the log has no \"ggml_cuda_init: found N CUDA devices\" line, the build "
             "has no CUDA backend: " + REBUILD,
         source=f"{OLLAMA}/issues/12303 (\"offloaded 0/35 layers to GPU\") ; {LLAMA}/src/llama-model.cpp",
         confidence="P", severity="warning", fix_class="gpu-unused", consequence_of=LLAMA_NO_GPU_CAUSES),
    dict(id="llama-cpu-only-build", engine="llama.cpp (common args)",
         anchor=("not compiled with gpu offload support", "no usable gpu found"),
         pattern=r"not compiled with GPU offload support, --gpu-layers option will be ignored"
                 r"|no usable GPU found, --gpu-layers option will be ignored",
         checks=(CheckId.ENGINE_BUILD,),
         title="this llama.cpp binary found no GPU backend to put layers on (a CPU-only build, or CUDA failed to start): "
               "-ngl is ignored and every layer runs on the CPU",
         fix=REBUILD, source="https://github.com/ggml-org/llama.cpp/issues/9153 ; "
                             "https://github.com/ggml-org/llama.cpp/issues/22748", confidence="P", severity="warning",
         fix_class="cpu-build", consequence_of=LLAMA_NO_GPU_CAUSES),
    dict(id="ggml-cuda-init-failed", engine="llama.cpp (ggml-cuda)",
         anchor=("failed to initialize cuda", "no cuda devices found, cuda will be disabled"),
         pattern=r"ggml_cuda_init: failed to initialize CUDA: (?!CUDA driver version is insufficient)(?P<cuda_error>.+?)\s*$"
                 r"|ggml_(?:init_cublas|cuda_init): no CUDA devices found, CUDA will be disabled",
         checks=(CheckId.GPU_PRESENT, CheckId.CUDA_PAIRING),
         title="llama.cpp's CUDA backend could not start (the CUDA error is named in the line), so it runs on the CPU",
         fix="Make the card visible to the process: `nvidia-smi -L` must list it for the same user; unset a "
             "CUDA_VISIBLE_DEVICES that hides it; in a container start it with --gpus all (NVIDIA Container Toolkit).",
         source="https://github.com/abetlen/llama-cpp-python/issues/1890 ; https://github.com/janhq/cortex.cpp/issues/1470 ; "
                "https://github.com/ggml-org/llama.cpp/issues/6184",
         confidence="P", fix_class="no-gpu"),
    llama_no_kernel("ggml-no-device-code", "llama.cpp (ggml-cuda)", "no device code compatible",
                    r"CUDA kernel (?P<kernel>\w+) has no device code compatible with CUDA arch (?P<arch>\d+)\. "
                    r"ggml-cuda\.cu was compiled for: (?P<compiled_for>[\d,]+)",
                    "this llama.cpp build has no code for the card's architecture (arch = cc x 100; the line lists what "
                    "it was compiled for)",
                    "https://github.com/mozilla-ai/llamafile/issues/434 ; https://github.com/nextcloud/llm2/issues/52"),
    llama_no_kernel("ggml-kernel-image-invalid", "llama.cpp (ggml-cuda)", "device kernel image is invalid",
                    r"CUDA error: device kernel image is invalid",
                    "the CUDA driver refused this build's kernels for the card: no code for its architecture (Ollama 0.30 "
                    "on a V100), or CUDA libraries that do not match the driver",
                    f"{OLLAMA}/issues/16449 ; {OLLAMA}/issues/6997 ; https://github.com/theroyallab/YALS/issues/23",
                    checks=(CheckId.ENGINE_BUILD, CheckId.CUDA_PAIRING)),
    dict(id="lmstudio-no-cuda-gpus", engine="LM Studio (CUDA llama.cpp runtime)",
         anchor=("no supported cuda gpus found", "error trying to query cuda gpus"),
         pattern=r"No supported CUDA GPUs found|Error trying to query CUDA gpus: (?P<cuda_error>No CUDA devices found)",
         checks=(CheckId.ENGINE_BUILD, CheckId.GPU_PRESENT),
         title="LM Studio's CUDA llama.cpp runtime found no card it has code for (its builds leave out Volta, sm_70) or "
               "no CUDA device at all, so models load on the CPU",
         fix="In LM Studio open the runtime settings (Ctrl+Shift+R) and select the Vulkan llama.cpp runtime, which runs on "
             "this card; or serve the GGUF with llama-server built for the card (cc 7.0: " + REBUILD_CMAKE.format(arch="70") + "). "
             "If `nvidia-smi` itself lists no GPU, fix the driver first.",
         source=f"{LMSTUDIO}/issues/1758 ; {LMSTUDIO}/issues/197", confidence="P"),
    dict(id="ollama-no-compatible-gpus", engine="Ollama", anchor="no compatible gpus were discovered",
         pattern=r"no compatible GPUs were discovered",
         checks=(CheckId.ENGINE, CheckId.GPU_PRESENT),
         title="Ollama's GPU discovery found no GPU it can use, so every model runs on the CPU (logged at INFO: no error)",
         fix="Make the card visible to the Ollama server: `nvidia-smi` must work for the user the service runs as, a "
             "CUDA_VISIBLE_DEVICES in its environment (`systemctl edit ollama`) must not hide it, and in a container it "
             "must be started with --gpus all (NVIDIA Container Toolkit); restart the service and look for library=cuda in "
             "its \"inference compute\" line.",
         source="https://github.com/claraverse-space/ClaraVerse/issues/49 ; "
                f"{OLLAMA}/issues/8674", confidence="P", severity="warning",
         fix_class="no-gpu", rules_out_on_pass=False,
         pass_note="the checks see this machine's card, not what the Ollama process (a container, a service) could see",
         consequence_of=OLLAMA_NO_GPU_CAUSES),
    dict(id="ollama-driver-too-old", engine="Ollama", anchor=("nvidia driver too old", "nvidia driver is too old or missing"),
         pattern=r"NVIDIA driver too old\"?(?:.*?compute=(?P<card_cc>[\d.]+))?(?:.*?driver=(?P<driver>[\d.]+))?"
                 r"(?:.*?required_driver=\"(?P<required_driver>[^\"]+)\")?"
                 r"|your nvidia driver is too old or missing\.\s+If you have a CUDA GPU please upgrade to run ollama",
         checks=(CheckId.CUDA_PAIRING,),
         title="the NVIDIA driver is older than Ollama's CUDA runner needs, so Ollama leaves the card out and runs on the CPU",
         fix="Update the NVIDIA driver to the one the line names as required_driver (Volta and Pascal are supported "
             "through the R580 branch), or pin an Ollama release whose CUDA runner the installed driver runs; restart the "
             "service and look for library=cuda in its \"inference compute\" line.",
         source=f"{OLLAMA}/issues/16415 ; {OLLAMA}/issues/17290 ; {OLLAMA}/issues/6604", confidence="P", fix_class="driver"),
)
