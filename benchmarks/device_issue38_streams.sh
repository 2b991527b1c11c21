#!/bin/bash
# Issue 38 on the device. llama-server with 4 slots on the doctor's synthetic 27B-like
# Q4_K_M GGUF, driven by `probe --streams 1,2,4` while `watch --engine-url` reads its /metrics beside NVML, and
# llama-batched-bench on the same file as the reference; then the plan's estimates for the H200 beside both
# (benchmarks/issue38_plan_vs_measured.py). Run from the repo root on the device:
#   P=DIR bash benchmarks/device_issue38_streams.sh        results: $OUT/streams.tgz
# The build is static (one llama-server file); with KEEP_BIN=1 it comes back as $OUT/llama-bin.tar.xz.NN parts
# (16 MiB each) for a later call's P/bin (cat the parts | tar xJ).
# P holds a llama.cpp source tarball with tools/server (llama.cpp-src.tar.gz; the slim llama-cpp-python sdist of
# /tmp/prep has no tools/server) or, to skip the build (~5 min), built binaries in P/bin with their libraries.
set -u
OUT=${OUT:-/tmp/out}; R=/tmp/streams38; mkdir -p "$R" "$OUT"; T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
finish() {
  [ -n "${SPID:-}" ] && kill "$SPID" 2>/dev/null
  tar czf "$OUT/streams.tgz" -C /tmp streams38; cp "$R/run.log" "$OUT/"
  if [ "${KEEP_BIN:-0}" = 1 ] && [ -x /tmp/b/bin/llama-server ]; then
    tar cJf - -C /tmp/b bin/llama-server bin/llama-batched-bench | split -b 15M -d - "$OUT/llama-bin.tar.xz."
  fi
}
trap finish EXIT
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
G=/tmp/gg/synth27b-64L-q4km.gguf
( python3 -c "
import sys; from dataclasses import replace; from doctor.probe import synthetic_gguf; from doctor.probe.synthetic import QWEN_27B_LIKE
g = synthetic_gguf.write(sys.argv[1], replace(QWEN_27B_LIKE, layers=64, vocab=8192)); print(g.label)" $G ) > "$R/gguf.log" 2>&1 &
GPID=$!
. benchmarks/llama_server_build.sh
export LD_LIBRARY_PATH="$BIN:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
wait $GPID; log "gguf: $(cat "$R/gguf.log")"
"$BIN/llama-batched-bench" -m $G -ngl 999 -fa on -c 8192 -b 2048 -ub 512 -npp 128 -ntg 128 -npl 1,2,4,8 \
  > "$R/batched-bench.txt" 2> "$R/batched-bench.stderr"; log "batched-bench rc=$?"
"$BIN/llama-server" -m $G -ngl 999 -fa on --parallel 4 -c 8192 --metrics --port 8089 > "$R/server.log" 2>&1 &
SPID=$!
for i in $(seq 60); do python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8089/health', timeout=2)" 2>/dev/null && break; sleep 1; done; log "server up after ${i}s"
python3 -m doctor watch --seconds 40 --engine-url http://127.0.0.1:8089 --json -o "$R/watch.json" > "$R/watch.txt" 2>&1 &
WPID=$!
timeout 200 python3 -m doctor probe --streams 1,2,4 --tokens 128 --engine-url http://127.0.0.1:8089 \
  -o "$R/probe-streams.json" > "$R/probe-streams.txt" 2>&1; log "probe rc=$?"
for e in metrics slots; do python3 -c "import sys, urllib.request as u; sys.stdout.write(u.urlopen('http://127.0.0.1:8089/' + sys.argv[1], timeout=5).read().decode())" $e > "$R/$e.txt" 2>&1; done
wait $WPID; log "watch rc=$?"
python3 -m doctor --no-tui --replay "$R/probe-streams.json" > "$R/replay.txt" 2>&1; log "replay rc=$?"
python3 benchmarks/issue38_plan_vs_measured.py -p "$R/probe-streams.json" -b "$R/batched-bench.txt" > "$R/side-by-side.txt" 2>&1
cat "$R/side-by-side.txt" | tee -a "$R/run.log"
