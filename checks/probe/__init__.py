"""Probe readiness: can the timed ExLlamaV2 probe run here, and will it JIT-build first."""

from checks.probe.exllamav2_ready import CHECK as EXLLAMAV2_READY

PROBE_CHECKS = (EXLLAMAV2_READY,)
