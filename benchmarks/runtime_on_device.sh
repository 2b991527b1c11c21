#!/usr/bin/env bash
# The runtime-health measurements on a real GPU, in one go (issue 4). Run from the repository root:
#   OUT=/tmp/out bash benchmarks/runtime_on_device.sh
# 1. `watch` on a decode loop started here (benchmarks/decode_loop.py): real clocks, utilisation, PCIe.
# 2. `watch` on the same loop with 2 GB of its weights in host memory, copied to the GPU every token.
# 3. benchmarks/sampler_cost.py: the sampler's CPU per second and its overhead on a decode loop.
# 4. tests/gpu/test_sampler_gpu.py.
# Results land in $OUT (at most 8 files): <name>.json (the watch report), <name>.txt, sampler-cost.*, runtime.log.
set -u
OUT=${OUT:-/tmp/v100-doctor-runtime}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
log="$OUT/runtime.log"

watch_loop() {  # NAME WATCH_SECONDS DECODE_LOOP_ARGS...
  local name=$1 secs=$2
  shift 2
  local ready="/tmp/ready-$name"
  rm -f "$ready"
  echo "== $name: decode_loop.py $*" >>"$log"
  timeout 120 python3 benchmarks/decode_loop.py "$@" --seconds 100 --ready-file "$ready" >>"$log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 900); do [ -f "$ready" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  timeout 100 python3 -m doctor watch --pid "$pid" --seconds "$secs" -o "$OUT/$name.json" >"$OUT/$name.txt" 2>>"$log"
  echo "== $name: watch exit code $?" >>"$log"
  kill "$pid" 2>/dev/null  # the loop this script started, by its pid
  wait "$pid" 2>/dev/null
}

nvidia-smi --query-gpu=name,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem --format=csv >>"$log" 2>&1
watch_loop h200-decode-watch 12 --weights-gb 8
watch_loop h200-offload-watch 10 --weights-gb 4 --offload-gb 2
echo "== sampler_cost" >>"$log"
timeout 150 python3 benchmarks/sampler_cost.py --out "$OUT/sampler-cost.json" >"$OUT/sampler-cost.txt" 2>>"$log"
echo "== gpu tests" >>"$log"
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu/test_sampler_gpu.py >>"$log" 2>&1
echo "== done" >>"$log"
