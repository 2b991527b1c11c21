#!/usr/bin/env bash
# Proves pyproject's textual floor: for each version given (default: the declared floor and the release just
# below it), a fresh venv gets that textual, the doctor's other runtime dependencies and pytest, then the doctor
# itself from this checkout (a wheel, no -e); the TUI tests run against it (all but the pixel snapshots, which are
# drawn by the pinned textual of the [test] extra, and the pty hang-up timings, which measure the machine's load
# more than textual), stopping at the first failure. The floor passes; the release
# below it must not.
# Needs PyPI. Run on purpose: benchmarks/textual_floor.sh > benchmarks/results/textual_floor.txt 2>&1
set -uo pipefail
cd "$(dirname "$0")/.."
floor=$(python3 -c 'import tomllib,re; deps=tomllib.load(open("pyproject.toml","rb"))["project"]["dependencies"]; print(next(re.search(r">=([\d.]+)", d).group(1) for d in deps if d.startswith("textual")))')
below=$(python3 -m pip index versions textual 2>/dev/null | python3 -c '
import sys
from packaging.version import Version
floor = Version(sys.argv[1])
listed = next((l.split(":", 1)[1] for l in sys.stdin if l.startswith("Available versions")), "")
older = sorted(v for v in map(Version, filter(None, (x.strip() for x in listed.split(",")))) if v < floor and not v.is_prerelease)
print(older[-1] if older else "")' "$floor")
versions=("$@"); [ ${#versions[@]} -eq 0 ] && versions=("$floor" ${below:+"$below"})
others=$(python3 -c 'import tomllib; print(" ".join(repr(d) for d in tomllib.load(open("pyproject.toml","rb"))["project"]["dependencies"] if not d.startswith("textual")))')
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 -m pip wheel -q --no-deps -w "$work/dist" . >/dev/null 2>&1 || { echo "cannot build the wheel"; exit 2; }
echo "declared floor: textual>=$floor; $(python3 --version); $(date -u +%Y-%m-%dT%H:%MZ)"
for v in "${versions[@]}"; do
  python3 -m venv "$work/venv-$v"
  py="$work/venv-$v/bin/python"
  eval "$py -m pip install -q --disable-pip-version-check textual==$v $others pytest jsonschema" >"$work/pip-$v.log" 2>&1 \
    || { echo "textual $v: cannot install"; tail -3 "$work/pip-$v.log"; continue; }
  "$py" -m pip install -q --disable-pip-version-check --no-deps "$work"/dist/*.whl >/dev/null 2>&1
  rich=$("$py" -c 'import importlib.metadata as m; print(m.version("rich"))')
  # run from a copy of the tests only, so `doctor` is imported from the installed wheel, not from this checkout
  rm -rf "$work/t"; mkdir "$work/t"; cp -r tests "$work/t/"; cp pyproject.toml README.md "$work/t/"; ln -s "$PWD/fixtures" "$work/t/fixtures"
  out=$(cd "$work/t" && ln -sf "$("$py" -c 'import doctor,os;print(os.path.dirname(doctor.__file__))')" doctor \
        && "$py" -m pytest -p no:cacheprovider -x tests/doctor/tui --ignore=tests/doctor/tui/test_tui_snapshots.py \
           --ignore=tests/doctor/tui/test_hangup_pty.py 2>&1)
  rc=$?
  summary=$(grep -E "[0-9]+ (passed|failed|error)" <<<"$out" | tail -1 | tr -s '=' | sed 's/^ *//')
  echo "textual $v (rich $rich): exit $rc: $summary"
  [ $rc -ne 0 ] && grep -m3 -E "^E |StylesheetError|Error in stylesheet" <<<"$out" | cut -c1-220 | sed 's/^/    /'
done
