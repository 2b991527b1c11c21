"""Model-directory facts: config, quantization, per-tensor sizes, read from headers only.

Read-only by construction: files are opened "rb", only headers, config files and at most one small
g_idx tensor are read, and nothing is ever created in the directory. Never raises for a bad model:
every problem becomes text in `problem`, `config_problem` or `weights.problems`. The headers become sizes in
model_weights.py, which a Hub id's headers (hub_model.py) share.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from doctor.facts.hub.model_id import header_only, hub_id
from doctor.facts.modeldir.config import ConfigError, load_config_json, parse_config
from doctor.facts.modeldir.gguf_header import is_gguf, read_gguf
from doctor.facts.modeldir.weights import assemble, file_size, weights_facts
from doctor.model.model_dir import GgufFacts, ModelFacts, QuantFacts

if TYPE_CHECKING:
    from doctor.model.facts import Facts


def _gguf_in(directory: Path, names: list[str]) -> GgufFacts | None:
    ggufs = [directory / n for n in names if n.lower().endswith(".gguf")]
    return read_gguf(max(ggufs, key=file_size)) if ggufs else None


def _directory(path: str, d: Path) -> ModelFacts:
    try:
        names = sorted(os.listdir(d))
    except OSError as exc:
        return ModelFacts(path, True, "unreadable", str(d.resolve()),
                          problem=f"cannot list the directory: {exc.strerror or exc} (check its permissions: ls -ld)")
    read = 0
    config = None
    config_raw: dict | None = None
    config_problem = ""
    if "config.json" in names:
        try:
            config_raw = load_config_json(d / "config.json")
            config = parse_config(config_raw)
            read += file_size(d / "config.json")
        except ConfigError as exc:
            config_problem = str(exc)
    else:
        config_problem = "no config.json in the directory"
    qc = None
    if "quantize_config.json" in names:
        try:
            qc = load_config_json(d / "quantize_config.json")
            read += file_size(d / "quantize_config.json")
        except ConfigError as exc:
            config_problem = config_problem or str(exc)
    weights, n, act = weights_facts(d, names)
    gguf = _gguf_in(d, names) if weights is None else None
    facts = assemble(path, str(d.resolve()), names, config_raw, config, config_problem, qc, weights, act, read + n, gguf)
    if weights is None and gguf is None and config_raw is not None and not names_a_model(config_raw):
        return replace(facts, problem="not a model directory: its config.json is not a model's config (no model_type, "
                                      "architectures, hidden_size or num_hidden_layers) and there is no *.safetensors "
                                      "or *.gguf file")
    return facts


MODEL_KEYS = ("model_type", "architectures", "hidden_size", "num_hidden_layers", "text_config", "d_model", "n_embd",
              "n_layer", "n_layers")  # any one of them: some model's config (doctor/facts/modeldir/config.py reads them)


def names_a_model(config_raw: dict) -> bool:
    """Whether a config.json is some model's config at all, not an app's or a tool's that happens to share the name."""
    return any(key in config_raw for key in MODEL_KEYS)


def near_matches(path: str) -> tuple[str, ...]:
    """Up to three siblings whose names are close to `path`'s, for "did you mean ...?" on a missing path."""
    parent, _, name = os.path.expanduser(path).rstrip("/").rpartition("/")
    try:
        siblings = os.listdir(parent or ".")
    except OSError:
        return ()
    return tuple(os.path.join(parent, s) if parent else s for s in difflib.get_close_matches(name, siblings, n=3, cutoff=0.6))


def gather_model(path: str, shell_pieces: tuple[str, ...] | None = None) -> ModelFacts:
    """Facts about the model at `path` (a directory, or a .gguf/.safetensors file). Never raises.

    `shell_pieces`: --model as the shell delivered it; when it was split, whether the first piece exists is recorded.
    """
    try:
        p = Path(path).expanduser()
        if not p.exists() and (ident := hub_id(path)) is not None:  # org/name[@rev], not cached: the Hub's headers
            return header_only(ident)
        if not p.exists():
            first = bool(shell_pieces and len(shell_pieces) > 1 and os.path.exists(os.path.expanduser(shell_pieces[0])))
            return ModelFacts(path, False, "missing", problem="no such file or directory", near_matches=near_matches(path),
                              first_piece_exists=first)
        if p.is_dir():
            if not os.access(p, os.R_OK | os.X_OK):
                return ModelFacts(path, True, "unreadable", str(p.resolve()),
                                  problem="permission denied: this user cannot list the directory")
            return _directory(path, p)
        if p.suffix.lower() == ".gguf" and os.access(p, os.R_OK) and not is_gguf(p):
            return ModelFacts(path, True, "file", str(p.resolve()),
                              problem="named .gguf but not a GGUF file (it does not start with the GGUF magic: a web page "
                                      "or an unfinished download saved under the model's name?)")
        if is_gguf(p):
            g = read_gguf(p)
            return ModelFacts(path, True, "gguf-file", str(p.resolve()), files=(p.name,),
                              quant=QuantFacts("gguf", f"GGUF file {p.name}"), gguf=g, bytes_read=min(file_size(p), 4096))
        if p.suffix == ".safetensors":
            inner = _directory(str(p.parent), p.parent)
            return replace(inner, path=path, kind="safetensors-file",
                           problem="this is one weight file; ExLlamaV2 and transformers take the model directory that holds it")
        return ModelFacts(path, True, "file", str(p.resolve()),
                          problem="a file, not a model directory")
    except OSError as exc:
        return ModelFacts(path, False, "unreadable", problem=f"cannot read it: {exc.strerror or exc}")


def attach_model(facts: Facts, path: str, shell_pieces: tuple[str, ...] | None = None) -> Facts:
    """`facts` with the model at `path` read now, unless they already hold that path (a replayed report keeps
    the model facts it recorded; a different --model on replay is read from this machine)."""
    if facts.model is not None and facts.model.path == path:
        return facts
    return replace(facts, model=gather_model(path, shell_pieces))
