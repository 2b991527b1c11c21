#!/bin/bash
# Issue 27 on the device: the Transformers + bitsandbytes probe and the engine gap measured on one card.
# Needs torch, transformers (5.x), bitsandbytes (0.50), accelerate, tokenizers, numpy importable (pip-installed, or
# wheels unpacked into $SITE, which goes first on PYTHONPATH); llama-cpp-python (or llama-bench on PATH) for the
# llama.cpp leg and exllamav2 for the ExLlamaV2 leg, each optional: an engine that is not installed stays estimated.
# Run from the repo root:  LAYERS=16 bash benchmarks/transformers_h200.sh        results: $OUT/issue27-transformers/
set -u
OUT=${OUT:-/tmp/out}; R=$OUT/issue27-transformers; mkdir -p "$R"
LAYERS=${LAYERS:-16}; SITE=${SITE:-/tmp/site}
[ -d "$SITE" ] && export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
python3 benchmarks/print_versions.py torch transformers bitsandbytes accelerate tokenizers numpy llama_cpp_python exllamav2 >> "$R/run.log" 2>&1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv >> "$R/run.log" 2>&1
log "1: the gpu test (2 layers, real engine)"
timeout 300 python3 -m pytest -q -m gpu tests/doctor/probe/test_transformers_probe.py >> "$R/run.log" 2>&1; log "gpu test rc=$?"
log "2: probe --engine transformers --synthetic --synthetic-layers $LAYERS --compare-engines (the verdict)"
timeout 420 python3 -m doctor probe --engine transformers --synthetic --synthetic-layers "$LAYERS" --compare-engines \
  --runs 5 --tokens 128 --json > "$R/probe_compare.txt" 2> "$R/probe_compare.stderr"; log "probe rc=$?"
sed -n '1,/^{/p' "$R/probe_compare.txt" | head -40 | tee -a "$R/run.log"
log "end"
