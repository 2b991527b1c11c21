"""What quantization a model directory declares, and what its tensors actually are.

Runtimes disagree on where they look: ExLlamaV2 decides from tensor names (.q_weight = EXL2,
.qweight = GPTQ) and never reads quantize_config.json; transformers and vLLM read the JSON. So both
are recorded, and a disagreement between them is a finding of its own.
"""

from __future__ import annotations

from dataclasses import replace

from doctor.facts.modeldir.config import declared_float
from doctor.model.model_dir import NOT_DECLARED, QuantFacts
from doctor.model.unknown import Maybe, Unknown


def _num(v: object) -> Maybe[float]:
    return declared_float(v, NOT_DECLARED)


def _int(v: object) -> Maybe[int]:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else NOT_DECLARED


def _bool(v: object) -> Maybe[bool]:
    return v if isinstance(v, bool) else NOT_DECLARED


def tensor_format(suffix_counts: dict[str, int]) -> str:
    exl2, gptq = suffix_counts.get("q_weight", 0), suffix_counts.get("qweight", 0)
    if exl2 and gptq:
        return "mixed"
    if exl2:
        return "exl2"
    if gptq:
        return "gptq"
    return "unquantized" if suffix_counts.get("weight", 0) else "none"


def _from_block(q: dict, where: str) -> QuantFacts | None:
    method = str(q.get("quant_method", "")).lower()
    if q.get("load_in_4bit") or q.get("_load_in_4bit"):
        compute = q.get("bnb_4bit_compute_dtype")
        return QuantFacts("bnb-4bit", where, bits=4.0, bnb_quant_type=str(q.get("bnb_4bit_quant_type", "fp4")),
                          compute_dtype=str(compute) if isinstance(compute, str) else Unknown("not declared (bitsandbytes defaults to float32)"))
    if q.get("load_in_8bit") or q.get("_load_in_8bit"):
        return QuantFacts("bnb-8bit", where, bits=8.0)
    if method == "exl2":
        return QuantFacts("exl2", where, bits=_num(q.get("bits")), head_bits=_num(q.get("head_bits")))
    if method == "awq":
        return QuantFacts("awq", where, bits=_num(q.get("bits", q.get("w_bit"))), group_size=_int(q.get("group_size", q.get("q_group_size"))),
                          awq_version=str(q.get("version", "gemm")).lower(), sym=_bool(q.get("sym")))
    if method in ("gptq", "") and ("bits" in q or method == "gptq"):
        desc = q.get("desc_act", q.get("act_order"))
        return QuantFacts("gptq", where, bits=_num(q.get("bits")), group_size=_int(q.get("group_size")),
                          desc_act=_bool(desc), sym=_bool(q.get("sym")),
                          checkpoint_format=str(q["checkpoint_format"]) if isinstance(q.get("checkpoint_format"), str) else NOT_DECLARED)
    if method:
        return QuantFacts(method, where, bits=_num(q.get("bits")))
    return None


def declared_quant(config: dict | None, quantize_config: dict | None) -> QuantFacts | None:
    """The quantization the JSON files declare, or None when they declare none."""
    block = config.get("quantization_config") if isinstance(config, dict) else None
    if isinstance(block, dict):
        found = _from_block(block, "config.json quantization_config")
        if found:
            return found
    if isinstance(quantize_config, dict):
        return _from_block({"quant_method": "gptq", **quantize_config}, "quantize_config.json")
    return None


def unquantized_method(dtype_bytes: dict[str, int], torch_dtype: str | None) -> str:
    """fp16/bf16/fp32 from the dominant tensor dtype, else from config.json's torch_dtype."""
    if dtype_bytes:
        top = max(dtype_bytes, key=dtype_bytes.__getitem__)
        mapped = {"F16": "fp16", "BF16": "bf16", "F32": "fp32"}.get(top)
        if mapped:
            return mapped
    t = (torch_dtype or "").lower()
    return {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32"}.get(t, "unknown")


def combine(declared: QuantFacts | None, fmt: str, dtype_bytes: dict[str, int], torch_dtype: str | None,
            g_idx_present: bool, act_order: Maybe[bool]) -> QuantFacts:
    """One verdict on the format, keeping what the JSON said and what the tensors say side by side."""
    def with_tensors(q: QuantFacts) -> QuantFacts:
        return replace(q, tensor_format=fmt, g_idx_present=g_idx_present, act_order_in_tensors=act_order)

    if declared is None:
        if fmt == "exl2":
            return with_tensors(QuantFacts("exl2", "tensor names (.q_weight)", notes=("no quantization_config: bpw not declared",)))
        if fmt == "gptq":
            return with_tensors(QuantFacts("gptq", "tensor names (.qweight)", notes=("no quantize_config.json: bits/group size not declared",)))
        return with_tensors(QuantFacts(unquantized_method(dtype_bytes, torch_dtype),
                                       "tensor dtypes" if dtype_bytes else "config.json torch_dtype"))
    result = with_tensors(declared)
    expect = {"exl2": "exl2", "gptq": "gptq", "awq": "gptq"}.get(declared.method)  # AWQ also uses .qweight names
    if fmt in ("exl2", "gptq") and expect and fmt != expect:
        result = replace(result, disagreement=f"{declared.declared_in} says {declared.method}, but the tensor names are {fmt}'s "
                                              f"(ExLlamaV2 goes by the tensor names)")
    elif fmt == "unquantized" and declared.method in ("exl2", "gptq", "awq"):
        result = replace(result, disagreement=f"{declared.declared_in} says {declared.method}, but the tensors are plain "
                                              "unquantized .weight tensors")
    return result
