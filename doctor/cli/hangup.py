"""The terminal went away (SIGHUP: the SSH session dropped) or the doctor was told to stop (SIGTERM):
end within a deadline whatever the screen's threads are blocked on, and leave no child behind.

A screen writes to its terminal from a thread; once the terminal is gone nothing drains that thread, and
a graceful shutdown can block forever (issue 13: Textual's `Queue.put` at shutdown). So the signal only
sets things in motion: a thread started beforehand stops every child at once (the torch child, the
probe's process group: doctor.facts.children.stop_all, as the CLI does on interrupts), says the last words
(-o gets the report as it stood), gives the graceful quit `within_s` and ends the process with 128 + the signal,
the terminal's modes and screen given back first when it is still there (SIGTERM).
The handlers are signal.signal ones: Python runs them even while the main thread waits on a lock, which
the event loop's own handlers (add_signal_handler) cannot do once the loop itself is blocked.
A terminal that is not the doctor's controlling terminal sends no SIGHUP when it closes (its reads fail or
return nothing, and textual spins or panics): a thread polls it for POLLHUP and raises SIGHUP itself.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import sys
import termios
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Callable, Iterator

from doctor.facts.children import stop_all

# What a screen leaves set, turned off (as textual's own stop_application_mode does): mouse reports, bracketed
# paste, the kitty keyboard protocol, focus events; then the cursor shown and the main screen back.
TERMINAL_RESET = ("\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?1016l\x1b[?2004l\x1b[?2048l\x1b[<u"
                  "\x1b[?1004l\x1b[?25h\x1b[?1049l\x1b[?7h")
SIGNALS = tuple(getattr(signal, name) for name in ("SIGHUP", "SIGTERM") if hasattr(signal, name))
EXIT_WITHIN_S = 0.8  # the graceful quit's share of the 2 s a dropped terminal may take to end us (issue 13)
LAST_WORDS_WAIT_S = 0.4  # past the deadline, how long an unfinished -o write may still take


SIGNAL_EXIT_WITHIN_S = 1.5  # outside the screen: a SIGHUP/SIGTERM run has this long to write -o and return


def end_within(signum: int, within_s: float = SIGNAL_EXIT_WITHIN_S) -> None:
    """Outside the screen's guard, the CLI's SIGHUP/SIGTERM raises Interrupted and the run unwinds; this makes
    sure it ends even when the unwinding cannot (a worker thread the interpreter waits for at exit, an `except`
    in a library that swallowed the exception): after within_s every child is stopped and the process ends
    with 128 + signum. Armed once per process, by the program only (never in-process, where a test goes on)."""
    global _deadline_armed
    if _deadline_armed:
        return
    _deadline_armed = True

    def deadline() -> None:
        time.sleep(within_s)
        stop_all(final=True)
        os._exit(128 + signum)

    threading.Thread(target=deadline, name="v100-doctor-signal-deadline", daemon=True).start()


_deadline_armed = False


class HangupGuard:
    """Armed before the screen starts; `signum` is set once SIGHUP or SIGTERM has come."""

    def __init__(self, within_s: float = EXIT_WITHIN_S, end: Callable[[int], object] = os._exit) -> None:
        self.within_s, self._end = within_s, end  # end(exit code): a test passes its own, never os._exit
        self.signum: int | None = None
        self.armed = False  # the handlers are ours (hangup_guard's block runs)
        self.terminal: SavedTerminal | None = None  # restored when the deadline ends the process
        self._callbacks: list[Callable[[], None]] = []
        self._last_words: Callable[[], None] | None = None
        self._said = False
        self._saying = threading.Lock()
        self._fired = threading.Event()
        self._thread = threading.Thread(target=self._deadline, name="v100-doctor-hangup", daemon=True)

    def on_signal(self, callback: Callable[[], None]) -> None:
        """callback runs inside the signal handler (the main thread, between any two bytecodes): it may only
        set flags and hand work to a loop thread-safely (loop.call_soon_threadsafe)."""
        self._callbacks.append(callback)

    def last_words(self, callback: Callable[[], None]) -> None:
        """What must happen before the process ends, whichever way it ends after the signal (the -o report)."""
        self._last_words = callback

    def say_last_words(self) -> None:
        """Run the last words once, from the main thread's orderly exit or the guard's thread, whichever is first."""
        if not self._saying.acquire(timeout=LAST_WORDS_WAIT_S):
            return
        try:
            if not self._said and self._last_words is not None:
                self._said = True
                self._last_words()
        finally:
            self._saying.release()

    def end_now(self) -> int:
        """After the signal, once the screen is gone and the last words said: end at once, as the deadline
        would, without the interpreter's own teardown (slow under load, and no deadline can cut it short)."""
        code = 128 + (self.signum or signal.SIGTERM)
        stop_all(final=self._end is os._exit)  # the process ends: nothing may start after this
        self._end(code)
        return code  # only when `end` is a test's own

    def _say_quietly(self) -> None:
        try:
            self.say_last_words()
        except Exception:  # noqa: BLE001 - the file is written or not; the process ends either way
            pass

    def terminal_gone(self) -> bool:
        """The screen's terminal has hung up, whether or not its SIGHUP has been handled yet (a screen's own
        teardown can fail on the dead terminal a moment before the handler runs)."""
        if self.terminal is None:
            return False
        poller = select.poll()
        poller.register(self.terminal.fd, 0)
        try:
            return any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, mask in poller.poll(0))
        except OSError:
            return True

    def hang_up_if_gone(self) -> bool:
        """True when the run is ending by a signal, or its terminal is gone (then handled as its SIGHUP)."""
        if self.signum is None and self.armed and self.terminal_gone():
            self._handle(signal.SIGHUP, None)
        return self.signum is not None

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is not None:  # a second signal: the deadline already runs
            return
        self.signum = signum
        for callback in self._callbacks:  # first: a probe cancelled before its group is killed reads "cancelled"
            try:
                callback()
            except Exception:  # noqa: BLE001 - the deadline ends the process whatever a callback does
                pass
        self._fired.set()

    def _deadline(self) -> None:
        self._fired.wait()
        start = time.monotonic()
        stop_all()  # at once: a hung torch import or a probe build must not wait for the screen
        words = threading.Thread(target=self._say_quietly, name="v100-doctor-last-words", daemon=True)
        words.start()  # now, beside the graceful quit: the report as it stood when the signal came
        time.sleep(max(0.0, start + self.within_s - time.monotonic()))
        words.join(LAST_WORDS_WAIT_S)  # a write that hangs (a dead network mount) cannot keep the process alive
        stop_all()  # anything a worker started while the screen was winding down
        if self.terminal is not None:  # SIGTERM with the terminal still there: give it back as it was
            self.terminal.restore()
        stop_all(final=self._end is os._exit)  # last: a child a worker forked meanwhile must not outlive us
        self._end(128 + (self.signum or signal.SIGTERM))


class SavedTerminal:
    """The terminal's modes before the screen took it (raw, no echo), so the deadline can give it back."""

    def __init__(self, fd: int) -> None:
        self.fd, self.modes = fd, termios.tcgetattr(fd)

    def restore(self) -> None:
        """Never blocks: a terminal that is gone, or that does not read (flow control), is left as it is."""
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, self.modes)
        except (OSError, termios.error):
            pass
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) | os.O_NONBLOCK)
            os.write(self.fd, TERMINAL_RESET.encode())
        except OSError:
            pass


def _watch_terminal(fd: int, guard: HangupGuard) -> None:
    """Block until the terminal on fd hangs up (POLLHUP comes whatever events are asked for; asking for none
    reads nothing the screen should get), then hang up as SIGHUP would."""
    poller = select.poll()
    poller.register(fd, 0)
    while guard.armed and guard.signum is None:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        if any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, mask in events):
            if guard.armed and guard.signum is None:
                os.kill(os.getpid(), signal.SIGHUP)  # to the main thread's handler, as the kernel would send it
            return


def _terminal_fd() -> int | None:
    """The screen's terminal: stdin, as textual reads it, when it is one."""
    try:
        if sys.__stdin__ is None:  # no stdin at all (started without one)
            return None
        fd = sys.__stdin__.fileno()
        return fd if os.isatty(fd) else None
    except (AttributeError, OSError, ValueError):
        return None


@contextmanager
def hangup_guard(within_s: float = EXIT_WITHIN_S, end: Callable[[int], object] = os._exit,
                 watch_terminal: bool = True) -> Iterator[HangupGuard]:
    """SIGHUP and SIGTERM go to a HangupGuard while the block runs (from the main thread); the handlers
    before it come back afterwards, or after a signal are ignored while the deadline runs out.
    Elsewhere (not the main thread) the guard is inert."""
    guard = HangupGuard(within_s, end)
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    guard._thread.start()
    before = {sig: signal.signal(sig, guard._handle) for sig in SIGNALS}
    guard.armed = True
    if watch_terminal and hasattr(select, "poll") and (fd := _terminal_fd()) is not None:
        try:
            guard.terminal = SavedTerminal(fd)
        except Exception:  # noqa: BLE001 - termios.error is no OSError; without the modes, nothing to give back
            pass
        threading.Thread(target=_watch_terminal, args=(fd, guard), name="v100-doctor-tty-watch", daemon=True).start()
    try:
        yield guard
    finally:
        guard.armed = False
        for sig, handler in before.items():  # after a signal, a second one must not cut the last words short
            signal.signal(sig, handler if guard.signum is None else signal.SIG_IGN)
