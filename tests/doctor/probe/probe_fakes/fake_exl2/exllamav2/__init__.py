"""A stand-in for ExLlamaV2 0.3.2 with what doctor/probe/exl2_streams.py uses: config, model, caches, tokenizer,
and (in exllamav2.generator) the dynamic generator. It behaves as the real one is documented to:

- paged (flash-attn with paged attention, exllamav2.attn.has_flash_attn_with_paged): every active job advances one
  token per iterate(), a step of FAKE_EXL2_STEP_S x (1 + 0.1 x (jobs - 1)) seconds;
- unpaged: one page of the cache's whole length, so one job at a time, a step of FAKE_EXL2_STEP_S;
- ExLlamaV2Cache_8bit is refused by the generator, as dynamic.py asserts.

Failures where a real one would fail: FAKE_EXL2_OOM_CACHE=T raises torch's out-of-memory error for a cache of T
tokens or more (FAKE_EXL2_OOM_CACHE=1: at load); FAKE_EXL2_HANG_AT=N sleeps in the N-stream round (writing its pid to
FAKE_PID_FILE), for the interrupt tests.
"""

import os

import torch

__version__ = "0.3.2+fake"


def _oom_at(tokens):
    limit = int(os.environ.get("FAKE_EXL2_OOM_CACHE", "0") or 0)
    if limit and tokens >= limit:
        raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {tokens // 1024} GiB. GPU 0 has a total "
                                     "capacity of 15.77 GiB of which 1.02 GiB is free.")


class ExLlamaV2Config:
    def __init__(self, path):
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise FileNotFoundError(f"Can't find config.json in {path}")
        self.max_seq_len = 32768
        self.vocab_size = 8192
        self.no_flash_attn = os.environ.get("FAKE_EXL2_CONFIG_NO_FLASH") == "1"


class ExLlamaV2:
    def __init__(self, config):
        self.config = config

    def load_autosplit(self, cache, callback=None):
        _oom_at(cache.max_seq_len)
        for i in range(1, 5):
            if callback:
                callback(i, 4)

    def load(self, split, callback=None):
        self.load_autosplit(ExLlamaV2Cache(self, 1), callback)


class ExLlamaV2CacheBase:
    def __init__(self, model, max_seq_len=-1, lazy=False):
        self.model, self.max_seq_len = model, max_seq_len
        if not lazy:
            _oom_at(max_seq_len)


class ExLlamaV2Cache(ExLlamaV2CacheBase):
    pass


class ExLlamaV2Cache_8bit(ExLlamaV2CacheBase):  # noqa: N801 - ExLlamaV2's own name
    pass


class ExLlamaV2Cache_Q(ExLlamaV2CacheBase):  # noqa: N801
    pass


class ExLlamaV2Cache_Q4(ExLlamaV2Cache_Q):  # noqa: N801
    pass


class ExLlamaV2Cache_Q6(ExLlamaV2Cache_Q):  # noqa: N801
    pass


class ExLlamaV2Cache_Q8(ExLlamaV2Cache_Q):  # noqa: N801
    pass


class ExLlamaV2Tokenizer:
    def __init__(self, config):
        self.config = config

    def encode(self, text):
        return torch.Tensor([[(ord(c) * 7) % 8000 + 1 for c in text[:40]]])

    def get_vocab_size(self):
        return 8192
