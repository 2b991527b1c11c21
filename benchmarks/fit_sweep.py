"""`v100-doctor fit` (the whole catalogue on a card, ranked) beside llmfit's `fit` on the same six cards, in one run;
then ten models side by side: memory and speed, ours against llmfit's `plan`, on a V100 PCIe 16 GB at 8192 tokens.

Why (issue 40): users compare the doctor with llmfit (`pip install llmfit`, a Rust binary). llmfit finds the card
through nvidia-smi; this machine has none, so a stand-in `nvidia-smi` (written to a temporary folder put first on
PATH) answers its two queries with the card's NVML name and memory, and llmfit's own table gives the bandwidth
(it reports `gpu_bandwidth_roofline` with the card's bandwidth in its JSON: checked below, not assumed).

Timings, each program on each of the six supported cards (V100 16 GB, P100 16 GB, P40, T4, TITAN V, RTX 2080 Ti):
  in-process  doctor.plan.best.best_fit for the six cards one after another, CPU seconds (time.process_time) on one
              core (taskset -c 0 when there), the default ranking (10 models per card) and every model (--limit 0)
  CLI         `v100-doctor fit --target-gpu CARD --json` and `llmfit --max-context 8192 fit --json` per card, wall
              and CPU (GNU time), summed over the six; alternated, best of --runs
Both rank their whole database: ours 149 models (x versions x engines x caches), llmfit's ~15,900.

    python benchmarks/fit_sweep.py [--runs 2] [--json OUT] [--table OUT.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from explain_timestamped import cpu_name  # noqa: E402
from explain_vs_grep import timed  # noqa: E402

SIX = ("v100-pcie-16gb", "p100-pcie-16gb", "p40", "t4", "titan-v", "rtx-2080-ti")
NVML_NAMES = {"v100-pcie-16gb": ("Tesla V100-PCIE-16GB", 16384), "p100-pcie-16gb": ("Tesla P100-PCIE-16GB", 16384),
              "p40": ("Tesla P40", 24576), "t4": ("Tesla T4", 15360), "titan-v": ("NVIDIA TITAN V", 12288),
              "rtx-2080-ti": ("NVIDIA GeForce RTX 2080 Ti", 11264)}
TEN = ("meta-llama/Llama-3.2-1B-Instruct", "Qwen/Qwen2.5-3B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
       "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-14B-Instruct", "microsoft/phi-4",
       "mistralai/Mistral-Small-24B-Instruct-2501", "Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen3-30B-A3B",
       "meta-llama/Llama-3.3-70B-Instruct")
FAKE_SMI = """#!/bin/sh
# a stand-in for nvidia-smi: llmfit detects the card named in FAKE_GPU (FAKE_MIB MiB); its own table gives the bandwidth
case "$*" in
  *addressing_mode*) echo "None, ${FAKE_MIB}, ${FAKE_MIB}, ${FAKE_GPU}";;
  *memory.total,name*) echo "${FAKE_MIB}, ${FAKE_GPU}";;
  *) exit 1;;
esac
"""
IN_PROCESS = r'''
import sys, time, json
sys.path.insert(0, sys.argv[1])
from doctor.facts.catalogue import candidates, catalogue, model_config
from doctor.facts.catalogue.licences import licence_of
from doctor.knowledge.gpus import spec_for_key
from doctor.plan.best import CatalogueReader, Filters, best_fit
read = CatalogueReader(model_config, candidates, licence_of)
limit = int(sys.argv[2]) or None
started = time.process_time()
cat = catalogue()
planned = fitting = 0
for key in sys.argv[3:]:
    r = best_fit(cat.entries, (spec_for_key(key),), "--target-gpu", 8192, 3.5, None, Filters(), limit, "", read)
    planned += r.considered["options_planned"]
    fitting += r.considered["options_fitting"]
print(json.dumps({"cpu_s": time.process_time() - started, "options_planned": planned, "options_fitting": fitting}))
'''


def one_core() -> list[str]:
    return ["taskset", "-c", "0"] if shutil.which("taskset") else []


def in_process(limit: int) -> dict:
    out = subprocess.run(one_core() + [sys.executable, "-c", IN_PROCESS, str(ROOT), str(limit), *SIX],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return json.loads(out)


def llmfit_env(smi_dir: Path, card: str) -> str:
    name, mib = NVML_NAMES[card]
    return f"FAKE_GPU='{name}' FAKE_MIB={mib} PATH={smi_dir}:$PATH"


def cli_runs(smi_dir: Path) -> tuple[dict, dict, dict]:
    """One pass over the six cards for each program: (ours, llmfit, llmfit's detected bandwidth per card)."""
    ours = {"wall_s": 0.0, "cpu_s": 0.0}
    theirs = {"wall_s": 0.0, "cpu_s": 0.0}
    bandwidth = {}
    for card in SIX:
        wall, _, _, cpu = timed(f"cd {ROOT} && {sys.executable} -m doctor fit --target-gpu {card} --json >/dev/null")
        ours["wall_s"] += wall
        ours["cpu_s"] += cpu
        wall, _, out, cpu = timed(f"{llmfit_env(smi_dir, card)} llmfit --max-context 8192 fit --json 2>/dev/null")
        theirs["wall_s"] += wall
        theirs["cpu_s"] += cpu
        try:
            doc = json.loads(out)
            gpu = doc["system"]["gpus"][0]
            bandwidth[card] = (gpu["name"], gpu.get("memory_bandwidth_gbps"), len(doc["models"]))
        except (ValueError, KeyError, IndexError):
            bandwidth[card] = (None, None, 0)
    return ours, theirs, bandwidth


def ours_for(repo: str) -> dict:
    """Our plan row for the model's GGUF Q4_K_M on llama.cpp with an f16 cache, V100 16 GB, 8192 tokens."""
    from doctor.facts.catalogue import lookup, model_config
    from doctor.knowledge.arithmetic.model_bytes import dims
    from doctor.knowledge.gpus import spec_for_key
    from doctor.knowledge.quant_quality import gguf_bpw
    from doctor.model.quant_plan import QuantCandidate
    from doctor.plan.rows import Setting, row

    entry = lookup(repo)
    assert entry is not None, repo
    config = model_config(entry)
    card = (spec_for_key("v100-pcie-16gb"),)
    option = next((q for q in _gguf(entry) if q.gguf_type == "Q4_K_M"), None) or QuantCandidate(
        "gguf", "GGUF Q4_K_M", None, bpw=gguf_bpw("Q4_K_M"), gguf_type="Q4_K_M", found="convert")
    r = row(Setting(config, dims(config), card, base_repo=repo), option, card, "f16", 8192, "llama.cpp")
    return {"peak_gb": max(r.peak_bytes) / 1e9, "fits": r.fits, "tok_s": r.speed.mid, "low": r.speed.low,
            "high": r.speed.high, "confidence": r.speed.confidence}


def _gguf(entry):
    from doctor.facts.catalogue import candidates

    return [c for c in candidates(entry) if c.fmt == "gguf"]


def llmfit_for(repo: str, smi_dir: Path) -> dict:
    p = subprocess.run(f"{llmfit_env(smi_dir, 'v100-pcie-16gb')} llmfit plan '{repo}' --context 8192 --quant Q4_K_M "
                       "--kv-quant fp16 --json", shell=True, capture_output=True, text=True)
    try:
        doc = json.loads(p.stdout)
        gpu = next(x for x in doc["run_paths"] if x["path"] == "gpu")
        return {"name": doc["model_name"], "vram_gb": gpu["minimum"]["vram_gb"], "tok_s": gpu["estimated_tps"],
                "feasible": gpu["feasible"], "disk_gb": doc.get("disk_size_gb")}
    except (ValueError, KeyError, StopIteration):
        return {"name": None, "error": (p.stderr or p.stdout).strip().splitlines()[-1:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not shutil.which("llmfit"):
        sys.exit("llmfit is not on PATH: pip install llmfit")
    version = subprocess.run("llmfit --version 2>/dev/null", shell=True, capture_output=True, text=True).stdout.strip()
    smi_dir = Path(tempfile.mkdtemp(prefix="fit-sweep-smi-"))
    (smi_dir / "nvidia-smi").write_text(FAKE_SMI)
    (smi_dir / "nvidia-smi").chmod(0o755)
    print(f"CPU: {cpu_name()}; load average at start {os.getloadavg()[0]:.1f}; {version}; best of {a.runs}")
    doc: dict = {"cpu": cpu_name(), "llmfit": version, "cards": SIX, "runs": []}
    try:
        for _ in range(a.runs):
            top, every = in_process(10), in_process(0)
            ours, theirs, bandwidth = cli_runs(smi_dir)
            doc["runs"].append({"in_process_top10": top, "in_process_every": every, "cli_ours": ours,
                                "cli_llmfit": theirs})
            doc["llmfit_detected"] = bandwidth
        best = {k: min((r[k] for r in doc["runs"]), key=lambda x: x["cpu_s"]) for k in doc["runs"][0]}
        doc["best"] = best
        print(f"in-process, six cards, one core: ranking (10 per card) {best['in_process_top10']['cpu_s']:.3f} s CPU "
              f"({best['in_process_top10']['options_planned']} options planned); every model "
              f"{best['in_process_every']['cpu_s']:.3f} s ({best['in_process_every']['options_planned']} options)")
        for name in ("cli_ours", "cli_llmfit"):
            print(f"{name:<10} six cards, one process each: {best[name]['wall_s']:.2f} s wall, "
                  f"{best[name]['cpu_s']:.2f} s CPU")
        for card, (name, bw, n) in doc["llmfit_detected"].items():
            print(f"  llmfit saw {card} as {name!r}, {bw} GB/s, ranked {n} models")
        print("\nten models, V100 PCIe 16 GB, 8192 tokens, GGUF Q4_K_M, f16 cache (ours: llama.cpp)")
        print(f"{'model':<44} {'ours GB':>8} {'llmfit GB':>9} {'diff':>6} {'ours tok/s (range)':>20} "
              f"{'llmfit tok/s':>12} {'diff':>6}")
        rows = []
        for repo in TEN:
            o, t = ours_for(repo), llmfit_for(repo, smi_dir)
            row = {"model": repo, "ours": o, "llmfit": t}
            if t.get("name"):
                row["memory_diff"] = t["vram_gb"] / o["peak_gb"] - 1
                row["speed_diff"] = t["tok_s"] / o["tok_s"] - 1
                print(f"{repo:<44} {o['peak_gb']:>8.2f} {t['vram_gb']:>9.2f} {row['memory_diff']:>+6.0%} "
                      f"{o['tok_s']:>8g} ({o['low']:g}-{o['high']:g}){'':>2} {t['tok_s']:>12.1f} "
                      f"{row['speed_diff']:>+6.0%}")
            else:
                print(f"{repo:<44} {o['peak_gb']:>8.2f} {'-':>9}  llmfit: {t.get('error')}")
            rows.append(row)
        doc["ten"] = rows
    finally:
        shutil.rmtree(smi_dir, ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
