"""What to paste to install the timed probe's engine on this machine: printed, never run.

Torch never comes from a package's dependencies: a plain `pip install exllamav2` on a machine without torch pulls
PyPI's default torch, a CUDA 13 build with no sm_70 kernel (source:
https://github.com/turboderp-org/exllamav2/blob/master/setup.py, whose install_requires names plain `torch`; PyPI's
default torch wheel is the CUDA build https://pytorch.org/get-started/locally/ lists first, CUDA 13 for torch 2.14).
So the machine's route comes first (torch from the index URL that has this card's kernels, a driver where it needs
one), then exllamav2 and tokenizers (tokenizers: needed, not declared) with the torch just chosen pinned, so pip
keeps it instead of replacing it. The install line itself is doctor.knowledge.messages.PROBE_ENGINE_INSTALL.
"""

from __future__ import annotations

import re

from checks.prescription.quote import route_lines
from doctor.knowledge.messages import PROBE_ENGINE_INSTALL
from doctor.model.prescription import Prescription

_TORCH_PIN = re.compile(r"\"(torch==[^\"]+)\"|'(torch==[^']+)'|\b(torch==\S+)")


def probe_install_commands(rx: Prescription | None, torch_version: str | None) -> list[str]:
    """The route (when this machine's torch does not fit), then exllamav2 + tokenizers keeping that torch."""
    lines = route_lines(rx.routes[0]) if rx is not None and rx.routes and _torch_problem(rx) else []
    pin = _route_torch(lines) or (f"torch=={torch_version}" if torch_version and not _torch_problem(rx) else None)
    if pin is None:  # no torch known to fit this card: say so rather than let pip pick one
        return ["# first a CUDA build of torch for this card: see cuda-pairing", PROBE_ENGINE_INSTALL]
    return lines + [f"# keeps torch {pin.split('==', 1)[1]}: exllamav2 alone would pull PyPI's default torch (CUDA 13)",
                    f'{PROBE_ENGINE_INSTALL} "{pin}"']


def _torch_problem(rx: Prescription | None) -> bool:
    return rx is not None and any(p.subject in ("torch", "driver") for p in rx.problems)


def _route_torch(lines: list[str]) -> str | None:
    for line in lines:
        if not line.startswith("#") and (m := _TORCH_PIN.search(line)):
            return next(g for g in m.groups() if g)
    return None
