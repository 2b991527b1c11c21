"""Gather live Facts. The slow torch child starts first and overlaps everything else."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

from doctor.facts.host import gather_host
from doctor.facts.nvml import gather_nvml
from doctor.facts.python_env import gather_nvcc, package_versions, relevant_env
from doctor.facts.torch_facts import TorchGatherer
from doctor.model.facts import Facts, PythonFacts
from doctor.facts.build_cache import gather_build_cache


def gather_facts(torch_timeout_s: float = 20.0, fresh: bool = False, use_cache: bool = True,
                 nvml_module: Any = None, torch: TorchGatherer | None = None) -> Facts:
    """Never raises for a broken environment: each part reports what it could not read.

    `torch` may be a gatherer the caller started earlier, so torch's slow import overlaps the
    caller's own start-up as well as the rest of the gathering.
    """
    torch = torch or TorchGatherer(timeout_s=torch_timeout_s, fresh=fresh, use_cache=use_cache)
    with ThreadPoolExecutor(max_workers=2) as pool:
        nvcc_future = pool.submit(gather_nvcc)
        nvml = gather_nvml(nvml_module)
        packages = package_versions()
        host = gather_host()
        nvcc = nvcc_future.result()
    torch_facts = torch.result()
    python = PythonFacts(
        version=sys.version.split()[0],
        executable=sys.executable,
        packages=packages,
        torch=torch_facts,
        nvcc=nvcc,
        env=relevant_env(),
        exllamav2_build=gather_build_cache(torch_facts.cuda),
    )
    return Facts(
        gathered_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        nvml=nvml, python=python, host=host,
    )
