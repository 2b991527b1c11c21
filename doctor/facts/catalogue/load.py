"""Reading models.json: the raw entries indexed by their lower-cased Hub id (and Ollama name) on the first lookup;
an entry is built only when asked (`lookup`), or all of them (`entries`)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from doctor.facts.modeldir.config import ConfigError, parse_config
from doctor.knowledge.quant_quality import gguf_bpw
from doctor.model.catalogue import Catalogue, CatalogueEntry, CatalogueQuant
from doctor.model.model_dir import ModelConfig
from doctor.model.quant_plan import QuantCandidate

CATALOGUE_FILE = Path(__file__).with_name("models.json")
FORMAT = "v100-doctor/catalogue/1"


class CatalogueBroken(Exception):
    """models.json cannot be read: a packaging fault, never the user's input."""


@lru_cache(maxsize=1)
def _raw() -> dict[str, Any]:
    try:
        data = json.loads(CATALOGUE_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogueBroken(f"the embedded model catalogue ({CATALOGUE_FILE}) cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
        raise CatalogueBroken(f"the embedded model catalogue ({CATALOGUE_FILE}) is not {FORMAT}")
    return data


@lru_cache(maxsize=1)
def _index() -> dict[str, dict[str, Any]]:
    """Lower-cased Hub id and Ollama name -> the raw entry (Hub ids resolve whatever their case)."""
    out: dict[str, dict[str, Any]] = {}
    for raw in _raw()["entries"]:
        for key in (raw["repo"], raw.get("ollama")):
            if isinstance(key, str):
                out.setdefault(key.lower(), raw)
    return out


def _quant(q: dict[str, Any], entry: dict[str, Any]) -> CatalogueQuant:
    return CatalogueQuant(fmt=q["fmt"], repo=q["repo"], source=q.get("source", entry["source"]),
                          checked=q.get("checked", entry["checked"]), filename=q.get("filename"),
                          gguf_type=q.get("gguf_type"), revision=q.get("revision"), bpw=q.get("bpw"),
                          bytes=q.get("bytes"))


def _entry(raw: dict[str, Any]) -> CatalogueEntry:
    return CatalogueEntry(repo=raw["repo"], family=raw["family"], source=raw["source"], checked=raw["checked"],
                          config=raw["config"], quants=tuple(_quant(q, raw) for q in raw.get("quants", ())),
                          ollama=raw.get("ollama"), ollama_source=raw.get("ollama_source"), params=raw.get("params"), license_note=raw.get("license_note"))


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The whole catalogue, every entry built (for `plan --best` and the tests)."""
    data = _raw()
    return Catalogue(version=data["version"], entries=tuple(_entry(r) for r in data["entries"]),
                     sources=tuple(f"{s['name']}: {s['url']} ({s['licence']})" for s in data.get("sources", ())))


def entries() -> tuple[CatalogueEntry, ...]:
    """Every catalogued model, in the file's order (most downloaded first)."""
    return catalogue().entries


def lookup(name: str) -> CatalogueEntry | None:
    """The entry for a Hub id (any case; a revision after @ is not catalogued) or an Ollama name; None: not in it."""
    if "@" in name:
        return None
    raw = _index().get(name.strip().lower())
    return _entry(raw) if raw is not None else None


def model_config(entry: CatalogueEntry) -> ModelConfig:
    """The entry's shape, parsed as a config.json on disk would be; ConfigError when it is not a model's config."""
    return parse_config(dict(entry.config))


def candidates(entry: CatalogueEntry) -> tuple[QuantCandidate, ...]:
    """The entry's quantized versions as the plan's candidates (found="catalogue": on the Hub, as of `checked`)."""
    out = []
    for q in entry.quants:
        bpw = q.bpw if q.bpw else (gguf_bpw(q.gguf_type) if q.gguf_type else None)
        out.append(QuantCandidate(q.fmt, q.label, q.repo, revision=q.revision, filename=q.filename, bpw=bpw,
                                  gguf_type=q.gguf_type, group_size=128 if q.fmt in ("gptq", "awq") else None,
                                  download_bytes=q.bytes, found="catalogue"))
    return tuple(out)


def provenance(entry: CatalogueEntry) -> str:
    """One line: where the shape and the versions came from."""
    version = _raw()["version"]
    quants = f"{len(entry.quants)} quantized versions" if entry.quants else "no quantized versions"
    return (f"config.json and {quants} from the embedded catalogue (version {version}; config read {entry.checked} "
            f"from {entry.source}); the Hub was not asked")


__all__ = ["CATALOGUE_FILE", "CatalogueBroken", "ConfigError", "catalogue", "candidates", "entries", "lookup",
           "model_config", "provenance"]
