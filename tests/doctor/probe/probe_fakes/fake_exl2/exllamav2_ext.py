"""Marks the fake ExLlamaV2 as a prebuilt wheel (no JIT build): doctor.facts.engines.build_cache looks for it."""
