"""The engines, one package each behind one interface (doctor/engines/base.py), and which one is in force.

Adding an engine is adding a package here (its adapter declares `id = Engine("its-id")`, its log module its LOG) and
running scripts/generate_registry.py, which writes doctor/engines/manifest.py and the Engine member; nothing else
branches on engine names. Machine reads of an engine (its binaries, libraries, servers) are gathered in doctor/facts/, its timed
probe runs in doctor/probe/.
"""

from __future__ import annotations

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.engines.in_force import InForce, in_force
from doctor.engines.manifest import ENGINE_ADAPTERS
from doctor.model.ids import Engine

ADAPTERS: dict[Engine, EngineAdapter] = {a.id: a for a in ENGINE_ADAPTERS}


def adapter(engine: Engine | str) -> EngineAdapter:
    return ADAPTERS[Engine(engine)]


__all__ = ["ADAPTERS", "EngineAdapter", "FixVocabulary", "InForce", "Judgement", "adapter", "in_force"]
