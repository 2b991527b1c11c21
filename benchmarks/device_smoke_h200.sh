#!/bin/bash
# One short call on the H200 after a session's moves: the real NVML, torch and catalogue paths end to end, each
# command's exit code and time, and the GPU-marked tests. Run from the repo root on the device with the doctor's
# dependencies carried as wheels in .whl/ (pip download --only-binary=:all: --python-version 3.12 ...):
#   bash benchmarks/device_smoke_h200.sh           results: $OUT/smoke.log and one file per command
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > "$OUT/install.txt" 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
run() {  # NAME COMMAND...: its output in $OUT/NAME.txt, its exit code and seconds in smoke.log
  local name=$1; shift; local t0; t0=$(date +%s.%N)
  timeout 100 "$@" > "$OUT/$name.txt" 2>&1; local rc=$?
  echo "$name rc=$rc $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$(date +%s.%N)") s" >> "$OUT/smoke.log"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >> "$OUT/smoke.log" 2>&1
run version python3 -m doctor --version
run main python3 -m doctor --no-tui -o "$OUT/main.json"
run replay python3 -m doctor --no-tui --replay "$OUT/main.json"
run plan python3 -m doctor plan Qwen/Qwen3-30B-A3B --context 8192
run fit python3 -m doctor fit --context 8192
run gpu-tests python3 -m pytest -q -m gpu -p no:cacheprovider tests/gpu
