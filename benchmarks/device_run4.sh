#!/usr/bin/env bash
# Device run 4 (H200, issue 17): the same 27B-class GPTQ model probed while 16 intermittent busy loops (one per core, busy/idle 0.5-2.5 s at random) compete
# for the host: does the verdict name the instability and its cause instead of a median?
set -u
export MAX_JOBS=16 PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
O=${OUT:-/tmp/out}; mkdir -p "$O"
step() { echo "=== $(date +%T) $*"; }
step "JIT build"; timeout 260 python3 -c "import exllamav2" >/dev/null 2>&1; echo "exit $?"
step "model"; python3 -m doctor.probe.synthetic --out /tmp/synth27 --format gptq --shape qwen-27b --target-gb 12.5 >/dev/null
step "probe with 16 busy loops started after the warm-up begins"
( sleep 22; for i in $(seq 16); do timeout 45 python3 -c "import time,random
while True:
    t = time.time()
    while time.time() - t < random.uniform(0.5, 2.5): pass
    time.sleep(random.uniform(0.5, 2.5))" & done; wait ) &
s=$(date +%s%N); timeout 150 python3 -m doctor probe --model /tmp/synth27 --max-seq-len 4096 --settle-budget 25 --json -o "$O/probe_gptq27_busy_h200.json"; echo "exit $? command_to_verdict_ms $(( ($(date +%s%N) - s) / 1000000 ))"
wait
python3 -c "
import json; d=json.load(open('$O/probe_gptq27_busy_h200.json')); p=d['probe']['result']['passes'][0]
print('unsettled:', p['unsettled']); print('headline:', d['verdict']['headline'][:600])
for r in p['runs']: print(r['tok_s'], r['steal_pct'], r['involuntary_switches'], r['busy_others'][:1])" 
step done
