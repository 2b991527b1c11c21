"""ExLlamaV2's answers: FP16 kernels on torch, its JIT extension, EXL2/GPTQ, settings in TabbyAPI's config.yml."""

from __future__ import annotations

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.engines.exllamav2 import plan as planned
from doctor.engines.exllamav2.support import EXLLAMAV2, SUPPORT
from doctor.engines.support import judge_row
from doctor.engines.tabbyapi.support import TABBYAPI_MAIN
from doctor.knowledge.engines import supports
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.quant_plan import QuantCandidate


class ExLlamaV2(EngineAdapter):
    id = Engine("exllamav2")
    arch_table = "exllamav2"
    arch_package = "exllamav2"

    label = "ExLlamaV2"
    formats = ("exl2", "gptq")
    uses_torch = True
    uses_exllamav2 = True
    fp16_kernels = True
    efficiency_key = "exllamav2"
    vocabulary = FixVocabulary(
        settings_live_in="TabbyAPI's config.yml (model: section) or your ExLlamaV2Config",
        context="max_seq_len: {n}", kv_cache="cache_mode: {type}", smaller_model="a lower-bpw EXL2 quant of the model",
        restart="restart TabbyAPI (or reload the model)",
        fast_format="For ExLlamaV2's fast path get an EXL2 quant (or a 4-bit GPTQ one) of the same model.")
    format_runtimes = ("ExLlamaV2",)
    flash_attn_use = "calls"
    support = SUPPORT
    plan = planned.SETUP

    def plan_card(self, cc: str, option: QuantCandidate) -> tuple[bool, str]:
        return supports(EXLLAMAV2, cc), ""

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        j = judge_row(EXLLAMAV2, cc, card_name)
        if j.status == Status.PASS and not supports(TABBYAPI_MAIN, cc):
            return Judgement(j.status, j.summary + "; serve it with TabbyAPI's exl2-checkpoint branch: TabbyAPI's main "
                             "branch is EXL3-only and refuses this card.", j.fix, j.commands, j.evidence)
        return j
