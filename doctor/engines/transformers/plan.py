"""Transformers + bitsandbytes' rows in a plan: the unquantized weights loaded in 4-bit NF4 (load_in_4bit), the
reference story's first setup, at the decode cost measured for it (doctor/knowledge/engines.py
TRANSFORMERS_BNB_NF4). Its memory is planned as NF4 weights + an FP16 K/V cache + the CUDA context."""

from __future__ import annotations

from doctor.engines.base import PlanRun, PlanSetup
from doctor.engines.plan_steps import MODELS, NO_HUB_ID, q, repo_name


def steps(run: PlanRun) -> tuple[tuple[str, str], ...]:
    repo = run.option.repo or run.base_repo
    if repo is None:
        return (("download", NO_HUB_ID),)
    path = f"{MODELS}/{repo_name(repo)}"
    script = ("import torch; from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig; "
              f"p = '{path}'; t = AutoTokenizer.from_pretrained(p); "
              "m = AutoModelForCausalLM.from_pretrained(p, device_map='auto', quantization_config=BitsAndBytesConfig("
              "load_in_4bit=True, bnb_4bit_quant_type='nf4', bnb_4bit_compute_dtype=torch.float16)); "
              "x = t('Hello', return_tensors='pt').to(m.device); "
              "print(t.decode(m.generate(**x, max_new_tokens=64)[0]))")
    return (("download", f"pip install transformers accelerate bitsandbytes && hf download {q(repo)} --local-dir {q(path)}"),
            ("run", f"python -c {q(script)}"))


SETUP = PlanSetup(formats=("bnb-4bit",), caches=("fp16",), arithmetic="torch", batched=False, splits=False,
                  speed="bnb-nf4", steps=steps,
                  note="Transformers + bitsandbytes rows: the unquantized weights loaded in 4-bit NF4, the reference "
                       "story's first setup (4 tok/s on a V100 for a 27B model); its decode cost is the measured one")
