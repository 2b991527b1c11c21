"""Every engine package, in the order of their folders: written by scripts/generate_registry.py; do not edit
by hand."""

from __future__ import annotations

from doctor.engines import exllamav2, llamacpp, ollama, tabbyapi, transformers, vllm
from doctor.engines.base import EngineAdapter
from doctor.engines.exllamav2.log import LOG as EXLLAMAV2_LOG
from doctor.engines.llamacpp.log import LOG as LLAMACPP_LOG
from doctor.engines.log_types import EngineLog
from doctor.engines.ollama.log import LOG as OLLAMA_LOG
from doctor.engines.tabbyapi.log import LOG as TABBYAPI_LOG
from doctor.engines.transformers.log import LOG as TRANSFORMERS_LOG
from doctor.engines.vllm.log import LOG as VLLM_LOG

ENGINE_ADAPTERS: tuple[EngineAdapter, ...] = (
    exllamav2.ADAPTER,
    llamacpp.ADAPTER,
    ollama.ADAPTER,
    tabbyapi.ADAPTER,
    transformers.ADAPTER,
    vllm.ADAPTER,
)
ENGINE_LOGS: tuple[EngineLog, ...] = (EXLLAMAV2_LOG, LLAMACPP_LOG, OLLAMA_LOG, TABBYAPI_LOG, TRANSFORMERS_LOG, VLLM_LOG)
