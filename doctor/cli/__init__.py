"""The command line, the doctor's face: argparse (options.py), where a report goes (output.py), hang-ups
(hangup.py, interrupted.py), the TUI's launch (tui.py) and the entry point (main.py; the console script is
`doctor.cli:main`). The subcommands (doctor/commands/) use its vocabulary; main finds them by name.
"""

from doctor.cli.main import main

__all__ = ["main"]
