#!/usr/bin/env bash
# Device run 2 (H200): the final synthetic probe report (JIT build again: the cache does not outlast the
# machine), a tiny synthetic model converted to EXL2 and probed, the independent timing, the probe without
# NVML sampling, and the first-use trap with torch's cuDNN attention switched off.
set -u
export MAX_JOBS=16 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
O=${OUT:-/tmp/out}; mkdir -p "$O"
step() { echo "=== $(date +%T) $*"; }
step "probe --synthetic (gptq, 27B-like layers; JIT build first)"
timeout 330 python3 -m doctor probe --synthetic --keep-synthetic /tmp/synth --json -o "$O/probe_synthetic_h200.json" >/dev/null; echo "exit $?"
step "EXL2: convert a tiny synthetic FP16 model at 3.75 bpw, then probe it"
python3 -m doctor.probe.synthetic --out /tmp/tiny16 --format fp16 --shape tiny >/dev/null
timeout 150 python3 /tmp/site/exllamav2/conversion/convert_exl2.py -i /tmp/tiny16 -o /tmp/exl2work -cf /tmp/tiny_exl2 -b 3.75 -r 4 -mr 2 -l 256 -ml 256 >"$O/convert_exl2.log" 2>&1; echo "convert exit $?"; tail -2 "$O/convert_exl2.log"
timeout 60 python3 -m doctor probe --model /tmp/tiny_exl2 --json -o "$O/probe_exl2_h200.json" >/dev/null; echo "exit $?"
step "independent timing"
timeout 60 python3 benchmarks/probe_vs_independent.py --model /tmp/synth --probe-json "$O/probe_synthetic_h200.json" --out "$O/independent_h200.json"
step "probe without NVML sampling"
timeout 60 python3 -m doctor probe --model /tmp/synth --no-sampling --no-bandwidth --json -o "$O/probe_synthetic_nosampling_h200.json" >/dev/null; echo "exit $?"
step "first-use trap with cuDNN attention off"
timeout 60 python3 benchmarks/first_model_trap.py --model /tmp/synth --no-cudnn-sdp --loads 1 --warmup 64 --windows 2 --window 128 --out "$O/trap_cudnn_off_h200.json"
step "done"
