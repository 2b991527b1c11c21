"""TabbyAPI's config.yml, read with a real YAML parser and put in the doctor's terms.

TabbyAPI is the server most ExLlamaV2 users run; its config.yml already says which model loads, with what context,
cache and split. The keys and their meaning come from TabbyAPI's common/config_models.py (ModelConfig,
DraftModelConfig) at commits 0fadb1e (2024-11-19) and 79126f9 (2026-06-27, the last with the ExLlamaV2 backend):
https://github.com/theroyallab/tabbyAPI/blob/79126f904c2e00aece026b36bb70bbb87e4892b2/common/config_models.py
A key neither version has is reported, never fatal: a newer TabbyAPI adds keys, and a typo should be seen.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeGuard

from doctor.facts.files.safe_open import RefusedRead, read_capped
from doctor.model.errors import UsageError
from doctor.model.launch_config import TabbySettings
from doctor.model.plan import MODEL_PATH_FROM, Plan
from doctor.model.plausible import problem

MAX_BYTES = 2 * 1024 * 1024  # TabbyAPI's sample is ~12 KB
MAX_GB = 4096  # a gpu_split or reserve entry, in GB (the plan's own gpu_split range)

SECTIONS = {"config", "network", "logging", "model", "draft_model", "lora", "embeddings", "sampling", "memory",
            "developer", "actions"}
MODEL_KEYS = {"model_dir", "inline_model_loading", "use_dummy_models", "dummy_model_names", "model_name",
              "use_as_default", "backend", "max_seq_len", "cache_size", "cache_mode", "tensor_parallel",
              "tensor_parallel_backend", "gpu_split_auto", "autosplit_reserve", "gpu_split", "rope_scale", "rope_alpha",
              "chunk_size", "output_chunking", "max_batch_size", "prompt_template", "vision", "num_experts_per_token",
              "force_enable_thinking", "reasoning", "reasoning_start_token", "reasoning_end_token",
              "reasoning_suppress_header", "tool_format"}
DRAFT_KEYS = {"draft_mode", "draft_model_dir", "draft_model_name", "draft_rope_scale", "draft_rope_alpha",
              "draft_cache_mode", "draft_gpu_split", "draft_num_tokens", "ngram_match_min"}
NAMED_MODES = {"FP16": "fp16", "FP8": "fp8", "Q8": "q8", "Q6": "q6", "Q4": "q4"}  # CACHE_SIZES (FP8: older releases)
_PAIR = re.compile(r"^\s*([2-8])\s*,\s*([2-8])\s*$")  # CACHE_TYPE's "k_bits,v_bits" (exllamav3)


def looks_like_tabby(data: object) -> TypeGuard[dict]:
    """A YAML mapping whose `model` section has TabbyAPI's keys."""
    return isinstance(data, dict) and isinstance(data.get("model"), dict) and bool(set(data["model"]) & MODEL_KEYS)


def load_yaml(path: str) -> object:
    """The parsed YAML; UsageError (exit 3) with one line for a missing, oversized or unparsable file."""
    import yaml  # lazy: PyYAML (15 ms) loads only for a TabbyAPI config.yml

    from doctor.facts.files import bounded_yaml  # lazy: imports PyYAML, which loads only for a TabbyAPI config.yml

    p = Path(path)
    if not os.path.lexists(p) or os.path.isdir(p):  # a FIFO or a device goes on to read_capped, which says what it is
        raise UsageError(f"{path}: {'is a directory' if os.path.isdir(p) else 'no such file'}, expected TabbyAPI's config.yml")
    try:
        text = read_capped(p, MAX_BYTES, "TabbyAPI config").decode("utf-8")
        return bounded_yaml.load(text)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it: it {exc.strerror or exc}" if isinstance(exc, RefusedRead)
                         else f"{path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a text file (expected TabbyAPI's config.yml)") from None
    except bounded_yaml.YamlLimit as exc:
        raise UsageError(f"{path}: refused: {exc.problem}; TabbyAPI's config.yml is a few KB, ~4 levels deep") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        raise UsageError(f"{path}: not valid YAML{line} ({getattr(exc, 'problem', None) or 'parse error'}); "
                         "check the indentation against TabbyAPI's config_sample.yml") from None


def read_tabby_config(path: str) -> TabbySettings:
    data = load_yaml(path)
    if not looks_like_tabby(data):
        raise UsageError(f"{path}: not a TabbyAPI config.yml (no `model:` section with model_dir/model_name)")
    return parse_tabby(data, path)


def parse_tabby(data: dict, path: str) -> TabbySettings:
    """The settings in the doctor's terms; a value of the wrong type is a UsageError naming the key."""
    model = data.get("model") or {}
    draft = data.get("draft_model") or {}
    if not isinstance(draft, dict):
        raise UsageError(f"{path}: draft_model: expected a mapping, got {type(draft).__name__}")
    base = Path(path).resolve().parent  # TabbyAPI resolves model_dir from its folder, where config.yml lives
    notes: list[str] = []
    unknown = sorted({f"{k}" for k in data if k not in SECTIONS}
                     | {f"model.{k}" for k in model if k not in MODEL_KEYS}
                     | {f"draft_model.{k}" for k in draft if k not in DRAFT_KEYS})

    def value(section: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "model") -> Any:
        v = section.get(key)
        if v is None or v == "" or v == []:
            return None
        ok = isinstance(v, kind) and not (kind in (int, float, (int, float)) and isinstance(v, bool))
        if ok and isinstance(v, float) and not math.isfinite(v):
            ok = False
        if not ok:
            raise UsageError(f"{path}: {where}.{key}: expected {_kind(kind)}, got {str(v)[:40]!r}")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and (why := problem(key, v)):
            raise UsageError(f"{path}: {where}.{key}: {why}")  # 10^400 would overflow the first float it meets
        return v

    model_path = _model_path(base, value(model, "model_dir", str) or "models", value(model, "model_name", str), notes)
    max_seq_len = value(model, "max_seq_len", int)
    if max_seq_len is not None and max_seq_len <= 0:
        notes.append(f"max_seq_len {max_seq_len}: TabbyAPI reads it from the model's config.json")
        max_seq_len = None
    cache_size = value(model, "cache_size", int)
    mode = _cache_mode(value(model, "cache_mode", (str, int)), "cache_mode", path, notes)
    split = _floats(value(model, "gpu_split", list), "model.gpu_split", path)
    auto = value(model, "gpu_split_auto", bool)
    auto = True if auto is None else auto
    tp = bool(value(model, "tensor_parallel", bool))
    manual = split if split and (not auto or tp) else None
    if split and manual is None:
        notes.append("gpu_split is ignored while gpu_split_auto is true (TabbyAPI autosplits)")
    reserve = _floats(value(model, "autosplit_reserve", list), "model.autosplit_reserve", path) or ()
    draft_name = value(draft, "draft_model_name", str, "draft_model")
    draft_path = None
    if draft_name and value(draft, "draft_mode", str, "draft_model") not in ("disabled", "mtp", "ngram"):
        draft_path = str(_under(base, value(draft, "draft_model_dir", str, "draft_model") or "models") / draft_name)
    return TabbySettings(
        path=path, model_path=model_path, max_seq_len=max_seq_len, cache_mode=mode, cache_size=cache_size,
        gpu_split=manual, gpu_split_auto=auto, autosplit_reserve_mb=reserve, tensor_parallel=tp,
        chunk_size=value(model, "chunk_size", int), draft_model_path=draft_path,
        draft_cache_mode=_cache_mode(value(draft, "draft_cache_mode", (str, int), "draft_model"), "draft_cache_mode",
                                     path, notes) if draft_path else None,
        draft_gpu_split=_floats(value(draft, "draft_gpu_split", list, "draft_model"), "draft_model.draft_gpu_split",
                                path) if draft_path else None,
        notes=tuple(notes), unknown_keys=tuple(unknown))


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {str: "text", int: "a whole number", bool: "true or false", list: "a list", (str, int): "text"}
    return names.get(kind, "a number")


def _under(base: Path, folder: str) -> Path:
    p = Path(folder).expanduser()
    return p if p.is_absolute() else base / p


def _model_path(base: Path, model_dir: str, model_name: str | None, notes: list[str]) -> str | None:
    if not model_name:
        notes.append("no model.model_name: TabbyAPI starts without a model (give --model)")
        return None
    return str(_under(base, model_dir) / model_name)


def _cache_mode(raw: object, key: str, path: str, notes: list[str]) -> str | None:
    """FP16/Q8/Q6/Q4 as they are; an exllamav3 "k,v" pair as the ExLlamaV2 mode holding as many bits per K+V entry,
    the next larger when none is equal (the memory estimate errs high, never low)."""
    if raw is None:
        return None
    text = str(raw).strip()
    if text.upper() in NAMED_MODES:
        return NAMED_MODES[text.upper()]
    if m := _PAIR.match(text):
        k, v = int(m.group(1)), int(m.group(2))
        bits = next(b for b in (4, 6, 8, 16) if b >= (k + v) / 2)
        mode = "fp16" if bits == 16 else f"q{bits}"
        notes.append(f"{key} {k},{v} (exllamav3 K,V bits) planned as {mode}"
                     + ("" if (k + v) / 2 == bits else f" ({(k + v) / 2:g} bits on average, rounded up)"))
        return mode
    raise UsageError(f"{path}: {key}: expected FP16, Q8, Q6, Q4 or a \"k,v\" bit pair such as 8,8; got {raw!r}")


def _floats(values: list | None, key: str, path: str) -> tuple[float, ...] | None:
    if values is None:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= MAX_GB for v in values):  # NaN fails
        raise UsageError(f"{path}: {key}: expected a list of numbers (GB per GPU, up to {MAX_GB:,}), got "
                         f"{str(values)[:80]!r}")
    return tuple(float(v) for v in values)


def describe(s: TabbySettings) -> str:
    """One line for stderr: what went into the plan and what is only reported."""
    parts = [f"model {s.model_path or '(none)'}", f"max_seq_len {s.max_seq_len or 'from the model'}",
             f"cache {s.cache_mode or 'fp16'}" + (f" x {s.cache_size} tokens" if s.cache_size else ""),
             f"split {','.join(f'{g:g}' for g in s.gpu_split)} GB" if s.gpu_split else "autosplit"
             + (f" (reserve {','.join(f'{r:g}' for r in s.autosplit_reserve_mb)} MB)" if s.autosplit_reserve_mb else "")]
    if s.tensor_parallel:
        parts.append("tensor parallel")
    if s.chunk_size:
        parts.append(f"chunk_size {s.chunk_size}")
    if s.draft_model_path:
        parts.append(f"draft model {s.draft_model_path} (its VRAM is not in the budget)")
    line = "; ".join(parts + list(s.notes))
    if s.unknown_keys:
        line += f"; keys this doctor does not know (ignored): {', '.join(s.unknown_keys)}"
    return line


def tabby_plan(s: TabbySettings, plan: Plan) -> Plan:
    """`plan` with what the config loads: the cache holds max(max_seq_len, cache_size) tokens, which is what the
    memory budget must count (ExLlamaV2 allocates the cache at cache_size)."""
    tokens = max(filter(None, (s.max_seq_len, s.cache_size)), default=None)
    given: dict[str, Any] = {"max_seq_len": tokens, "cache_mode": s.cache_mode, "gpu_split": s.gpu_split}
    changes = {k: v for k, v in given.items() if v is not None}
    if s.model_path:
        changes.update(model_path=s.model_path, model_path_parts=(s.model_path,), model_path_from=MODEL_PATH_FROM["tabby"])
    if s.tensor_parallel:
        changes["tensor_parallel"] = True
    return replace(plan, **changes)
