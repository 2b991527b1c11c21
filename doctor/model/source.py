"""Where a run's facts come from, as types: the Source a run is asked for, and the Provenance a report keeps.

A Source is what the user chose (this machine, a saved file, a bundled example, a card to plan for); it is
resolved once, in gathering (doctor/facts/source.py). A Provenance is what a report says about where its facts
came from. On the wire (report JSON, schema v100-doctor/report/1) it stays one string: "live", "replay:FILE" or
"example:NAME"; `Provenance.to_wire`/`from_wire` are the only places that string is written or read.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar


# ---- what a run is asked to look at --------------------------------------------------------------------------
@dataclass(frozen=True)
class ThisMachine:
    """Gather this machine's facts now."""


@dataclass(frozen=True)
class SavedFile:
    """A saved report, facts fixture or ticket bundle: today's checks on its facts, its probe kept as recorded."""

    path: str


@dataclass(frozen=True)
class BundledExample:
    """A recorded example shipped with the doctor (doctor/examples/NAME.json), by name."""

    name: str
    folder: object = None  # a Traversable folder of examples; None: the package's own


@dataclass(frozen=True)
class TargetCard:
    """Plan for a card this machine does not have (--target-gpu KEY): this host's facts, the card's from the
    knowledge base."""

    key: str


Source = ThisMachine | SavedFile | BundledExample | TargetCard


# ---- where a report's facts came from ------------------------------------------------------------------------
class Origin(Enum):
    LIVE = "live"  # this machine, now (with or without --target-gpu)
    REPLAY = "replay"  # facts (and a probe, if any) recorded in a saved file
    EXAMPLE = "example"  # a recorded example: never this machine


@dataclass(frozen=True)
class Provenance:
    WIRE_TEXT: ClassVar[bool] = True  # serialised as one string (doctor/model/serialize.py): to_wire / from_wire

    origin: Origin = Origin.LIVE
    name: str = ""  # REPLAY: the file as given; EXAMPLE: the example's name; LIVE: empty

    @property
    def recorded(self) -> bool:
        """The facts (and any probe) were recorded elsewhere: not this machine, now."""
        return self.origin is not Origin.LIVE

    @property
    def file_name(self) -> str:
        """The last part of a replayed file's path (what a narrow banner shows)."""
        return self.name.rsplit("/", 1)[-1]

    def to_wire(self) -> str:
        return self.origin.value if self.origin is Origin.LIVE else f"{self.origin.value}:{self.name}"

    @classmethod
    def from_wire(cls, text: str) -> Provenance:
        """The report's `source` string, read once at load; an unknown form is kept as a replay of that name."""
        kind, sep, name = text.partition(":")
        if not sep:
            return cls() if text in ("", "live") else cls(Origin.REPLAY, text)
        try:
            return cls(Origin(kind), name) if kind != "live" else cls()
        except ValueError:
            return cls(Origin.REPLAY, text)


LIVE = Provenance()


def replayed(path: str) -> Provenance:
    return Provenance(Origin.REPLAY, path)


def example(name: str) -> Provenance:
    return Provenance(Origin.EXAMPLE, name)
