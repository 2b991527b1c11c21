"""llama.cpp's answers: its own CUDA kernels (no torch), GGUF, settings on llama-server's command line."""

from __future__ import annotations

from doctor.engines.base import UNQUANTIZED, CudaBuild, EngineAdapter, FixVocabulary, Judgement
from doctor.engines.llamacpp import lm_studio
from doctor.engines.llamacpp import plan as planned
from doctor.engines.llamacpp.support import LLAMA_CPP, QUANT_V_NEEDS_FA, SUPPORT, llama_cpp_path
from doctor.engines.support import judge_row
from doctor.knowledge.engines import supports
from doctor.knowledge.llamacpp_build import BUILD_DOC, PYTHON_DOC, REBUILD_CMAKE, REBUILD_PIP
from doctor.model.engines import EngineLaunch
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.quant_plan import QuantCandidate
from doctor.model.unknown import Maybe, Unknown, known

ROW_SPLIT_REMOVED = "https://github.com/ggml-org/llama.cpp/pull/24216"


class LlamaCpp(EngineAdapter):
    id = Engine("llama.cpp")
    arch_table = "llama.cpp"
    arch_from_gguf = True
    versioned = "llama-cpp-python"

    def installed_version(self, facts: Facts) -> Maybe[str]:
        """llama-cpp-python's version (its vendored llama.cpp); a llama-server's build number is not read."""
        return facts.engines.llama_cpp.python_package if facts.engines is not None else Unknown("not gathered")

    label = "llama.cpp"
    formats = ("gguf",)
    uses_torch = False
    fp16_kernels = False  # MMQ/MMVQ do integer dot products; Pascal keeps FP16 off the hot path
    efficiency_key = "llama.cpp"
    vocabulary = FixVocabulary(
        settings_live_in="llama-server's command line (llama-cpp-python: Llama(...) arguments)",
        context="-c {n}", gpu_layers="-ngl {n}", kv_cache="-ctk {type} -ctv {type} -fa on",
        smaller_model="a smaller GGUF quant (Q3_K_M, IQ4_XS)", restart="restart llama-server",
        flash_attn_on="-fa on (or leave -fa auto)",
        fast_decode="-fa on and every layer on the GPU (-ngl 999: its log then says \"offloaded N/N layers to GPU\")",
        fast_format="Use a GGUF quant of the model (Q4_K_M), which llama.cpp runs on its own quantized kernels.")
    format_runtimes = ("llama.cpp",)
    quant_v_without_fa = "refuses"
    support = SUPPORT
    flash_attn_note = ("llama.cpp runs its own flash-attention kernels (-fa on|auto); the flash-attn package is not "
                       "used, installed or not")
    plan = planned.SETUP

    def plan_card(self, cc: str, option: QuantCandidate) -> tuple[bool, str]:
        return supports(LLAMA_CPP, cc), ""

    def cuda_build(self, facts: Facts) -> CudaBuild | None:
        e = facts.engines.llama_cpp if facts.engines is not None else None
        if e is None:
            return None
        if not e.installed and (studio := lm_studio.build(facts)) is not None:  # LM Studio's own llama.cpp runtimes
            return studio
        what = (", ".join(sorted(e.binaries)) if e.binaries else
                f"llama-cpp-python {e.python_package}" if known(e.python_package) else "llama.cpp")
        return CudaBuild(e.installed, e.cuda_libraries, what)

    def rebuild_for_card(self, cc: str, facts: Facts) -> tuple[str, tuple[str, ...]]:
        sm = cc.replace(".", "")
        e = facts.engines.llama_cpp if facts.engines is not None else None
        if e is not None and not e.installed and lm_studio.build(facts) is not None:  # LM Studio: its runtime settings
            return lm_studio.runtime_fix(cc)
        if e is not None and not e.binaries and known(e.python_package):  # llama-cpp-python alone: rebuild its wheel
            line = REBUILD_PIP.format(arch=sm)
            return (f"Rebuild llama-cpp-python with CUDA for the card (sm_{sm}), with a CUDA 12.x toolkit on PATH "
                    f"(source: {PYTHON_DOC})", (line,))
        line = REBUILD_CMAKE.format(arch=sm)
        return (f"Rebuild llama.cpp with the card's architecture (-DCMAKE_CUDA_ARCHITECTURES={sm}) with CUDA 12.x, or use "
                f"a CUDA 12 release build (source: {BUILD_DOC})", (line,))

    def vocabulary_for(self, flavour: str) -> FixVocabulary:
        return lm_studio.VOCABULARY if flavour in lm_studio.FLAVOURS else self.vocabulary

    def launch_notes(self, launch: EngineLaunch, cc: str | None) -> tuple[Judgement, ...]:
        notes: list[Judgement] = []
        if launch.cache_type_v not in (None, *UNQUANTIZED) and launch.flash_attn == "off":
            notes.append(Judgement(
                Status.FAIL, f"a {launch.cache_type_v} V cache without flash attention: llama.cpp refuses the context "
                f"(\"{QUANT_V_NEEDS_FA[0]}\")", f"{self.vocabulary.flash_attn_on}, llama.cpp's own flash attention, which "
                "runs on this card (no flash-attn package involved); or drop -ctv to keep an f16 V cache",
                evidence={"quant_v_source": QUANT_V_NEEDS_FA[1]}))
        elif (fa := self.flash_attn_off(launch, cc)) is not None:
            notes.append(fa)
        if launch.split_mode == "row":
            notes.append(Judgement(Status.WARN, "-sm row was removed from llama.cpp; the flag no longer splits rows",
                                   "-sm layer (the default: whole layers per card, sized with -ts)",
                                   evidence={"split_mode_source": ROW_SPLIT_REMOVED}))
        return tuple(notes)

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        j = judge_row(LLAMA_CPP, cc, card_name)
        path = llama_cpp_path(cc)
        if path is None or j.status != Status.PASS:
            return j
        summary = (f"llama.cpp runs on {card_name} (cc {cc}): {path.kernels}; its own flash attention: {path.flash_attn}"
                   + (f"; {path.note}" if path.note else "") + ".")
        return Judgement(Status.PASS, summary, evidence={**j.evidence, "kernel_path": path.kernels,
                                                         "flash_attention": path.flash_attn, "kernel_path_source": path.source})
