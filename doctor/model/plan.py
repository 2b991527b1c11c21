"""The user's deployment plan: what they intend to run, as opposed to what the machine is."""

from __future__ import annotations

from dataclasses import dataclass

from doctor.model.engines import EngineLaunch, EngineServer
from doctor.model.ids import Engine

MODEL_PATH_FROM = {  # a path that names no model is refused naming the place the user wrote it
    "tabby": "TabbyAPI's config.yml model_dir/model_name",
    "engine": "--engine-config's -m",
}


@dataclass(frozen=True)
class Plan:
    model_path: str | None = None
    model_path_parts: tuple[str, ...] | None = None  # --model as the shell delivered it; 2+ parts: split at spaces
    model_path_from: str = "--model"  # where the path was written, for the one-line error about it (MODEL_PATH_FROM)
    max_seq_len: int | None = None
    cache_mode: str = "fp16"  # a key of doctor/knowledge/kv_cache.py KV_CACHE_MODES
    gpu_split: tuple[float, ...] | None = None  # GB per GPU, as ExLlamaV2's gpu_split
    gpu_index: int = 0  # the GPU the single-card checks judge first (NVML index)
    gpu_indices: tuple[int, ...] | None = None  # --gpu N (repeatable): the GPUs judged; None: every GPU
    tensor_parallel: bool = False  # the plan shards each layer over the GPUs (needs P2P), not a layer split
    target_gpu: str | None = None  # plan for a card from the knowledge base, not this one
    engine: Engine | None = None  # --engine; None: chosen from the model's format and what is installed
    engine_launch: EngineLaunch | None = None  # --engine-config: a llama-server command line or Ollama parameters
    engine_server: EngineServer | None = None  # --engine-url: a running server the probe times (issue 35)
