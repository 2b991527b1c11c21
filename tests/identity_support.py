"""A machine fixture with a planted identity: hostname, user name, home path, GPU serial and UUID, a MAC address
and a machine-id that no report output may carry unless --no-redact is given."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import MACHINES

HOSTNAME, USER = "plantedhost-4471", "plantuser"
HOME = f"/home/{USER}"
SERIAL, UUID = "1323920077777", "GPU-5e2f9a1c-7b3d-4e8f-9a0b-1c2d3e4f5a6b"
MAC, MACHINE_ID = "52:54:00:12:34:56", "machine-id=4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"
PLANTED = (HOSTNAME, USER, HOME, SERIAL, "5e2f9a1c", "52:54:00:12", "4f1c2d3e4f5a")


def planted_fixture(tmp_path: Path, name: str = "v100-torch-2.11-cu130.json") -> Path:
    """NAME from fixtures/machines with this identity written into its facts; returns the new file."""
    doc = json.loads((MACHINES / name).read_text())
    facts = doc["facts"]
    facts["host"]["hostname"] = HOSTNAME
    facts["python"]["executable"] = f"{HOME}/venvs/llm/bin/python"
    facts["python"]["env"]["CUDA_VISIBLE_DEVICES"] = UUID
    facts["python"]["env"]["HF_HOME"] = f"{HOME}/.cache/huggingface"
    for gpu in facts["nvml"]["gpus"][:1]:  # a machine without NVML has none: the env's UUID stays planted
        gpu["serial"], gpu["uuid"] = SERIAL, UUID
    facts["python"]["torch"].setdefault("warnings", []).append(f"host {HOSTNAME} nic {MAC} {MACHINE_ID}")
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(doc))
    return path


def leaked(text: str) -> list[str]:
    return [value for value in PLANTED if value in text]
