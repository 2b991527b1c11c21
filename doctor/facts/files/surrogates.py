"""Lone UTF-16 surrogates in JSON ("\\ud800" that json.loads keeps and no UTF-8 output can encode), replaced with
U+FFFD. Apart from replay.py so that reading a config.json does not load the report's model."""

from __future__ import annotations

import re
from typing import Any

ESCAPED_SURROGATE = re.compile(r"\\[uU][dD][89a-fA-F]")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(data: Any) -> Any:
    """`data` with each lone surrogate (a JSON "\\ud800" no UTF-8 output can encode) as U+FFFD; pairs were
    joined by json.loads already."""
    if isinstance(data, str):
        return LONE_SURROGATE.sub("\ufffd", data)
    if isinstance(data, list):
        return [without_lone_surrogates(v) for v in data]
    if isinstance(data, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in data.items()}
    return data
