"""A fact that could not be read carries the reason instead of a value.

Checks must never guess: a field is either a value or `Unknown("because ...")`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar, Union

from typing_extensions import TypeIs  # typing.TypeIs from Python 3.13; the doctor runs on 3.10+

T = TypeVar("T")


@dataclass(frozen=True)
class Unknown:
    reason: str

    def __bool__(self) -> bool:  # an unknown is never truthy, so `if fact:` is safe
        return False

    def __str__(self) -> str:
        return f"unknown ({self.reason})"


Maybe = Union[T, Unknown]


def known(value: T | Unknown | None) -> TypeIs[T]:
    """True when the fact holds a real value (None counts as unknown too); a type checker narrows on it."""
    return value is not None and not isinstance(value, Unknown)


def show(value: Any, unit: str = "") -> str:
    """Human text for a maybe-unknown value."""
    if not known(value):
        return str(value) if isinstance(value, Unknown) else "unknown"
    return f"{value}{unit}"
