"""CI runs exactly the README's test command, gates included (scripts/check-architecture, ruff, mypy, the docs build): the two cannot
drift apart."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command():
    blocks = re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    command = next(b for b in blocks if "pytest" in b)
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci_lines[-1] == command
    assert command.split(" && ")[1] == "scripts/check-architecture" and "ruff check ." in command and "mypy" in command
    assert "mkdocs build --strict" in command
