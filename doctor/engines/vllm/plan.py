"""vLLM's rows in a plan: a GPTQ or AWQ repo (or the unquantized weights) served by `vllm serve` with the row's
context as --max-model-len, FP16 on cards without bf16 (--dtype half), and tensor parallelism over a split (engine
arguments: https://docs.vllm.ai/en/latest/models/engine_args.html). Its memory is planned as weights + K/V + the
CUDA context at --gpu-memory-utilization's 0.9 of the card; its activation peak and CUDA graphs are not modelled."""

from __future__ import annotations

from doctor.engines.base import PlanRun, PlanSetup
from doctor.engines.plan_steps import NO_HUB_ID, q

GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default share of the card it takes (engine arguments)
SETUP = PlanSetup(formats=("gptq", "awq", "fp16"), caches=("fp16",), arithmetic="torch", batched=False,
                  memory_share=GPU_MEMORY_UTILIZATION, splits=False, speed="assumed",
                  note="vLLM rows: weights, an FP16 K/V cache at the context and the CUDA context within "
                       "--gpu-memory-utilization 0.9 of the card; its activation peak and CUDA graphs are not modelled, "
                       "and no vLLM speed was measured here (ExLlamaV2's efficiency is assumed, K); one card each")


def steps(run: PlanRun, install: str) -> tuple[tuple[str, str], ...]:
    c = run.option
    repo = c.repo or run.base_repo
    if repo is None:
        return (("download", NO_HUB_ID),)
    rev = f" --revision {q(c.revision)}" if c.revision and c.revision != "main" else ""
    cmd = f"vllm serve {q(repo)}{rev} --max-model-len {run.context} --gpu-memory-utilization {GPU_MEMORY_UTILIZATION:g}"
    if tuple(int(x) for x in run.cc.split(".")) < (8, 0):
        cmd += " --dtype half"
    if run.split_gib:
        cmd += f" --tensor-parallel-size {len(run.split_gib)}"
    return (("download", f"{install} && hf download {q(repo)}{rev}"), ("run", cmd))
