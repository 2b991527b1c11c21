"""The embedded model catalogue, as data: popular models' config.json as published, and their common quantized
versions, each with where it was read and when. Read by doctor/facts/catalogue/ (the file) and handed to the plan;
the pure layers only see these types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class CatalogueQuant:
    """One quantized version of a catalogued model: a GGUF file (or split set) or an EXL2 branch."""

    fmt: str  # gguf | exl2 | gptq | awq
    repo: str  # the Hub repo that holds it
    source: str  # where this row was read (a URL)
    checked: str  # the date it was read or last checked (YYYY-MM-DD)
    filename: str | None = None  # GGUF: the file (the first part of a split set)
    gguf_type: str | None = None  # GGUF: Q4_K_M ...
    revision: str | None = None  # EXL2: the branch ("4.0bpw")
    bpw: float | None = None  # EXL2: declared; GPTQ/AWQ: the bits
    bytes: int | None = None  # the download's size where a source gives it; None: unknown (never guessed)

    @property
    def label(self) -> str:
        if self.fmt == "gguf":
            return f"GGUF {self.gguf_type}"
        if self.fmt == "exl2" and self.bpw:
            return f"EXL2 {self.bpw:g} bpw"
        return f"{self.fmt.upper()} {self.bpw:g}-bit" if self.bpw else self.fmt.upper()


@dataclass(frozen=True)
class CatalogueEntry:
    """One model: its Hub id, its config.json as published (fields the source did not give are absent) and its
    quantized versions. `ollama`: the model's name in Ollama's library, where a source gives one."""

    repo: str  # Hub id, as the Hub spells it
    family: str  # "Qwen2.5", "Llama 3.1", ...
    source: str  # where the config was read (a URL)
    checked: str  # the date it was read (YYYY-MM-DD)
    config: Mapping[str, Any] = field(compare=False, hash=False, repr=False)
    quants: tuple[CatalogueQuant, ...] = ()
    ollama: str | None = None  # "qwen2.5:32b"
    ollama_source: str | None = None  # where that name was read
    params: int | None = None  # total parameters where a source states them (safetensors total)
    license_note: str | None = None  # the source's licence, when it is not the model's own page

    @property
    def is_moe(self) -> bool:
        inner = self.config.get("text_config")
        text: Mapping[str, Any] = inner if isinstance(inner, dict) else self.config
        experts = next((text.get(k) for k in ("num_experts", "num_local_experts", "n_routed_experts")
                        if isinstance(text.get(k), int)), None)
        return bool(experts and experts > 1)


@dataclass(frozen=True)
class Catalogue:
    """The whole catalogue: its version (the date it was assembled) and its entries, in the file's order."""

    version: str
    entries: tuple[CatalogueEntry, ...]
    sources: tuple[str, ...] = ()  # the public sources the entries were read from, with their licences
