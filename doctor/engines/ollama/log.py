"""How an Ollama log shows itself (its logfmt lines, its journald tag, its GIN access log) and its fixes: Modelfile
PARAMETERs, OLLAMA_* settings of the server, its runners and releases. Never llama-server flags or torch: Ollama
chooses the GPU split itself and carries its own CUDA runners."""

from __future__ import annotations

from doctor.engines.log_types import EngineLog, LogFix, LogMarker, spelled
from doctor.engines.ollama.adapter import Ollama

V = Ollama.vocabulary
OLLAMA = "https://github.com/ollama/ollama"
LOOK = "; restart the service and look for library=cuda in its \"inference compute\" line"

MARKERS = (
    LogMarker(r"\bsource=[\w./-]+\.go:\d+ msg=", "Ollama's logfmt lines (source=….go msg=…)", decisive=True),
    LogMarker(r"\bollama\[\d+\]: |\bOLLAMA_(?:HOST|MODELS|DEBUG|KEEP_ALIVE|FLASH_ATTENTION)\b|\[GIN\] \d{4}/"
              r"|llama runner process has terminated|\bollama (?:serve|run)\b", "Ollama's own lines", decisive=True),
)

FIXES = {
    "oom": LogFix(f"Ollama's runner ran out of GPU memory: lower the context ({V.context.format(n=4096)} in the Modelfile, "
                  f"or OLLAMA_CONTEXT_LENGTH=4096 for every model), quantize the K/V cache "
                  f"({spelled(V.kv_cache, type='q8_0')}), put fewer layers on the GPU ({spelled(V.gpu_layers, n='N')}), or pull "
                  f"{V.smaller_model}; {V.restart}."),
    "no-kernel": LogFix("This Ollama's CUDA runner has no code for the card: install the runner built for it (cuda_v12 "
                        "beside cuda_v13: the full Linux tarball or install script, not a CUDA-13-only image), or pin the "
                        "last Ollama release whose runner has it (V100 owners report 0.24.0 working where 0.30.0 fails: "
                        f"{OLLAMA}/issues/16449): curl -fsSL https://ollama.com/install.sh | OLLAMA_VERSION=0.24.0 sh" + LOOK
                        + ".", ("curl -fsSL https://ollama.com/install.sh | OLLAMA_VERSION=0.24.0 sh",)),
    "gpu-unused": LogFix("The lines above this one say why Ollama fell back to the CPU; fix that cause" + LOOK + ". With no "
                         "cause above: CUDA_VISIBLE_DEVICES=-1 or OLLAMA_LLM_LIBRARY=cpu in the server's environment "
                         f"(`systemctl edit ollama`) hide the card on purpose, and {spelled(V.gpu_layers, n=0)} in a "
                         "Modelfile keeps a model off it."),
    "cpu-build": LogFix("This Ollama has no CUDA runner installed (a CPU-only package or image): install Ollama from "
                        "https://ollama.com/download (the Linux install script brings the CUDA runners) or run the "
                        "ollama/ollama image with --gpus all" + LOOK + "."),
    "partial-offload": LogFix("Ollama chose this split itself: the layers that did not fit beside the context stay on the "
                              f"CPU. Make room rather than forcing layers: a smaller context ({V.context.format(n=4096)}), a "
                              f"q8_0 K/V cache ({spelled(V.kv_cache, type='q8_0')}), or {V.smaller_model}; setting "
                              f"{spelled(V.gpu_layers, n='N')} above Ollama's choice can run out of memory. {V.restart}; "
                              "`ollama ps` shows the GPU share."),
    "driver": LogFix("Ollama's CUDA runner needs a newer NVIDIA driver than this one (with OLLAMA_DEBUG=2 its log names "
                     "required_driver): update the driver (Volta and Pascal are supported through the R580 branch), or pin "
                     f"an Ollama release whose runner the installed driver runs ({OLLAMA}/issues/16415)" + LOOK + "."),
    "no-gpu": LogFix("Make the card visible to the Ollama server: `nvidia-smi` must work for the user the service runs as, "
                     "a CUDA_VISIBLE_DEVICES in its environment (`systemctl edit ollama`) must not hide it, and in a "
                     "container it must be started with --gpus all (NVIDIA Container Toolkit)" + LOOK + "."),
}

LOG = EngineLog(Ollama.id, "Ollama", MARKERS, FIXES, precedence=10)
