"""Each subcommand's --help lists its own exit codes, not the main command's (issue 39: `bundle --help` said
"for `bundle`…" and "5 a check asked for with --check", which no subcommand exits with)."""

from __future__ import annotations

import pytest
from conftest import run_cli

from doctor.cli.options import SUBCOMMANDS
from doctor.model.exitcodes import COMMAND_CODES, EXIT_CODE_HELP, ExitCode, command_exit_help


def test_every_subcommand_has_its_own_table():
    assert set(COMMAND_CODES) == set(SUBCOMMANDS)


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_help_prints_the_commands_own_codes(command):
    proc = run_cli(command, "--help", env={"COLUMNS": "250"})
    assert proc.returncode == 0, proc.stderr
    assert command_exit_help(command) in proc.stdout
    assert EXIT_CODE_HELP not in proc.stdout and f"  5  {ExitCode.NOT_RUN.description}" not in proc.stdout
    assert "for `bundle`" not in proc.stdout
    codes = [c for c, _ in COMMAND_CODES[command]]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert ExitCode.NOT_RUN not in codes  # only the main command has --check


def test_the_main_help_keeps_the_main_table():
    assert EXIT_CODE_HELP in run_cli("--help", env={"COLUMNS": "250"}).stdout


def test_bundle_exits_as_its_table_says_with_failing_findings(tmp_path):
    """bundle's 0 is 'written, whatever the findings': a replay whose checks fail still exits 0."""
    from conftest import MACHINES

    proc = run_cli("bundle", "--replay", str(MACHINES / "v100-torch-2.11-cu130.json"), "-o", str(tmp_path / "t.tar.gz"))
    assert proc.returncode == 0 and (tmp_path / "t.tar.gz").exists(), proc.stderr
