"""`v100-doctor plan MODEL`: the model's shape and its quantized versions, from the Hugging Face Hub or its cache.

MODEL is a Hub id (org/name[@revision], a base model or a quantized repo), a local model directory, or a
config.json. For a base model the Hub's own link is used: repos that declare it as their base
(`base_model:quantized:ORG/NAME`, https://huggingface.co/docs/hub/model-cards#specifying-a-base-model), each
sorted by format from its tags and name: EXL2 repos with one branch per bpw (list_repo_refs), GGUF repos with one
file per type (list_repo_tree, sizes included), GPTQ/AWQ repos. Offline (HF_HUB_OFFLINE=1), or when the Hub
cannot be reached, the cache is scanned for repos named after the model instead, and the plan says so.
Only config.json is ever downloaded, into a temporary folder; no weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from doctor.facts import catalogue
from doctor.facts.hub.model_id import HubId, _why, config_command, fetch_config_once, hub_id, offline
from doctor.facts.hub.quiet import hub_quiet
from doctor.facts.modeldir.config import ConfigError, load_config_json, parse_config
from doctor.facts.modeldir.gguf_header import is_gguf, read_gguf
from doctor.model.errors import UsageError
from doctor.model.model_dir import ModelConfig
from doctor.model.quant_plan import QuantCandidate

if TYPE_CHECKING:
    from huggingface_hub import HfApi

_BPW = re.compile(r"(?<![\d.])(\d+(?:[._]\d+)?)\s*(?:bpw|b)?$", re.IGNORECASE)
_GGUF_TYPE = re.compile(r"(?<![A-Za-z0-9])(I?Q\d_[A-Z0-9]+(?:_[A-Z])?|Q\d_\d|BF16|F16)(?![A-Za-z0-9])", re.IGNORECASE)
_QUANT_METHODS = ("exl2", "gptq", "awq")


@dataclass(frozen=True)
class Discovered:
    model: str  # as the plan names it
    base_repo: str | None  # the Hub repo whose shape is planned
    config: ModelConfig
    candidates: tuple[QuantCandidate, ...]
    how: str  # one line: where the shape and the versions came from
    notes: tuple[str, ...] = ()


def discover(text: str) -> Discovered:
    """The shape and versions of MODEL; UsageError (exit 3) with one line when it cannot be read."""
    path = Path(text).expanduser()
    if path.exists():
        return _local(path)
    entry = catalogue.lookup(text)
    if entry is not None:
        return _catalogued(entry)
    ident = hub_id(text)
    if ident is None:
        raise UsageError(f"{text}: neither a local folder or config.json, a Hugging Face id (org/name[@revision]) nor "
                         "a model in the embedded catalogue")
    return _hub(ident)


def _catalogued(entry: catalogue.CatalogueEntry) -> Discovered:
    """A model in the embedded catalogue: its config and versions as catalogued, without the Hub or its library."""
    from doctor.plan.build import standard_candidates  # lazy: the plan loads only for a catalogued model

    config = _config_from(dict(entry.config), f"{entry.repo} (catalogue)")
    listed = catalogue.candidates(entry)
    formats = {c.fmt for c in listed}
    made = tuple(c for c in standard_candidates() if c.fmt not in formats)
    how = catalogue.provenance(entry) + (f"; {', '.join(sorted({c.fmt.upper() for c in made}))} versions as made with "
                                         "the engines' converters" if made else "")
    return Discovered(entry.repo, entry.repo, config, listed + made, how)


def _config_from(data: dict, where: str) -> ModelConfig:
    try:
        return parse_config(data)
    except ConfigError as exc:
        raise UsageError(f"{where}: config.json: {exc}") from None


def _load(path: Path, where: str) -> dict:
    try:
        return load_config_json(path)
    except ConfigError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _own_candidate(data: dict, repo: str | None, revision: str | None, found: str, size: int | None) -> QuantCandidate | None:
    """The version a quantized folder or repo is itself (its config.json's quantization_config)."""
    q = data.get("quantization_config") or {}
    method = str(q.get("quant_method", "")).lower() if isinstance(q, dict) else ""
    if method not in _QUANT_METHODS:
        return None
    bits = q.get("bits")
    bpw = float(bits) if isinstance(bits, (int, float)) and not isinstance(bits, bool) else None
    group = q.get("group_size") if isinstance(q.get("group_size"), int) else None
    label = f"{method.upper()} {bpw:g} bpw" if method == "exl2" and bpw else f"{method.upper()} {bits}-bit"
    return QuantCandidate(method, label, repo, revision=revision, bpw=bpw, group_size=group, download_bytes=size,
                          found=found)


def _gguf_file(path: Path) -> Discovered:
    """A .gguf file on disk: its shape and its one version from the header alone (the tensor infos give the
    weights' bytes; no tensor data is read), so a GGUF already downloaded or made locally is planned as it is."""
    g = read_gguf(path)
    if g.problem or g.shape is None or g.weights is None:
        raise UsageError(f"{path}: {g.problem or 'the GGUF header does not give the model its shape'}")
    s = g.shape
    data = {"model_type": s.architecture, "num_hidden_layers": s.n_layer, "hidden_size": s.n_embd,
            "intermediate_size": s.n_ff, "num_attention_heads": s.n_head, "num_key_value_heads": s.n_head_kv,
            "head_dim": s.head_dim_k, "vocab_size": s.n_vocab, "tie_word_embeddings": g.weights.tied_output}
    if s.context_length:
        data["max_position_embeddings"] = s.context_length
    if s.n_expert > 1:  # a MoE: its experts from the header's expert_* keys (doctor/knowledge/arithmetic/model_shape.py)
        data.update(num_experts=s.n_expert, num_experts_per_tok=s.n_expert_used or 1,
                    moe_intermediate_size=s.n_ff_exp or s.n_ff, first_k_dense_replace=s.n_leading_dense,
                    shared_expert_intermediate_size=s.n_ff_shexp or s.n_expert_shared * (s.n_ff_exp or s.n_ff))
    config = _config_from(data, str(path))
    kind = g.file_type if isinstance(g.file_type, str) else gguf_type_of(path.name)
    own = QuantCandidate("gguf", f"GGUF {kind or path.name}", None, filename=str(path), gguf_type=kind,
                         download_bytes=g.weights.total_bytes, found="local")
    return Discovered(str(path), None, config, (own,), f"shape and version from the GGUF header of {path}")


def _local(path: Path) -> Discovered:
    if path.is_file() and is_gguf(path):
        return _gguf_file(path)
    config_file = path / "config.json" if path.is_dir() else path
    if path.is_dir() and not config_file.is_file():
        raise UsageError(f"{path}: no config.json in that folder; pass the model's folder or its config.json")
    data = _load(config_file, str(path))
    config = _config_from(data, str(path))
    size = None
    if path.is_dir():
        size = sum(f.stat().st_size for f in path.iterdir() if f.suffix == ".safetensors") or None
    own = _own_candidate(data, None, None, "local" if size else "config", size)
    if own:
        own = replace(own, filename=str(path if path.is_dir() else path.parent))
    cands = (own,) if own else ()
    how = f"shape from {config_file}" + ("; planned for that version" if own else "; no quantized version on disk")
    return Discovered(str(path), None, config, cands, how)


def _hub(ident: HubId) -> Discovered:
    import huggingface_hub as hf  # lazy: huggingface_hub loads only for a Hub id

    data = _hub_config(ident)
    config = _config_from(data, ident.label)
    own = _own_candidate(data, ident.repo, ident.revision, "hub", None)
    notes: list[str] = []
    if offline():
        cands, how = _from_cache(ident), "HF_HUB_OFFLINE is set: versions found in the Hugging Face cache only"
    else:
        try:
            api = hf.HfApi()
            with hub_quiet():  # huggingface_hub's retry lines stay off the terminal; one line of ours instead
                cands = _listed(api, ident, own)
            how = f"versions listed by the Hub ({hf.constants.ENDPOINT})"
        except Exception as exc:  # noqa: BLE001 - huggingface_hub's HTTP errors: fall back to the cache, and say why
            cands = _from_cache(ident)
            how = f"the Hub could not list the versions ({_why(exc)}): versions found in the cache only"
    if own and not any(c.repo == own.repo and c.revision == own.revision for c in cands):
        cands = (own, *cands)
    return Discovered(ident.label, ident.repo, config, tuple(cands), how, tuple(notes))


def _listed(api: HfApi, ident: HubId, own: QuantCandidate | None) -> tuple[QuantCandidate, ...]:
    if own and own.fmt == "exl2":  # an EXL2 repo: its other bpw branches are the versions
        return tuple(_exl2_versions(api, ident.repo))
    return tuple(_quantized_of(api, ident.repo))


def _hub_config(ident: HubId) -> dict:
    from huggingface_hub import try_to_load_from_cache  # lazy: huggingface_hub loads only for a Hub id

    cached = try_to_load_from_cache(ident.repo, "config.json", revision=ident.revision)
    if isinstance(cached, str):
        return _load(Path(cached), ident.label)
    if offline():
        raise UsageError(f"{ident.label}: not in the catalogue, its config.json is not in the Hugging Face cache, and "
                         f"HF_HUB_OFFLINE is set; fetch the config alone once online ({config_command(ident)}, a few "
                         "KB) or pass a config.json")
    return fetch_config_once(ident)


def fmt_of(repo: str, tags: list[str] | None) -> str | None:
    """exl2 | gguf | gptq | awq from a repo's tags, else its name."""
    words = {t.lower() for t in tags or ()}
    name = repo.lower()
    for fmt in ("exl2", "gguf", "gptq", "awq"):
        if fmt in words or fmt in name:
            return fmt
    return None


def bpw_of(branch: str) -> float | None:
    """'3.75bpw', '3_75', '4.0' -> bits per weight; 'main' -> None."""
    m = _BPW.search(branch.strip())
    if not m:
        return None
    value = float(m.group(1).replace("_", "."))
    return value if 1.0 <= value <= 16.0 else None


def gguf_type_of(filename: str) -> str | None:
    m = _GGUF_TYPE.search(Path(filename).name)
    return m.group(1).upper() if m else None


def _quantized_of(api: HfApi, repo: str) -> Iterator[QuantCandidate]:
    for info in api.list_models(filter=f"base_model:quantized:{repo}", limit=200):
        fmt = fmt_of(info.id, getattr(info, "tags", None))
        if fmt == "exl2":
            yield from _exl2_versions(api, info.id)
        elif fmt == "gguf":
            yield from _gguf_versions(api, info.id)
        elif fmt in ("gptq", "awq"):
            files = [f for f in api.list_repo_tree(info.id, recursive=True) if hasattr(f, "size")]
            size = sum(f.size for f in files if f.path.endswith(".safetensors")) or None
            bits = 8 if re.search(r"(?i)(int8|8bit|w8)", info.id) else 4
            yield QuantCandidate(fmt, f"{fmt.upper()} {bits}-bit", info.id, bpw=float(bits), group_size=128,
                                 download_bytes=size)


def _exl2_versions(api: HfApi, repo: str) -> Iterator[QuantCandidate]:
    refs = api.list_repo_refs(repo)
    for branch in sorted(refs.branches, key=lambda b: bpw_of(b.name) or 0):
        bpw = bpw_of(branch.name)
        if bpw is None:
            continue
        files = [f for f in api.list_repo_tree(repo, revision=branch.name, recursive=True) if hasattr(f, "size")]
        size = sum(f.size for f in files if f.path.endswith(".safetensors")) or None
        yield QuantCandidate("exl2", f"EXL2 {bpw:g} bpw", repo, revision=branch.name, bpw=bpw, download_bytes=size)


def _gguf_versions(api: HfApi, repo: str) -> Iterator[QuantCandidate]:
    by_type: dict[str, tuple[str, int]] = {}  # type -> (first file, total size): a split GGUF is one version
    for f in api.list_repo_tree(repo, recursive=True):
        path = getattr(f, "path", "")
        kind = gguf_type_of(path) if path.endswith(".gguf") and "mmproj" not in path.lower() else None
        if kind is None:
            continue
        first, size = by_type.get(kind, (path, 0))
        by_type[kind] = (min(first, path), size + (getattr(f, "size", 0) or 0))
    for kind, (path, size) in sorted(by_type.items(), key=lambda kv: kv[1][1]):
        yield QuantCandidate("gguf", f"GGUF {kind}", repo, filename=path, gguf_type=kind, download_bytes=size or None)


def _from_cache(ident: HubId) -> tuple[QuantCandidate, ...]:
    """Cached repos named after the model (its name, less the org), sorted into versions as the Hub's would be."""
    from huggingface_hub import scan_cache_dir  # lazy: huggingface_hub loads only for a Hub id

    try:
        info = scan_cache_dir()
    except Exception:  # noqa: BLE001 - no cache folder yet: nothing cached
        return ()
    stem = ident.repo.split("/")[-1].lower()
    out: list[QuantCandidate] = []
    for repo in sorted(info.repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model" or repo.repo_id == ident.repo or stem not in repo.repo_id.lower():
            continue
        for rev in repo.revisions:
            files = {f.file_name: f for f in rev.files}
            ggufs = [n for n in files if n.endswith(".gguf")]
            for name in ggufs:
                kind = gguf_type_of(name)
                if kind:
                    out.append(QuantCandidate("gguf", f"GGUF {kind}", repo.repo_id, filename=name, gguf_type=kind,
                                              download_bytes=files[name].size_on_disk, found="cache"))
            if "config.json" in files and not ggufs:
                data = _load(Path(files["config.json"].file_path), repo.repo_id)
                branch = next(iter(sorted(rev.refs)), None)
                size = sum(f.size_on_disk for n, f in files.items() if n.endswith(".safetensors")) or None
                own = _own_candidate(data, repo.repo_id, branch, "cache", size)
                if own:
                    out.append(own)
    return tuple(out)
