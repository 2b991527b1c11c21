"""Gather live Facts. The slow torch child starts first and overlaps everything else."""

from __future__ import annotations

import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

from doctor.facts.children import stop_all
from doctor.facts.engines.build_cache import gather_build_cache
from doctor.facts.engines.installed import gather_engines
from doctor.facts.host.system import gather_host
from doctor.facts.nvml import gather_nvml
from doctor.facts.nvml.isolated import DEFAULT_TIMEOUT_S as DEFAULT_NVML_TIMEOUT_S
from doctor.facts.nvml.isolated import NvmlChild
from doctor.facts.python.environment import gather_nvcc, package_versions, relevant_env
from doctor.facts.python.torch_facts import TorchGatherer
from doctor.model.errors import Interrupted
from doctor.model.facts import Facts, HostFacts, NvccFacts, NvmlFacts, PythonFacts, TorchFacts
from doctor.model.unknown import Unknown


def gather_facts(torch_timeout_s: float = 20.0, fresh: bool = False, use_cache: bool = True,
                 nvml_module: Any = None, torch: TorchGatherer | None = None,
                 nvml_timeout_s: float = DEFAULT_NVML_TIMEOUT_S) -> Facts:
    """Never raises for a broken environment: each part reports what it could not read.

    The real NVML is read in a child with a deadline (doctor/facts/nvml/isolated.py); a fake `nvml_module`
    (tests) is read in this process.

    `torch` may be a gatherer the caller started earlier, so torch's slow import overlaps the
    caller's own start-up as well as the rest of the gathering.
    """
    got: dict[str, Any] = {}
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        torch = torch or TorchGatherer(timeout_s=torch_timeout_s, fresh=fresh, use_cache=use_cache)
        nvml_child = NvmlChild(nvml_timeout_s) if nvml_module is None else None  # native code: in a child with a deadline
        nvcc_future = pool.submit(gather_nvcc)
        got["nvml"] = nvml_child.collect() if nvml_child is not None else gather_nvml(nvml_module)
        got["packages"] = package_versions()
        got["host"] = gather_host()
        got["engines"] = gather_engines()
        got["nvcc"] = nvcc_future.result()
        got["torch"] = torch.result()
        got["exllamav2_build"] = gather_build_cache(got["torch"].cuda)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: stop every child, hand back what was read
        stop_all()
        read = partial_facts(got, f"not gathered: the run was interrupted ({_signal_name(exc)})")
        if isinstance(exc, Interrupted):
            exc.partial_facts = read
            raise
        raise Interrupted(signal.SIGINT, read) from exc  # a plain Ctrl-C carries what was read the same way
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return partial_facts(got, "")


def partial_facts(got: dict[str, Any], missing: str) -> Facts:
    """Facts from the parts read; a part not read is unknown with `missing` as the reason."""
    gap = Unknown(missing or "not gathered")
    python = PythonFacts(
        version=sys.version.split()[0],
        executable=sys.executable,
        packages=got.get("packages", {}),
        torch=got.get("torch") or TorchFacts(installed=False, reason=missing),
        nvcc=got.get("nvcc") or NvccFacts(path=gap, version=gap, cuda_home=gap, ninja=gap),
        env=relevant_env(),
        exllamav2_build=got.get("exllamav2_build"),
    )
    return Facts(
        gathered_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        nvml=got.get("nvml") or NvmlFacts(available=False, reason=missing), python=python,
        host=got.get("host") or HostFacts(), engines=got.get("engines"),
    )


def _signal_name(exc: BaseException) -> str:
    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name
