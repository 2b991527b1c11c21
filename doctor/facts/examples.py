"""Where the recorded examples live (doctor/examples/*.json, package data): their names, in story order, and a
real path to one. Read through importlib.resources, so `demo` works the same from a wheel, pipx or uv tool as
from a checkout.
"""

from __future__ import annotations

from contextlib import contextmanager
from importlib import resources
from typing import TYPE_CHECKING, Iterator

from doctor.model.errors import ReplayError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable  # a pathlib.Path is one too (tests)

EXAMPLES: Traversable = resources.files("doctor") / "examples"
ORDER = ("seed-1-transformers-bnb", "seed-2-exl2-4.25bpw", "seed-3-q8-cache-8192", "seed-4-exl2-3.75bpw",
         "h200-synthetic-gptq")  # the reference story's journey first, then a real recording


def example_names(folder: Traversable = EXAMPLES) -> list[str]:
    found = {p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json")} if folder.is_dir() else set()
    return [n for n in ORDER if n in found] + sorted(found - set(ORDER))


@contextmanager
def example_file(name: str, folder: Traversable = EXAMPLES) -> Iterator[str]:
    """A real path to the example for as long as the block runs (a zipped install gets a temporary copy)."""
    entry = folder / f"{name}.json"
    if not entry.is_file():
        raise ReplayError(f"no example named {name!r}; known: {', '.join(example_names(folder)) or 'none'}")
    with resources.as_file(entry) as path:
        yield str(path)
