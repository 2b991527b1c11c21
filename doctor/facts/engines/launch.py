"""Read how the user launches llama.cpp or Ollama: a llama-server command line, or an Ollama model's parameters.

--engine-config takes either, as text or as a file holding it:
  llama.cpp: `llama-server -m model.gguf -ngl 99 -c 8192 -ctk q8_0 -ctv q8_0 -fa on -sm layer -ts 1,1`
  Ollama:    the output of `ollama show MODEL --parameters` (`num_ctx 8192`, `num_gpu 40`) or a Modelfile's
             PARAMETER lines; OLLAMA_FLASH_ATTENTION and OLLAMA_KV_CACHE_TYPE come from the server's environment.
Flag names: llama.cpp common/arg.cpp; Ollama docs/modelfile.md (https://github.com/ollama/ollama/blob/main/docs/modelfile.md).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from doctor.model.engines import FA_WORDS, EngineLaunch
from doctor.model.ids import Engine

FLAGS = {  # llama.cpp flag -> field
    "-m": "model_path", "--model": "model_path",
    "-ngl": "n_gpu_layers", "--gpu-layers": "n_gpu_layers", "--n-gpu-layers": "n_gpu_layers",
    "-c": "n_ctx", "--ctx-size": "n_ctx",
    "-ctk": "cache_type_k", "--cache-type-k": "cache_type_k", "-ctv": "cache_type_v", "--cache-type-v": "cache_type_v",
    "-sm": "split_mode", "--split-mode": "split_mode", "-ts": "tensor_split", "--tensor-split": "tensor_split",
    "-ub": "n_ubatch", "--ubatch-size": "n_ubatch",
}
FA_FLAGS = ("-fa", "--flash-attn")
INTS = ("n_gpu_layers", "n_ctx", "n_ubatch")
OLLAMA_PARAMS = {"num_ctx": "n_ctx", "num_gpu": "n_gpu_layers", "num_batch": "n_ubatch"}
OLLAMA_LINE = re.compile(r"^\s*(?:PARAMETER\s+)?(num_\w+)\s+(\S+)", re.I | re.M)


class LaunchError(ValueError):
    """The launch config cannot be read; the message names the problem and the fix."""


def looks_like_a_path(text: str) -> bool:
    """One word with a folder or a file's suffix in it (./launch.sh, /etc/llama.args, params.txt): meant as a file.
    A command line has spaces; Ollama's parameters have spaces or lines."""
    word = text.strip()
    return bool(word) and not any(c.isspace() for c in word) and ("/" in word or bool(re.search(r"\.[A-Za-z0-9]{1,5}$", word)))


def read_engine_config(text_or_path: str) -> EngineLaunch:
    """A file's contents or the text itself; raises LaunchError for what is neither."""
    p = Path(text_or_path)
    source = "command line"
    text = text_or_path
    if looks_like_a_path(text_or_path) and not p.is_file():  # a file meant, not found: not "neither a command line nor..."
        what = "a directory, not a file" if p.is_dir() else "no such file"
        raise LaunchError(f"--engine-config {text_or_path}: {what}; pass the file that holds the llama-server command "
                          "line or the output of `ollama show MODEL --parameters`, or that text itself, quoted")
    if "\n" not in text_or_path and len(text_or_path) < 4096 and p.is_file():
        try:
            text, source = p.read_text(errors="replace"), str(p)
        except OSError as exc:
            raise LaunchError(f"--engine-config {text_or_path}: cannot read it ({exc.strerror})") from None
    if re.search(r"(^|[\s/])llama-(server|cli|bench)\b|(^|\s)(-m|--model|-ngl)\s", text):
        return parse_llama_args(text, source)
    if OLLAMA_LINE.search(text) or re.search(r"^\s*FROM\s", text, re.M):
        return parse_ollama_params(text, source)
    raise LaunchError("--engine-config: neither a llama-server command line (llama-server -m MODEL -ngl 99 ...) nor an "
                      "Ollama model's parameters (the output of `ollama show MODEL --parameters`)")


def parse_llama_args(text: str, source: str = "command line") -> EngineLaunch:
    try:
        words = shlex.split(text.replace("\\\n", " "), comments=True)
    except ValueError as exc:
        raise LaunchError(f"--engine-config: the command line does not parse ({exc}); quote it as the shell would") from None
    got: dict = {}
    notes: list[str] = []
    i = 0
    while i < len(words):
        word, _, inline = words[i].partition("=") if words[i].startswith("--") else (words[i], "", "")
        if word in FA_FLAGS:
            nxt = inline or (words[i + 1] if i + 1 < len(words) else "")
            if nxt.lower() in FA_WORDS:
                got["flash_attn"] = FA_WORDS[nxt.lower()]
                i += 0 if inline else 1
            else:
                got["flash_attn"] = "on"  # older builds: a bare -fa switches it on
            notes.append(f"{word}: flash attention {got['flash_attn']}")
        elif word in FLAGS:
            value = inline or (words[i + 1] if i + 1 < len(words) else None)
            if value is None:
                raise LaunchError(f"--engine-config: {word} has no value")
            i += 0 if inline else 1
            got[FLAGS[word]] = _value(FLAGS[word], value, word)
            notes.append(f"{word} {value}")
        i += 1
    return EngineLaunch(engine=Engine.LLAMA_CPP, source=source, notes=tuple(notes), **got)


def parse_ollama_params(text: str, source: str = "command line") -> EngineLaunch:
    got: dict = {}
    notes: list[str] = []
    for name, value in OLLAMA_LINE.findall(text):
        field = OLLAMA_PARAMS.get(name.lower())
        if field:
            got[field] = _value(field, value, name)
            notes.append(f"{name} {value}")
    m = re.search(r"^\s*FROM\s+(\S+)", text, re.M)
    if m and m.group(1).lower().endswith(".gguf"):
        got["model_path"] = m.group(1)
    return EngineLaunch(engine=Engine.OLLAMA, source=source, notes=tuple(notes), **got)


def _value(field: str, value: str, flag: str) -> int | str | tuple[float, ...]:
    if field in INTS:
        try:
            return int(value)
        except ValueError:
            if field == "n_gpu_layers" and value in ("all", "auto"):
                return -1  # every layer
            raise LaunchError(f"--engine-config: {flag} takes a whole number, got {value!r}") from None
    if field == "tensor_split":
        try:
            return tuple(float(x) for x in re.split(r"[,/]", value) if x)
        except ValueError:
            raise LaunchError(f"--engine-config: {flag} takes proportions like 3,1, got {value!r}") from None
    if field in ("cache_type_k", "cache_type_v", "split_mode"):
        return value.lower()
    return value
