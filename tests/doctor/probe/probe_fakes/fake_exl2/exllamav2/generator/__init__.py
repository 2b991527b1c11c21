"""The dynamic generator and its jobs, as exllamav2/generator/dynamic.py (0.3.2) runs them (see the package's
docstring for what is faked and how)."""

import os
import time

import torch

from exllamav2 import ExLlamaV2Cache_8bit
from exllamav2.attn import has_flash_attn_with_paged


class ExLlamaV2Sampler:
    class Settings:
        @staticmethod
        def greedy():
            return ExLlamaV2Sampler.Settings()


class ExLlamaV2DynamicJob:
    def __init__(self, input_ids, max_new_tokens, gen_settings=None, identifier=None, stop_conditions=None, **_kw):
        assert input_ids.shape[0] == 1
        self.input_ids, self.max_new_tokens, self.identifier = input_ids, max_new_tokens, identifier
        self.new_tokens = 0


class ExLlamaV2DynamicGenerator:
    def __init__(self, model, cache, tokenizer, max_batch_size=None, paged=True, **_kw):
        if paged:
            assert has_flash_attn_with_paged, "Paged attention required Flash Attention 2.5.7 or later"
            assert not model.config.no_flash_attn, "Paged mode requires flash-attn, but flash-attn is disabled in model config."
        assert not isinstance(cache, ExLlamaV2Cache_8bit), \
            "Dynamic generator does not currently work with 8-bit cache. Use either FP16 or Q4."
        assert cache.max_seq_len % 256 == 0, f"cache.max_seq_len must be multiple of 256, received {cache.max_seq_len}"
        self.paged, self.cache, self.max_batch_size = paged, cache, max_batch_size or 256
        self.pending, self.active = [], []
        self.step_s = float(os.environ.get("FAKE_EXL2_STEP_S", "0.004"))
        self.hang_at = int(os.environ.get("FAKE_EXL2_HANG_AT", "0") or 0)

    def enqueue(self, jobs):
        self.pending += jobs if isinstance(jobs, list) else [jobs]
        if self.hang_at and len(self.pending) == self.hang_at:
            with open(os.environ.get("FAKE_PID_FILE", os.devnull), "w") as fh:
                fh.write(f"{os.getpid()}\n")
            time.sleep(600)

    def num_remaining_jobs(self):
        return len(self.pending) + len(self.active)

    def iterate(self):
        room = self.max_batch_size if self.paged else 1  # unpaged: one page, one job
        while self.pending and len(self.active) < room:
            if self.paged:  # each job's context fits in the cache beside the others (pages allocated)
                assert sum(j.input_ids.shape[-1] + j.max_new_tokens for j in self.active + self.pending[:1]) \
                    <= self.cache.max_seq_len, "Job requires more pages than are available"
            self.active.append(self.pending.pop(0))
        if not self.active:
            return []
        time.sleep(self.step_s * (1 + 0.1 * (len(self.active) - 1)))
        out = []
        for job in list(self.active):
            job.new_tokens += 1
            eos = job.new_tokens >= job.max_new_tokens
            out.append({"job": job, "stage": "streaming", "identifier": job.identifier, "eos": eos, "text": "x",
                        "token_ids": torch.Tensor([[7]])})
            if eos:
                self.active.remove(job)
        return out
