"""Transformers' answers: runs wherever torch does; bitsandbytes 4-bit decodes far below the ceiling."""

from __future__ import annotations

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.engines.transformers import plan as planned
from doctor.knowledge.engines import TRANSFORMERS_BNB_NF4, cc_tuple
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.unknown import Unknown, known


class Transformers(EngineAdapter):
    id = Engine("transformers")
    label = "Transformers"
    formats = ("bnb-4bit", "bnb-8bit", "gptq", "awq", "fp16", "bf16", "fp32")
    uses_torch = True
    fp16_kernels = True
    efficiency_key = "transformers"
    vocabulary = FixVocabulary(
        settings_live_in="your from_pretrained(...) and generate(...) arguments",
        context="max_new_tokens / the prompt length you pass", kv_cache=None,
        smaller_model="a smaller model, or the same model as a GGUF under llama.cpp", restart="rerun your script",
        fp16_weights="# transformers: AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16)",
        fast_format="For speed run the model as a GGUF under llama.cpp or as EXL2 under ExLlamaV2: Transformers has no "
                    "fused quantized decode kernel.")
    format_runtimes = ("transformers",)
    flash_attn_use = "opt-in"
    flash_attn_note = ("Transformers uses flash-attn only when the script asks for attn_implementation="
                       "\"flash_attention_2\"; its default is torch SDPA")
    plan = planned.SETUP

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        t = TRANSFORMERS_BNB_NF4
        m = facts.model
        method = m.quant.method if m is not None and m.quant is not None else None
        bnb = method in ("bnb-4bit", "bnb-8bit") or (method is None and known(facts.python.packages.get("bitsandbytes",
                                                                                                       Unknown("not gathered"))))
        if not bnb:  # FP16 (or another format) on torch's own kernels: runs, at its own pace
            dtype = "; below cc 8.0 load it with torch_dtype=torch.float16 (no native bf16)" if cc_tuple(cc) < (8, 0) else ""
            return Judgement(Status.PASS, f"Transformers runs on {card_name} (cc {cc}) on torch's kernels{dtype}",
                             evidence={"bitsandbytes": False})
        return Judgement(
            Status.WARN, f"Transformers runs on cc {cc}, but with bitsandbytes 4-bit it decodes about x{t.decode_time_factor:g} "
            f"slower than the ceiling ({t.what}; {t.card}).",
            "Run the same model in an engine with fused quantized kernels: llama.cpp with a GGUF (Q4_K_M) or "
            "ExLlamaV2 0.3.2 with EXL2; the reference story's first step went from 4 to 25 tok/s this way",
            evidence={"efficiency_source": t.source})
