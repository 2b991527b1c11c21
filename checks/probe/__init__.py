"""Probe readiness: can the timed ExLlamaV2 probe run here, and will it JIT-build first."""
