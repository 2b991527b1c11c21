#!/bin/bash
# Issue 35 on the device, the Transformers half: the Transformers probe as a stage of the one Run (it times
# generate(), as users run it) side by side with an independent timed generate() (benchmarks/transformers_independent.py,
# imports nothing from the doctor), alternating, in one call; then each report replayed (same verdict, same exit code)
# and the main command with --model. Run from the repo root on the device:
#   BNB=DIR bash benchmarks/device_issue35_transformers.sh          results: $OUT/tf.tgz
# Needs torch + transformers + accelerate (the device image has them) and bitsandbytes unpacked in BNB (0.50.2 with
# only its CUDA 13.0 and CPU libraries: the wheel's other builds would not fit the 64 MiB carry).
# PIN (default `taskset -c 2-5`) holds both timings to the same four cores: this launch-bound decode moves with the
# host, and the first call (unpinned) spread 27-45% in both the probe and generate().
set -u
OUT=${OUT:-/tmp/out}; R=/tmp/tf; mkdir -p "$R"; PIN=${PIN-taskset -c 2-5}
finish() { tar czf "$OUT/tf.tgz" -C /tmp tf; cp "$R/run.log" "$OUT/run.log"; }
trap finish EXIT
export PYTHONUNBUFFERED=1 USE_HUB_KERNELS=0 PYTHONPATH=$PWD${BNB:+:$BNB}
M=${MODEL:-/tmp/synth-tf}; LAYERS=${LAYERS:-8}; ROUNDS=${ROUNDS:-3}; RUNS=${RUNS:-5}; T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
python3 benchmarks/print_versions.py torch transformers bitsandbytes accelerate tokenizers >> "$R/run.log" 2>&1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv >> "$R/run.log" 2>&1
summary() { python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['probe']; t=p.get('transformers') or {}; v=d.get('engine_verdict') or {}
print(d['schema'], p['engine'], p['status'], t.get('median_tok_s'), 'spread', t.get('spread_pct'), 'runs',
      [round(r['tok_s_wall'],2) for r in t.get('runs',[])], 'nvml', t.get('gpu_decode_samples'), '/', t.get('gpu_samples'),
      'util', t.get('gpu_util_pct'), 'sm', t.get('gpu_sm_clock_mhz'), '|', v.get('summary'))" "$1" 2>&1; }
for round in $(seq 1 "$ROUNDS"); do
  if [ $round = 1 ]; then
    log "1: probe --engine transformers --synthetic (writes the $LAYERS-layer 27B-shape model, kept in $M)"
    timeout 300 $PIN python3 -m doctor probe --engine transformers --synthetic --synthetic-layers "$LAYERS" --keep-synthetic "$M" \
      --runs "$RUNS" --tokens 128 --warmup 128 -o "$R/probe-1.json" > "$R/probe-1.txt" 2>&1
  else
    log "$round: probe --engine transformers --model $M/synthetic-fp16"
    timeout 200 $PIN python3 -m doctor probe --engine transformers --model "$M/synthetic-fp16" --runs "$RUNS" --tokens 128 --warmup 128 \
      -o "$R/probe-$round.json" > "$R/probe-$round.txt" 2>&1
  fi
  echo "probe rc=$?" >> "$R/probe-$round.txt"; log "probe $round: $(tail -1 "$R/probe-$round.txt") $(summary "$R/probe-$round.json")"
  log "$round: independent generate() timing"
  timeout 200 $PIN python3 benchmarks/transformers_independent.py --model "$M/synthetic-fp16" --runs "$RUNS" --tokens 128 --warmup 128 \
    > "$R/independent-$round.json" 2> "$R/independent-$round.stderr"
  log "independent rc=$? $(cat "$R/independent-$round.json")"
done
[ -n "${SKIP_REPLAY:-}" ] && { log "end (replays and the main command skipped)"; exit 0; }
for round in $(seq 1 "$ROUNDS"); do
  python3 -m doctor --no-tui --replay "$R/probe-$round.json" > "$R/replay-$round.txt" 2>&1
  log "replay $round rc=$? (probe's: $(tail -1 "$R/probe-$round.txt"))"
done
log "4: the main command with --model (checks, then the engine in force's probe)"
timeout 240 $PIN python3 -m doctor --no-tui --engine transformers --model "$M/synthetic-fp16" -o "$R/main.json" > "$R/main.txt" 2>&1
log "main rc=$? $(summary "$R/main.json")"
log "end"
