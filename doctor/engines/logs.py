"""Every engine's log markers and fixes (doctor/engines/<engine>/log.py), in the order `explain` weighs their evidence,
and the neutral fixes for a log that names no engine."""

from __future__ import annotations

from doctor.engines import manifest
from doctor.engines.log_types import EngineLog, LogFix
from doctor.model.ids import Engine

# a wrapper's decisive line wins in the order of each log's precedence (Ollama's logs carry llama.cpp's loader lines,
# vLLM's carry torch's); among the rest, the engine with the most lines, ties in this order
ENGINE_LOGS: tuple[EngineLog, ...] = tuple(sorted(manifest.ENGINE_LOGS, key=lambda log: log.precedence))
BY_ENGINE: dict[Engine, EngineLog] = {e.engine: e for e in ENGINE_LOGS}

NAME_IT = "The log does not show which engine ran; `v100-doctor explain LOG --engine NAME` words the fix for it."
NEUTRAL: dict[str, LogFix] = {
    "oom": LogFix("The GPU ran out of memory: make the model and its context fit, with a shorter context, a quantized "
                  "K/V cache, fewer layers on the GPU or a smaller quant of the model. " + NAME_IT),
    "no-kernel": LogFix("The program's GPU code was built without this card's architecture: install a build (wheel, "
                        "release, image) that includes it, or build it for the card ({arch}) with a CUDA 12.x toolkit "
                        "(CUDA 13 cannot build sm_70 or older). " + NAME_IT),
    "driver": LogFix("The program's CUDA runtime is newer than the installed NVIDIA driver supports: update the driver, or "
                     "install the program's build for the CUDA that `nvidia-smi` shows top right. " + NAME_IT),
    "no-gpu": LogFix("The program found no CUDA device: `nvidia-smi -L` must list the card for the same user, "
                     "CUDA_VISIBLE_DEVICES must not hide it, and a container must be started with --gpus all. " + NAME_IT),
    "flash-attn": LogFix("flash-attn 2 needs cc 8.0+ and this card is older: turn flash attention off in the program that "
                         "called it (another attention implementation), or uninstall flash-attn. " + NAME_IT),
    "bf16": LogFix("This card has no native bf16 (cc 8.0+): run in float16 instead. " + NAME_IT),
}


def engine_log(engine: Engine | str) -> EngineLog:
    return BY_ENGINE[Engine(engine)]
