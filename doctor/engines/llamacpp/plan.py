"""llama.cpp's rows in a plan: a GGUF on disk, fetched or made, launched by llama-server with the row's context,
cache type, split and draft (flags: https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md)."""

from __future__ import annotations

from doctor.engines.base import PlanRun, PlanSetup
from doctor.engines.plan_steps import NO_HUB_ID, draft_gguf, gguf_of


def server_flags(run: PlanRun) -> str:
    """-ngl, -c, -fa and the cache type: the flags a row's context and cache set (Ollama's rows say the same in
    its environment variables)."""
    flags = f"-ngl 999 -c {run.context} -fa on"
    if run.cache != "f16":
        flags += f" -ctk {run.cache} -ctv {run.cache}"
    if run.split_gib:
        flags += f" -ts {','.join(f'{g:g}' for g in run.split_gib)}"
    if run.yarn:  # a context past training: the RoPE scaling it needs (common/arg.cpp: --rope-scaling, --rope-scale, --yarn-orig-ctx)
        from doctor.knowledge.context_window import llama_cpp_yarn_flags  # lazy: planning only, not in the checks' imports

        flags += " " + llama_cpp_yarn_flags(*run.yarn)
    return flags


def steps(run: PlanRun) -> tuple[tuple[str, str], ...]:
    got, path = gguf_of(run.option, run.base_repo)
    if got[0][1] == NO_HUB_ID:  # nothing to download or convert from: no launch of a file that cannot exist
        return got
    out = list(got)
    cmd = f"llama-server -m {path} {server_flags(run)}"
    if run.draft:
        step, draft_path = draft_gguf(run.draft)
        out.append(step)
        cmd += f" -md {draft_path} -ngld 999"
    out.append(("run", cmd))
    return tuple(out)


SETUP = PlanSetup(formats=("gguf",), caches=("f16", "q8_0", "q4_0"), arithmetic="llama.cpp", offload=True, steps=steps)
