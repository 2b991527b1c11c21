"""Offload settings found in a launch config (a Python script, shell line, JSON or YAML file).

Servers are started in too many ways to parse each properly, so this reads the text line by
line for the settings that put weights in host memory: transformers/accelerate `device_map`,
`max_memory`, `offload_*`, bitsandbytes' fp32 CPU offload, vLLM's `--cpu-offload-gb`,
text-generation-webui's `--cpu-memory/--auto-devices/--cpu`, llama.cpp's `--n-gpu-layers`.
Each hit keeps its line number and text, so the finding can quote it. Commented lines are skipped.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from doctor.facts.engines.tabby_config import load_yaml, looks_like_tabby, parse_tabby
from doctor.facts.files.safe_open import read_capped
from doctor.model.errors import UsageError
from doctor.model.launch_config import ConfigHint, LaunchConfigFacts

MAX_BYTES = 2 * 1024 * 1024  # a launch config is small; anything bigger is not one


_SIZE = r"['\"]?\s*(\d+(?:\.\d+)?)\s*(GiB|GB|MiB|MB|G)?"
_UNITS = {"gib": 1.0, "gb": 1e9 / 2**30, "g": 1.0, "mib": 1 / 1024, "mb": 1e6 / 2**30, None: 1.0}


def _gib(number: str, unit: str | None) -> float:
    return round(float(number) * _UNITS[unit.lower() if unit else None], 2)


Rule = tuple[str, str, str, float | None, float | None]  # setting, offload, meaning, offload_gib, gpu_gib


def _sized(out: list[Rule], line: str, setting: str, before: str, meaning: str, host: bool) -> None:
    """A setting that gives a size after `before`: `meaning` with {size} as written (GiB when no unit is given), the
    size in GiB as what it lets go to host RAM (`host`) or what it caps the GPU at."""
    if m := re.search(before + _SIZE, line, re.IGNORECASE):
        gib = _gib(m.group(1), m.group(2))
        out.append((setting, "possible", meaning.format(size=f"{m.group(1)} {m.group(2) or 'GiB'}"),
                    gib if host else None, None if host else gib))


def _rules(line: str) -> list[Rule]:
    """(setting, offload, meaning, offload_gib, gpu_gib) for each offload setting on one line."""
    low = line.lower()
    out: list[Rule] = []
    if m := re.search(r"device_map['\"]?\s*[=:]\s*['\"]?(auto|balanced_low_0|balanced|sequential)\b", low):
        out.append(("device_map", "possible",
                    f"device_map={m.group(1)}: accelerate puts whatever does not fit in VRAM on the CPU (then disk) "
                    "without an error", None, None))
    if re.search(r"['\"]?[\w.\-]*['\"]?\s*[:=]\s*['\"](cpu|disk)['\"]", low) and not re.search(r"offload_folder", low):
        out.append(("device_map", "certain", "a module or the model is mapped to the CPU/disk", None, None))
    if "max_memory" in low or re.search(r"['\"]cpu['\"]\s*:", low):
        _sized(out, line, "max_memory", r"['\"]cpu['\"]\s*:\s*", "max_memory allows {size} of weights in host RAM", host=True)
        _sized(out, line, "max_memory", r"(?<![\w.])0\s*:\s*", "max_memory caps GPU 0 at {size}", host=False)
    if re.search(r"offload_folder|offload_state_dict|offload_buffers", low):
        out.append(("offload_folder", "possible", "an offload target is configured for weights that do not fit",
                    None, None))
    if re.search(r"llm_int8_enable_fp32_cpu_offload\s*[=:]\s*['\"]?true", low):
        out.append(("llm_int8_enable_fp32_cpu_offload", "certain",
                    "bitsandbytes keeps the modules that do not fit on the CPU in fp32", None, None))
    if m := re.search(r"cpu[_-]offload[_-]gb['\"]?\s*[=: ]\s*['\"]?(\d+(?:\.\d+)?)", low):
        gb = float(m.group(1))
        if gb > 0:
            out.append(("cpu_offload_gb", "certain", f"vLLM keeps {m.group(1)} GiB of weights in host RAM and "
                        "streams them every step", gb, None))  # vLLM: "The space in GiB to offload to CPU, per GPU"
    _sized(out, line, "cpu_memory", r"--cpu-memory[= ]+", "text-generation-webui may place up to {size} of weights in host "
           "RAM", host=True)
    _sized(out, line, "gpu_memory", r"--gpu-memory[= ]+", "GPU memory capped at {size}", host=False)
    if re.search(r"--auto-devices\b", low):
        out.append(("auto_devices", "possible", "--auto-devices splits the model onto the CPU when VRAM runs short",
                    None, None))
    if re.search(r"(^|\s)--cpu(\s|$)", low):
        out.append(("cpu", "certain", "--cpu runs the whole model on the CPU", None, None))
    if m := re.search(r"(?:-ngl|--n-gpu-layers|n_gpu_layers|gpu_layers)['\"]?\s*[=: ]\s*(-?\d+)", low):
        layers = int(m.group(1))
        if layers == 0:
            out.append(("n_gpu_layers", "certain", "n_gpu_layers=0: every layer runs on the CPU", None, None))
        elif layers > 0:
            out.append(("n_gpu_layers", "possible", f"only {layers} layers on the GPU; any beyond that run on the CPU",
                        None, None))
    return out


def parse_launch_config(text: str, path: str) -> LaunchConfigFacts:
    hints = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        code = re.split(r"\s#\s", stripped, maxsplit=1)[0]  # drop a trailing shell/python/yaml comment
        for setting, offload, meaning, off_gib, gpu_gib in _rules(code):
            hints.append(ConfigHint(line=number, setting=setting, text=stripped[:160], offload=offload,
                                    meaning=meaning, offload_gib=off_gib, gpu_gib=gpu_gib))
    return LaunchConfigFacts(path=path, hints=tuple(hints))


def read_launch_config(path: str) -> LaunchConfigFacts:
    """Read and scan a config file; a problem becomes `error`, never an exception."""
    p = Path(path)
    if not os.path.lexists(p):  # os.path, not Path: a name over 255 bytes is "no such file", not an OSError
        return LaunchConfigFacts(path=path, error=f"{path}: no such file")
    if os.path.isdir(p):
        return LaunchConfigFacts(path=path, error=f"{path}: is a directory, expected the server's launch script or config")
    try:
        text = read_capped(p, MAX_BYTES, "launch config").decode("utf-8", errors="replace")
    except OSError as exc:
        return LaunchConfigFacts(path=path, error=f"{path}: cannot read it ({exc.strerror})")
    facts = parse_launch_config(text, path)
    if p.suffix.lower() in (".yml", ".yaml"):  # TabbyAPI's config.yml: the same reader as --tabby-config
        try:
            data = load_yaml(path)
            if looks_like_tabby(data):
                facts = replace(facts, tabby=parse_tabby(data, path))
        except UsageError as exc:
            return LaunchConfigFacts(path=path, error=str(exc))  # "PATH: why", as the errors above
    return facts
