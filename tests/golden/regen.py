"""Rewrite the golden digests (tests/golden/expected/) from what the doctor prints now: run after a change of
behaviour that is meant, and read the diff before committing it."""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from golden_cases import EXPECTED, cases, digest, expected_path, run_case  # noqa: E402


def main() -> int:
    EXPECTED.mkdir(exist_ok=True)
    for old in EXPECTED.glob("*.json"):
        old.unlink()
    todo = cases()
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda c: (c[0], run_case(c[1])), todo))
    for name, proc in done:
        expected_path(name).write_text(json.dumps(digest(proc.returncode, proc.stdout), indent=1, ensure_ascii=False) + "\n")
    print(f"{len(done)} golden digests written to {EXPECTED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
