"""llama.cpp's answers: its own CUDA kernels (no torch), GGUF, settings on llama-server's command line."""

from __future__ import annotations

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement
from doctor.engines.support import judge_row
from doctor.knowledge.engines import engine_support, llama_cpp_path
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine


class LlamaCpp(EngineAdapter):
    id = Engine.LLAMA_CPP
    label = "llama.cpp"
    formats = ("gguf",)
    uses_torch = False
    uses_exllamav2 = False
    fp16_kernels = False  # MMQ/MMVQ do integer dot products; Pascal keeps FP16 off the hot path
    efficiency_key = "llama.cpp"
    vocabulary = FixVocabulary(
        settings_live_in="llama-server's command line (llama-cpp-python: Llama(...) arguments)",
        context="-c {n}", gpu_layers="-ngl {n}", kv_cache="-ctk {type} -ctv {type} -fa on",
        smaller_model="a smaller GGUF quant (Q3_K_M, IQ4_XS)", restart="restart llama-server")

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        j = judge_row(engine_support("llama.cpp"), cc, card_name)
        path = llama_cpp_path(cc)
        if path is None or j.status != Status.PASS:
            return j
        summary = (f"llama.cpp runs on {card_name} (cc {cc}): {path.kernels}; its own flash attention: {path.flash_attn}"
                   + (f"; {path.note}" if path.note else "") + ".")
        return Judgement(Status.PASS, summary, evidence={**j.evidence, "kernel_path": path.kernels,
                                                         "flash_attention": path.flash_attn, "kernel_path_source": path.source})
