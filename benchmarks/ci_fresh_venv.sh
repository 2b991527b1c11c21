#!/usr/bin/env bash
# The contributors' test command as a newcomer meets it, N times in a row (issue 26): each run is a fresh clone of
# main, a fresh venv of the given Python, then the README's test command, timed. Prints each run's whole time, the
# time pytest reports, the CPU time of the whole command (a figure that holds on a shared machine) and pass/fail,
# then a summary line; exit 0 only when every run passed.
#
#   benchmarks/ci_fresh_venv.sh PYTHON [N] [REPO]
#   benchmarks/ci_fresh_venv.sh /root/.pyenv/versions/3.10.13/bin/python3 10
#
# PYTHON: the interpreter the venv is made from; N: runs (default 1); REPO: what is cloned (default: the repository
# this script is in), its branch $CI_FRESH_BRANCH (default main). Each run's log is kept in $CI_FRESH_LOGS (default /tmp/ci-fresh-logs).
# Run it in the foreground of a shell with default signal handling: under nohup (SIGHUP or SIGINT ignored) the
# suite's signal tests fail, so the script refuses to start.
set -euo pipefail

PYTHON=${1:?usage: $0 PYTHON [N] [REPO]}
RUNS=${2:-1}
REPO=${3:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
LOGS=${CI_FRESH_LOGS:-/tmp/ci-fresh-logs}
BRANCH=${CI_FRESH_BRANCH:-main}

ignored=$(awk '/^SigIgn:/ {print $2}' /proc/$$/status)
if (( (16#$ignored & 3) != 0 )); then  # bit 0: SIGHUP, bit 1: SIGINT
  echo "ci_fresh_venv: SIGHUP or SIGINT is ignored (nohup?): the signal tests would fail; run it in a plain shell" >&2
  exit 2
fi
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' >/dev/null

# The README's test command, read from the README of the clone (tests/test_ci_command.py holds .ci/run to it).
readme_command() {
  "$PYTHON" - "$1/README.md" <<'EOF'
import re, sys
blocks = re.findall(r"```sh\n(.*?)\n```", open(sys.argv[1]).read(), re.S)
print(next(b for b in blocks if "pytest" in b))
EOF
}

mkdir -p "$LOGS"
passed=0
times=()
echo "ci_fresh_venv: $("$PYTHON" --version 2>&1), $RUNS run(s) of $REPO ($BRANCH), $(nproc) cores," \
     "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= RUNS; i++)); do
  work=$(mktemp -d /tmp/ci-fresh.XXXXXX)
  log="$LOGS/run-$(basename "$PYTHON")-$i-$(date +%H%M%S).log"
  git clone --quiet --branch "$BRANCH" --single-branch "$REPO" "$work/repo"
  "$PYTHON" -m venv "$work/venv"
  command=$(readme_command "$work/repo")
  start=$(date +%s.%N)
  set +e
  TIMEFORMAT='%U %S'  # the CPU seconds of the command and every process it waited for (user, system)
  { time bash -c 'exec >"$1" 2>&1; cd "$2" && . "$3/bin/activate" && set -eo pipefail && eval "$4"' _ \
      "$log" "$work/repo" "$work/venv" "$command"; } 2>"$work/cpu"
  rc=$?
  set -e
  cpu=$(awk '{printf "%.1f", $1 + $2}' "$work/cpu")
  whole=$(echo "$(date +%s.%N) - $start" | bc)
  pytest_s=$(grep -oE ' in [0-9.]+s' "$log" | tail -1 | grep -oE '[0-9.]+' || echo "?")
  counts=$(grep -E '[0-9]+ passed' "$log" | tail -1 | sed -E 's/ in [0-9.]+s.*//; s/^=+ //' || true)
  if [[ $rc -eq 0 ]]; then verdict=PASS; passed=$((passed + 1)); else verdict="FAIL (exit $rc)"; fi
  printf 'run %d/%d: %s  whole %.1f s  pytest %s s  CPU %s s  %s  load %s  log %s\n' "$i" "$RUNS" "$verdict" \
         "$whole" "$pytest_s" "$cpu" "${counts:-}" "$(cut -d' ' -f1 /proc/loadavg)" "$log"
  [[ $rc -eq 0 ]] || tail -n 30 "$log" | sed 's/^/    /'
  times+=("$pytest_s")
  rm -rf "$work"
done
echo "ci_fresh_venv: $passed/$RUNS passed; pytest seconds: ${times[*]}"
[[ $passed -eq $RUNS ]]
