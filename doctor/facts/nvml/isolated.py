"""The NVML snapshot read in a child process with a deadline, as torch's facts are (doctor/facts/python/torch_facts.py).

A hang inside libnvidia-ml.so costs the deadline, a crash costs nothing but NVML's facts: either way the
parent writes its report with NVML unknown and the reason. The child starts early and is collected later, so
its start-up overlaps the rest of the gathering.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from doctor.facts.children import interrupts_held, reap, spawn, stop
from doctor.facts.nvml.child import MARKER
from doctor.model.facts import NvmlFacts
from doctor.model.serialize import LoadError, from_jsonable

DEFAULT_TIMEOUT_S = 15.0  # nvmlInit without the persistence daemon takes ~1 s per GPU on an 8-GPU host
OUTPUT_LIMIT = 4 << 20  # a snapshot of 64 GPUs is well under 1 MB; more is a lying library
CHECK_DRIVER = "run `nvidia-smi` and look in `sudo dmesg` for Xid errors"
# what a hang or a crash inside libnvidia-ml.so means, for the snapshot's child and the sampler's
HANG_CAUSE = "a call into libnvidia-ml.so hangs: a GPU in a bad state or a driver fault"
CRASH_CAUSE = "inside libnvidia-ml.so: a broken driver install, or a library that does not match the kernel module"


def child_env() -> dict[str, str]:
    """This environment, with this doctor's tree first on PYTHONPATH, for a child that runs `-m doctor...`."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _samples(n: int) -> str:
    return f"{n} sample" if n == 1 else f"{n} samples"


def stopped_answering(samples: int, waited_s: float, interrupted: bool = False) -> str:
    """Why a sampling window's NVML readings end early: the child's call did not come back."""
    waited = f"no answer for {waited_s:.1f} s when the run was interrupted" if interrupted else \
        f"no answer within {waited_s:g} s"
    return f"NVML stopped answering after {_samples(samples)}: {waited} ({HANG_CAUSE})"


def crashed_after(samples: int, returncode: int) -> str:
    """Why a sampling window's NVML readings end early: the child died inside NVML (or exited without its answer)."""
    if returncode == -signal.SIGKILL:  # sent from outside (the out-of-memory killer, a user): not NVML's doing
        return f"the NVML sampler was killed (SIGKILL) after {_samples(samples)}"
    if returncode < 0:
        return f"NVML crashed after {_samples(samples)} ({signal_name(-returncode)} {CRASH_CAUSE})"
    return f"the NVML sampler exited with status {returncode} after {_samples(samples)}, without its answer"


class NvmlChild:
    """A running NVML-snapshot child: start early, `collect()` later."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.timeout_s = timeout_s
        env = child_env()
        with interrupts_held():  # a signal during the start waits until the child is registered for stop_all()
            self.proc = spawn([sys.executable, "-m", "doctor.facts.nvml.child"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)

    def collect(self) -> NvmlFacts:
        """The child's facts; never raises: a hang, a crash or garbled output is NvmlFacts(available=False)."""
        try:
            out, _ = self.proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            stop(self.proc)
            return unavailable(f"NVML did not answer within {self.timeout_s:g} s ({HANG_CAUSE}); fix: {CHECK_DRIVER}; "
                               "a GPU reset or a reboot usually clears it")
        reap(self.proc)
        return parse(out[-OUTPUT_LIMIT:], self.proc.returncode)


def read_isolated(timeout_s: float = DEFAULT_TIMEOUT_S) -> NvmlFacts:
    """The NVML snapshot read in a child now, for a command that needs only the cards (never raises, never hangs
    past `timeout_s`)."""
    return NvmlChild(timeout_s).collect()


def parse(out: bytes, returncode: int) -> NvmlFacts:
    """NvmlFacts from the child's stdout and exit status."""
    if returncode < 0:
        name = signal_name(-returncode)
        return unavailable(f"NVML crashed the process reading it ({name} {CRASH_CAUSE}); fix: reinstall the NVIDIA "
                           f"driver or reboot after a driver update; {CHECK_DRIVER}")
    for line in reversed(out.splitlines()):
        if line.startswith(MARKER.encode()):
            try:
                facts = from_jsonable(NvmlFacts, json.loads(line[len(MARKER):]))
            except (ValueError, RecursionError, LoadError, TypeError):
                break
            if isinstance(facts, NvmlFacts):
                return facts
            break
    return unavailable(f"the NVML reader exited with status {returncode} without its facts; fix: {CHECK_DRIVER}")


def unavailable(reason: str) -> NvmlFacts:
    return NvmlFacts(available=False, reason=reason)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
