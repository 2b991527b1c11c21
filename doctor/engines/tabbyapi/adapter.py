"""TabbyAPI main's answers: exllamav3 on torch, EXL3 models, refuses cards below Ampere at start-up."""

from __future__ import annotations

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.engines.support import judge_row
from doctor.engines.tabbyapi.support import SUPPORT, TABBYAPI_MAIN
from doctor.model.facts import Facts
from doctor.model.ids import Engine


class TabbyApiMain(EngineAdapter):
    id = Engine("tabbyapi")
    label = "TabbyAPI (main branch)"
    formats = ("exl3",)
    uses_torch = True
    fp16_kernels = True
    efficiency_key = "exllamav2"
    vocabulary = FixVocabulary(
        settings_live_in="TabbyAPI's config.yml (model: section)", context="max_seq_len: {n}", kv_cache="cache_mode: {type}",
        smaller_model="a lower-bpw EXL3 quant of the model", restart="restart TabbyAPI",
        fast_format="Get an EXL3 quant of the model (cc 8.0+), or serve an EXL2 quant with TabbyAPI's exl2-checkpoint "
                    "branch on older cards.")
    format_runtimes = ("ExLlamaV3",)
    support = SUPPORT
    flash_attn_note = ("TabbyAPI's main branch (ExLlamaV3) refuses cards below cc 8.0 before any attention runs; on the "
                       "cards it accepts, flash-attn 2 runs")

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        return judge_row(TABBYAPI_MAIN, cc, card_name)
