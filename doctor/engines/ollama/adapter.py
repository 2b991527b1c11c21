"""Ollama's answers: which of its CUDA runners has code for the card, settings in the Modelfile and the server's env."""

from __future__ import annotations

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.knowledge.engines import engine_support, supports
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine

RUNNERS = ("cuda_v12", "cuda_v13")


class Ollama(EngineAdapter):
    id = Engine.OLLAMA
    label = "Ollama"
    formats = ("gguf",)
    uses_torch = False
    uses_exllamav2 = False
    fp16_kernels = False
    efficiency_key = "llama.cpp"
    vocabulary = FixVocabulary(
        settings_live_in="the model's Modelfile (PARAMETER lines; `ollama create`) and the server's environment "
                         "(`systemctl edit ollama`)",
        context="PARAMETER num_ctx {n}", gpu_layers="PARAMETER num_gpu {n}",
        kv_cache="OLLAMA_KV_CACHE_TYPE={type} with OLLAMA_FLASH_ATTENTION=1",
        smaller_model="a smaller quant tag of the model (e.g. :q3_K_M)", restart="restart the Ollama service")

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        rows = {r: engine_support(f"ollama-{r}") for r in RUNNERS}
        o = facts.engines.ollama if facts.engines is not None else None
        ev: dict = {"source": "; ".join(r.source for r in rows.values())}
        if o is None or not o.installed:
            need = [r for r, row in rows.items() if supports(row, cc)]
            if not need:
                return Judgement(Status.FAIL, f"no Ollama runner supports cc {cc}", "llama.cpp built for this card", evidence=ev)
            return Judgement(Status.PASS, f"Ollama runs on cc {cc} with its {' or '.join(need)} runner (Ollama is not "
                             "installed here to see which runners it has)", evidence=ev)
        ev.update(ollama_version=o.version, runners=list(o.runners))
        cuda = [r for r in o.runners if r in rows]
        usable = [r for r in cuda if supports(rows[r], cc)]
        if usable:
            return Judgement(Status.PASS, f"Ollama {o.version} can run {card_name} (cc {cc}) with its {', '.join(usable)} runner",
                             evidence=ev)
        if not cuda:
            return Judgement(Status.FAIL, f"Ollama {o.version} has no CUDA runner installed ({', '.join(o.runners) or 'none'}): "
                             "every model runs on the CPU", rows["cuda_v12"].instead, evidence=ev)
        return Judgement(Status.FAIL, f"Ollama {o.version} has only {', '.join(cuda)} runners, which start at cc "
                         f"{min(rows[r].min_cc for r in cuda)}: {card_name} (cc {cc}) is skipped and models run on the CPU "
                         "(library=cpu), without an error", rows["cuda_v13"].instead, evidence=ev)
