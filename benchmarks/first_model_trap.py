"""Reproduce the first-model slowdown seen on the H200 and find where its time goes.

Seen before (../shared/notes/device-recipes.md): in one process, the first synthetic GPTQ model
decoded ~15x slower than a second load of the same model, for 1000+ tokens, with one core busy,
the GPU 4-8% utilised and ~270 minor page faults per token; the second load took none. That run
wrote the model with torch + safetensors in the same process just before loading it, so this
script does the same (--write-model), then for each of two loads: warms up, times windows with
the process's rusage, /proc/vmstat deltas and NVML utilisation, attributes time and page
faults to each ExLlamaV2 module over 64 tokens, and profiles 64 tokens with cProfile.

usage (GPU machine): python benchmarks/first_model_trap.py --write-model /tmp/trap [--out trap.json]
                     PYTHONMALLOC=malloc python benchmarks/first_model_trap.py --write-model /tmp/trap2
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VMSTAT_KEYS = ("pgfault", "pgmajfault", "numa_hint_faults", "numa_pte_updates", "thp_fault_alloc", "pgmigrate_success",
               "nr_dirty", "nr_writeback", "compact_stall", "pgfree")


def vmstat() -> dict[str, int]:
    out = {}
    try:
        for line in open("/proc/vmstat"):
            k, v = line.split()
            if k in VMSTAT_KEYS:
                out[k] = int(v)
    except OSError:
        pass
    return out


def read(path: str) -> str:
    try:
        return open(path).read().strip()
    except OSError as exc:
        return f"unreadable ({exc.strerror})"


def write_model_like_original(out: str, layers: int) -> None:
    """torch tensors in this process, then safetensors.torch.save_file: as the first experiment did."""
    from dataclasses import replace

    import torch
    from safetensors.torch import save_file

    from doctor.facts.engines.build_cache import exllamav2_location
    from doctor.probe.synthetic import QWEN_27B_LIKE, calibration_texts, config_json, train_tokenizer

    os.makedirs(out, exist_ok=True)
    vocab = train_tokenizer(__import__("pathlib").Path(out), calibration_texts(exllamav2_location()), 8192)
    shape = replace(QWEN_27B_LIKE, layers=layers, vocab=vocab)
    json.dump(config_json(shape, "gptq-sequential"), open(os.path.join(out, "config.json"), "w"))
    t = {"model.embed_tokens.weight": (torch.randn(vocab, shape.hidden) * 0.02).half(),
         "model.norm.weight": torch.ones(shape.hidden).half(), "lm_head.weight": (torch.randn(vocab, shape.hidden) * 0.02).half()}
    for i in range(layers):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = torch.ones(shape.hidden).half()
        t[p + "post_attention_layernorm.weight"] = torch.ones(shape.hidden).half()
        for name, fin, fout in shape.linears():
            t[p + name + ".qweight"] = torch.randint(-2 ** 31, 2 ** 31 - 1, (fin // 8, fout), dtype=torch.int32)
            t[p + name + ".qzeros"] = torch.full((fin // 128, fout // 8), 0x77777777, dtype=torch.int32)
            t[p + name + ".scales"] = torch.full((fin // 128, fout), 0.002).half()
            t[p + name + ".g_idx"] = (torch.arange(fin) // 128).int()
    save_file(t, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    del t


class ModuleTimer:
    """Wrap every module's forward: wall ms and minor faults per module kind."""

    def __init__(self, model):
        self.model, self.ms, self.faults, self.orig = model, defaultdict(float), defaultdict(int), {}
        for m in model.modules:
            self.orig[id(m)] = m.forward
            m.forward = self._wrap(m, m.forward)

    def _wrap(self, m, fwd):
        kind = type(m).__name__

        def inner(*a, **k):
            r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.perf_counter()
            out = fwd(*a, **k)
            self.ms[kind] += (time.perf_counter() - t0) * 1000
            self.faults[kind] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0
            return out
        return inner

    def restore(self):
        for m in self.model.modules:
            m.forward = self.orig[id(m)]


def decode(torch, model, cache, tok, n):
    for _ in range(n):
        if cache.current_seq_len + 2 >= cache.max_seq_len:
            cache.current_seq_len = 128
        tok = model.forward(tok, cache)[:, -1, :].argmax(-1, keepdim=True).cpu()
    return tok


def one_load(torch, exl, model_dir, index, args, sampler_t0):
    cfg = exl.ExLlamaV2Config(model_dir)
    cfg.max_seq_len = 2048
    t0 = time.perf_counter()
    model = exl.ExLlamaV2(cfg)
    cache = exl.ExLlamaV2Cache(model, max_seq_len=2048, lazy=True)
    model.load_autosplit(cache)
    load_s = time.perf_counter() - t0
    res = {"load": index, "load_s": round(load_s, 2), "windows": []}
    tok = torch.tensor([[1]])
    with torch.inference_mode():
        cache.current_seq_len = 128
        tok = decode(torch, model, cache, tok, args.warmup)
        for w in range(args.windows):
            r0, v0, t0 = resource.getrusage(resource.RUSAGE_SELF), vmstat(), time.perf_counter()
            tok = decode(torch, model, cache, tok, args.window)
            torch.cuda.synchronize()
            r1, v1, t1 = resource.getrusage(resource.RUSAGE_SELF), vmstat(), time.perf_counter()
            wall = t1 - t0
            res["windows"].append({
                "tok_s": round(args.window / wall, 2),
                "cpu_wall": round((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / wall, 3),
                "minflt_per_token": round((r1.ru_minflt - r0.ru_minflt) / args.window, 1),
                "vol_ctx_switches": r1.ru_nvcsw - r0.ru_nvcsw, "invol_ctx_switches": r1.ru_nivcsw - r0.ru_nivcsw,
                "vmstat_delta": {k: v1.get(k, 0) - v0.get(k, 0) for k in v0},
                "t0_s": round(t0 - sampler_t0, 3), "t1_s": round(t1 - sampler_t0, 3)})
        timer = ModuleTimer(model)
        tok = decode(torch, model, cache, tok, 64)
        timer.restore()
        res["per_module_64_tokens"] = {k: {"ms": round(timer.ms[k], 2), "minflt": timer.faults[k]} for k in timer.ms}
        prof = cProfile.Profile()
        prof.enable()
        tok = decode(torch, model, cache, tok, 64)
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(14)
        res["cprofile_top"] = s.getvalue()[-4000:]
    model.unload()
    del model, cache
    torch.cuda.empty_cache()
    return res


def sdpa_choice(torch) -> str:
    """Which fused SDPA backend torch picks for a decode-shaped call (1 query, 800 keys, 40 heads of 128)."""
    try:
        q = torch.zeros(1, 40, 1, 128, dtype=torch.half, device="cuda")
        k = torch.zeros(1, 40, 800, 128, dtype=torch.half, device="cuda")
        idx = torch._fused_sdp_choice(q, k, k)
        from torch.nn.attention import SDPBackend

        return next((b.name for b in SDPBackend if int(b.value) == int(idx)), str(idx))
    except Exception as exc:  # noqa: BLE001
        return f"unknown ({type(exc).__name__}: {exc})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write-model", metavar="DIR")
    ap.add_argument("--model", metavar="DIR")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--windows", type=int, default=2)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--loads", type=int, default=2)
    ap.add_argument("--no-cudnn-sdp", action="store_true", help="torch.backends.cuda.enable_cudnn_sdp(False) before loading")
    ap.add_argument("--out")
    args = ap.parse_args()
    info = {"pid": os.getpid(), "python": sys.version.split()[0], "PYTHONMALLOC": os.environ.get("PYTHONMALLOC", ""),
            "numa_balancing": read("/proc/sys/kernel/numa_balancing"),
            "thp": read("/sys/kernel/mm/transparent_hugepage/enabled"),
            "cpus": os.cpu_count()}
    t_write = time.perf_counter()
    if args.write_model:
        write_model_like_original(args.write_model, args.layers)
    info["write_s"] = round(time.perf_counter() - t_write, 2)
    model_dir = args.write_model or args.model
    import exllamav2 as exl
    import torch

    if args.no_cudnn_sdp:
        torch.backends.cuda.enable_cudnn_sdp(False)
    info["sdpa_backend_for_decode"] = sdpa_choice(torch)

    from doctor.facts.sampling import start

    sampler = start([0], pids=[os.getpid()], hz=10)
    t0 = time.perf_counter()
    loads = [one_load(torch, exl, model_dir, i + 1, args, t0) for i in range(args.loads)]
    series = sampler.stop()
    g = series.gpus[0] if series.gpus else None
    for ld in loads:
        for w in ld["windows"]:
            utils = [s.util_gpu_pct for s in (g.samples if g else ()) if w["t0_s"] <= s.t_s <= w["t1_s"] and s.util_gpu_pct is not None]
            w["gpu_util_pct"] = round(sum(utils) / len(utils), 1) if utils else None
    print(json.dumps(info))
    print(f"{'load':<6}{'window':<8}{'tok/s':>9}{'CPU/wall':>10}{'faults/tok':>12}{'GPU util %':>12}{'numa hint':>11}")
    for ld in loads:
        for i, w in enumerate(ld["windows"]):
            print(f"{ld['load']:<6}{i + 1:<8}{w['tok_s']:>9.1f}{w['cpu_wall']:>10.2f}{w['minflt_per_token']:>12.1f}"
                  f"{w['gpu_util_pct'] if w['gpu_util_pct'] is not None else float('nan'):>12}{w['vmstat_delta'].get('numa_hint_faults', 0):>11}")
        print(f"  per module (64 tokens): {json.dumps(ld['per_module_64_tokens'])}")
    print(loads[0]["cprofile_top"][-2500:])
    if args.out:
        json.dump({"info": info, "loads": loads}, open(args.out, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
