"""`dtype`: a BF16 checkpoint (or BF16 compute) on a card without native BF16 (cc < 8.0)."""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.model.card import card_for
from checks.model.common import AFTER_MODEL_PATH, unreadable_reason
from doctor.knowledge.attention import NUMBER_FORMATS, cc_at_least
from doctor.knowledge.formats import BF16_EMULATION
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.model_dir import ModelFacts
from doctor.model.unknown import known

FP16_ROUTE = ("ExLlamaV2 casts BF16 weights to FP16 when it loads them, so it needs no change. For transformers load "
              "with torch_dtype=torch.float16; for vLLM pass --dtype half. FP16's range ends at 65504: if a BF16-trained "
              "model produces inf/NaN in FP16, use an FP16 or EXL2 quant made from it.")


def _bf16_share(m: ModelFacts) -> tuple[float, int]:
    w = m.weights
    if w is None or not w.total_bytes:
        return 0.0, 0
    b = w.dtype_bytes.get("BF16", 0)
    return b / w.total_bytes, b


def run(ctx: CheckContext) -> Finding:
    m = ctx.facts.model
    if m is None or m.quant is None:
        return CHECK.finding(Status.SKIP, f"skipped: {unreadable_reason(m, ctx.plan)}")
    q = m.quant
    if q.method == "gguf":
        return CHECK.finding(Status.SKIP, "skipped: a GGUF file's quant type sets its dtype (llama.cpp computes in FP16/FP32)")
    card = card_for(ctx)
    cc = card.cc if card else None
    share, bf16_bytes = _bf16_share(m)
    config_dtype = m.config.torch_dtype if m.config and known(m.config.torch_dtype) else None
    compute = q.compute_dtype if known(q.compute_dtype) else None
    evidence = {"cc": cc, "bf16_tensor_bytes": bf16_bytes, "bf16_share": round(share, 3), "config_torch_dtype": config_dtype,
                "quant_method": q.method, "bf16_native_from_cc": NUMBER_FORMATS["bf16"][0], "source": BF16_EMULATION[1]}
    if compute:
        evidence["bnb_compute_dtype"] = compute
    bf16_checkpoint = q.method == "bf16" or share > 0.5
    bf16_compute = q.method == "bnb-4bit" and compute and "bfloat16" in compute
    if not (bf16_checkpoint or bf16_compute):
        note = ""
        if bf16_bytes:
            note = f"; {bf16_bytes / 1e6:.0f} MB of BF16 tensors (embedding/norms) are cast to FP16 by ExLlamaV2 at load"
        elif config_dtype == "bfloat16" and q.method in ("exl2", "gptq", "awq"):
            note = "; config.json names bfloat16 (the original model's dtype), the quantized tensors are not BF16"
        return CHECK.finding(Status.PASS, f"{q.method.upper() if q.method.startswith('fp') else q.method} weights: no BF16 math needed{note}", evidence)
    what = "a BF16 checkpoint" if bf16_checkpoint else f"bitsandbytes computing in {compute}"
    fix = FP16_ROUTE if bf16_checkpoint else ("Set bnb_4bit_compute_dtype=torch.float16 in BitsAndBytesConfig (the model's "
                                              "quantization_config asks for bfloat16). " + FP16_ROUTE)
    if cc is None:
        return CHECK.finding(Status.WARN, f"{what}; the card's compute capability is unknown, so BF16 support cannot be judged "
                             "(pass --target-gpu NAME to plan for a card)", evidence, fix)
    if cc_at_least(cc, NUMBER_FORMATS["bf16"][0]):
        return CHECK.finding(Status.PASS, f"{what} on cc {cc}: native BF16", evidence)
    return CHECK.finding(Status.WARN, f"{what} on cc {cc}, which has no native BF16: {BF16_EMULATION[0]}",
                         evidence, fix, [own] if (own := ctx.adapter.vocabulary.fp16_weights) else
                         ["# transformers: AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16)",
                          "# vLLM: vllm serve PATH --dtype half"])


CHECK = Check(id=CheckId("dtype"), title="Weight dtype vs this card", run=run, **AFTER_MODEL_PATH, order=30)
