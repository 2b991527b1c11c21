#!/usr/bin/env bash
# Device run 1 (H200): the probe on a synthetic model (it JIT-builds ExLlamaV2 first), an independent timing
# of the same generation, the act-order benchmark and the first-model-slowdown investigation.
# Results land in $OUT (at most 8 files); commit them under benchmarks/results/.
set -u
export MAX_JOBS=16 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
O=${OUT:-/tmp/out}; mkdir -p "$O"
step() { echo "=== $(date +%T) $*"; }
step "probe --synthetic (JIT build on first import)"
timeout 420 python3 -m doctor probe --synthetic --keep-synthetic /tmp/synth --second-pass always --json -o "$O/probe_synthetic_h200.json" >/dev/null
echo "exit $?"
so=$(find ~/.cache/torch_extensions -name 'exllamav2_ext*.so' | head -1); ls -la "$so"
[ -n "$so" ] && cp "$so" "$O/exllamav2_ext.so" && { [ $(stat -c %s "$O/exllamav2_ext.so") -lt 16000000 ] || strip --strip-debug "$O/exllamav2_ext.so"; ls -la "$O/exllamav2_ext.so"; }
step "independent timing"
timeout 120 python3 benchmarks/probe_vs_independent.py --model /tmp/synth --probe-json "$O/probe_synthetic_h200.json" --out "$O/independent_h200.json"
step "act-order benchmark"
timeout 200 python3 benchmarks/act_order.py --out "$O/act_order_h200.json"
step "first-model trap, model written in-process"
timeout 110 python3 benchmarks/first_model_trap.py --write-model /tmp/trap --window 128 --out "$O/trap_h200.json"
step "first-model trap, PYTHONMALLOC=malloc"
PYTHONMALLOC=malloc timeout 90 python3 benchmarks/first_model_trap.py --write-model /tmp/trap2 --window 128 --loads 1 --out "$O/trap_malloc_h200.json"
step "done"
