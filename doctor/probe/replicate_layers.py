"""A deep model from a shallow one: copy the decoder layers of a converted model under more layer indices.

Why: converting 13 GB to EXL2 takes far longer than a device call, but decode speed depends only on
the bytes read and the kernels run per token, not on the weight values. So a 1-2 layer random model
of a 27B layer shape is converted with ExLlamaV2's own converter, and its quantized layers are
repeated to 64: the result reads per token what a real ~4 bpw EXL2 27B reads, with real EXL2 tensors
(q_weight, q_scale, q_perm ...). Layer j of the output is layer j mod n of the source; every tensor
outside `model.layers.N.` (embedding, norm, head) is written once; config.json gets the new
num_hidden_layers; tokenizer and other files are copied. Streams bytes, never the model in RAM.

  python -m doctor.probe.replicate_layers --src CONVERTED --out DIR --layers 64
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from doctor.facts.modeldir.safetensors_header import HeaderError, TensorHeader, read_header
from doctor.probe.safetensors_writer import ITEMSIZE, TensorEntry, write_safetensors

LAYER_KEY = re.compile(r"^(?P<prefix>.*?layers\.)(?P<index>\d+)(?P<rest>\..+)$")
CHUNK = 64 << 20


@dataclass(frozen=True)
class SourceTensor(TensorHeader):
    """A tensor as its file's header states it, with the file and where the file's data section starts."""

    file: str
    data_start: int

    @property
    def start(self) -> int:
        """The absolute offset of the tensor's first data byte in `file`."""
        return self.data_start + self.begin


def source_tensors(path: str) -> tuple[dict[str, str], list[SourceTensor]]:
    """The metadata and tensors of one safetensors file, in file order; a lying header is an error."""
    try:
        h = read_header(path)
    except HeaderError as exc:
        raise ValueError(str(exc)) from None
    if h.problem:
        raise ValueError(h.problem)
    tensors = [SourceTensor(t.name, t.dtype, t.shape, t.begin, t.end, path, h.data_start) for t in h.tensors]
    return h.metadata, sorted(tensors, key=lambda t: t.start)


def _copier(src: SourceTensor) -> Callable[[BinaryIO, int], None]:
    """Copy the tensor's bytes in the kernel where it can (copy_file_range), else through a buffer."""
    def write(fh: BinaryIO, nbytes: int) -> None:
        with open(src.file, "rb") as inp:
            left, offset = nbytes, src.start
            if hasattr(os, "copy_file_range"):
                fh.flush()
                try:
                    while left:
                        done = os.copy_file_range(inp.fileno(), fh.fileno(), min(CHUNK, left), offset)
                        if done <= 0:
                            break
                        left, offset = left - done, offset + done
                except OSError:
                    pass  # another file system or kernel: the buffered copy below does the rest
                fh.seek(0, os.SEEK_END)
            inp.seek(offset)
            while left:
                block = inp.read(min(CHUNK, left))
                if not block:
                    raise ValueError(f"{src.file}: {src.name} is cut short")
                fh.write(block)
                left -= len(block)
    return write


def plan_entries(tensors: list[SourceTensor], layers: int) -> list[TensorEntry]:
    """Tensors outside the layers once, then each of `layers` layers; wider dtypes first, so that every
    tensor's data starts at a multiple of its element size (as safetensors' own writer arranges)."""
    by_layer: dict[int, list[tuple[str, str, SourceTensor]]] = {}
    outside: list[SourceTensor] = []
    for t in tensors:
        m = LAYER_KEY.match(t.name)
        if m:
            by_layer.setdefault(int(m["index"]), []).append((m["prefix"], m["rest"], t))
        else:
            outside.append(t)
    if not by_layer:
        raise ValueError("the source has no tensors named ...layers.N....: nothing to replicate")
    sources = [by_layer[i] for i in sorted(by_layer)]

    def entry(name: str, t: SourceTensor) -> TensorEntry:
        if t.dtype not in ITEMSIZE:
            raise ValueError(f"{t.name}: dtype {t.dtype} is not one this writer knows")
        e = TensorEntry(name, t.dtype, t.shape, _copier(t))
        if e.nbytes != t.nbytes:
            raise ValueError(f"{t.name}: {t.nbytes} bytes on disk, {e.nbytes} by its dtype and shape")
        return e

    out = [entry(t.name, t) for t in outside]
    for j in range(layers):
        out += [entry(f"{prefix}{j}{rest}", t) for prefix, rest, t in sources[j % len(sources)]]
    return sorted(out, key=lambda e: -ITEMSIZE[e.dtype])


def replicate(src_dir: str, out_dir: str, layers: int,
              on_progress: Callable[[int, int], None] | None = None) -> dict:
    """Write the deep model; returns {layers, source_layers, file_bytes, layer_bytes}."""
    if layers < 1:
        raise ValueError("layers must be at least 1")
    src, out = Path(src_dir), Path(out_dir)
    files = sorted(src.glob("*.safetensors"))
    if not files:
        raise ValueError(f"no .safetensors files in {src}")
    out.mkdir(parents=True, exist_ok=True)
    meta: dict[str, str] = {}
    tensors: list[SourceTensor] = []
    for f in files:
        m, ts = source_tensors(str(f))
        meta = meta or m
        tensors += ts
    source_layers = len({int(lm["index"]) for t in tensors if (lm := LAYER_KEY.match(t.name))})
    entries = plan_entries(tensors, layers)
    size = write_safetensors(str(out / "model.safetensors"), entries, meta or None, on_tensor=on_progress)
    for f in src.iterdir():
        if f.is_file() and f.suffix != ".safetensors" and f.name not in ("config.json", "synthetic.json"):
            shutil.copy2(f, out / f.name)
    cfg = json.loads((src / "config.json").read_text())
    cfg["num_hidden_layers"] = layers
    (out / "config.json").write_text(json.dumps(cfg, indent=2))
    per_layer = sum(e.nbytes for e in entries if (lm := LAYER_KEY.match(e.name)) and lm["index"] == "0")
    return {"layers": layers, "source_layers": source_layers, "file_bytes": size, "layer_bytes": per_layer}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m doctor.probe.replicate_layers", description=__doc__.split("\n")[0])
    p.add_argument("--src", required=True, help="model directory whose layers are copied (e.g. an EXL2 conversion)")
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--label", default="", help="written to synthetic.json, which the probe reports as the model")
    a = p.parse_args(argv)
    try:
        info = replicate(a.src, a.out, a.layers)
    except (OSError, ValueError) as exc:
        print(f"replicate_layers: error: {exc}", file=sys.stderr)
        return 3
    if a.label:
        info["label"] = a.label.format(**info, gb=info["file_bytes"] / 1e9)
        (Path(a.out) / "synthetic.json").write_text(json.dumps(info, indent=2))
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
