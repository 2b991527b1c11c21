"""The exit codes are one table: the enum's descriptions make --help's epilog and the README's table."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from doctor.model.exitcodes import EXIT_CODE_HELP, ExitCode, exit_code_help, exit_code_table, interrupt_exit

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_exit_code_table_is_the_one_generated_from_the_enum():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Exit codes"):]
    table = re.search(r"^\| code \| meaning \|\n(?:\|.*\|\n?)+", section, re.M)
    assert table is not None, "the README's exit-code table is missing"
    assert table.group(0).rstrip("\n") == exit_code_table()


def test_every_code_has_a_description_and_appears_in_help():
    for code in ExitCode:
        assert code.description.strip()
        assert f"  {code.value}  {code.description}" in EXIT_CODE_HELP
    assert EXIT_CODE_HELP == exit_code_help()


def test_members_keep_their_values_and_stay_ints():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 5, 129, 130, 141, 143]
    assert ExitCode(3) is ExitCode.USAGE and ExitCode.OK == 0 and isinstance(ExitCode.FAILURES, int)


def test_interrupts_land_on_their_members():
    assert interrupt_exit() == ExitCode.INTERRUPTED
    assert interrupt_exit(signal.SIGINT) == ExitCode.INTERRUPTED
    assert interrupt_exit(signal.SIGTERM) == ExitCode.TERMINATED
    assert interrupt_exit(signal.SIGHUP) == ExitCode.HANGUP
    assert interrupt_exit(signal.SIGPIPE) == ExitCode.BROKEN_PIPE


def test_help_prints_the_table():
    root = README.parent
    out = subprocess.run([sys.executable, "-m", "doctor", "--help"], cwd=root, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "COLUMNS": "200"}).stdout
    assert EXIT_CODE_HELP in out
