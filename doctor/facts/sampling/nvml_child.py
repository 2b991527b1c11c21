"""Runs in a child process: the sampler's NVML readings, one JSON line per request read on stdin.

    (at start, unasked)                                              -> {"ready": 1}
    open T   open NVML, read each GPU's limits and first counters   -> {"reason": "", "statics": {index: GpuSeries}}
    tick T   one sample of each GPU at T (the parent's clock)       -> {"samples": {index: GpuSample}, "meta": {...}}
    end T    the counters again, their deltas over the window       -> {"end": {index: GpuEnd}, "cpu_s": CPU}

`meta` carries a GPU's refused readings and PCIe source when they changed, so the parent has them even if a
later call never returns. libnvidia-ml.so can hang or segfault at any call: here that costs only this process;
the parent waits for each answer with a deadline (child_gpus.py). It exits on `end` or when stdin closes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, BinaryIO

from doctor.facts.sampling.local_gpus import LocalGpus
from doctor.model.serialize import to_jsonable


def serve(gpus: LocalGpus, requests: BinaryIO, replies: BinaryIO) -> None:
    """Answer requests until `end` or the end of input."""
    sent_meta: dict[int, tuple[int, str]] = {}
    cpu0 = time.process_time()
    replies.write(b'{"ready":1}\n')  # loaded: from here on the parent's deadline is NVML's
    replies.flush()
    for raw in requests:
        command, _, arg = raw.decode("ascii", "replace").strip().partition(" ")
        t_s = float(arg)
        reply: dict[str, Any]
        if command == "open":
            reason = gpus.open(t_s)
            cpu0 = time.process_time()
            reply = {"reason": reason, "statics": {str(i): to_jsonable(s) for i, s in gpus.statics.items()}}
        elif command == "tick":
            samples = gpus.tick(t_s)
            meta = {}
            for i in samples:
                unavailable, source = gpus.unavailable(i), gpus.pcie_source(i)
                if sent_meta.get(i) != (len(unavailable), source):
                    sent_meta[i] = (len(unavailable), source)
                    meta[str(i)] = {"unavailable": unavailable, "pcie_source": source}
            reply = {"samples": {str(i): to_jsonable(s) for i, s in samples.items()}, "meta": meta}
        elif command == "end":
            reply = {"end": {str(i): to_jsonable(e) for i, e in gpus.finish(t_s).items()},
                     "cpu_s": round(time.process_time() - cpu0, 4)}
        else:
            raise SystemExit(f"unknown request {command!r}")
        replies.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        replies.flush()
        if command == "end" or (command == "open" and reply["reason"]):
            return


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m doctor.facts.sampling.nvml_child")
    p.add_argument("--gpus", required=True, help="comma-separated NVML indices")
    args = p.parse_args(argv)
    indices = [int(i) for i in args.gpus.split(",") if i]
    replies = os.fdopen(os.dup(1), "wb")  # the answers; fd 1 itself goes to /dev/null, so nothing the driver
    devnull = os.open(os.devnull, os.O_WRONLY)  # library prints can garble them
    os.dup2(devnull, 1)
    gpus = LocalGpus(indices)
    try:
        serve(gpus, sys.stdin.buffer, replies)
    finally:
        gpus.close()


if __name__ == "__main__":
    main()
