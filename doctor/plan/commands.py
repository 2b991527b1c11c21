"""The commands a plan row prints: the download, and the engine's configuration (TabbyAPI config.yml or a
llama-server command line). Printed, never run."""

from __future__ import annotations

from doctor.model.quant_plan import QuantCandidate

TABBY_EXL2 = ("TabbyAPI's main branch is EXL3-only since 2026-07-14; ExLlamaV2 (EXL2/GPTQ) models run on its "
              "exl2-checkpoint branch: git clone -b exl2-checkpoint https://github.com/theroyallab/tabbyAPI")
TABBY_CACHE = {"fp16": "FP16", "fp8": "FP8", "q8": "Q8", "q6": "Q6", "q4": "Q4"}


def folder_name(c: QuantCandidate) -> str:
    if c.found in ("local", "config") and c.filename:
        return c.filename.rstrip("/").split("/")[-1]
    base = (c.repo or "model").split("/")[-1]
    return f"{base}-{c.revision}" if c.revision and c.revision != "main" else base


def download(c: QuantCandidate, base_repo: str | None) -> str:
    if c.found == "local":
        return "already on disk"
    if c.found == "config":
        return "only its config.json is on disk: find this version on the Hub, or plan the base model's id"
    if c.repo is None:
        src = base_repo or "the base model"
        if c.fmt == "exl2":
            return (f"hf download {src} --local-dir models/base && python convert.py -i models/base -o /tmp/work "
                    f"-cf models/{src.split('/')[-1]}-{c.bpw:g}bpw --bpw {c.bpw:g}   (ExLlamaV2's converter; "
                    "no such version found on the Hub)")
        return (f"hf download {src} --local-dir models/base && python convert_hf_to_gguf.py models/base --outtype f16 "
                f"--outfile base-f16.gguf && llama-quantize base-f16.gguf {c.gguf_type}.gguf {c.gguf_type}   "
                "(llama.cpp's tools; no such file found on the Hub)")
    if c.fmt == "gguf" and c.filename:
        if "-00001-of-" in c.filename:  # a split GGUF: every part (llama.cpp loads them from the first)
            return f"hf download {c.repo} --include \"{c.filename.split('-00001-of-')[0]}-*-of-*.gguf\" --local-dir models"
        return f"hf download {c.repo} {c.filename} --local-dir models"
    rev = f" --revision {c.revision}" if c.revision and c.revision != "main" else ""
    return f"hf download {c.repo}{rev} --local-dir models/{folder_name(c)}"


def tabby_config(c: QuantCandidate, context: int, cache: str, split: tuple[float, ...] | None,
                 draft: str | None) -> str:
    lines = ["# TabbyAPI on its exl2-checkpoint branch (main runs EXL3 only)", "model:", "  model_dir: models",
             f"  model_name: {folder_name(c)}", f"  max_seq_len: {context}",
             f"  cache_mode: {TABBY_CACHE[cache]}"]
    if split:
        lines += ["  gpu_split_auto: false", f"  gpu_split: [{', '.join(f'{g:g}' for g in split)}]"]
    else:
        lines.append("  gpu_split_auto: true")
    if draft:
        lines += ["draft_model:", "  draft_model_dir: models", f"  draft_model_name: {draft.split('/')[-1]}"]
    return "\n".join(lines)


def llama_server(c: QuantCandidate, context: int, cache: str, split: tuple[float, ...] | None,
                 draft: str | None) -> str:
    path = f"models/{c.filename}" if c.filename else f"models/{folder_name(c)}.gguf"
    cmd = f"llama-server -m {path} -ngl 999 -c {context} -fa on"
    if cache != "f16":
        cmd += f" -ctk {cache} -ctv {cache}"
    if split:
        cmd += f" -ts {','.join(f'{g:g}' for g in split)}"
    if draft:
        cmd += f" -md models/{draft.split('/')[-1]}.gguf -ngld 999"
    return cmd
