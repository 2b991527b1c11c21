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

def _gib(mib: object) -> str:
    return f"{float(mib) / 1024:.1f} GiB" if isinstance(mib, (int, float)) else ""


def partial_offload(n: dict) -> LogFix | None:
    """Ollama's scheduler line (msg=offload layers.requested=R layers.model=M layers.offload=G memory.required.kv=...,
    and the runner's load request or command line after it): the split in Ollama's own terms, num_gpu named when it
    is what capped it, the context and K/V cache type sized from what the line says."""
    layers, placed, asked = n.get("layers"), n.get("gpu_layers"), n.get("requested")
    if not isinstance(layers, int) or not isinstance(placed, int) or "requested" not in n:
        return None  # the runner's own "offloaded N/M layers" line: the static fix
    need = ", ".join(x for x in (f"the whole model needs {_gib(n.get('required_full_mib'))}" if n.get("required_full_mib")
                                 else "", f"its K/V cache at this context {_gib(n.get('kv_mib'))}" if n.get("kv_mib")
                                 else "", f"free: {n['available']}" if n.get("available") else "") if x)
    head = f"Ollama's scheduler put {placed} of {layers} layers on the GPU" + (f" ({need})" if need else "") + "."
    if isinstance(asked, int) and 0 <= asked < layers and asked <= placed:
        return LogFix(f"{head} num_gpu {asked} (a PARAMETER num_gpu line in the Modelfile, or the request's options) caps "
                      "it: remove it and let Ollama place what fits; then restart the model (`ollama stop MODEL`).")
    ctx = n.get("kv_size") or n.get("ctx_size")
    fa_on = str(n.get("flash_attn", "")).lower() == "true" or bool(n.get("fa_flag"))
    kv_type = str(n.get("kv_type", "") or "").lower()
    steps = []
    if not isinstance(ctx, int) or ctx > 4096:  # a context of 4096 or less has little to give
        steps.append(f"a shorter context ({V.context.format(n=ctx // 2 if isinstance(ctx, int) else 4096)} in the "
                     "Modelfile, or OLLAMA_CONTEXT_LENGTH for every model)")
    if kv_type not in ("q8_0", "q4_0"):
        steps.append("a K/V cache at half the size (OLLAMA_KV_CACHE_TYPE=q8_0"
                     + ("" if fa_on else " with OLLAMA_FLASH_ATTENTION=1") + ")")
    elif not fa_on:
        steps.append(f"OLLAMA_FLASH_ATTENTION=1, without which Ollama ignores OLLAMA_KV_CACHE_TYPE={kv_type}")
    steps.append(V.smaller_model)
    over = (f" num_gpu {asked} was asked and {placed} fit." if isinstance(asked, int) and asked >= layers else "")
    return LogFix(f"{head}{over} Make room rather than forcing layers: {', '.join(steps[:-1])}, or {steps[-1]}; setting "
                  f"{spelled(V.gpu_layers, n='N')} above Ollama's choice can run out of memory. Then {V.restart} "
                  "(`ollama ps` shows the GPU share).")


LOG = EngineLog(Ollama.id, "Ollama", MARKERS, FIXES, precedence=10, worded={"partial-offload": partial_offload})
