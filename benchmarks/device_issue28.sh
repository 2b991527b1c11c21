#!/bin/bash
# Issues 28 and 27 on the H200, resumable over several calls on one warm machine (each call runs what is not
# done yet; a fresh machine rebuilds first and says so).
#  builds: llama-cpp-python for this card's arch (the slim 0.3.36 sdist in .prep27, /work/prep27/NOTES.md), niced,
#          beside the ExLlamaV2 0.3.2 JIT build (.whl) and the synthetic models' writing:
#          GGUF Q4_K_M and Q4_0 of the 27B shape (64 x 5120/21760, 40/8 heads, vocab 8192 as the EXL2 model's),
#          EXL2 4.0 bpw: one random FP16 layer converted by ExLlamaV2's own converter, repeated to 64 layers
#          (benchmarks/results/issue17-h200/README.md), max_position_embeddings raised to 32768.
#  issue 28: benchmarks/plan_accuracy_measure.py for each option in OPTIONS (one process each).
#  issue 27: the doctor's EXL2 probe against benchmarks/independent_timing.py, and the doctor's llama.cpp probe
#          (its clock against llama.cpp's perf counters) on the Q4_K_M GGUF of the same shape.
#  last:    benchmarks/plan_accuracy_check.py: the plan's predictions against what was measured.
# Everything lives in .devbuild/ (git-ignored) so a second call on the warm machine finds it. Results go to
# $OUT/results.tgz (and run.log) as they are made. DRY=1: the CPU-only parts (tiny models, no engine).
#   bash benchmarks/device_issue28.sh          (carry .whl and .prep27; BUDGET_S = this call's own deadline)
set -u
export PYTHONUNBUFFERED=1
T0=$(date +%s); BUDGET_S=${BUDGET_S:-540}; DEADLINE=$((T0 + BUDGET_S))
D=$PWD/.devbuild; M=$D/m; R=$D/res; mkdir -p "$D" "$M" "$R" "$D/logs"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
CALL=$(( $(cat "$D/calls" 2>/dev/null || echo 0) + 1 )); echo $CALL > "$D/calls"
LOG=$D/logs/run.log
log() { echo "[$(date -u +%T) call$CALL +$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
left() { echo $(( DEADLINE - $(date +%s) )); }
pack() { tar czf "$OUT/results.tgz" -C "$D" res logs 2>/dev/null; cp "$LOG" "$OUT/run.log"; }
trap pack EXIT
log "start: budget ${BUDGET_S}s; tree $(git log -1 --format=%h 2>/dev/null || echo '?'); $(ls benchmarks/plan_accuracy_measure.py)"
export PYTHONPATH=$D/site:$PWD
export TORCH_EXTENSIONS_DIR=$D/torch_ext MAX_JOBS=16
LAYERS=64
SHAPE="--layers 64 --hidden 5120 --ff 21760 --heads 40 --kv-heads 8 --head-dim 128 --vocab 8192 --ctx-train 32768"
if [ -n "${DRY:-}" ]; then
  LAYERS=2
  SHAPE="--layers 2 --hidden 512 --ff 1536 --heads 8 --kv-heads 2 --head-dim 64 --vocab 512 --ctx-train 32768"
fi
# ---- wheels (seconds; again on a fresh machine)
if [ -n "${DRY:-}" ]; then
  export PYTHONPATH=${DRY_SITE:-/tmp/drysite}:$PYTHONPATH  # gguf, exllamav2 (its calibration texts), tokenizers
elif [ ! -f "$D/site/.ok" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$D/site" \
    .whl/*.whl .prep27/whl/*.whl >> "$LOG" 2>&1 && touch "$D/site/.ok"
  log "wheels installed rc=$?"
fi
# ---- GGUF models (background)
gguf() {  # name mix
  [ -s "$M/$1.gguf" ] && return 0
  python3 benchmarks/make_synthetic_gguf.py --out "$M/$1.tmp.gguf" $SHAPE --mix "$2" > "$D/logs/gguf_$1.log" 2>&1 \
    && mv "$M/$1.tmp.gguf" "$M/$1.gguf"
}
( gguf q4km q4_k_m; gguf q40 q4_0 ) &
GG=$!
[ -n "${DRY:-}" ] && { wait $GG; ls -la "$M" | tee -a "$LOG"; }
# ---- llama-cpp-python for this card (background, niced so the ExLlamaV2 JIT and the conversion go first)
LLAMA_OK() { [ -f "$D/site/llama_cpp/__init__.py" ] && ls "$D"/site/llama_cpp/lib/libggml-cuda.so* >/dev/null 2>&1; }
LB=""
if [ -z "${DRY:-}" ] && ! LLAMA_OK; then
  [ "$CALL" -gt 1 ] && log "llama-cpp-python missing on call $CALL: a fresh machine, rebuilding"
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  (
    mkdir -p /tmp/src && tar xzf .prep27/llama_cpp_python-0.3.36-slim.tar.gz -C /tmp/src
    export CUDACXX=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH CMAKE_BUILD_PARALLEL_LEVEL=16
    export CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=${ARCH} -DLLAVA_BUILD=off -DGGML_CUDA_NCCL=OFF"
    s=$(date +%s)
    nice -n 10 python3 -m pip wheel --no-build-isolation --no-deps --no-index --config-settings=build-dir=/tmp/skb \
      -w /tmp/wheels /tmp/src/llama_cpp_python-0.3.36 > "$D/logs/llama_build.log" 2>&1 &&
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$D/site" /tmp/wheels/llama_cpp_python-*.whl \
      >> "$D/logs/llama_build.log" 2>&1
    echo "llama-cpp-python build+install rc=$? in $(( $(date +%s) - s ))s" >> "$D/logs/llama_build.log"
    rm -rf /tmp/wheels /tmp/skb
  ) &
  LB=$!
  log "llama-cpp-python build started (sm_${ARCH})"
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# ---- EXL2 4.0 bpw 27B: JIT, one converted layer, replicated (foreground)
EXL2=$M/exl2_27
if [ ! -f "$EXL2/.ok" ]; then
  [ "$CALL" -gt 1 ] && log "EXL2 model missing on call $CALL: a fresh machine, rebuilding"
  rm -rf "$M/src27" "$M/work27" "$M/exl2src" "$EXL2"
  if [ -z "${DRY:-}" ]; then
    ( s=$(date +%s); timeout 300 python3 -c "import exllamav2, exllamav2.ext" > "$D/logs/jit.log" 2>&1; echo "jit rc=$? in $(( $(date +%s) - s ))s" >> "$D/logs/jit.log" ) &
    JIT=$!
  fi
  python3 -m doctor.probe.synthetic --out "$M/src27" --format fp16 --shape qwen-27b --layers 1 > "$D/logs/src27.log" 2>&1
  log "FP16 source rc=$?"
  if [ -z "${DRY:-}" ]; then
    wait $JIT; log "$(tail -1 "$D/logs/jit.log")"
    timeout $(( $(left) - 60 )) python3 -m exllamav2.conversion.convert_exl2 -i "$M/src27" -o "$M/work27" -cf "$M/exl2src" \
      -b 4.0 -r 8 -mr 4 -l 512 -ml 512 > "$D/logs/convert_exl2.log" 2>&1
    log "conversion rc=$?"
  else
    cp -r "$M/src27" "$M/exl2src"
  fi
  if ls "$M"/exl2src/*.safetensors > /dev/null 2>&1; then
    python3 -m doctor.probe.replicate_layers --src "$M/exl2src" --out "$EXL2" --layers "$LAYERS" \
      --label "synthetic exl2 Llama ({layers} layers of 5120/21760 copied from {source_layers} converted at 4.0 bpw, {gb:.2f} GB; random values)" \
      > "$D/logs/replicate.json" 2>&1 &&
    python3 -c "
import json, sys; p = sys.argv[1] + '/config.json'; c = json.load(open(p)); c['max_position_embeddings'] = 32768
json.dump(c, open(p, 'w'), indent=1)" "$EXL2" && cp "$EXL2/config.json" "$R/exl2_27_config.json" && touch "$EXL2/.ok"
    log "EXL2 27B ready: $(du -sh "$EXL2" | cut -f1)"
    rm -rf "$M/src27" "$M/work27"
  fi
fi
wait $GG; ls -la "$M" >> "$LOG"
for g in q4km q40; do [ -s "$M/$g.gguf" ] && head -c 1048576 "$M/$g.gguf" > "$R/${g}_header.gguf"; done
# ---- measurements: name, then the command; each skipped once its result exists
measure() {  # name timeout args...
  local name=$1 tmo=$2; shift 2
  [ -s "$R/$name.json" ] && return 0
  [ "$(left)" -lt 40 ] && { log "skip $name: $(left)s left"; return 1; }
  [ "$tmo" -gt $(( $(left) - 10 )) ] && tmo=$(( $(left) - 10 ))
  log "measure $name (timeout ${tmo}s)"
  if [ -n "${DRY:-}" ]; then log "dry: $*"; return 0; fi
  timeout "$tmo" "$@" > "$D/logs/$name.out" 2> "$R/$name.json.llama.log"; local rc=$?
  log "$name rc=$rc: $(tail -1 "$D/logs/$name.out" | head -c 400)"
  pack
}
PA="python3 benchmarks/plan_accuracy_measure.py"
gguf_ready() {
  [ -n "${DRY:-}" ] && return 0
  if [ -n "$LB" ]; then wait $LB; LB=""; fi
  LLAMA_OK
}
exl2_ready() { [ -f "$EXL2/.ok" ]; }
# STEPS: the measurements of this call, in order (default: all); each skipped once its result exists
step() {
  case $1 in
    g1) gguf_ready && measure g1_q4km_c4096_f16 120 $PA gguf --model "$M/q4km.gguf" --ctx 4096 --ctk f16 --out "$R/g1_q4km_c4096_f16.json" ;;
    g2) gguf_ready && measure g2_q4km_c32768_q8_0 150 $PA gguf --model "$M/q4km.gguf" --ctx 32768 --ctk q8_0 --out "$R/g2_q4km_c32768_q8_0.json" ;;
    g3) gguf_ready && measure g3_q40_c16384_f16 120 $PA gguf --model "$M/q40.gguf" --ctx 16384 --ctk f16 --out "$R/g3_q40_c16384_f16.json" ;;
    g4) gguf_ready && measure g4_q4km_c16384_q4_0 120 $PA gguf --model "$M/q4km.gguf" --ctx 16384 --ctk q4_0 --out "$R/g4_q4km_c16384_q4_0.json" ;;
    g5) gguf_ready && measure g5_q4km_c32768_f16 150 $PA gguf --model "$M/q4km.gguf" --ctx 32768 --ctk f16 --out "$R/g5_q4km_c32768_f16.json" ;;
    e1) exl2_ready && measure e1_exl2_c4096_fp16 120 $PA exl2 --model "$EXL2" --ctx 4096 --cache fp16 --out "$R/e1_exl2_c4096_fp16.json" ;;
    e2) exl2_ready && measure e2_exl2_c32768_q8 150 $PA exl2 --model "$EXL2" --ctx 32768 --cache q8 --out "$R/e2_exl2_c32768_q8.json" ;;
    e3) exl2_ready && measure e3_exl2_c16384_q6 130 $PA exl2 --model "$EXL2" --ctx 16384 --cache q6 --out "$R/e3_exl2_c16384_q6.json" ;;
    e4) exl2_ready && measure e4_exl2_c32768_fp16 150 $PA exl2 --model "$EXL2" --ctx 32768 --cache fp16 --out "$R/e4_exl2_c32768_fp16.json" ;;
    # e2 again with torch's allocator capped at the plan's peak + 3% less what lives outside torch (771 MiB measured):
    # does the option run in what the plan promised, once the allocator may not keep its cached blocks?
    e2cap) exl2_ready && measure x2cap_exl2_c32768_q8 150 $PA exl2 --model "$EXL2" --ctx 32768 --cache q8 \
             --torch-cap-mib "${E2CAP_MIB:-18277}" --out "$R/x2cap_exl2_c32768_q8.json" ;;
    i27e) exl2_ready && measure i27_exl2_probe 110 python3 -m doctor probe --model "$EXL2" --max-seq-len 4096 --json -o "$R/i27_exl2_probe.json"
          exl2_ready && measure i27_exl2_independent 100 python3 benchmarks/independent_timing.py --model "$EXL2" --max-seq-len 4096 \
            --budget-s 45 --max-runs 30 --out "$R/i27_exl2_independent.json" ;;
    i27g) gguf_ready && measure i27_gguf_probe 100 python3 -m doctor.probe.llamacpp "$M/q4km.gguf" --backend python --n-ctx 4096 \
            --json "$R/i27_gguf_probe.json" ;;
    wait_llama) gguf_ready; log "$(tail -1 "$D/logs/llama_build.log" 2>/dev/null)" ;;
  esac
}
for s in ${STEPS:-g1 g2 g3 e1 e2 e3 i27e i27g e4 g4 g5}; do step "$s"; done
if [ -z "${DRY:-}" ]; then
  python3 benchmarks/plan_accuracy_check.py --results "$R" --exl2-config "$R/exl2_27_config.json" \
    --gguf "q4km=$M/q4km.gguf" --gguf "q40=$M/q40.gguf" --out "$R" >> "$LOG" 2>&1
  log "check rc=$?"
fi
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv >> "$LOG" 2>&1
log "end: $(ls "$R" | tr '\n' ' ')"
