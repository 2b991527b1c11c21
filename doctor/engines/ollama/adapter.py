"""Ollama's answers: which of its CUDA runners has code for the card, settings in the Modelfile and the server's env."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from doctor.engines.base import UNQUANTIZED, CudaBuild, DriverFloor, EngineAdapter, FixVocabulary, Judgement
from doctor.engines.ollama import plan as planned
from doctor.engines.ollama.support import OLLAMA_CUDA_V12, OLLAMA_DRIVER_FLOOR, OLLAMA_LLM_LIBRARY, RUNNER_SUPPORT, SUPPORT
from doctor.knowledge.engines import supports
from doctor.model.engines import EngineLaunch
from doctor.model.facts import Facts
from doctor.model.findings import Status
from doctor.model.ids import Engine
from doctor.model.quant_plan import QuantCandidate
from doctor.model.unknown import Maybe, Unknown, known

# the official installer lays out every runner (cuda_v12 and cuda_v13) beside the binary
INSTALL = "curl -fsSL https://ollama.com/install.sh | sh"
INSTALL_DOC = "https://github.com/ollama/ollama/blob/main/docs/linux.mdx"
KV_NEEDS_FA = "https://github.com/ollama/ollama/blob/main/docs/faq.md (OLLAMA_KV_CACHE_TYPE needs OLLAMA_FLASH_ATTENTION=1)"


def ollama_version(facts: Facts) -> Version | None:
    o = facts.engines.ollama if facts.engines is not None else None
    if o is None or not o.installed or not known(o.version):
        return None
    try:
        return Version(str(o.version))
    except InvalidVersion:
        return None


class Ollama(EngineAdapter):
    id = Engine("ollama")
    arch_table = "ollama"
    arch_from_gguf = True

    def installed_version(self, facts: Facts) -> Maybe[str]:
        o = facts.engines.ollama if facts.engines is not None else None
        return o.version if o is not None and o.installed else Unknown("ollama is not on PATH")

    label = "Ollama"
    formats = ("gguf",)
    uses_torch = False
    fp16_kernels = False
    efficiency_key = "llama.cpp"
    vocabulary = FixVocabulary(
        settings_live_in="the model's Modelfile (PARAMETER lines; `ollama create`) and the server's environment "
                         "(`systemctl edit ollama`)",
        context="PARAMETER num_ctx {n}", gpu_layers="PARAMETER num_gpu {n}",
        kv_cache="OLLAMA_KV_CACHE_TYPE={type} with OLLAMA_FLASH_ATTENTION=1",
        smaller_model="a smaller quant tag of the model (e.g. :q3_K_M)", restart="restart the Ollama service",
        flash_attn_on="OLLAMA_FLASH_ATTENTION=1 in the Ollama server's environment (systemctl edit ollama)",
        fast_decode="OLLAMA_FLASH_ATTENTION=1 in the server's environment (systemctl edit ollama), and the model whole on "
                    "the GPU (`ollama ps` says 100% GPU)",
        fast_format="Pull a GGUF quant tag of the model (e.g. :q4_K_M), which Ollama runs on llama.cpp's kernels.")
    format_runtimes = ("llama.cpp",)
    quant_v_without_fa = "ignores"
    auto_offload = True  # num_gpu unset: Ollama's scheduler offloads the layers that fit (docs/faq.md)
    support = SUPPORT
    flash_attn_note = ("Ollama runs llama.cpp's own flash-attention kernels (OLLAMA_FLASH_ATTENTION=1); the flash-attn "
                       "package is not used, installed or not")
    plan = planned.SETUP

    def plan_takes(self, option: QuantCandidate) -> bool:
        return planned.takes(option)

    def plan_card(self, cc: str, option: QuantCandidate) -> tuple[bool, str]:
        return any(supports(row, cc) for row in RUNNER_SUPPORT.values()), ""

    def cuda_build(self, facts: Facts) -> CudaBuild | None:
        o = facts.engines.ollama if facts.engines is not None else None
        if o is None:
            return None
        return CudaBuild(o.installed, o.cuda_libraries, f"Ollama {o.version}" if known(o.version) else "Ollama")

    def rebuild_for_card(self, cc: str, facts: Facts) -> tuple[str, tuple[str, ...]]:
        return (f"Install Ollama with its cuda_v12 runner (the official Linux install lays out every runner; a "
                f"CUDA-13-only package or image has no code below cc 7.5) (sources: {OLLAMA_CUDA_V12.source} ; {INSTALL_DOC})",
                (INSTALL,))

    def driver_floor(self, cc: str, facts: Facts) -> DriverFloor | None:
        f = OLLAMA_DRIVER_FLOOR
        version = ollama_version(facts)
        if version is not None and version < Version(f.from_version):
            return None
        which = f"Ollama {version}" if version is not None else f"Ollama {f.from_version} and newer"
        branch = f.needs(cc)
        return DriverFloor(branch, f"{which} needs driver branch R{branch}+ on cc {cc}: below it {f.below}", f.source)

    def launch_in_force(self, launch: EngineLaunch, facts: Facts) -> EngineLaunch:
        return launch.with_ollama_env(facts.engines.env) if facts.engines is not None and launch.engine == self.id else launch

    def launch_notes(self, launch: EngineLaunch, cc: str | None) -> tuple[Judgement, ...]:
        if launch.cache_type_v not in (None, *UNQUANTIZED) and launch.flash_attn in ("off", None):
            return (Judgement(Status.WARN, f"OLLAMA_KV_CACHE_TYPE={launch.cache_type_v} without OLLAMA_FLASH_ATTENTION=1: "
                              "Ollama ignores the cache type and keeps an f16 cache (more VRAM than planned)",
                              f"set {self.vocabulary.flash_attn_on}", evidence={"quant_kv_source": KV_NEEDS_FA}),)
        fa = self.flash_attn_off(launch, cc)
        return (fa,) if fa is not None else ()

    def kept_off_gpu(self, facts: Facts) -> Judgement | None:
        env = facts.engines.env if facts.engines is not None else {}
        name, source, _confidence = OLLAMA_LLM_LIBRARY
        value = env.get(name, "").strip().strip('"').lower()
        if not value.startswith("cpu"):
            return None
        return Judgement(Status.FAIL, f"{name}={value} forces Ollama's CPU runner: every layer runs on the CPU, whatever "
                         "the card", f"Remove {name} from the Ollama server's environment (systemctl edit ollama), then "
                         "restart the Ollama service; Ollama then picks its CUDA runner itself",
                         ("sudo systemctl edit ollama", "sudo systemctl restart ollama"), {"source": source, name: value})

    def judge_card(self, cc: str, card_name: str, facts: Facts) -> Judgement:
        rows = RUNNER_SUPPORT
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
