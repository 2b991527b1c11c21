"""A stand-in for doctor.probe.worker that speaks the real protocol without torch or a GPU.

The spec's `label` picks the behaviour: result | crash | hang | error-oom | error-model-load | grandchild | noisy.
Run by the runner tests as `python -m fake_probe_worker` (this folder on PYTHONPATH).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from doctor.model.probe_results import DecodePass, DecodeRun, MemoryUse, ModelShape, PrefillResult, ProbeResult
from doctor.model.serialize import to_jsonable
from doctor.probe.protocol import Emitter, spec_from_json


def result(model_path: str) -> ProbeResult:
    runs = tuple(DecodeRun(run=i, tokens=128, seconds=2.0, tok_s=64.0, past_len=127, cpu_s=2.0, cpu_wall=1.0,
                           minor_faults=0, major_faults=0, t_start_s=1.0 + 2 * i, t_end_s=3.0 + 2 * i) for i in (1, 2, 3))
    return ProbeResult(
        engine="exllamav2 0.3.2", torch="2.4.0+cu121", device_name="Tesla V100-PCIE-16GB", compute_capability="7.0",
        model_path=model_path,
        shape=ModelShape(architecture="LlamaForCausalLM", format="exl2", layers=64, hidden_size=5120, kv_heads=8,
                         head_dim=128, vocab_size=152064, bpw=3.75),
        memory=MemoryUse(weight_bytes_gpu=12_700_000_000, weight_bytes_cpu=1_557_135_360, cache_bytes=1_140_850_688,
                         kv_bytes_per_token=139_264.0, peak_allocated_mib=15_100.0, reserved_mib=15_200.0,
                         device_total_mib=16_160.5),
        max_seq_len=8192, max_seq_len_source="--max-seq-len", cache_mode="q8", split="autosplit", attention="xformers",
        prompt_tokens=128, prefill=PrefillResult(tokens=127, seconds=(0.2, 0.2, 0.2)),
        passes=(DecodePass(index=1, load_s=40.0, warmup_tokens=256, warmup_s=4.0, runs=runs),), reported_pass=1)


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    em = Emitter(proto)
    em.emit("phase", phase="start", message="fake worker", total=None, protocol=1, pid=os.getpid())
    spec = spec_from_json(sys.stdin.read())
    mode = spec.label
    em.phase("import", "importing")
    if mode == "noisy":
        print("## a stray line from a library, not an event")  # goes to stderr (the log), never breaks the protocol
    em.phase("load", "loading", 10)
    for i in range(1, 11):
        em.progress("load", i, 10, "modules")
    if mode == "crash":
        sys.stderr.write("Fatal Python error: Segmentation fault\n")
        sys.stderr.flush()
        os._exit(139)
    if mode == "error-oom":
        em.error("oom", "load", "out of GPU memory while loading: torch.OutOfMemoryError: CUDA out of memory. "
                 "Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 1.02 GiB is free.")
        return 2
    if mode == "error-model-load":
        em.error("model-load", "load", "ExLlamaV2 could not load the model: ValueError:  ## No .safetensors files found "
                 "in /models/Model [4.0bpw]")
        return 2
    if mode == "grandchild":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ["FAKE_PID_FILE"], "w") as fh:
            fh.write(f"{os.getpid()} {child.pid}\n")
        time.sleep(600)
    if mode == "hang":
        with open(os.environ.get("FAKE_PID_FILE", os.devnull), "w") as fh:
            fh.write(f"{os.getpid()}\n")
        time.sleep(600)
    em.phase("prefill", "prefill")
    em.phase("warmup", "warm-up", 256)
    em.phase("decode", "timed decode", 384)
    for r in (1, 2, 3):
        em.emit("sample", phase="decode", run=r, tokens=128, tok_s=64.0, cpu_wall=1.0, faults_per_token=0.0, **{"pass": 1})
        time.sleep(0.05)
    em.phase("done", "finished")
    em.emit("result", summary="64.0 tok/s", result=to_jsonable(result(spec.model_path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
