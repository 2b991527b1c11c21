#!/usr/bin/env bash
# Device run 3 (H200, issue 17), one call: the static torch facts against torch's own, start-up, then a
# 27B-class GPTQ model at V100 size (hidden 5120, 60+ layers, ~13 GB) through the whole doctor (command to
# verdict timed) and through benchmarks/independent_timing.py (other code, same protocol), twice if time allows.
set -u
export MAX_JOBS=16 PYTHONUNBUFFERED=1
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
O=${OUT:-/tmp/out}; mkdir -p "$O"
step() { echo "=== $(date +%T) +$(( $(date +%s) - T0 ))s $*"; }
step "static torch facts vs import torch"
timeout 60 python3 benchmarks/static_arch_check.py > "$O/static_arch_h200.json"; echo "exit $?"; head -c 600 "$O/static_arch_h200.json"
step "JIT build of ExLlamaV2 (timed)"
timeout 260 python3 -c "import time; t=time.time(); import exllamav2, exllamav2_ext; print('build+import', round(time.time()-t,1), 's')" 2>&1 | tail -2
step "synthetic 27B-class GPTQ model"
python3 -m doctor.probe.synthetic --out /tmp/synth27 --format gptq --shape qwen-27b --target-gb 12.5 | tail -1 | head -c 400; echo
step "pair 1: the doctor, command to verdict"
s=$(date +%s%N); timeout 150 python3 -m doctor --model /tmp/synth27 --max-seq-len 4096 --json --no-tui -o "$O/report_gptq27_h200_1.json" >/dev/null; echo "exit $? command_to_verdict_ms $(( ($(date +%s%N) - s) / 1000000 ))"
step "pair 1: independent timing"
timeout 120 python3 benchmarks/independent_timing.py --model /tmp/synth27 --max-seq-len 4096 --fresh-lengths 64 --out "$O/independent_gptq27_h200_1.json" 2>/dev/null | tail -1
if [ $(( $(date +%s) - T0 )) -lt 420 ]; then
  step "pair 2: the doctor's probe"
  s=$(date +%s%N); timeout 100 python3 -m doctor probe --model /tmp/synth27 --max-seq-len 4096 --json -o "$O/probe_gptq27_h200_2.json" >/dev/null; echo "exit $? command_to_verdict_ms $(( ($(date +%s%N) - s) / 1000000 ))"
  step "pair 2: independent timing"
  timeout 80 python3 benchmarks/independent_timing.py --model /tmp/synth27 --max-seq-len 4096 --out "$O/independent_gptq27_h200_2.json" 2>/dev/null | tail -1
fi
if [ $(( $(date +%s) - T0 )) -lt 520 ]; then
  step "start-up (runs 3)"
  timeout 60 python3 benchmarks/startup.py --runs 3 --json "$O/startup_h200.json" > "$O/startup_h200.txt" 2>&1; tail -4 "$O/startup_h200.txt"
fi
step "done"
