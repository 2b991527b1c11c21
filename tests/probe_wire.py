"""A probe as its runner relays it, for the tests of the panels and the TUI: the JSON lines of protocol 1
(doctor/probe/protocol.py) with NVML readings between, and the typed events a screen gets from them."""

from __future__ import annotations

from doctor.probe.protocol import screen_events

# A probe as the runner relays it (doctor/probe/protocol.py, protocol 1), with NVML readings between.
WIRE = [
    {"event": "phase", "phase": "start", "message": "probe worker started", "total": None, "pid": 4242},
    {"event": "phase", "phase": "build", "message": "JIT-building ExLlamaV2's CUDA extension", "total": 47},
    {"event": "progress", "phase": "build", "done": 47, "total": 47, "unit": "objects", "message": "47 of 47 units"},
    {"event": "phase", "phase": "load", "message": "loading", "total": None},
    {"event": "progress", "phase": "load", "done": 20, "total": 40, "unit": "modules", "message": ""},
    {"event": "phase", "phase": "warmup", "message": "warm-up: 256 decode tokens", "total": 256},
    {"event": "sample", "phase": "warmup", "tok_s": 30.5, "pass": 1},
    {"event": "gpu", "mem_clock_mhz": 877, "temperature_c": 61, "pcie_rx_mbs": 12.0},
    {"event": "sample", "phase": "warmup", "tok_s": 58.0, "pass": 1},
    {"event": "phase", "phase": "decode", "message": "timed decode: 3 runs of 128 tokens (pass 1)", "total": 384},
    {"event": "sample", "phase": "decode", "run": 1, "tokens": 128, "tok_s": 63.8, "cpu_wall": 1.0},
    {"event": "progress", "phase": "decode", "done": 128, "total": 384, "unit": "tokens"},
    {"event": "gpu", "mem_clock_mhz": 877, "temperature_c": 64, "pcie_rx_mbs": 9.5},
]
EVENTS = [event for wire in WIRE for event in screen_events(wire)]
