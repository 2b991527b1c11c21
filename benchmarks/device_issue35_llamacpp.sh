#!/bin/bash
# Issue 35 on the device, the llama.cpp half: build llama-cpp-python (CUDA, this card's arch) and llama-bench from
# the same tree, write the doctor's synthetic 27B-shape Q4_K_M GGUF (doctor/probe/synthetic_gguf.py, 64 layers), then
# alternate the doctor's llama.cpp probe as a stage of the one Run (`probe --model X.gguf`) with llama-bench's tg128
# on the same file (the reference), replay each report, run `probe --engine llama.cpp --synthetic` and the main
# command with --model. Run from the repo root on the device:
#   P=DIR bash benchmarks/device_issue35_llamacpp.sh      results: $OUT/llama.tgz (every file; the device returns 8)
# P holds the slim llama-cpp-python 0.3.36 sdist (vendor docs/models/tests/.git removed) and the gguf/diskcache wheels.
set -u
OUT=${OUT:-/tmp/out}; R=/tmp/llama-results; mkdir -p "$R"; T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
finish() { tar czf "$OUT/llama.tgz" -C /tmp llama-results; cp "$R/run.log" "$OUT/run.log"; }
trap finish EXIT
export PYTHONUNBUFFERED=1
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
mkdir -p /tmp/site /tmp/src /tmp/wheels
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$P"/whl/*.whl >> "$R/run.log" 2>&1
G=/tmp/gg/synth27b-64L-q4km.gguf
( PYTHONPATH=$PWD python3 -c "
import sys; from dataclasses import replace; from doctor.probe import synthetic_gguf; from doctor.probe.synthetic import QWEN_27B_LIKE
g = synthetic_gguf.write(sys.argv[1], replace(QWEN_27B_LIKE, layers=64, vocab=8192)); print(g.label)" $G ) > "$R/gguf.log" 2>&1 &
GPID=$!
tar xzf "$P"/llama_cpp_python-0.3.36-slim.tar.gz -C /tmp/src
SRC=/tmp/src/llama_cpp_python-0.3.36
export CUDACXX=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH CMAKE_BUILD_PARALLEL_LEVEL=16
export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${ARCH} -DLLAVA_BUILD=off -DGGML_CUDA_NCCL=OFF"
python3 -m pip wheel --no-build-isolation --no-deps --no-index --config-settings=build-dir=/tmp/skb -w /tmp/wheels "$SRC" > "$R/build.log" 2>&1
log "pip wheel rc=$? (arch $ARCH)"
( cmake -S "$SRC" -B /tmp/skb -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TESTS=OFF > "$R/bench_cfg.log" 2>&1 &&
  cmake --build /tmp/skb --target llama-bench -j 16 > "$R/bench_build.log" 2>&1 ) || log "llama-bench build FAILED"
BENCH=$(find /tmp/skb -name llama-bench -type f -perm -u+x | head -1); log "llama-bench: '$BENCH'"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site /tmp/wheels/llama_cpp_python-*.whl >> "$R/run.log" 2>&1
export PYTHONPATH=$PWD:/tmp/site LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
wait $GPID; log "gguf: $(cat "$R/gguf.log")"
summary() { python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['probe']; l=(p.get('llamacpp') or [{}])[-1]; v=d.get('engine_verdict') or {}
print(d['schema'], p['engine'], p['status'], l.get('backend'), l.get('median_tok_s'), 'spread', l.get('spread_pct'), 'runs',
      [round(r['tok_s_wall'],2) for r in l.get('runs',[])], 'vs perf', l.get('wall_vs_perf_pct'), 'nvml', l.get('gpu_decode_samples'),
      '/', l.get('gpu_samples'), 'util', l.get('gpu_util_pct'), 'sm', l.get('gpu_sm_clock_mhz'), '|', v.get('summary'))" "$1" 2>&1; }
for round in 1 2 3; do
  log "$round: probe --model $G (the doctor's llama.cpp probe through the Run)"
  timeout 150 python3 -m doctor probe --model $G --runs 5 --tokens 128 -o "$R/probe-$round.json" > "$R/probe-$round.txt" 2>&1
  echo "probe rc=$?" >> "$R/probe-$round.txt"; log "$(tail -1 "$R/probe-$round.txt") $(summary "$R/probe-$round.json")"
  [ -n "$BENCH" ] && { log "$round: llama-bench tg128 x5, FA on (the reference)"
    timeout 90 "$BENCH" -m $G -ngl 999 -p 0 -n 128 -r 5 -fa on -o json > "$R/bench-$round.json" 2> "$R/bench-$round.stderr"
    log "bench rc=$? $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r['avg_ts'], r['stddev_ts'], r['samples_ts'])" "$R/bench-$round.json" 2>&1)"; }
done
for round in 1 2 3; do
  python3 -m doctor --no-tui --replay "$R/probe-$round.json" > "$R/replay-$round.txt" 2>&1; log "replay $round rc=$? ($(tail -1 "$R/probe-$round.txt"))"
done
log "4: probe --engine llama.cpp --synthetic --synthetic-layers 16"
timeout 150 python3 -m doctor probe --engine llama.cpp --synthetic --synthetic-layers 16 -o "$R/probe-synthetic.json" > "$R/probe-synthetic.txt" 2>&1
log "rc=$? $(summary "$R/probe-synthetic.json")"
python3 -m doctor --no-tui --replay "$R/probe-synthetic.json" > "$R/replay-synthetic.txt" 2>&1; log "replay rc=$?"
log "5: the main command with --model"
timeout 150 python3 -m doctor --no-tui --model $G -o "$R/main.json" > "$R/main.txt" 2>&1
log "main rc=$? $(summary "$R/main.json")"
python3 -m doctor --no-tui --replay "$R/main.json" > "$R/replay-main.txt" 2>&1; log "replay main rc=$?"
log end
