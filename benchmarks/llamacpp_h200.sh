#!/bin/bash
# Issue 27 on the device: build llama-cpp-python (and llama-bench) for this card, write a synthetic 27B-shape Q4_K_M
# GGUF, run the doctor's llama.cpp probe (doctor/probe/llamacpp.py) through llama-cpp-python and through llama-bench,
# and compare the GGUF budget with the buffer sizes llama.cpp printed (benchmarks/llamacpp_budget_check.py).
# Needs .prep27/ (the slim llama-cpp-python 0.3.36 sdist and the gguf/diskcache wheels; see /work/prep27/NOTES.md).
# Run from the repo root:  bash benchmarks/llamacpp_h200.sh      results: $OUT/issue27-llamacpp/
set -u
P=.prep27
T0=$(date +%s); BUDGET_S=${BUDGET_S:-440}; DEADLINE=$((T0 + BUDGET_S))
OUT=${OUT:-/tmp/out}; R=$OUT/issue27-llamacpp; mkdir -p "$R"
export PYTHONUNBUFFERED=1
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
left() { echo $(( DEADLINE - $(date +%s) )); }
ARCH=${ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}
log "start; budget ${BUDGET_S}s; arch ${ARCH}"
mkdir -p /tmp/site /tmp/m /tmp/src /tmp/wheels
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $P/whl/*.whl >> "$R/run.log" 2>&1
export PYTHONPATH=/tmp/site
M64=/tmp/m/synth27b-q4km.gguf
( python3 benchmarks/make_synthetic_gguf.py --out $M64 --layers 64 --mix q4_k_m ) > /tmp/gguf.log 2>&1 &
GPID=$!
tar xzf $P/llama_cpp_python-0.3.36-slim.tar.gz -C /tmp/src
SRC=/tmp/src/llama_cpp_python-0.3.36
export CUDACXX=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH
export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${ARCH} -DLLAVA_BUILD=off -DGGML_CUDA_NCCL=OFF"
export CMAKE_BUILD_PARALLEL_LEVEL=16
TB=$(date +%s)
python3 -m pip wheel --no-build-isolation --no-deps --no-index --config-settings=build-dir=/tmp/skb -w /tmp/wheels "$SRC" > /tmp/build.log 2>&1
RC=$?; log "pip wheel rc=$RC in $(( $(date +%s) - TB ))s"
[ $RC -ne 0 ] && { tail -40 /tmp/build.log >> "$R/run.log"; exit 1; }
( cmake -S "$SRC" -B /tmp/skb -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=OFF > /tmp/bench_cfg.log 2>&1 &&
  cmake --build /tmp/skb --target llama-bench -j 16 > /tmp/bench_build.log 2>&1 ) || log "llama-bench build FAILED"
BENCH=$(find /tmp/skb -name llama-bench -type f -perm -u+x 2>/dev/null | head -1); log "llama-bench: '$BENCH'"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site /tmp/wheels/llama_cpp_python-*.whl >> "$R/run.log" 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
wait $GPID; cat /tmp/gguf.log >> "$R/run.log"
# the doctor's engine facts for this build: archs read from the fat binary, never loaded
python3 -c "
from pathlib import Path; from doctor.facts.engines.installed import read_cuda_library
for p in sorted(Path('/tmp/site/llama_cpp/lib').glob('libggml-cuda.so*'))[:1]: print(read_cuda_library(p))" > "$R/engine_facts.txt" 2>&1
nvidia-smi --query-gpu=name,memory.used,clocks.max.sm,clocks.max.mem --format=csv >> "$R/run.log"
PROBE="python3 -m doctor.probe.llamacpp $M64"
log "probe 1: llama-cpp-python, c4096 f16 FA on, 5 x 128 tokens"
timeout $(( $(left) - 20 )) $PROBE --backend python --json "$R/probe_1_python_c4096_fa_on.json" --timeout 150 >> "$R/run.log" 2>&1
OK=$(python3 -c "import json;print(json.load(open('$R/probe_1_python_c4096_fa_on.json'))[0]['outcome'])" 2>/dev/null)
log "probe 1 outcome: $OK"
if [ -n "$BENCH" ] && [ "$(left)" -gt 60 ]; then
  log "probe 2: llama-bench, FA on, 5 x 128 tokens"
  timeout $(( $(left) - 10 )) $PROBE --backend bench --bench-binary "$BENCH" --json "$R/probe_2_bench_fa_on.json" --timeout 90 >> "$R/run.log" 2>&1
fi
if [ "$OK" = ok ]; then
  for cfg in "8192 q8_0 q8_0 on" "4096 f16 f16 off" "32768 f16 f16 on"; do
    set -- $cfg
    [ "$(left)" -lt 45 ] && break
    log "budget grid: c$1 $2/$3 FA $4"
    timeout $(( $(left) - 5 )) $PROBE --backend python --n-ctx $1 --ctk $2 --ctv $3 --fa $4 --runs 2 --tokens 32 --warmup 16 \
      --prompt 16 --json "$R/probe_3_python_c$1_$2_fa_$4.json" --timeout 60 >> "$R/run.log" 2>&1
  done
elif [ -n "$BENCH" ]; then
  [ "$(left)" -gt 40 ] && timeout $(( $(left) - 5 )) $PROBE --backend bench --bench-binary "$BENCH" --fa off --json "$R/probe_3_bench_fa_off.json" --timeout 60 >> "$R/run.log" 2>&1
fi
python3 benchmarks/llamacpp_budget_check.py --model $M64 --probes "$R" --out "$R" >> "$R/run.log" 2>&1
log "end"
