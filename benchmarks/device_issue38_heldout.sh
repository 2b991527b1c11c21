#!/bin/bash
# Issue 38 on the device, round 2: the batched-decode estimate on shapes it was NOT fitted on. The H200's step ratios
# (doctor/knowledge/batch_scaling.py HOPPER) were read off the 27B-like run (benchmarks/results/issue38-streams/
# h200-llamacpp-27b/); here llama-batched-bench times the held-out 8B-like and 70B-like (24 layers) Q4_K_M GGUFs at
# 1-8 sequences, with the same flags, beside the plan's estimate (benchmarks/issue38_plan_vs_measured.py --shape).
# Then, on the 8B-like file: llama-server --parallel 4 timed by `probe --streams 1,2,4 --engine-url` while `watch
# --engine-url` samples it, and `probe --streams 1,2,4 --model FILE --engine llama.cpp` (the doctor starting the
# user's llama-server itself, on PATH). Run from the repo root on the device, the llama.cpp source in P (see
# device_issue38_streams.sh):  P=.whl bash benchmarks/device_issue38_heldout.sh       results: $OUT/heldout.tgz
set -u
OUT=${OUT:-/tmp/out}; R=/tmp/heldout38; mkdir -p "$R" "$OUT" /tmp/gg; T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
finish() { [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null; tar czf "$OUT/heldout.tgz" -C /tmp heldout38; cp "$R/run.log" "$OUT/"; }
trap finish EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
( python3 - > "$R/gguf.log" 2>&1 <<'PY'
from doctor.probe import synthetic_gguf
from doctor.probe.synthetic import Shape
for name, shape in (("8b", Shape(hidden=4096, intermediate=14336, heads=32, kv_heads=8, head_dim=128, layers=32, vocab=8192)),
                    ("70b-24", Shape(hidden=8192, intermediate=28672, heads=64, kv_heads=8, head_dim=128, layers=24, vocab=8192))):
    print(name, synthetic_gguf.write(f"/tmp/gg/{name}.gguf", shape).label, flush=True)
PY
) &
GPID=$!
. benchmarks/llama_server_build.sh
export PATH="$BIN:$PATH"
wait $GPID; log "gguf: $(tr '\n' ';' < "$R/gguf.log")"
for s in 8b 70b-24; do
  llama-batched-bench -m /tmp/gg/$s.gguf -ngl 999 -fa on -c 8192 -b 2048 -ub 512 -npp 128 -ntg 128 -npl 1,2,4,8 \
    > "$R/batched-bench-$s.txt" 2> "$R/batched-bench-$s.stderr"; log "batched-bench $s rc=$?"
done
llama-server -m /tmp/gg/8b.gguf -ngl 999 -fa on --parallel 4 -c 8192 --metrics --port 8089 > "$R/server.log" 2>&1 &
SPID=$!
for i in $(seq 60); do python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8089/health', timeout=2)" 2>/dev/null && break; sleep 1; done; log "server up after ${i}s"
python3 -m doctor watch --seconds 15 --hz 2 --engine-url http://127.0.0.1:8089 --json -o "$R/watch.json" > "$R/watch.txt" 2>&1 &
WPID=$!
sleep 2
timeout 120 python3 -m doctor probe --streams 1,2,4 --tokens 256 --engine-url http://127.0.0.1:8089 \
  -o "$R/probe-streams-8b.json" > "$R/probe-streams-8b.txt" 2>&1; log "probe (--engine-url) rc=$?"
wait $WPID; log "watch rc=$?"
python3 -m doctor --no-tui --replay "$R/watch.json" > "$R/watch-replay.txt" 2>&1; log "watch replay rc=$?"
kill $SPID; wait $SPID 2>/dev/null; SPID=
timeout 200 python3 -m doctor probe --streams 1,2,4 --tokens 256 --model /tmp/gg/8b.gguf --engine llama.cpp \
  -o "$R/probe-streams-8b-launched.json" > "$R/probe-streams-8b-launched.txt" 2>&1; log "probe (doctor's own llama-server) rc=$?"
echo "llama-server processes left: $(pgrep -xc llama-server)" | tee -a "$R/run.log"  # pgrep: a pipeline naming it would count itself
for s in 8b 70b-24; do
  P2=(); [ "$s" = 8b ] && P2=(-p "$R/probe-streams-8b.json")
  [ "$s" = 8b ] && [ -s "$R/probe-streams-8b-launched.json" ] && P2+=(-p "$R/probe-streams-8b-launched.json")
  python3 benchmarks/issue38_plan_vs_measured.py --shape $s -b "$R/batched-bench-$s.txt" "${P2[@]}" > "$R/side-by-side-$s.txt" 2>&1
  cat "$R/side-by-side-$s.txt" | tee -a "$R/run.log"
done
