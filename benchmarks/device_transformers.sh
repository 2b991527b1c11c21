#!/bin/bash
# The Transformers + bitsandbytes NF4 probe on a real GPU, against an independent timing of the same model in the
# same call (issue 27's left item: the probe had run only against stand-ins). Run from the repo root on the device:
#   bash benchmarks/device_transformers.sh            results: $OUT/transformers-h200/
# Needs torch + CUDA. The rest travels in carried folders: .tfwhl/ (transformers 5.25, accelerate and transformers'
# dependencies, pip-installed --no-index --no-deps into $SITE) and .tfsite/ (bitsandbytes 0.50.2 unpacked with only
# its CUDA 13.0 and CPU libraries: the wheel's other CUDA builds would not fit the 64 MiB carry). LAYERS (default 8) decoder layers of the story's 27B shape.
set -u
OUT=${OUT:-/tmp/out}; R=$OUT/transformers-h200; mkdir -p "$R"
LAYERS=${LAYERS:-8}; SITE=${SITE:-/tmp/site}; MODEL=${MODEL:-/tmp/synth-27b-shape}
export PYTHONUNBUFFERED=1
# transformers 5.25 requires the `kernels` package and then loads Llama's rotary embedding from the Hub
# (kernels-community/rotary); offline, the load fails: "Kernel repository 'kernels-community/rotary' could not verify
# publisher trust status" (the first call here, 2026-12-03). Both timings below run with the Hub kernels off.
export USE_HUB_KERNELS=${USE_HUB_KERNELS:-0}
T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }

log "0: install the carried wheels into $SITE (first on PYTHONPATH: transformers pins its dependencies' versions)"
python3 -m pip install -q --no-index --no-deps --target "$SITE" .tfwhl/*.whl >> "$R/run.log" 2>&1
log "pip rc=$?"
export PYTHONPATH=$PWD/.tfsite:$SITE${PYTHONPATH:+:$PYTHONPATH}
python3 benchmarks/print_versions.py torch transformers bitsandbytes accelerate tokenizers safetensors huggingface-hub numpy >> "$R/run.log" 2>&1
python3 -c "import bitsandbytes, torch; print('bitsandbytes imported from', bitsandbytes.__file__, 'cuda', torch.version.cuda)" >> "$R/run.log" 2>&1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv >> "$R/run.log" 2>&1

log "1: the synthetic FP16 model, $LAYERS layers of the 27B shape (the doctor's writer; random values)"
timeout 240 python3 -c "
import sys; from doctor.probe.transformers import synthetic_model
m = synthetic_model(sys.argv[1], int(sys.argv[2])); print(m.label)" "$MODEL" "$LAYERS" >> "$R/run.log" 2>&1
log "model rc=$?"

for round in 1 2 3; do
  log "2.$round: the doctor's probe (probe --engine transformers --model)"
  timeout 200 python3 -m doctor probe --engine transformers --model "$MODEL" --runs 5 --tokens 128 --json \
    -o "$R/probe-$round.json" > "$R/probe-$round.stdout" 2> "$R/probe-$round.stderr"
  log "probe rc=$? $(python3 -c "
import json,sys; p=json.load(open(sys.argv[1]))['probe']
print(json.dumps({k: p[k] for k in ('outcome', 'median_tok_s', 'spread_pct', 'dropped_runs', 'wall_vs_perf_pct', 'warmup_tok_s')}),
      [round(r['tok_s_wall'], 2) for r in p['runs']])" "$R/probe-$round.json" 2>&1)"
  log "2.$round: the independent timing (generate() + streamer)"
  timeout 200 python3 benchmarks/transformers_independent.py --model "$MODEL" --runs 5 --tokens 128 \
    > "$R/independent-$round.json" 2> "$R/independent-$round.stderr"
  log "independent rc=$? $(cat "$R/independent-$round.json")"
done

log "3: the gpu test (2 layers, real engine)"
cp "$R/run.log" "$R/run-so-far.txt"
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/doctor/probe/test_transformers_probe.py >> "$R/run.log" 2>&1
log "gpu test rc=$?"
log "end"
