"""Serving checks: an engine server's own counters over a watch window (watch --engine-url), beside NVML. They run
only where a server was watched (checks/registry.py)."""
