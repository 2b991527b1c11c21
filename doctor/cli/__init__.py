"""The command line, the doctor's face: argparse (options.py), where a report goes (output.py), hang-ups
(hangup.py, interrupted.py), the TUI's launch (tui.py) and the entry point (main.py; the console script is
`doctor.cli:main`). The subcommands (doctor/commands/) use its vocabulary; main finds them by name.
"""

import sys

try:  # a Ctrl-C while the entry point's modules load: exit 130 with one line, as later in the run, no traceback
    from doctor.cli.main import main
except KeyboardInterrupt:
    try:
        sys.stderr.write("v100-doctor: interrupted (SIGINT) while starting\n")
    except (OSError, ValueError, AttributeError):
        pass
    raise SystemExit(130) from None

__all__ = ["main"]
