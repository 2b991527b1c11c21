"""A stand-in for transformers (see the fake torch beside it)."""

import os
import time

import torch

__version__ = os.environ.get("FAKE_TRANSFORMERS_VERSION", "5.0.0")


class BitsAndBytesConfig:
    def __init__(self, **kw):
        self.kw = kw


class _Config:
    vocab_size, num_hidden_layers = 4096, 3


class _Out:
    def __init__(self):
        self.logits = torch._Tensor((1, 1, 4096), 4, value=7)
        self.past_key_values = object()


class _Model:
    config = _Config()

    def __init__(self, quantized):
        self.quantized = quantized
        self.embed = torch._Tensor((4096, 512), 2)
        self.calls = 0

    def eval(self):
        return self

    def to(self, _dev):
        return self

    def parameters(self):
        yield self.embed
        w = torch._Tensor((512 * 1536 // 2, 1), 1) if self.quantized else torch._Tensor((1536, 512), 2)
        if self.quantized:
            w.quant_state = type("QS", (), {"absmax": torch._Tensor((512 * 1536 // 64,), 4), "code": torch._Tensor((16,), 4)})()
        yield w
        yield torch._Tensor((512,), 2, cuda=False)  # not on the card: not counted

    def buffers(self):
        yield torch._Tensor((64,), 4)

    def get_input_embeddings(self):
        return type("Emb", (), {"weight": self.embed})()

    def __call__(self, input_ids=None, past_key_values=None, use_cache=True):
        self.calls += 1
        if os.environ.get("FAKE_HF_FAIL") == "decode" and self.calls > 3:
            raise RuntimeError("CUDA error: an illegal memory access was encountered\nmore")
        time.sleep(float(os.environ.get("FAKE_STEP_S", "0.002")))
        return _Out()


    def generate(self, input_ids, attention_mask=None, max_new_tokens=0, min_new_tokens=0, do_sample=True,
                 streamer=None, pad_token_id=None):
        """As generate() does with a streamer: the prompt handed over first, then each new token after its step."""
        assert min_new_tokens == max_new_tokens and not do_sample  # the probe's greedy, EOS-proof generation
        if streamer is not None:
            streamer.put(input_ids)
        for _ in range(max_new_tokens):
            out = self(input_ids=input_ids, use_cache=True)
            if streamer is not None:
                streamer.put(out.logits.argmax(-1))
        if streamer is not None:
            streamer.end()
        return input_ids


class AutoModelForCausalLM:
    @staticmethod
    def from_pretrained(path, **kw):
        fail = os.environ.get("FAKE_HF_FAIL")
        if fail == "oom":
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB\ndetails")
        if fail == "load":
            raise ValueError(f"Unrecognized configuration class in {path}")
        expected = "dtype" if tuple(int(x) for x in __version__.split(".")[:2]) >= (4, 56) else "torch_dtype"
        if expected not in kw:
            raise TypeError(f"this transformers takes {expected}")
        return _Model("quantization_config" in kw)
