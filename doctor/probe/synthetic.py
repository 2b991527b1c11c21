"""Random-weight Llama-shaped models for measuring the engine without downloading one.

Decode speed does not depend on the weight values, only on the bytes and the kernels, so a
model of random numbers measures what ExLlamaV2 reaches on this card. What works (see
../shared/notes/device-recipes.md): config.json + FP16 safetensors + a byte-level BPE
tokenizer.json trained with `tokenizers` on exllamav2's own calibration text (a WordLevel
tokenizer fails in get_id_to_piece_list()). The 4-bit GPTQ variants use random
qweight/qzeros/scales, which run ExLlamaV2's real GPTQ kernels (and CUDA graphs); with
`gptq-act-order` each layer's g_idx is a random permutation of the groups (desc_act), with
`gptq-sequential` it is the trivial arange(in) // group, with `gptq` there is none.

Needs numpy and tokenizers (both come with ExLlamaV2's dependencies). Run as a child by the
probe runner: `python -m doctor.probe.synthetic --out DIR --format fp16 --target-gb 6`; it
speaks the probe's JSON-lines protocol (phase, progress, result).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable

from doctor.facts.engines.build_cache import exllamav2_location
from doctor.knowledge.arithmetic.model_bytes import layer_linears, matrix_bytes
from doctor.model.ids import FailureKind
from doctor.model.units import GIB, gb
from doctor.probe.protocol import Emitter
from doctor.probe.safetensors_writer import TensorEntry, write_safetensors

FORMATS = ("fp16", "gptq", "gptq-sequential", "gptq-act-order")
DEFAULT_FORMAT = "gptq"  # the quantized path users run (fused kernels, CUDA graphs); FP16 layers run plain torch matmuls
DEFAULT_CAP_GB = 6.0  # big enough to be a real load on a 16 GB card, quick to write and load
GROUP = 128


@dataclass(frozen=True)
class Shape:
    hidden: int = 4096
    intermediate: int = 14336
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    layers: int = 8
    vocab: int = 8192  # replaced by the trained tokenizer's real size

    def linears(self) -> list[tuple[str, int, int]]:
        """(name, in_features, out_features) of one decoder layer."""
        return layer_linears(self.hidden, self.intermediate, self.heads, self.kv_heads, self.head_dim)

    def layer_params(self) -> int:
        return sum(a * b for _, a, b in self.linears())


LLAMA_8B_LIKE = Shape()
QWEN_27B_LIKE = Shape(hidden=5120, intermediate=21760, heads=40, kv_heads=8, head_dim=128, layers=16)
TINY = Shape(hidden=1024, intermediate=2816, heads=8, kv_heads=4, head_dim=128, layers=2)  # quick to convert to EXL2
SHAPES = {"llama-8b": LLAMA_8B_LIKE, "qwen-27b": QWEN_27B_LIKE, "tiny": TINY}


def layer_bytes(shape: Shape, fmt: str) -> int:
    """The bytes of one decoder layer's weights as written here: FP16, or 4-bit GPTQ (g_idx only in the act-order
    and sequential variants), counted by the budget's own arithmetic."""
    method = "fp16" if fmt == "fp16" else "gptq"
    return int(sum(matrix_bytes(method, fin, fout, 4, GROUP, g_idx=fmt != "gptq") for _, fin, fout in shape.linears()))


def layers_for(target_bytes: float, shape: Shape, fmt: str) -> int:
    """How many decoder layers make the model's GPU weights about `target_bytes` (at least 2)."""
    fixed = 2 * shape.vocab * shape.hidden * 2  # embedding (stays in RAM) and lm_head
    return max(2, int((target_bytes - fixed / 2) // layer_bytes(shape, fmt)))


def target_bytes_for(free_vram_bytes: float | None, ram_available_bytes: float | None,
                     disk_free_bytes: float | None, cap_gb: float = DEFAULT_CAP_GB) -> float:
    """Size for the card: at most half the free VRAM (room for cache and scratch), a quarter of
    the free RAM (the loader stages each tensor in RAM), half the free temp disk, and the cap."""
    limits = [cap_gb * GIB]
    if free_vram_bytes:
        limits.append(0.5 * free_vram_bytes)
    if ram_available_bytes:
        limits.append(0.25 * ram_available_bytes)
    if disk_free_bytes:
        limits.append(0.5 * disk_free_bytes)
    return max(min(limits), 0.25 * GIB)


class RandomPool:
    """A block of random bytes written at random offsets: random-looking data at disk speed."""

    def __init__(self, data: bytes, seed: int):
        import numpy as np  # lazy: numpy (160 ms) exists only where the probe builds a model

        self.view = memoryview(data)
        self.rng = np.random.default_rng(seed)

    def writer(self) -> Callable[[BinaryIO, int], None]:
        def write(fh: BinaryIO, nbytes: int) -> None:
            off = int(self.rng.integers(0, len(self.view) // 4)) * 4
            while nbytes:
                chunk = min(nbytes, len(self.view) - off)
                fh.write(self.view[off:off + chunk])
                nbytes -= chunk
                off = 0
        return write


def _pools(seed: int) -> tuple[RandomPool, RandomPool]:
    import numpy as np  # lazy: numpy (160 ms) exists only where the probe builds a model

    rng = np.random.default_rng(seed)
    halves = (rng.standard_normal(1 << 24, dtype=np.float32) * 0.02).astype(np.float16)
    words = rng.integers(0, 1 << 32, size=1 << 24, dtype=np.uint32)
    return RandomPool(halves.tobytes(), seed + 1), RandomPool(words.tobytes(), seed + 2)


def _const(value: bytes) -> Callable[[BinaryIO, int], None]:
    def write(fh: BinaryIO, nbytes: int) -> None:
        block = value * (min(nbytes, 1 << 20) // len(value))
        while nbytes:
            chunk = min(nbytes, len(block))
            fh.write(block[:chunk])
            nbytes -= chunk
    return write


def _array(arr: Any) -> Callable[[BinaryIO, int], None]:
    def write(fh: BinaryIO, nbytes: int) -> None:
        fh.write(arr.tobytes())
    return write


def g_idx(fin: int, act_order: bool, rng: Any) -> "object":
    """GPTQ's group index per input row; act-order is a permutation that keeps each group's size."""
    import numpy as np  # lazy: numpy (160 ms) exists only where the probe builds a model

    idx = (np.arange(fin) // GROUP).astype(np.int32)
    if act_order:
        rng.shuffle(idx)
    return idx


def tensor_entries(shape: Shape, fmt: str, seed: int = 0) -> list[TensorEntry]:
    import numpy as np  # lazy: numpy (160 ms) exists only where the probe builds a model

    halves, words = _pools(seed)
    rng = np.random.default_rng(seed + 3)
    ones = _const(np.float16(1.0).tobytes())
    h, v = shape.hidden, shape.vocab
    out = [TensorEntry("model.embed_tokens.weight", "F16", (v, h), halves.writer())]
    for layer in range(shape.layers):
        p = f"model.layers.{layer}."
        out.append(TensorEntry(p + "input_layernorm.weight", "F16", (h,), ones))
        out.append(TensorEntry(p + "post_attention_layernorm.weight", "F16", (h,), ones))
        for name, fin, fout in shape.linears():
            key = p + name
            if fmt == "fp16":  # HF layout: weight [out, in]
                out.append(TensorEntry(key + ".weight", "F16", (fout, fin), halves.writer()))
                continue
            out.append(TensorEntry(key + ".qweight", "I32", (fin // 8, fout), words.writer()))
            out.append(TensorEntry(key + ".qzeros", "I32", (fin // GROUP, fout // 8), _const(b"\x77\x77\x77\x77")))
            out.append(TensorEntry(key + ".scales", "F16", (fin // GROUP, fout), _const(np.float16(0.002).tobytes())))
            if fmt != "gptq":
                out.append(TensorEntry(key + ".g_idx", "I32", (fin,), _array(g_idx(fin, fmt == "gptq-act-order", rng))))
    out.append(TensorEntry("model.norm.weight", "F16", (h,), ones))
    out.append(TensorEntry("lm_head.weight", "F16", (v, h), halves.writer()))
    return out


def calibration_texts(exllamav2_dir: str | None) -> list[str]:
    """exllamav2's own calibration text (it ships with the package): real text for a real BPE."""
    if not exllamav2_dir:
        return []
    folder = Path(exllamav2_dir) / "conversion" / "standard_cal_data"
    return sorted(str(p) for p in folder.glob("*.utf8"))


def train_tokenizer(out_dir: Path, files: list[str], vocab_size: int) -> int:
    """A byte-level BPE tokenizer.json; returns its real vocabulary size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # lazy: tokenizers exists only where the probe builds a model

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    if files:
        tok.train(files, trainer)
    else:  # no exllamav2 text here (tests): a small built-in corpus still gives a working byte-level BPE
        tok.train_from_iterator([_FALLBACK_TEXT] * 50, trainer)
    tok.save(str(out_dir / "tokenizer.json"))
    (out_dir / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}))
    return tok.get_vocab_size()


_FALLBACK_TEXT = ("The quick brown fox jumps over the lazy dog. Memory bandwidth sets the ceiling of decode speed; "
                  "every token reads all the weights once. def main():\n    return 0\n")


def config_json(shape: Shape, fmt: str) -> dict:
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": shape.hidden,
           "intermediate_size": shape.intermediate, "num_hidden_layers": shape.layers,
           "num_attention_heads": shape.heads, "num_key_value_heads": shape.kv_heads, "head_dim": shape.head_dim,
           "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "max_position_embeddings": 8192, "vocab_size": shape.vocab,
           "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False, "torch_dtype": "float16"}
    if fmt != "fp16":
        cfg["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": GROUP,
                                      "desc_act": fmt == "gptq-act-order", "sym": True, "checkpoint_format": "gptq"}
    return cfg


@dataclass(frozen=True)
class SyntheticModel:
    path: str
    format: str
    shape: Shape
    gpu_weight_bytes: int  # everything but the embedding, which ExLlamaV2 keeps in RAM
    file_bytes: int

    @property
    def label(self) -> str:
        return (f"synthetic {self.format} Llama ({self.shape.layers} layers of {self.shape.hidden}/{self.shape.intermediate}, "
                f"{gb(self.gpu_weight_bytes, 2)} of weights on the GPU; random values)")


def build(out_dir: str, fmt: str = "fp16", shape: Shape = LLAMA_8B_LIKE, target_bytes: float | None = None,
          seed: int = 0, exllamav2_dir: str | None = None, tokenizer_vocab: int = 8192,
          on_progress: Callable[[int, int], None] | None = None) -> SyntheticModel:
    if fmt not in FORMATS:
        raise ValueError(f"unknown synthetic format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab = train_tokenizer(out, calibration_texts(exllamav2_dir), tokenizer_vocab)
    shape = Shape(**{**asdict(shape), "vocab": vocab})
    if target_bytes:
        shape = Shape(**{**asdict(shape), "layers": layers_for(target_bytes, shape, fmt)})
    (out / "config.json").write_text(json.dumps(config_json(shape, fmt), indent=2))
    if fmt != "fp16":
        (out / "quantize_config.json").write_text(json.dumps(config_json(shape, fmt)["quantization_config"], indent=2))
    entries = tensor_entries(shape, fmt, seed)
    size = write_safetensors(str(out / "model.safetensors"), entries, on_tensor=on_progress)
    embed = shape.vocab * shape.hidden * 2
    model = SyntheticModel(path=str(out), format=fmt, shape=shape, gpu_weight_bytes=size - embed, file_bytes=size)
    (out / "synthetic.json").write_text(json.dumps({**asdict(model), "label": model.label}, indent=2))
    return model


def main(argv: list[str] | None = None) -> int:
    """Child entry point: build one model, speaking the probe protocol on stdout."""
    p = argparse.ArgumentParser(prog="python -m doctor.probe.synthetic")
    p.add_argument("--out", required=True)
    p.add_argument("--format", choices=FORMATS, default="fp16")
    p.add_argument("--target-gb", type=float, default=None)
    p.add_argument("--shape", choices=tuple(SHAPES), default="llama-8b")
    p.add_argument("--layers", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    em = Emitter(sys.stdout)
    shape = SHAPES[args.shape]
    if args.layers:
        shape = Shape(**{**asdict(shape), "layers": args.layers})
    em.phase("synthetic", f"writing a random-weight {args.format} model to {args.out}")
    try:
        model = build(args.out, args.format, shape, args.target_gb * GIB if args.target_gb else None, args.seed,
                      exllamav2_location(), on_progress=lambda d, t: em.progress("synthetic", d, t, "tensors")
                      if d % 16 == 0 or d == t else None)
    except ImportError as exc:
        em.error(FailureKind.NOT_INSTALLED, "synthetic", f"the synthetic model needs numpy and tokenizers: {exc}")
        return 1
    except OSError as exc:
        em.error(FailureKind.INTERNAL, "synthetic", f"cannot write the synthetic model to {args.out}: {exc.strerror or exc}")
        return 1
    em.emit("result", summary=model.label, result={**asdict(model), "label": model.label})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
