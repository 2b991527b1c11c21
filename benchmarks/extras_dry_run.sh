#!/usr/bin/env bash
# Resolve every extra of v100-doctor with pip's resolver, as a user's `pip install ".[EXTRA]"` would, without
# installing anything, and show that no torch (nor exllamav2, nvidia-* CUDA runtime wheels) comes with any of them.
# Needs PyPI. Run on purpose: benchmarks/extras_dry_run.sh > benchmarks/results/extras_dry_run.txt
set -uo pipefail
cd "$(dirname "$0")/.."
extras=$(python3 -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml","rb"))["project"].get("optional-dependencies", {})))')
status=0
for extra in "" $extras; do
  target="."; [ -n "$extra" ] && target=".[$extra]"
  report=$(mktemp)
  start=$(date +%s)
  python3 -m pip install -q --dry-run --ignore-installed --report "$report" "$target" >/dev/null 2>"$report.err" || { cat "$report.err"; exit 2; }
  names=$(python3 -c 'import json,sys; print(" ".join(sorted(i["metadata"]["name"].lower() for i in json.load(open(sys.argv[1]))["install"])))' "$report")
  bad=$(tr ' ' '\n' <<<"$names" | grep -E '^(torch|torchvision|torchaudio|exllamav2|nvidia-.*|triton)$' | grep -vx 'nvidia-ml-py' || true)
  echo "pip install --dry-run \"$target\": $(wc -w <<<"$names") packages resolved in $(( $(date +%s) - start )) s; torch-family: ${bad:-none}"
  [ -n "$bad" ] && status=1
  rm -f "$report" "$report.err"
done
python3 -m pip --version
exit $status
