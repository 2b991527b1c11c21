"""GPTQ act-order (desc_act), read from a g_idx tensor: the one test, used by the model-directory facts and the probe.

g_idx gives each input row its quantization group. Quantized in order, it is sorted (0,0,..,1,1,..); quantized in
activation order, the rows were permuted, so somewhere it steps down. Only the header and that one small tensor are
read, never the weights.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Sequence

from doctor.facts.modeldir.safetensors_header import HeaderError, SafetensorsHeader, read_header, read_tensor_bytes
from doctor.model.unknown import Maybe, Unknown


def is_act_order(g_idx: Sequence[int]) -> bool:
    """True when g_idx is not sorted: the rows were quantized in activation order (desc_act)."""
    return any(b < a for a, b in zip(g_idx, g_idx[1:]))


def act_order_of(header: SafetensorsHeader, name: str) -> tuple[Maybe[bool], int]:
    """Act-order from the g_idx tensor `name` of one shard, and the bytes read for it."""
    raw = read_tensor_bytes(header, name)
    if raw is None or len(raw) % 4:
        return Unknown(f"{name} not readable or too large to inspect"), 0
    return is_act_order(struct.unpack(f"<{len(raw) // 4}i", raw)), len(raw)


def act_order_in(model_dir: str | Path, name: str) -> Maybe[bool]:
    """Act-order from the g_idx tensor `name`, in whichever *.safetensors shard of the folder holds it."""
    for shard in sorted(Path(model_dir).glob("*.safetensors")):
        try:
            header = read_header(shard)
        except HeaderError as exc:
            return Unknown(f"g_idx unreadable: {exc}")
        if any(t.name == name for t in header.tensors):
            return act_order_of(header, name)[0]
    return Unknown("g_idx not found")
