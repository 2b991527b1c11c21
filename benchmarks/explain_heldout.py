"""Score issue 35's held-out logs (tests/doctor/logscan/heldout/) with the `doctor` on PYTHONPATH: the expected pitfall
named, the engine right, healthy logs clean. Run it with PYTHONPATH=OLD_TREE for a before/after (an older tree has no
engine inference: its engine column reads "eng-?").

    python benchmarks/explain_heldout.py tests/doctor/logscan/heldout
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from doctor.logscan.scanner import Scanner

try:
    from doctor.commands.log_input import open_log
except ImportError:  # trees before issue 36 opened logs in logscan
    from doctor.logscan.source import open_log  # type: ignore[attr-defined,no-redef]


def main(folder: Path) -> None:
    expected = json.loads((folder / "expected.json").read_text())
    named = healthy = errors = oks = engines = 0
    for name, e in sorted(expected.items()):
        source = open_log(str(folder / name))
        result = Scanner().scan(source)
        source.close()
        found = {m.signature for m in result.matches}
        if e["expect"]:
            errors += 1
            ok = all(s in found for s in e["expect"])
            fixes = " ".join(m.fix for m in result.matches)
            fix_ok = ok and (not e.get("fix_has") or e["fix_has"] in fixes)
            engine = getattr(result, "engine", None)
            engine_ok = engine is not None and engine.engine == e["engine"]
            named += ok
            engines += engine_ok
            print(f"{'OK  ' if ok else 'MISS'} {'fix-ok' if fix_ok else 'fix-?'} {'eng-ok' if engine_ok else 'eng-?'} "
                  f"{name}: {sorted(found)}")
        else:
            oks += 1
            bad = [m.signature for m in result.matches if m.severity != "info"]
            clean = not bad and result.unexplained.error_lines == 0
            healthy += clean
            print(f"{'CLEAN' if clean else 'ALARM'} {name}: {bad} error-looking lines={result.unexplained.error_lines}")
    print(f"named right: {named}/{errors}; engine right: {engines}/{errors}; healthy clean: {healthy}/{oks}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
