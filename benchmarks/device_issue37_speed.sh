#!/bin/bash
# Issue 37 (item 7) and 38 on the device, one call (resumable on a warm machine): build llama.cpp for this card with
# llama-bench, llama-batched-bench, llama-quantize and llama-server (and the llama-cpp-python wheel), write the
# synthetic GGUFs of benchmarks/speed_shapes.py while it builds, run the sweep (fit and held-out shapes), then
# llama-batched-bench at the 27B-like Q4_K_M shape for issue 38 (-npl 1,2,4,8). Run from the repo root:
#   P=.prep37 bash benchmarks/device_issue37_speed.sh     (carry .prep37: the slim sdist llama_cpp_python-0.3.36-slim.tar.gz)
# Returns: $OUT/speed.tgz (runs.jsonl, logs), $OUT/streams.tgz (batched-bench output), $OUT/bins.tgz (the wheel and
# the tools with their libraries, when under 60 MiB), $OUT/run.log. DRY=1: write a 2-layer GGUF and stop (CPU).
set -u
OUT=${OUT:-/tmp/out}; R=/tmp/speed37; S=/tmp/streams38; mkdir -p "$R" "$S" "$OUT"; T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
finish() { tar czf "$OUT/speed.tgz" -C /tmp speed37; tar czf "$OUT/streams.tgz" -C /tmp streams38; cp "$R/run.log" "$OUT/run.log"; }
trap finish EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
G=/tmp/gg37
if [ "${DRY:-0}" = 1 ]; then
  python3 -c "
import sys; sys.argv=['x']; sys.path.insert(0,'benchmarks'); import speed_shapes as s
s.SHAPES={'tiny': ('fit', 2, 256, 512, 4, 2)}; s.write(__import__('pathlib').Path('$G'))" >> "$R/run.log" 2>&1; log "dry rc=$?"; exit 0
fi
python3 benchmarks/speed_shapes.py write $G > "$R/gguf.log" 2>&1 &
GPID=$!
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
SKB=/tmp/skb; SRC=/tmp/src/llama_cpp_python-0.3.36
if [ ! -x "$SKB/bin/llama-bench" ]; then
  mkdir -p /tmp/src /tmp/wheels; tar xzf "$P"/llama_cpp_python-0.3.36-slim.tar.gz -C /tmp/src
  export CUDACXX=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH CMAKE_BUILD_PARALLEL_LEVEL=16
  export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${ARCH} -DLLAVA_BUILD=off -DGGML_CUDA_NCCL=OFF"
  python3 -m pip wheel --no-build-isolation --no-deps --no-index --config-settings=build-dir=$SKB -w /tmp/wheels "$SRC" > "$R/build.log" 2>&1
  log "pip wheel rc=$? (arch $ARCH)"
  cmake -S "$SRC" -B $SKB -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF > "$R/tools_cfg.log" 2>&1
  cmake --build $SKB -j 16 --target llama-bench llama-batched-bench llama-quantize llama-server > "$R/tools_build.log" 2>&1
  log "tools rc=$?"
fi
BENCH=$(find $SKB -name llama-bench -type f -perm -u+x | head -1); log "llama-bench: '$BENCH'"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$(dirname "$BENCH"):$(find $SKB -name 'libggml*.so' -printf '%h\n' | sort -u | tr '\n' ':')${LD_LIBRARY_PATH:-}
wait $GPID; log "gguf: $(tail -3 "$R/gguf.log" | tr '\n' ' ')"
BB=$(find $SKB -name llama-batched-bench -type f -perm -u+x | head -1)
[ -n "$BB" ] && { timeout 120 "$BB" -m $G/27b-64-q4_k_m.gguf -ngl 999 -fa on -c 8192 -b 2048 -ub 512 -npp 128 -ntg 128 \
  -npl 1,2,4,8 > "$S/batched-bench-27b-64-q4_k_m.txt" 2> "$S/batched-bench.stderr"; log "batched-bench rc=$?"; }
timeout $(( ${BUDGET_S:-560} - ($(date +%s) - T0) )) python3 benchmarks/speed_shapes.py run $G "$BENCH" "$R/runs.jsonl" >> "$R/run.log" 2>&1
log "sweep rc=$? ($(wc -l < "$R/runs.jsonl") options)"
python3 benchmarks/speed_shapes.py inputs "$R/runs.jsonl" "$R/inputs.json" && \
  python3 benchmarks/speed_model_fit.py --inputs "$R/inputs.json" --out "$R" >> "$R/run.log" 2>&1; log "fit rc=$?"
mkdir -p /tmp/bins && cp /tmp/wheels/*.whl "$BENCH" "$BB" $(dirname "$BENCH")/llama-server $(find $SKB -name '*.so' -path '*bin*' -o -name '*.so' -path '*src*') /tmp/bins/ 2>/dev/null
[ "$(du -sm /tmp/bins | cut -f1)" -lt 60 ] && tar czf "$OUT/bins.tgz" -C /tmp bins; log end
