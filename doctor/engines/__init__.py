"""The engines, one package each behind one interface (doctor/engines/base.py), and which one is in force.

Adding an engine is adding a package here with an adapter and registering it in ADAPTERS; nothing else branches on
engine names. Machine reads of an engine (its binaries, libraries, servers) are gathered in doctor/facts/, its timed
probe runs in doctor/probe/.
"""

from __future__ import annotations

from doctor.engines import exllamav2, llamacpp, ollama, tabbyapi, transformers, vllm
from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.engines.in_force import InForce, in_force
from doctor.model.ids import Engine

ADAPTERS: dict[Engine, EngineAdapter] = {a.id: a for a in (
    exllamav2.ADAPTER, tabbyapi.ADAPTER, llamacpp.ADAPTER, ollama.ADAPTER, transformers.ADAPTER, vllm.ADAPTER)}


def adapter(engine: Engine | str) -> EngineAdapter:
    return ADAPTERS[Engine(engine)]


__all__ = ["ADAPTERS", "EngineAdapter", "FixVocabulary", "InForce", "Judgement", "adapter", "in_force"]
