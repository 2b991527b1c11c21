"""Ollama's rows in a plan: a GGUF from the Hub run as hf.co/REPO:TYPE (https://huggingface.co/docs/hub/ollama), the
row's context as OLLAMA_CONTEXT_LENGTH (docs/context-length.mdx), its cache type as OLLAMA_KV_CACHE_TYPE with
OLLAMA_FLASH_ATTENTION=1, which that setting needs (docs/faq.md), all in the server's environment. Ollama runs
llama.cpp's kernels and buffers: its memory and speed are planned as llama.cpp's (an estimate)."""

from __future__ import annotations

from doctor.engines.base import PlanRun, PlanSetup
from doctor.engines.plan_steps import q
from doctor.model.quant_plan import QuantCandidate


def steps(run: PlanRun) -> tuple[tuple[str, str], ...]:
    c = run.option
    env = f"OLLAMA_CONTEXT_LENGTH={run.context} OLLAMA_FLASH_ATTENTION=1"
    if run.cache != "f16":
        env += f" OLLAMA_KV_CACHE_TYPE={run.cache}"
    tag = f"hf.co/{c.repo}:{c.gguf_type}"
    return (("serve", f"{env} ollama serve"),
            ("download", f"ollama pull {q(tag)}"),
            ("run", f"ollama run {q(tag)}"))


SETUP = PlanSetup(formats=("gguf",), caches=("f16", "q8_0", "q4_0"), arithmetic="llama.cpp", steps=steps,
                  note="Ollama rows: Ollama runs llama.cpp's kernels and buffers, so its memory and speed are "
                       "planned as llama.cpp's (an estimate: Ollama's own overhead is not measured here); the serve "
                       "step runs the server in the foreground with the row's settings: where Ollama already runs "
                       "as a service, stop it first (sudo systemctl stop ollama) or put the same variables in it "
                       "(sudo systemctl edit ollama) and restart it")


def takes(c: QuantCandidate) -> bool:
    """A GGUF on the Hub (Ollama pulls it by repo and type); a local or converted file would need a Modelfile."""
    return c.fmt == "gguf" and c.repo is not None and c.gguf_type is not None and c.found != "local"
