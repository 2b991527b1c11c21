"""Does the doctor's VRAM arithmetic match what ExLlamaV2 really allocates? Run on a GPU with exllamav2.

    MAX_JOBS=16 PYTHONUNBUFFERED=1 python3 benchmarks/kv_cache_vs_exllamav2.py --out results/

Self-contained: it writes random-weight Llama-shaped models into a temp dir (config.json + model.safetensors,
no tokenizer: ExLlamaV2 loads a model and allocates a cache without one), once as FP16 and once as 4-bit GPTQ
(the quantized path, which allocates ExLlamaV2's fixed scratch). The doctor reads each directory with its own
gatherer (headers only), predicts, and then ExLlamaV2 loads it:
  * for every cache mode: KV bytes ExLlamaV2 allocated (torch allocator delta and the cache tensors' own sizes)
    vs predicted; the VRAM the process needs after prefilling the whole cache and decoding (torch's peak
    *allocated* bytes + the measured CUDA context) vs the predicted total;
  * once through load_autosplit: its load-time peak (reserves + test forward) vs predicted.
torch's peak *reserved* bytes are recorded too but are not the need: they include blocks cached from loading,
which the allocator frees and retries with before it raises out-of-memory.
Prints a table and writes kv_cache_vs_exllamav2.json. Pass criteria (issue 3): KV within 2 %, total within 5 %.

    python3 benchmarks/kv_cache_vs_exllamav2.py --reanalyze benchmarks/results/kv_cache_vs_exllamav2.json

re-evaluates a recorded run (no GPU needed) against today's knowledge, e.g. a changed CUDA-context allowance.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from doctor.facts.modeldir.directory import gather_model  # noqa: E402
from doctor.knowledge.arithmetic.model_bytes import dims, model_bytes  # noqa: E402
from doctor.knowledge.arithmetic.vram_budget import GpuRoom, plan_budget  # noqa: E402
from doctor.knowledge.exllamav2_memory import CUDA_CONTEXT_MIB, cuda_context_bytes  # noqa: E402
from doctor.knowledge.gpus import spec_for_name  # noqa: E402
from doctor.knowledge.kv_cache import (
    CACHE_MODE_ORDER,  # noqa: E402
    KV_CACHE_MODES,  # noqa: E402
)
from doctor.model.units import MIB  # noqa: E402

SHAPE = dict(hidden=4096, intermediate=14336, layers=8, heads=32, kv_heads=8, head_dim=128, vocab=32000)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def write_model(directory: Path, gptq: bool, seed: int = 0) -> None:
    """A random Llama: FP16 .weight tensors, or GPTQ 4-bit qweight/qzeros/scales/g_idx (group 128)."""
    import torch
    from safetensors.torch import save_file

    s = SHAPE
    directory.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    H, I, L, nh, nkv, hd, V = s["hidden"], s["intermediate"], s["layers"], s["heads"], s["kv_heads"], s["head_dim"], s["vocab"]
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": H, "intermediate_size": I,
           "num_hidden_layers": L, "num_attention_heads": nh, "num_key_value_heads": nkv, "head_dim": hd,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 32768, "vocab_size": V,
           "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False, "torch_dtype": "float16"}
    if gptq:
        cfg["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
    (directory / "config.json").write_text(json.dumps(cfg, indent=2))

    def rnd(*shape):
        return (torch.randn(*shape, device="cuda", generator=gen, dtype=torch.float16) * 0.02).cpu()

    t = {"model.embed_tokens.weight": rnd(V, H), "model.norm.weight": torch.ones(H, dtype=torch.float16),
         "lm_head.weight": rnd(V, H)}

    def lin(key, out_f, in_f):
        if not gptq:
            t[key + ".weight"] = rnd(out_f, in_f)
            return
        g = 128
        t[key + ".qweight"] = torch.randint(-2 ** 31, 2 ** 31 - 1, (in_f // 8, out_f), dtype=torch.int32, device="cuda", generator=gen).cpu()
        t[key + ".qzeros"] = torch.full((in_f // g, out_f // 8), 0x77777777, dtype=torch.int32)
        t[key + ".scales"] = torch.full((in_f // g, out_f), 0.002, dtype=torch.float16)
        t[key + ".g_idx"] = (torch.arange(in_f) // g).int()

    for i in range(L):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = torch.ones(H, dtype=torch.float16)
        t[p + "post_attention_layernorm.weight"] = torch.ones(H, dtype=torch.float16)
        lin(p + "self_attn.q_proj", nh * hd, H)
        lin(p + "self_attn.k_proj", nkv * hd, H)
        lin(p + "self_attn.v_proj", nkv * hd, H)
        lin(p + "self_attn.o_proj", H, nh * hd)
        lin(p + "mlp.gate_proj", I, H)
        lin(p + "mlp.up_proj", I, H)
        lin(p + "mlp.down_proj", H, I)
    save_file(t, str(directory / "model.safetensors"), metadata={"format": "pt"})
    t.clear()  # frees the tensors (a `del` would leave `lin` closing over a deleted name)
    gc.collect()
    torch.cuda.empty_cache()


class Nvml:
    def __init__(self, index: int = 0):
        import pynvml

        pynvml.nvmlInit()
        self.m, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(index)

    def used(self) -> int:
        return int(self.m.nvmlDeviceGetMemoryInfo(self.h).used)

    def info(self) -> dict:
        mem = self.m.nvmlDeviceGetMemoryInfo(self.h)
        name = self.m.nvmlDeviceGetName(self.h)
        return {"name": name.decode() if isinstance(name, bytes) else name, "total_mib": mem.total / MIB,
                "free_mib": mem.free / MIB, "driver": str(self.m.nvmlSystemGetDriverVersion())}


def cache_tensor_bytes(cache) -> int:
    total = 0
    for name in ("key_states", "value_states", "key_scales", "value_scales"):
        total += sum(x.numel() * x.element_size() for x in getattr(cache, name, []) or [] if x is not None)
    for pair in (getattr(cache, "temp_tensors", None) or {}).values():
        total += sum(x.numel() * x.element_size() for x in pair)
    return total


def fill_and_decode(model, cache, seq_len: int, vocab: int, decode: int = 4) -> None:
    import torch

    ids = torch.randint(0, vocab - 1, (1, seq_len - decode))
    with torch.inference_mode():
        cache.current_seq_len = 0
        model.forward(ids, cache, preprocess_only=True)
        tok = ids[:, -1:]
        for _ in range(decode):
            logits = model.forward(tok, cache)
            tok = logits[:, -1, :].argmax(-1, keepdim=True).cpu()
    torch.cuda.synchronize()


def pct(pred: float, meas: float) -> float:
    return 100.0 * (pred - meas) / meas if meas else float("nan")


def run_model(kind: str, directory: Path, seq_len: int, nvml: Nvml, baseline_used: int, modes: list[str]) -> dict:
    import exllamav2
    import torch

    facts = gather_model(str(directory))
    mb, d = model_bytes(facts), dims(facts.config)
    quantized = facts.quant.method in ("exl2", "gptq")
    room = [GpuRoom(0, "cuda:0", torch.cuda.mem_get_info()[0] / MIB, torch.cuda.mem_get_info()[1] / MIB)]
    big_split = (room[0].free_mib / 1024,)
    context_allowance = cuda_context_bytes("%d.%d" % torch.cuda.get_device_capability(0))

    cfg = exllamav2.ExLlamaV2Config(str(directory))
    cfg.max_seq_len = seq_len
    model = exllamav2.ExLlamaV2(cfg)
    before = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    model.load()  # everything on GPU 0, like the seed's script
    torch.cuda.synchronize()
    weights_alloc = torch.cuda.memory_allocated() - before
    context = nvml.used() - baseline_used - torch.cuda.memory_reserved()
    log(f"{kind}: loaded in {time.perf_counter() - t0:.1f}s, torch allocated {weights_alloc / MIB:.1f} MiB, "
        f"CUDA context + non-torch {context / MIB:.1f} MiB; quant method seen by the doctor: {facts.quant.method}")
    rows = []
    for mode in modes:
        cls = getattr(exllamav2, KV_CACHE_MODES[mode].exllamav2_class)
        pred = plan_budget(mb, d, room, seq_len, mode, big_split, quantized, context_allowance).devices[0].components
        pred_ctx = plan_budget(mb, d, room, seq_len, mode, big_split, quantized, context_bytes=max(0, context)).devices[0]
        torch.cuda.reset_peak_memory_stats()
        a0 = torch.cuda.memory_allocated()
        cache = cls(model, max_seq_len=seq_len)
        torch.cuda.synchronize()
        kv_alloc = torch.cuda.memory_allocated() - a0
        kv_tensors = cache_tensor_bytes(cache)
        t0 = time.perf_counter()
        fill_and_decode(model, cache, seq_len, d.vocab)
        fill_s = time.perf_counter() - t0
        peak_torch = torch.cuda.max_memory_reserved()
        peak_alloc = torch.cuda.max_memory_allocated()
        persistent = torch.cuda.memory_allocated()
        measured_total = context + peak_alloc
        predicted_kv = pred["kv_cache"] + pred["cache_fp16_scratch"]
        predicted_total = sum(v for k, v in pred.items() if k != "transient_is")
        row = {
            "model": kind, "cache_mode": mode, "max_seq_len": seq_len,
            "kv_predicted_bytes": predicted_kv, "kv_allocated_bytes": kv_alloc, "kv_cache_tensors_bytes": kv_tensors,
            "kv_error_pct": round(pct(predicted_kv, kv_alloc), 3),
            "weights_predicted_bytes": pred["weights"] + pred["rope_tables"], "weights_allocated_bytes": weights_alloc,
            "fixed_scratch_predicted_bytes": pred["fixed_scratch"],
            "persistent_after_run_bytes": persistent,
            "transient_predicted_bytes": pred["transient"],
            "transient_measured_bytes": peak_alloc - persistent,
            "peak_allocated_bytes": peak_alloc, "peak_reserved_bytes": peak_torch,
            "cuda_context_measured_bytes": context, "cuda_context_estimate_bytes": pred["cuda_context"],
            "total_predicted_bytes": predicted_total, "total_measured_bytes": measured_total,
            "total_error_pct": round(pct(predicted_total, measured_total), 3),
            "total_measured_definition": "peak allocated + CUDA context (reserved-but-free blocks excluded)",
            "total_predicted_with_measured_context_bytes": pred_ctx.peak_bytes,
            "total_error_with_measured_context_pct": round(pct(pred_ctx.peak_bytes, measured_total), 3),
            "nvml_used_after_bytes": nvml.used() - baseline_used,
            "fill_seconds": round(fill_s, 2),
        }
        rows.append(row)
        log(f"{kind} {mode}: KV pred {predicted_kv / MIB:.1f} MiB vs alloc {kv_alloc / MIB:.1f} MiB ({row['kv_error_pct']:+.2f}%); "
            f"total pred {predicted_total / MIB:.0f} vs measured {measured_total / MIB:.0f} MiB ({row['total_error_pct']:+.2f}%)")
        del cache
        gc.collect()
        torch.cuda.empty_cache()
    model.unload()
    del model
    gc.collect()
    torch.cuda.empty_cache()
    return {"rows": rows, "doctor_model_bytes": {"gpu_bytes": mb.gpu_bytes, "source": mb.source,
                                                 "layers": len(mb.layer_bytes), "embedding_host_bytes": mb.embedding_bytes},
            "quant_method": facts.quant.method, "header_bytes_read": facts.bytes_read}


def run_autosplit(directory: Path, seq_len: int, mode: str, nvml: Nvml, baseline_used: int) -> dict:
    import exllamav2
    import torch

    facts = gather_model(str(directory))
    mb, d = model_bytes(facts), dims(facts.config)
    quantized = facts.quant.method in ("exl2", "gptq")
    free, total = torch.cuda.mem_get_info()
    room = [GpuRoom(0, "cuda:0", free / MIB, total / MIB)]
    cc = "%d.%d" % torch.cuda.get_device_capability(0)
    pred = plan_budget(mb, d, room, seq_len, mode, None, quantized, cuda_context_bytes(cc)).devices[0]
    cfg = exllamav2.ExLlamaV2Config(str(directory))
    cfg.max_seq_len = seq_len
    model = exllamav2.ExLlamaV2(cfg)
    torch.cuda.reset_peak_memory_stats()
    cache = getattr(exllamav2, KV_CACHE_MODES[mode].exllamav2_class)(model, max_seq_len=seq_len, lazy=True)
    model.load_autosplit(cache)
    torch.cuda.synchronize()
    load_peak = torch.cuda.max_memory_allocated()
    load_peak_reserved = torch.cuda.max_memory_reserved()
    context = nvml.used() - baseline_used - torch.cuda.memory_reserved()
    pred_total = sum(v for k, v in pred.components.items() if k != "transient_is")
    out = {"cache_mode": mode, "max_seq_len": seq_len, "load_peak_allocated_bytes": load_peak,
           "load_peak_reserved_bytes": load_peak_reserved,
           "cuda_context_measured_bytes": context, "total_measured_bytes": context + load_peak,
           "total_predicted_bytes": pred_total, "predicted_components": pred.components,
           "total_error_pct": round(pct(pred_total, context + load_peak), 3)}
    log(f"autosplit {mode}: load peak {load_peak / MIB:.0f} MiB + context {context / MIB:.0f}; predicted {pred_total / MIB:.0f} MiB "
        f"({out['total_error_pct']:+.2f}%)")
    del cache, model
    gc.collect()
    torch.cuda.empty_cache()
    return out


def analyze(result: dict) -> dict:
    """Compare predictions with the recorded measurements: need = peak allocated + measured CUDA context.

    Three views per row: as predicted at run time (the context allowance then), with today's context allowance
    for this card, and the torch-allocated part alone (no context at all).
    """
    cc = result.get("gpu_cc") or (spec_for_name(result.get("gpu", {}).get("name", "")) or type("S", (), {"cc": None})).cc
    ctx_now = cuda_context_bytes(cc)
    rows = []
    for part in result["models"].values():
        for r in part["rows"]:
            need = r["peak_allocated_bytes"] + r["cuda_context_measured_bytes"]
            torch_pred = r["total_predicted_bytes"] - r["cuda_context_estimate_bytes"]
            rows.append({"model": r["model"], "cache_mode": r["cache_mode"],
                         "kv_predicted_mib": r["kv_predicted_bytes"] / MIB, "kv_allocated_mib": r["kv_allocated_bytes"] / MIB,
                         "kv_error_pct": pct(r["kv_predicted_bytes"], r["kv_allocated_bytes"]),
                         "need_mib": need / MIB, "context_measured_mib": r["cuda_context_measured_bytes"] / MIB,
                         "predicted_at_run_mib": r["total_predicted_bytes"] / MIB,
                         "error_at_run_pct": pct(r["total_predicted_bytes"], need),
                         "predicted_now_mib": (torch_pred + ctx_now) / MIB, "error_now_pct": pct(torch_pred + ctx_now, need),
                         "torch_part_error_pct": pct(torch_pred, r["peak_allocated_bytes"]),
                         "reserved_peak_mib": r["peak_reserved_bytes"] / MIB})
    out = {"cc": cc, "context_allowance_now_mib": ctx_now / MIB, "rows": rows,
           "kv_max_abs_error_pct": max((abs(r["kv_error_pct"]) for r in rows), default=None),
           "total_max_abs_error_at_run_pct": max((abs(r["error_at_run_pct"]) for r in rows), default=None),
           "total_max_abs_error_now_pct": max((abs(r["error_now_pct"]) for r in rows), default=None),
           "torch_part_max_abs_error_pct": max((abs(r["torch_part_error_pct"]) for r in rows), default=None)}
    a = result.get("autosplit")
    if a:
        peak = a.get("load_peak_allocated_bytes")
        out["autosplit"] = {"cache_mode": a["cache_mode"],
                            "predicted_without_context_mib": (a["total_predicted_bytes"] - a["predicted_components"]["cuda_context"]) / MIB,
                            "load_peak_allocated_mib": peak / MIB if peak else None,
                            "load_peak_reserved_mib": a["load_peak_reserved_bytes"] / MIB}
    return out


def table(result: dict) -> str:
    an = analyze(result)
    lines = [f"{'model':<6} {'mode':<5} {'KV pred':>9} {'KV alloc':>9} {'KV err':>7}  {'need':>6} {'ctx':>5}  "
             f"{'pred@run':>8} {'err':>7}  {'pred now':>8} {'err':>7}  {'torch part err':>14}   (MiB)"]
    for r in an["rows"]:
        lines.append(f"{r['model']:<6} {r['cache_mode']:<5} {r['kv_predicted_mib']:>9.1f} {r['kv_allocated_mib']:>9.1f} {r['kv_error_pct']:>+6.2f}%  "
                     f"{r['need_mib']:>6.0f} {r['context_measured_mib']:>5.0f}  {r['predicted_at_run_mib']:>8.0f} {r['error_at_run_pct']:>+6.1f}%  "
                     f"{r['predicted_now_mib']:>8.0f} {r['error_now_pct']:>+6.1f}%  {r['torch_part_error_pct']:>+13.2f}%")
    lines.append(f"need = torch peak allocated + measured CUDA context; pred@run used a {result.get('cuda_context_estimate_mib')} MiB "
                 f"context allowance, pred now uses {an['context_allowance_now_mib']:.0f} MiB for cc {an['cc']}; "
                 "torch part = everything but the context")
    a = an.get("autosplit")
    if a:
        alloc = f"{a['load_peak_allocated_mib']:.0f} MiB allocated" if a["load_peak_allocated_mib"] else "allocated peak not recorded"
        lines.append(f"load_autosplit (fp16 model, {a['cache_mode']} cache): predicted {a['predicted_without_context_mib']:.0f} MiB "
                     f"without context; measured load peak: {alloc}, {a['load_peak_reserved_mib']:.0f} MiB reserved")
    return "\n".join(lines)


def reanalyze(path: str) -> int:
    result = json.loads(Path(path).read_text())
    an = analyze(result)
    text = table(result)
    print(text)
    out = Path(path).with_suffix(".analysis.json")
    out.write_text(json.dumps(an, indent=2))
    Path(path).with_suffix(".txt").write_text(text + "\n")
    ok = an["kv_max_abs_error_pct"] <= 2.0 and an["total_max_abs_error_now_pct"] <= 5.0
    print(f"KV max |err| {an['kv_max_abs_error_pct']:.2f}% (criterion 2%); total max |err| at run time "
          f"{an['total_max_abs_error_at_run_pct']:.1f}%, with today's context allowance {an['total_max_abs_error_now_pct']:.1f}% "
          f"(criterion 5%); torch-allocated part {an['torch_part_max_abs_error_pct']:.2f}%  -> {out}")
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", str(ROOT / "benchmarks" / "results")))
    ap.add_argument("--seq-len", type=int, default=16384)
    ap.add_argument("--modes", default=",".join(CACHE_MODE_ORDER))
    ap.add_argument("--no-gptq", action="store_true", help="only the FP16 model")
    ap.add_argument("--deadline-s", type=float, default=480, help="skip optional parts once this much time has passed")
    ap.add_argument("--reanalyze", metavar="JSON", help="re-evaluate a recorded result file (no GPU needed), then exit")
    args = ap.parse_args()
    if args.reanalyze:
        return reanalyze(args.reanalyze)
    start = time.perf_counter()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    result: dict = {"benchmark": "kv_cache_vs_exllamav2", "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "shape": SHAPE, "seq_len": args.seq_len, "python": platform.python_version(),
                    "criteria": {"kv_error_pct_max": 2.0, "total_error_pct_max": 5.0},
                    "cuda_context_estimate_mib": CUDA_CONTEXT_MIB[0], "models": {}}
    try:
        nvml = Nvml()
        baseline = nvml.used()
        result["gpu"] = nvml.info()
        log("importing exllamav2 (JIT-builds its extension on a fresh machine)")
        t0 = time.perf_counter()
        import exllamav2  # noqa: F401
        import torch

        result["exllamav2_import_s"] = round(time.perf_counter() - t0, 1)
        result["torch"] = torch.__version__
        result["exllamav2"] = getattr(exllamav2, "__version__", "?")
        result["gpu_cc"] = "%d.%d" % torch.cuda.get_device_capability(0)
        result["cuda_context_estimate_mib"] = cuda_context_bytes(result["gpu_cc"]) / MIB
        log(f"exllamav2 {result['exllamav2']} ready after {result['exllamav2_import_s']} s")
        tmp = Path(tempfile.mkdtemp(prefix="kvbench-"))
        kinds = ["fp16"] + ([] if args.no_gptq else ["gptq"])
        for kind in kinds:
            t0 = time.perf_counter()
            write_model(tmp / kind, gptq=(kind == "gptq"))
            log(f"wrote the synthetic {kind} model in {time.perf_counter() - t0:.1f}s")
        modes = [m for m in args.modes.split(",") if m]
        for kind in kinds:
            if kind != "fp16" and time.perf_counter() - start > args.deadline_s:
                log(f"deadline reached: skipping the {kind} model")
                continue
            result["models"][kind] = run_model(kind, tmp / kind, args.seq_len, nvml, baseline, modes)
        if time.perf_counter() - start < args.deadline_s:
            result["autosplit"] = run_autosplit(tmp / "fp16", args.seq_len, "q8", nvml, baseline)
    except Exception as exc:  # keep what was measured
        import traceback

        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
        log(f"ERROR {result['error']}")
    rows = [r for m in result["models"].values() for r in m["rows"]]
    result["kv_max_abs_error_pct"] = max((abs(r["kv_error_pct"]) for r in rows), default=None)
    result["total_max_abs_error_pct"] = max((abs(r["total_error_pct"]) for r in rows), default=None)
    result["passed"] = bool(rows) and result["kv_max_abs_error_pct"] <= 2.0 and result["total_max_abs_error_pct"] <= 5.0
    result["elapsed_s"] = round(time.perf_counter() - start, 1)
    (out_dir / "kv_cache_vs_exllamav2.json").write_text(json.dumps(result, indent=2))
    if rows:
        text = table(result)
        print(text)
        (out_dir / "kv_cache_vs_exllamav2.txt").write_text(text + "\n")
    print(f"passed: {result['passed']} (KV max |err| {result['kv_max_abs_error_pct']}%, total max |err| "
          f"{result['total_max_abs_error_pct']}%) in {result['elapsed_s']} s")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
