"""Weights and ModelFacts from what was read: safetensors headers (a local directory's or the Hub's), config.json
and quantize_config.json.

Shared by a local directory (model_dir.py) and a Hub id read from its headers only (hub_model.py); kept apart from
both so that neither imports the other back (model_dir -> hub_model -> model_weights, never a cycle).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from doctor.facts.files.safe_open import read_capped
from doctor.facts.modeldir.act_order import act_order_of
from doctor.facts.modeldir.quant_config import combine, declared_quant, tensor_format
from doctor.facts.modeldir.safetensors_header import HeaderError, read_header
from doctor.model.model_dir import GgufFacts, ModelConfig, ModelFacts, QuantFacts, ShardFacts, WeightFacts
from doctor.model.unknown import Maybe, Unknown

MAX_LISTED = 500
LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks)\.(\d+)\.")
EMBEDDING = re.compile(r"(?:^|\.)(?:embed_tokens|wte|word_embeddings|tok_embeddings)\.weight$")
VISION = re.compile(r"(?:^|\.)(?:vision_tower|vision_model|visual|multi_modal_projector|vision_embed)\.|^mm_")

MAX_INDEX_BYTES = 64 * 2**20  # a 1,000-shard index of 100k tensors is ~10 MiB


def weights_facts(directory: Path, names: list[str], headers: dict | None = None,
             source: str = "safetensors headers") -> tuple[WeightFacts | None, int, Maybe[bool]]:
    """Sizes from every *.safetensors header (as ExLlamaV2 globs them), bytes read, and act-order from one g_idx.

    headers: the headers already read elsewhere (the Hub's safetensors metadata, doctor/facts/hub/model_id.py), by file
    name; then nothing is read here and act-order stays unknown (its g_idx tensor is not downloaded)."""
    st = sorted(n for n in names if n.endswith(".safetensors"))
    if not st:
        return None, 0, Unknown("no safetensors files")
    index_missing: tuple[str, ...] = ()
    read = 0
    index = directory / "model.safetensors.index.json"
    if headers is None and index.is_file():
        try:
            wm = json.loads(read_capped(index, MAX_INDEX_BYTES, "safetensors index")).get("weight_map", {})
            read += index.stat().st_size
            index_missing = tuple(sorted({f for f in wm.values() if isinstance(f, str) and f not in names}))
        except (OSError, ValueError, AttributeError, RecursionError):
            index_missing = ("model.safetensors.index.json is unreadable",)
    shards, problems = [], []
    dtype_bytes: dict[str, int] = {}
    suffix: dict[str, int] = {}
    layers: dict[int, int] = {}
    emb_bytes: Maybe[int] = Unknown("no embedding tensor found")
    emb_dtype: Maybe[str] = Unknown("no embedding tensor found")
    emb_shape: tuple[int, ...] = ()
    head = vision = other = fp32 = total = count = 0
    g_idx_source = None
    for name in st:
        try:
            h = headers[name] if headers is not None else read_header(directory / name)
        except HeaderError as exc:
            shards.append(ShardFacts(name, file_size(directory / name), 0, 0, str(exc)))
            problems.append(str(exc))
            continue
        read += 8 + h.header_bytes
        data = sum(t.nbytes for t in h.tensors)
        shards.append(ShardFacts(name, h.file_bytes, len(h.tensors), data, h.problem))
        if h.problem:
            problems.append(f"{name}: {h.problem}")
        for t in h.tensors:
            count += 1
            total += t.nbytes
            dtype_bytes[t.dtype] = dtype_bytes.get(t.dtype, 0) + t.nbytes
            last = t.name.rsplit(".", 1)[-1]
            suffix[last] = suffix.get(last, 0) + 1
            if t.dtype == "F32" and last == "weight":
                fp32 += t.nbytes
            if last == "g_idx" and g_idx_source is None:
                g_idx_source = (h, t.name)
            m = LAYER.search(t.name)
            if VISION.search(t.name):
                vision += t.nbytes
            elif EMBEDDING.search(t.name):
                emb_bytes = (emb_bytes if isinstance(emb_bytes, int) else 0) + t.nbytes
                emb_dtype, emb_shape = t.dtype, t.shape
            elif t.name.startswith("lm_head.") or ".lm_head." in t.name:
                head += t.nbytes
            elif m:
                layers[int(m.group(1))] = layers.get(int(m.group(1)), 0) + t.nbytes
            else:
                other += t.nbytes
    if index_missing:
        problems.append(f"the index names shard(s) that are not here: {', '.join(index_missing)} (incomplete download)")
    act: Maybe[bool] = Unknown("no g_idx tensors")
    if g_idx_source and headers is not None:
        act = Unknown("the g_idx tensor is not downloaded in a header-only plan")
    elif g_idx_source:
        act, n = act_order_of(*g_idx_source)
        read += n
    layer_bytes = tuple(layers.get(i, 0) for i in range(max(layers) + 1)) if layers else ()
    return WeightFacts(source, tuple(shards), total, count, dtype_bytes, suffix, emb_bytes, emb_dtype,
                       emb_shape, head, layer_bytes, vision, other, fp32, index_missing, tuple(problems)), read, act


def file_size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


def assemble(path: str, resolved: str, names: list[str], config_raw: dict | None, config: ModelConfig | None, config_problem: str,
             qc: dict | None, weights: WeightFacts | None, act: Maybe[bool], read: int, gguf: GgufFacts | None = None,
             kind: str = "directory") -> ModelFacts:
    """ModelFacts from what was read: a local directory's files, or the Hub's config.json and headers."""
    if gguf is not None:
        quant = QuantFacts("gguf", f"GGUF file {Path(gguf.path).name}", tensor_format="none")
    else:
        quant = combine(declared_quant(config_raw, qc), tensor_format(weights.suffix_counts if weights else {}),
                        weights.dtype_bytes if weights else {},
                        config.torch_dtype if config and isinstance(config.torch_dtype, str) else None,
                        bool(weights and weights.suffix_counts.get("g_idx")), act)
    problem = ""
    if weights is None and gguf is None and config is None and "config.json" not in names:
        problem = "not a model directory: no config.json, no *.safetensors and no *.gguf file"
    return ModelFacts(path, True, kind, resolved, problem, tuple(names[:MAX_LISTED]), config,
                      config_problem, quant, weights, gguf, read)
