#!/usr/bin/env bash
# Device run 5 (H200, issue 17), one call: a 27B-class EXL2 model at V100 size through the whole doctor
# (command to verdict timed) and through benchmarks/independent_timing.py (other code, same protocol).
# Converting 13 GB to EXL2 takes far longer than a call, so: a 1-layer random FP16 model of the 27B layer
# shape (hidden 5120 / intermediate 21760, 40/8 heads) is converted with ExLlamaV2's own converter at
# 4.0 bpw, and its quantized layer is repeated under 64 layer indices (doctor/probe/replicate_layers.py).
# Per token that reads what a real ~4 bpw EXL2 27B reads, through the same kernels; the values are random.
# The JIT build of the extension runs while the FP16 source is written. A failed conversion stops the run.
# Retry: FULL=0 FIRST=3 SETTLE=60 BUDGET=75 probes alone (no full doctor run) with longer budgets to settle.
# DRY=1 runs the parts that need no GPU (the source model and a replication of it) and skips the rest.
set -u
export MAX_JOBS=16 PYTHONUNBUFFERED=1
T0=$(date +%s)
O=${OUT:-/tmp/out}; mkdir -p "$O"
W=${WORK:-/tmp}
LAYERS=${LAYERS:-64}
step() { echo "=== $(date +%T) +$(( $(date +%s) - T0 ))s $*"; }
if [ -z "${DRY:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
  step "JIT build of ExLlamaV2 (background, timed)"
  ( timeout 260 python3 -c "import time; t=time.time(); import exllamav2, exllamav2.ext; print('build+import', round(time.time()-t,1), 's')" > "$W/jit.log" 2>&1; echo "exit $?" >> "$W/jit.log" ) &
  JIT=$!
else
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
step "1-layer FP16 source of the 27B layer shape"
rm -rf "$W/src27" "$W/work27" "$W/exl2src" "$W/exl2_27"
python3 -m doctor.probe.synthetic --out "$W/src27" --format fp16 --shape qwen-27b --layers 1 | tail -1 | head -c 300; echo
if [ -n "${DRY:-}" ]; then
  step "dry run: replicate the FP16 source (no converter here)"
  python3 -m doctor.probe.replicate_layers --src "$W/src27" --out "$W/exl2_27" --layers "$LAYERS" \
    --label "synthetic fp16 Llama ({layers} layers copied from {source_layers}, {gb:.2f} GB; dry run)" || exit 1
  python3 -m doctor --model "$W/exl2_27" --max-seq-len 4096 --json --no-tui --no-probe -o "$O/dry_report.json" >/dev/null; echo "doctor exit $?"
  step "dry run done"; exit 0
fi
wait $JIT; tail -3 "$W/jit.log"
step "EXL2 conversion, 4.0 bpw (ExLlamaV2's own converter)"
timeout 240 python3 -m exllamav2.conversion.convert_exl2 -i "$W/src27" -o "$W/work27" -cf "$W/exl2src" -b 4.0 -r 8 -mr 4 -l 512 -ml 512 > "$O/convert_exl2.log" 2>&1
rc=$?; echo "convert exit $rc"; tail -5 "$O/convert_exl2.log"
if [ $rc -ne 0 ] || ! ls "$W"/exl2src/*.safetensors >/dev/null 2>&1; then step "conversion failed: stopping"; exit 2; fi
cp "$W/exl2src/config.json" "$O/exl2_source_config.json"
step "replicate the converted layer to $LAYERS layers"
python3 -m doctor.probe.replicate_layers --src "$W/exl2src" --out "$W/exl2_27" --layers "$LAYERS" \
  --label "synthetic exl2 Llama ({layers} layers of 5120/21760 copied from {source_layers} converted at 4.0 bpw, {gb:.2f} GB; random values)" \
  | tee "$O/replicate.json" || exit 2
rm -rf "$W/work27" "$W/src27"
A=${FIRST:-1}; B=$((A + 1))  # file numbers; the retry (FULL=0, longer budgets) writes _3, _4
if [ "${FULL:-1}" = 1 ]; then
  step "pair $A: the doctor, command to verdict"
  s=$(date +%s%N); timeout 150 python3 -m doctor --model "$W/exl2_27" --max-seq-len 4096 --json --no-tui -o "$O/report_exl2_27_h200_$A.json" >/dev/null; echo "exit $? command_to_verdict_ms $(( ($(date +%s%N) - s) / 1000000 ))"
else
  step "pair $A: the doctor's probe (settle budget ${SETTLE:-45} s)"
  s=$(date +%s%N); timeout 150 python3 -m doctor probe --model "$W/exl2_27" --max-seq-len 4096 --settle-budget "${SETTLE:-45}" --json -o "$O/probe_exl2_27_h200_$A.json" >/dev/null; echo "exit $? command_to_verdict_ms $(( ($(date +%s%N) - s) / 1000000 ))"
fi
step "pair $A: independent timing (budget ${BUDGET:-45} s)"
timeout 130 python3 benchmarks/independent_timing.py --model "$W/exl2_27" --max-seq-len 4096 --budget-s "${BUDGET:-45}" --max-runs 40 --out "$O/independent_exl2_27_h200_$A.json" 2>"$W/indep.err" | tail -1 || tail -3 "$W/indep.err"
if [ $(( $(date +%s) - T0 )) -lt 470 ]; then
  step "pair $B: the doctor's probe"
  s=$(date +%s%N); timeout 90 python3 -m doctor probe --model "$W/exl2_27" --max-seq-len 4096 --json -o "$O/probe_exl2_27_h200_$B.json" >/dev/null; echo "exit $? command_to_verdict_ms $(( ($(date +%s%N) - s) / 1000000 ))"
fi
step "done"
