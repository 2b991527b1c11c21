"""vLLM's answers: the installed version's compute-capability floor, and the last version that supports this card."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from doctor.engines.base import EngineAdapter, FixVocabulary, Judgement, PlanRun
from doctor.engines.vllm import plan as planned
from doctor.engines.vllm.support import SUPPORT, VLLM_0_19, VLLM_0_20
from doctor.knowledge.engines import cc_tuple, supports
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.quant_plan import QuantCandidate
from doctor.model.unknown import known

DROPPED_SM70 = Version("0.20.0")  # https://github.com/vllm-project/vllm/pull/39878 (TORCH_CUDA_ARCH_LIST from 7.5)
LAST_FOR_SM70 = "vllm<0.20"


def installed_version(facts: Facts) -> Version | None:
    v = facts.python.packages.get("vllm")
    if v is None or not known(v):
        return None
    try:
        return Version(str(v))
    except InvalidVersion:
        return None


class Vllm(EngineAdapter):
    id = Engine("vllm")
    arch_table = "vllm"
    arch_package = "vllm"

    label = "vLLM"
    formats = ("gptq", "awq", "fp16", "bf16", "fp32")
    uses_torch = True
    fp16_kernels = True
    efficiency_key = "transformers"  # no measured vLLM row yet: judged by its support floor, not its speed
    vocabulary = FixVocabulary(
        settings_live_in="`vllm serve` arguments", context="--max-model-len {n}", kv_cache="--kv-cache-dtype {type}",
        smaller_model="a smaller AWQ/GPTQ quant of the model", restart="restart `vllm serve`",
        fp16_weights="# vLLM: vllm serve PATH --dtype half",
        fast_decode="no --enforce-eager (vLLM then captures CUDA graphs, which single-stream decode needs), and "
                    "--dtype half below cc 8.0",
        fast_format="Use a 4-bit GPTQ quant of the model (AWQ needs cc 7.5+).")
    format_runtimes = ("vLLM",)
    flash_attn_note = ("vLLM picks its attention backend by the card (vllm/platforms/cuda.py): FLASH_ATTN needs cc 8.0, "
                       "so below it vLLM takes TRITON_ATTN or FlexAttention; the flash-attn package is not what it calls")
    pins_torch = True
    support = SUPPORT
    plan = planned.SETUP
    AWQ_FLOOR = "7.5"  # vLLM's AWQ kernels start at Turing (its quantization table; FixVocabulary.fast_format says so)

    def plan_card(self, cc: str, option: QuantCandidate) -> tuple[bool, str]:
        old, new = VLLM_0_19, VLLM_0_20
        if not supports(old, cc) or (option.fmt == "awq" and cc_tuple(cc) < cc_tuple(self.AWQ_FLOOR)):
            return False, ""
        if not supports(new, cc):
            return True, (f"vLLM 0.19.x, the last release with kernels for cc {cc} (0.20.0 dropped it: "
                          f"{new.source}): pip install '{LAST_FOR_SM70}'")
        return True, ""

    def plan_steps(self, run: PlanRun) -> tuple[tuple[str, str], ...]:
        _, release = self.plan_card(run.cc, run.option)
        return planned.steps(run, f"pip install '{LAST_FOR_SM70}'" if release else "pip install vllm")

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        old, new = VLLM_0_19, VLLM_0_20
        version = installed_version(facts)
        ev: dict = {"vllm_version": str(version) if version else None, "source": f"{old.source} ; {new.source}",
                    "confidence": new.confidence}
        if not supports(old, cc):
            return Judgement(Status.FAIL, f"no vLLM release supports {card_name} (cc {cc}): its wheels start at cc {old.min_cc}",
                             "run the model as a GGUF under llama.cpp (or Ollama), which support this card", evidence=ev)
        current = version is None or version >= DROPPED_SM70
        if current and not supports(new, cc):
            which = f"vLLM {version}" if version else "vLLM 0.20 and newer"
            return Judgement(
                Status.FAIL, f"{which} has no kernels for {card_name} (cc {cc}): 0.20.0 dropped 7.0 from its "
                f"TORCH_CUDA_ARCH_LIST, so it stops with \"no kernel image is available\"; 0.19.x is the last release for "
                "this card", f"install the last vLLM release with kernels for cc {cc}: pip install '{LAST_FOR_SM70}' "
                "(or run a GGUF under llama.cpp)", (f"pip install '{LAST_FOR_SM70}'",), evidence=ev)
        where = f"vLLM {version}" if version else "vLLM"
        floor = new.min_cc if current else old.min_cc
        note = " (below 8.0: no FlashAttention-2 and no bf16; use --dtype float16)" if cc_tuple(cc) < (8, 0) else ""
        return Judgement(Status.PASS, f"{where} supports {card_name} (cc {cc}; needs {floor}+){note}", evidence=ev)
