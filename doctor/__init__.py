"""v100-doctor: diagnoses quantized-LLM setups on old data-centre GPUs (V100 first).

Run as the program (`v100-doctor`, `python -m doctor`), this package is the first of the doctor's code to load:
a Ctrl-C from its first instruction on, while the rest of the entry point imports, ends the run with 130 and one
line, never a traceback (README: exit codes). doctor.cli.main hands SIGINT back to Python's KeyboardInterrupt once
its own handlers are in place. Imported as a library (tests, scripts) it leaves the signal alone.
"""

try:  # from the first instruction: a Ctrl-C before the handler below is in place is caught here
    import _signal  # the C module: no Python-level import (enum) to be interrupted in
    import os as _os
    import sys as _sys

    def _interrupted_while_starting(_signum: int, _frame: object) -> None:
        """Nothing has started yet (no child, no file): one line and 130, at once."""
        try:
            _os.write(2, b"v100-doctor: interrupted (SIGINT) while starting\n")
        except OSError:
            pass
        _os._exit(130)

    def _is_the_program() -> bool:
        """`python -m doctor` (argv[0] is "-m" while runpy imports the package) or the console script."""
        arg0 = (getattr(_sys, "argv", None) or [""])[0]
        return arg0 == "-m" or _os.path.basename(arg0).startswith("v100-doctor")

    def start_guard_handed_back() -> None:
        """The entry point's own handlers are in place: SIGINT raises KeyboardInterrupt again (130 via main)."""
        if _signal.getsignal(_signal.SIGINT) is _interrupted_while_starting:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)

    # only Python's own handler is replaced: a SIGINT the parent ignores (nohup, a background job) stays ignored
    try:
        if _is_the_program() and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
            _signal.signal(_signal.SIGINT, _interrupted_while_starting)
    except ValueError:  # not the main thread: not the program's start
        pass

    from doctor.version import __version__  # noqa: F401  (doctor.__version__, as before)
except KeyboardInterrupt:
    import os

    try:
        os.write(2, b"v100-doctor: interrupted (SIGINT) while starting\n")
    except OSError:
        pass
    os._exit(130)
