"""Dataclasses <-> JSON-able dicts, so Facts and Reports can be saved and replayed.

Unknown values travel as {"unknown": "reason"}. Loading is strict about types it
knows and tolerant of extra keys, so an older doctor can read a newer minor report.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from functools import lru_cache
from typing import Any, ClassVar, Protocol, TypeGuard, Union, get_args, get_origin

from doctor.model.unknown import Unknown


class LoadError(ValueError):
    """A saved document does not have the shape this doctor expects."""


class WireText(Protocol):
    """A typed value kept as one string on the wire (model/source.py Provenance)."""

    WIRE_TEXT: ClassVar[bool]

    def to_wire(self) -> str: ...

    @classmethod
    def from_wire(cls, text: str) -> WireText: ...


def _is_wire_text(tp: object) -> TypeGuard[type[WireText]]:
    return isinstance(tp, type) and bool(getattr(tp, "WIRE_TEXT", False))


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, Unknown):
        return {"unknown": obj.reason}
    if _is_wire_text(type(obj)):
        return obj.to_wire()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "value") and type(obj).__module__ != "builtins" and isinstance(obj.value, (str, int)):
        return obj.value  # enums
    return obj


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any, where: str = "$") -> Any:
    """Rebuild a value of type `tp` from JSON data; raises LoadError with the path on a mismatch."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if isinstance(data, dict) and set(data) == {"unknown"} and Unknown in args:
            return Unknown(str(data["unknown"]))
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg in (Unknown, type(None)):
                continue
            try:
                return from_jsonable(arg, data, where)
            except LoadError as exc:
                errors.append(str(exc))
        raise LoadError(errors[0] if errors else f"{where}: unexpected value {data!r}")
    if tp is Any:
        return data
    if _is_wire_text(tp):
        if isinstance(data, str):
            return tp.from_wire(data)
        raise LoadError(f"{where}: expected text, got {data!r}")
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(data, list):
            raise LoadError(f"{where}: expected a list, got {type(data).__name__}")
        args = get_args(tp)
        item = args[0] if args else Any
        return tuple(from_jsonable(item, v, f"{where}[{i}]") for i, v in enumerate(data))
    if origin is dict or tp is dict:
        if not isinstance(data, dict):
            raise LoadError(f"{where}: expected an object, got {type(data).__name__}")
        args = get_args(tp)
        val = args[1] if len(args) == 2 else Any
        return {k: from_jsonable(val, v, f"{where}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise LoadError(f"{where}: expected an object, got {type(data).__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in data:
                kwargs[f.name] = from_jsonable(hints[f.name], data[f.name], f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise LoadError(f"{where}: missing field '{f.name}'")
        return tp(**kwargs)
    if isinstance(tp, type) and issubclass(tp, Unknown):
        if isinstance(data, dict) and "unknown" in data:
            return Unknown(str(data["unknown"]))
        raise LoadError(f"{where}: expected {{'unknown': reason}}")
    if tp is float:
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            try:
                return float(data)
            except OverflowError:  # a 400-digit integer: infinite as a float; scrub() makes it unknown
                return float("inf") if data > 0 else float("-inf")
        raise LoadError(f"{where}: expected a number, got {data!r}")
    if tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            return data
        raise LoadError(f"{where}: expected an integer, got {data!r}")
    if tp is bool:
        if isinstance(data, bool):
            return data
        raise LoadError(f"{where}: expected true/false, got {data!r}")
    if tp is str:
        if isinstance(data, str):
            return data
        raise LoadError(f"{where}: expected text, got {data!r}")
    if isinstance(tp, type) and hasattr(tp, "__members__"):  # Enum
        try:
            return tp(data)
        except ValueError as exc:
            raise LoadError(f"{where}: {exc}") from None
    return data


def undecodable_escaped(text: str) -> str:
    """JSON text with the bytes a non-UTF-8 path smuggled in (lone surrogates) written as a visible \\xFF,
    so the document stays valid UTF-8 JSON; the original bytes are not recoverable from it, and it says so."""
    return re.sub("[\udc80-\udcff]", lambda m: f"\\\\x{ord(m.group()) - 0xDC00:02x}", text)


def finite(data: Any) -> Any:
    """JSON data with every float that is not finite (NaN, Infinity) as null: unknown, not a number."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def strict_json(data: Any, **kwargs: Any) -> str:
    """Every JSON the doctor writes for a reader: strict JSON (RFC 8259). json.dumps writes NaN and Infinity by
    default, which no strict parser (jq, JavaScript, Go) reads; numbers read as input are checked where they enter
    (plausible.py), and whatever still is not finite is written as null."""
    return json.dumps(finite(data), allow_nan=False, **kwargs)
