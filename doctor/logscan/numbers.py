"""Turn a signature's named groups into numbers, by the suffix of the group name (see doctor/knowledge/signatures.py)."""

from __future__ import annotations

import re

_UNITS = {"B": 1 / 2**20, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2}
_SIZE = re.compile(r"([\d.]+)\s*(?:([KMGT]?)i?B|bytes?)", re.IGNORECASE)


def size_to_mib(text: str) -> float | None:
    """'2.00 GiB' -> 2048.0; '38.12 MiB' -> 38.12; '448.00 KiB' -> 0.4375; '0 bytes' -> 0.0."""
    m = _SIZE.fullmatch(text.strip())
    if not m:
        return None
    return round(float(m.group(1)) * _UNITS[(m.group(2) or "B").upper()], 3)


def normalize_cc(text: str) -> str | None:
    """'sm_70', 'compute_70', '70', '7.0' -> '7.0'; 'sm_120' -> '12.0'."""
    raw = text.strip().lower()
    raw = raw.split("_", 1)[1] if "_" in raw else raw
    raw = raw.rstrip("af")
    if re.fullmatch(r"\d+\.\d+", raw):
        return raw
    if re.fullmatch(r"\d{2,3}", raw):
        return f"{raw[:-1]}.{raw[-1]}"
    return None


def cuda_from_int(text: str) -> str | None:
    """torch prints the driver's CUDA as an integer: '11040' -> '11.4', '12020' -> '12.2'."""
    if not text.strip().isdigit():
        return None
    value = int(text)
    return f"{value // 1000}.{(value % 1000) // 10}"


def convert(groups: dict[str, str | None]) -> dict[str, object]:
    """Named groups of one match -> the numbers shown and saved with it."""
    out: dict[str, object] = {}
    for name, value in groups.items():
        if value is None:
            continue
        if name.endswith("_mib"):
            out[name] = size_to_mib(value) if size_to_mib(value) is not None else value
        elif name.endswith("_cc"):
            out[name] = normalize_cc(value) or value
        elif name.endswith("_cudaint"):
            out[name[: -len("_cudaint")] + "_cuda"] = cuda_from_int(value) or value
        elif value.strip().isdigit():
            out[name] = int(value)
        else:
            out[name] = value.strip()
    return out
