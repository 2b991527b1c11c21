"""doctor.cli.hangup: after SIGHUP or SIGTERM every child is stopped at once, the last words are said once,
and the process ends at the deadline whatever the main thread is blocked on (issue 13)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT

from doctor.cli.hangup import SIGNALS, hangup_guard
from doctor.facts.children import spawn

# timing-sensitive: one pytest-xdist worker runs them in turn (--dist loadgroup)
pytestmark = [pytest.mark.skipif(os.name != "posix", reason="POSIX signals"), pytest.mark.xdist_group("terminal")]


def ended_within(proc, timeout: float) -> bool:
    """The child has ended (killed and reaped) within timeout."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc.poll() is not None


@pytest.fixture
def own_handlers():
    """The guard leaves the signals ignored after one came (a second must not cut the last words short)."""
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_signal_stops_the_children_and_writes_at_once_and_ends_at_the_deadline_even_when_the_main_thread_is_stuck(
        sig, own_handlers):
    child = spawn([sys.executable, "-c", "import time; time.sleep(60)"])
    ended, said, told = [], [], []
    stuck = threading.Event()  # never set: the main thread waits on it as textual's shutdown waited on its queue
    with hangup_guard(within_s=0.3, end=ended.append) as guard:
        guard.on_signal(lambda: told.append(threading.current_thread() is threading.main_thread()))
        guard.last_words(lambda: said.append(time.monotonic()))
        start = time.monotonic()
        os.kill(os.getpid(), sig)
        stuck.wait(0.05)  # the handler runs while the main thread waits
        assert told == [True] and guard.signum == sig
        assert ended_within(child, 1.0)  # stopped before the deadline
        while not ended and time.monotonic() - start < 5:
            stuck.wait(0.02)
    assert ended == [128 + sig] and len(said) == 1 and said[0] - start < 0.25  # -o at once, the exit at the deadline
    assert signal.getsignal(sig) is signal.SIG_IGN  # a second signal during the last words is ignored
    guard.say_last_words()
    assert len(said) == 1  # said once, whoever asks again


def test_without_a_signal_the_handlers_come_back_and_nothing_is_said(own_handlers):
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    said = []
    with hangup_guard(within_s=0.05, end=lambda code: said.append(code)) as guard:
        guard.last_words(lambda: said.append("words"))
        assert all(signal.getsignal(sig) == guard._handle for sig in SIGNALS)
    time.sleep(0.1)
    assert {sig: signal.getsignal(sig) for sig in SIGNALS} == before and said == [] and guard.signum is None


def test_off_the_main_thread_the_guard_is_inert(own_handlers):
    before = {sig: signal.getsignal(sig) for sig in SIGNALS}
    seen = []

    def run():
        with hangup_guard(end=seen.append):
            seen.append({sig: signal.getsignal(sig) for sig in SIGNALS} == before)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [True]


def test_a_failing_callback_or_last_words_still_ends_the_process(own_handlers):
    ended = []
    child = spawn([sys.executable, "-c", "import time; time.sleep(60)"])

    def broken():
        raise RuntimeError("a screen that is already gone")

    with hangup_guard(within_s=0.1, end=ended.append) as guard:
        guard.on_signal(broken)
        guard.last_words(broken)
        os.kill(os.getpid(), signal.SIGHUP)
        deadline = time.monotonic() + 5
        while not ended and time.monotonic() < deadline:
            time.sleep(0.02)
    assert ended == [128 + signal.SIGHUP] and ended_within(child, 0)


def test_a_terminal_that_hangs_up_without_a_sighup_is_seen_and_hangs_up_the_guard(own_handlers):
    """Not the controlling terminal: closing it sends no SIGHUP, only POLLHUP on its fd."""
    import pty

    from doctor.cli.hangup import _watch_terminal

    master, slave = pty.openpty()
    ended = []
    try:
        with hangup_guard(within_s=0.1, end=ended.append, watch_terminal=False) as guard:
            watcher = threading.Thread(target=_watch_terminal, args=(slave, guard), daemon=True)
            watcher.start()
            time.sleep(0.1)
            assert guard.signum is None and watcher.is_alive()  # an open terminal: nothing
            os.close(master)
            deadline = time.monotonic() + 5
            while not ended and time.monotonic() < deadline:
                time.sleep(0.02)
    finally:
        os.close(slave)
    assert guard.signum == signal.SIGHUP and ended == [128 + signal.SIGHUP]


def test_the_deadline_gives_a_terminal_that_is_still_there_its_modes_and_main_screen_back():
    import pty
    import termios
    import tty

    from doctor.cli.hangup import TERMINAL_RESET, SavedTerminal

    master, slave = pty.openpty()
    try:
        saved = SavedTerminal(slave)  # as armed, before the screen takes the terminal
        tty.setraw(slave)  # as textual leaves it when its shutdown never finishes
        assert termios.tcgetattr(slave)[3] != saved.modes[3]
        saved.restore()
        assert termios.tcgetattr(slave)[3] == saved.modes[3]
        assert os.read(master, 4096).endswith(TERMINAL_RESET.encode().replace(b"\n", b"\r\n"))
        os.close(master)
        master = -1
        saved.restore()  # the terminal has gone: nothing raised, nothing blocked
    finally:
        os.close(slave)
        if master >= 0:
            os.close(master)


def test_a_screen_that_fails_on_a_dead_terminal_before_its_sighup_is_handled_counts_as_the_hang_up(own_handlers):
    """The screen's teardown can fail (EIO, termios.error) a moment before the kernel's SIGHUP is handled:
    hang_up_if_gone sees the terminal gone and ends the run as the hang-up, with the last words said."""
    import pty

    from doctor.cli.hangup import SavedTerminal

    master, slave = pty.openpty()
    ended, said = [], []
    try:
        with hangup_guard(within_s=0.1, end=ended.append, watch_terminal=False) as guard:
            guard.terminal = SavedTerminal(slave)
            guard.last_words(lambda: said.append("-o"))
            assert not guard.hang_up_if_gone() and guard.signum is None  # the terminal is there: a real error
            os.close(master)
            assert guard.terminal_gone() and guard.hang_up_if_gone() and guard.signum == signal.SIGHUP
            deadline = time.monotonic() + 5
            while not ended and time.monotonic() < deadline:
                time.sleep(0.02)
    finally:
        os.close(slave)
    assert ended == [128 + signal.SIGHUP] and said == ["-o"]


def test_a_child_started_after_the_last_stop_cannot_outlive_the_doctor(monkeypatch):
    """Issue 23 (the pty test's flake): a torch child forked while the deadline stopped every child, and registered
    after it, lived on in a session of its own. Now spawning is closed by the final stop, and a spawn is one step."""
    import subprocess
    import sys

    from doctor.facts import children

    monkeypatch.setattr(children, "_closed", False)
    proc = children.spawn([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.DEVNULL)
    assert children.stop_all(final=True) == 1 and proc.poll() is not None
    with pytest.raises(children.Closed):
        children.spawn([sys.executable, "-c", "pass"])
    monkeypatch.setattr(children, "_closed", False)  # the test process goes on spawning
    assert children.stop_all() == 0


STUCK_AFTER_SIGNAL = r'''
import os, signal, subprocess, sys, threading, time
from doctor.cli.hangup import end_within
from doctor.facts.children import spawn

child = spawn([sys.executable, "-c", "import time; time.sleep(60)"])
print(child.pid, flush=True)
threading.Thread(target=lambda: time.sleep(60)).start()  # not a daemon: the interpreter would wait for it at exit
end_within(signal.SIGHUP, within_s=0.3)
raise SystemExit(0)  # the run has unwound, but the process cannot end by itself
'''


def test_a_run_that_cannot_end_after_its_signal_ends_at_the_deadline_with_its_code_and_no_child():
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", STUCK_AFTER_SIGNAL], capture_output=True, text=True, timeout=30,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    took = time.monotonic() - started
    assert proc.returncode == 128 + signal.SIGHUP, proc.stderr
    assert took < 10, took  # the thread would hold it for 60 s
    child = int(proc.stdout.split()[0])
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1][:3]
