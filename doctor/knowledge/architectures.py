"""Which model architectures each engine loads, and from which version: the `architecture` check and `explain` read it.

ExLlamaV2 names an architecture by config.json's `architectures[0]`; llama.cpp and Ollama by the GGUF's
`general.architecture`; vLLM by `architectures`. Every row keeps its source and a confidence tag (S: read in the
engine's published source or a maintainer's statement at the URL; K rows are not encoded). A version is given only
where a source states it: `since` is the first release that has the row ("first"), or a release a source shows running
it ("runs": an older one may too, so below it the answer is unknown, never a failure).
"""

from __future__ import annotations

from dataclasses import dataclass

EXL2_SOURCE = "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/architecture.py"
EXL2_LAST = "0.3.2"  # the last ExLlamaV2 release (its tags end at v0.3.2); ExLlamaV3 is its successor
# ExLlamaV2's own words for an architecture it does not know (exllamav2/architecture.py, v0.3.2), then it goes on
EXL2_UNKNOWN_TEXT = "!! Warning, unknown architecture"
LLAMA_CPP_LIST_SOURCE = ("https://github.com/abetlen/llama-cpp-python/tree/v0.3.36/vendor (its llama.cpp's "
                         "src/llama-arch.cpp LLM_ARCH_NAMES, read from the llama-cpp-python 0.3.36 sdist)")
LLAMA_CPP_LIST_VERSION = "0.3.36"  # llama-cpp-python


@dataclass(frozen=True)
class ArchRow:
    engine: str  # exllamav2 | llama.cpp | ollama | vllm
    arch: str  # as the engine names it: HF class (ExLlamaV2, vLLM) or GGUF general.architecture (llama.cpp, Ollama)
    since: str  # the version (for llama.cpp: the build, "b5092"; llama-cpp-python versions are compared separately)
    kind: str  # "first": the first release with it; "runs": a release a source shows running it
    source: str
    confidence: str = "S"


# ExLlamaV2 0.3.2's architecture list: each name's first tag holding it in exllamav2/architecture.py (read from the
# repository's tags; v0.0.15 is that file's first release, so "0.0.15" means "as old as the file")
EXL2_SINCE = {
    "LlamaForCausalLM": "0.0.15", "MistralForCausalLM": "0.0.15", "MixtralForCausalLM": "0.0.15",
    "OrionForCausalLM": "0.0.15", "Qwen2ForCausalLM": "0.0.15", "Starcoder2ForCausalLM": "0.0.15",
    "YiForCausalLM": "0.0.15", "GemmaForCausalLM": "0.0.15", "CohereForCausalLM": "0.0.16",
    "GemmoeForCausalLM": "0.0.16", "DbrxForCausalLM": "0.0.17", "Phi3ForCausalLM": "0.0.20",
    "GPT2LMHeadModel": "0.0.21", "GPTBigCodeForCausalLM": "0.0.21", "MiniCPMForCausalLM": "0.1.2",
    "Gemma2ForCausalLM": "0.1.7", "InternLM2ForCausalLM": "0.1.7", "IndexForCausalLM": "0.1.8",
    "LlavaForConditionalGeneration": "0.2.4", "Qwen2VLForConditionalGeneration": "0.2.5",
    "Cohere2ForCausalLM": "0.2.7", "GraniteForCausalLM": "0.2.7", "Qwen2_5_VLForConditionalGeneration": "0.2.8",
    "Gemma3ForConditionalGeneration": "0.2.9", "Glm4ForCausalLM": "0.2.9", "Mistral3ForConditionalGeneration": "0.2.9",
    "Qwen3ForCausalLM": "0.3.0", "Qwen3MoeForCausalLM": "0.3.0",
}

# llama.cpp's GGUF architectures as llama-cpp-python 0.3.36 vendors them (LLAMA_CPP_LIST_SOURCE)
LLAMA_CPP_ARCHS = frozenset((
    "clip llama llama4 deci falcon grok gpt2 gptj gptneox mpt baichuan starcoder refact bert modern-bert nomic-bert "
    "nomic-bert-moe neo-bert jina-bert-v2 jina-bert-v3 eurobert bloom stablelm qwen qwen2 qwen2moe qwen2vl qwen3 "
    "qwen3moe qwen3next qwen3vl qwen3vlmoe qwen35 qwen35moe qwen4exp phi2 phi3 phimoe plamo plamo2 plamo3 codeshell "
    "orion internlm2 minicpm minicpm3 gemma gemma2 gemma3 gemma3n gemma4 gemma4-assistant gemma-embedding starcoder2 "
    "mamba mamba2 maple jamba falcon-h1 xverse command-r cohere2 cohere2moe dbrx olmo olmo2 olmoe muse-glimmer "
    "openelm arctic deepseek deepseek2 deepseek2-ocr deepseek32 deepseek4 chatglm glm4 glm4moe glm-dsa bitnet t5 "
    "t5encoder jais jais2 nemotron nemotron_h nemotron_h_moe exaone exaone4 exaone-moe rwkv6 rwkv6qwen2 rwkv7 arwkv7 "
    "granite granitemoe granitehybrid graniteswitch granite_swa chameleon wavtokenizer-dec plm bailingmoe bailingmoe2 "
    "bailingmoe3 dots1 dots3note arcee afmoe laguna ernie4_5 ernie4_5-moe hunyuan-moe hunyuan-dense hunyuan_vl hy_v3 "
    "hy_v4 smollm3 gpt-oss lfm2 lfm2moe dream smallthinker llada llada-moe seed_oss grovemoe apertus minimax-01 "
    "hrm_text minimax-m2 minimax-m3 cogvlm rnd1 pangu-embedded mistral3 eagle3 dflash mistral4 paddleocr mimo2 step35 "
    "spark2_5 llama-embed maincoder kimi-linear kimi-k3 glm5-next talkie mellum nanbeige qwen3tts pockettts").split())

LLAMA = "https://github.com/ggml-org/llama.cpp"
OLLAMA = "https://github.com/ollama/ollama"
VLLM = "https://github.com/vllm-project/vllm"

ROWS: tuple[ArchRow, ...] = (
    *(ArchRow("exllamav2", arch, since, "first", f"{EXL2_SOURCE} (first in the v{since} tag)")
      for arch, since in EXL2_SINCE.items()),
    ArchRow("llama.cpp", "qwen3", "b5092", "runs", f"{LLAMA}/pull/12828 (Qwen3 and Qwen3MoE, merged April 2025) ; "
            "https://github.com/guinmoon/LLMFarm/issues/126 (\"llama.cpp b5092 have supported Qwen3\")"),
    ArchRow("llama.cpp", "qwen3moe", "b5092", "runs", f"{LLAMA}/pull/12828 (Qwen3 and Qwen3MoE, merged April 2025)"),
    ArchRow("llama.cpp", "gemma3", "b4879", "runs", f"{LLAMA}/pull/12343 (Gemma 3, merged March 2025) ; "
            "https://github.com/AOSC-Dev/aosc-os-abbs/pull/10063 (llama.cpp 4879 tested with Gemma 3)"),
    ArchRow("ollama", "gemma3", "0.6.0", "first", f"{OLLAMA}/releases/tag/v0.6.0 (Gemma 3) ; "
            "https://github.com/taketwo/llm-ollama/issues/40"),
    ArchRow("ollama", "qwen3", "0.6.6", "runs", f"{OLLAMA}/issues/10459 (Qwen3 8B and 30B-A3B running on 0.6.6)"),
    ArchRow("ollama", "qwen3moe", "0.6.6", "runs", f"{OLLAMA}/issues/10459 (Qwen3 30B-A3B running on 0.6.6)"),
    ArchRow("vllm", "Qwen3ForCausalLM", "0.8.4", "first",
            f"{VLLM}/issues/17327 (\"vLLM v0.8.4 and higher natively supports all Qwen3 and Qwen3MoE models\")"),
    ArchRow("vllm", "Qwen3MoeForCausalLM", "0.8.4", "first",
            f"{VLLM}/issues/17327 (\"vLLM v0.8.4 and higher natively supports all Qwen3 and Qwen3MoE models\")"),
)

# the fix for an architecture the engine does not load, said once for the check and for `explain`'s log lines
ARCH_FIX = {
    "exllamav2": ("ExLlamaV2 loads an architecture it does not know as Llama (\"Loading as LlamaForCausalLM\"), which "
                  "fails on missing tensors or writes nonsense: run this model with an engine that has it (a GGUF with "
                  "a recent llama.cpp, or vLLM), or pick a model whose architecture ExLlamaV2 0.3.2 lists "
                  f"({EXL2_SOURCE})."),
    "llama.cpp": ("llama.cpp stops with \"unknown model architecture\" when its build predates the model: update "
                  "llama.cpp (a release build, or pip install -U llama-cpp-python with the same CMAKE_ARGS) to one "
                  "newer than the model, or run an older model."),
    "ollama": ("Ollama's runner does not know this architecture: update Ollama (curl -fsSL https://ollama.com/install.sh "
               "| sh, or the latest release) to one newer than the model, then restart the service."),
    "vllm": ("vLLM refuses an architecture its registry lacks (\"Model architectures [...] are not supported\"): "
             "install a vLLM release that lists it (its Supported Models page), keeping one that still runs this "
             "card, or use another engine for this model."),
}


def rows_for(engine: str, arch: str) -> tuple[ArchRow, ...]:
    return tuple(r for r in ROWS if r.engine == engine and r.arch.lower() == arch.lower())
