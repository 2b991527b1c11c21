#!/bin/bash
# Issue 38 on the H200, ExLlamaV2's side, one call: `probe --streams 1,2,4 --model DIR` drives ExLlamaV2's dynamic
# generator (doctor/probe/exl2_streams.py) on a synthetic 27B-like 4-bit GPTQ model (16 layers of 5120/21760, 40/8
# heads: doctor/probe/synthetic.py's QWEN_27B_LIKE, ExLlamaV2 loads it without conversion), then the plan's
# concurrency estimate for the same shape, quant, cache and context on the H200 in the mode that ran beside the
# measured totals, each flagged against 15% (benchmarks/issue38_plan_vs_measured.py --exl2).
# The H200 image has no flash-attn, so ExLlamaV2 runs unpaged (its jobs take turns) and the plan's row for that mode
# is flat: the report says which mode ran and why.
#
# Wheels (nothing comes from a registry there): ExLlamaV2 0.3.2's JIT wheel and what the image lacks of its needs
# (fastparquet, cramjam, websockets; tokenizers, pandas, ninja, safetensors, numpy, rich are there: KINDS.md), beside
# the doctor's own deps already in .whl. Prepared here, in the repo root:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     --platform manylinux1_x86_64 -d .whl exllamav2==0.3.2 fastparquet cramjam websockets
# Run from the repo root on the device (carry .whl), within one 600 s call:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     .whl/*.whl && export PYTHONPATH=/tmp/site || exit; bash benchmarks/device_issue38_exl2_streams.sh
# Returns in $OUT: run.log (timestamps per phase, the replays' probe lines), side-by-side.txt, probe-streams-C.json
# (the reports, one per cache mode C), exl2-streams.tgz (every log and text). CACHES="q8 fp16" (default; q4, q6 too);
# LAYERS (16: 3.4 GB, host-bound on an H200; 64: the whole 27B-like, 13.6 GB) and TOKENS per request (128).
set -u
OUT=${OUT:-/tmp/out}; R=/tmp/exl2streams38; M=/tmp/m38; mkdir -p "$R" "$OUT"; T0=$(date +%s)
CACHES=${CACHES:-q8 fp16}; CTX=${CTX:-2048}; LAYERS=${LAYERS:-16}; TOKENS=${TOKENS:-128}
log() { echo "[$(date -u +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
finish() { cp "$R/run.log" "$OUT/"; tar czf "$OUT/exl2-streams.tgz" -C /tmp exl2streams38 2>/dev/null; }
trap finish EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export PATH=/usr/local/cuda/bin:$PATH CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} MAX_JOBS=16
log "start: tree $(git log -1 --format=%h 2>/dev/null || echo '?'); $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader | head -1)"
python3 -c "import importlib.util as u; print({n: bool(u.find_spec(n)) for n in ('exllamav2', 'flash_attn', 'tokenizers', 'fastparquet')})" \
  >> "$R/run.log" 2>&1  # find_spec only: importing exllamav2 would start its build here
# ---- the JIT build (about 154 s with MAX_JOBS=16) beside the synthetic model's writing (well under a minute)
( s=$(date +%s); timeout 330 python3 -c "import exllamav2, exllamav2.ext" > "$R/jit.log" 2>&1
  echo "jit rc=$? in $(( $(date +%s) - s ))s" >> "$R/jit.log" ) &
JPID=$!
( s=$(date +%s); timeout 200 python3 -m doctor.probe.synthetic --out "$M" --format gptq --shape qwen-27b --layers "$LAYERS" \
  > "$R/synthetic.log" 2>&1; echo "synthetic rc=$? in $(( $(date +%s) - s ))s" >> "$R/synthetic.log" ) &
SPID=$!
wait $SPID; log "$(tail -1 "$R/synthetic.log"): $(grep -o '"summary": "[^"]*"' "$R/synthetic.log" | tail -1)"
wait $JPID; log "$(tail -1 "$R/jit.log")"
du -sh "$M" >> "$R/run.log"
# ---- per cache mode: the probe (1, 2 and 4 jobs at once, each round warmed up first: the doctor's checks, then its
# child), its replay, and the plan beside it: same shape (its config.json), quant, cache, in the mode that ran, at
# 512 tokens per stream (a 128-token prompt and 128 decoded: the past the timed tokens meet, as the plan's speed
# counts half its context)
for C in $CACHES; do
  [ $(( $(date +%s) - T0 )) -gt 430 ] && { log "no time left for the $C cache"; break; }
  timeout 240 python3 -m doctor probe --streams 1,2,4 --model "$M" --max-seq-len "$CTX" --cache-mode "$C" \
    --tokens "$TOKENS" -o "$R/probe-streams-$C.json" > "$R/probe-$C.txt" 2>&1
  log "probe rc=$? ($C cache, max_seq_len $CTX)"
  cp "$R/probe-streams-$C.json" "$OUT/" 2>/dev/null
  python3 -m doctor --no-tui --replay "$R/probe-streams-$C.json" > "$R/replay-$C.txt" 2>&1; log "replay rc=$?"
  grep -A12 "Probe (concurrent streams)" "$R/replay-$C.txt" | tee -a "$R/run.log"
  python3 benchmarks/issue38_plan_vs_measured.py --exl2 "$M" -p "$R/probe-streams-$C.json" --context 512 \
    > "$R/side-by-side-$C.txt" 2>&1; log "side-by-side rc=$?"
  tee -a "$R/run.log" "$OUT/side-by-side.txt" < "$R/side-by-side-$C.txt"
done
log end
