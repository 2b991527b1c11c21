"""How a Transformers log shows itself (its package paths, checkpoint loading, the Trainer) and its fixes: arguments of
from_pretrained, generate and TrainingArguments. A flash-attn refusal is the adapter's own (flash_attn_refusal)."""

from __future__ import annotations

from doctor.engines.log_types import EngineLog, LogFix, LogMarker
from doctor.engines.transformers.adapter import Transformers

MARKERS = (
    LogMarker(r"[/\\]transformers[/\\]|\bLoading checkpoint shards\b|\bfrom_pretrained\b|\bTrainingArguments\b"
              r"|\bBitsAndBytesConfig\b|[/\\](?:accelerate|peft|trl)[/\\]", "Transformers' own lines and paths"),
)

FIXES = {
    "oom": LogFix("Transformers ran out of GPU memory: generate fewer tokens or send a shorter prompt (max_new_tokens), "
                  "load the weights in 4-bit (BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16)), "
                  "cap the GPU's share with device_map=\"auto\" and max_memory (the rest runs from the CPU, slowly), or run "
                  "a smaller model; the same model as a GGUF under llama.cpp often fits where Transformers does not."),
    "bf16": LogFix("This card has no native bf16 (cc 8.0+): use float16, torch_dtype=torch.float16 in from_pretrained and "
                   "TrainingArguments(fp16=True, bf16=False) when training; tf32=True also needs cc 8.0+."),
}

LOG = EngineLog(Transformers.id, "Transformers", MARKERS, FIXES, uses_torch=True, precedence=60)
