"""Every fixture replays (or is explained) to the digest recorded in tests/golden/expected/: the moves of issue 36
change no behaviour, and a change of behaviour shows up here as the digests it changed (regen.py rewrites them)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from golden.golden_cases import cases, digest, expected_path

CASES = cases()


def test_every_case_has_a_digest_and_no_digest_is_stale():
    from golden.golden_cases import EXPECTED

    names = {expected_path(n).name for n, _ in CASES}
    on_disk = {p.name for p in EXPECTED.glob("*.json")}
    assert names == on_disk, "run python3 tests/golden/regen.py"


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
def test_replay_matches_golden(name, args):
    proc = run_cli(*args, env={"HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    expected = json.loads(expected_path(name).read_text())
    assert digest(proc.returncode, proc.stdout) == expected
