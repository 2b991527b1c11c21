"""ExLlamaV2's rows in a plan: an EXL2 (or GPTQ) folder fetched or converted, served by TabbyAPI's exl2-checkpoint
branch with a config.yml whose max_seq_len is the row's context. TabbyAPI reads config.yml from the folder it runs in
and its model_dir relative to it, so the download lands in tabbyAPI/models/ (its config options:
https://github.com/theroyallab/tabbyAPI/blob/main/common/config_models.py; --config: ConfigOverrideConfig)."""

from __future__ import annotations

from doctor.engines.base import PlanRun, PlanSetup
from doctor.engines.plan_steps import NO_HUB_ID, folder, hf_download, q, repo_name

TABBY_EXL2 = ("TabbyAPI's main branch is EXL3-only since 2026-07-14; ExLlamaV2 (EXL2/GPTQ) models run on its "
              "exl2-checkpoint branch: git clone -b exl2-checkpoint https://github.com/theroyallab/tabbyAPI")
CLONE = "git clone -b exl2-checkpoint https://github.com/theroyallab/tabbyAPI"
TABBY_CACHE = {"fp16": "FP16", "fp8": "FP8", "q8": "Q8", "q6": "Q6", "q4": "Q4"}
MODELS = "tabbyAPI/models"


def model_folder(run: PlanRun) -> tuple[tuple[tuple[str, str], ...], str]:
    """(steps, the folder name under tabbyAPI/models/) for the row's version."""
    c = run.option
    if c.found in ("local", "config") and c.filename:
        name = repo_name(c.filename)
        return (("download", f"{CLONE} && mkdir -p {MODELS} && ln -s \"$(realpath {q(c.filename)})\" "
                             f"{q(f'{MODELS}/{name}')}"),), name
    if c.repo is not None:
        name = folder(c)
        return (("download", f"{CLONE} && {hf_download(c.repo, f'{MODELS}/{name}', c.revision)}"),), name
    if run.base_repo is None:
        return (("download", NO_HUB_ID),), "model"
    base = repo_name(run.base_repo)
    name = f"{base}-{c.bpw:g}bpw"
    return (("download", f"{CLONE} && {hf_download(run.base_repo, f'models/{base}')}"),
            ("convert", "git clone https://github.com/turboderp-org/exllamav2 && python exllamav2/convert.py "
                        f"-i {q(f'models/{base}')} -o {q(f'models/{name}-work')} -cf {q(f'{MODELS}/{name}')} "
                        f"-b {c.bpw:g}")), name


def config(run: PlanRun, name: str) -> str:
    lines = ["# tabbyAPI/config.yml (TabbyAPI's exl2-checkpoint branch; its main branch runs EXL3 only)", "model:",
             "  model_dir: models", f"  model_name: {name}", f"  max_seq_len: {run.context}",
             f"  cache_mode: {TABBY_CACHE[run.cache]}"]
    if run.split_gib:
        lines += ["  gpu_split_auto: false", f"  gpu_split: [{', '.join(f'{g:g}' for g in run.split_gib)}]"]
    else:
        lines.append("  gpu_split_auto: true")
    if run.draft:
        lines += ["draft_model:", "  draft_model_dir: models", f"  draft_model_name: {repo_name(run.draft)}"]
    return "\n".join(lines)


def steps(run: PlanRun) -> tuple[tuple[str, str], ...]:
    got, name = model_folder(run)
    if got[0][1] == NO_HUB_ID:  # nothing to download or convert from: no config for a folder that cannot exist
        return got
    out = list(got)
    if run.draft:
        out.append(("draft", hf_download(run.draft, f"{MODELS}/{repo_name(run.draft)}")))
    out += [("config", config(run, name)), ("run", "cd tabbyAPI && python main.py --config config.yml")]
    return tuple(out)


SETUP = PlanSetup(formats=("exl2", "gptq"), caches=("fp16", "q8", "q6", "q4"), arithmetic="exllamav2",
                  note=TABBY_EXL2, steps=steps)
