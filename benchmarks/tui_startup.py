"""Start-up of the TUI to its first painted frame, as a user sees it: a real pseudo-terminal.

Run on purpose:  python3 benchmarks/tui_startup.py [--runs 7] [--json OUT] [--save NAME]
Each run starts `python -m doctor ...` on a fresh 80x24 pty and times, from the spawn, until the
terminal has received a painted frame with the checklist's border title and the footer's keys (the header,
the check list and the key line: the checks are still running then), then until the list shows the checks' lines
(compute-capability by id, pending or done), then presses q and waits for the exit.
  replay   --replay of a machine fixture: today's checks on recorded facts
  live     this machine: the first frame comes before fact gathering (NVML, torch child) finishes
The reference beside them: the same replay as plain text (`--no-tui`), the whole report printed (issue 29
measured 0.14-0.27 s for it against 0.87 s replay / 1.20 s live to the TUI's first frame). Rows for
`python -c pass` and `import doctor.tui.app` show where the time goes; "its CPU s" is the CPU time the
process had used when its first frame arrived (on a shared machine, wall time also counts other processes'
turns on the cores; the load average, before and after, is in the header). Target: 0.6 s (issue 29).
The doctor runs as users run Python, with bytecode caching on: a sandbox's PYTHONDONTWRITEBYTECODE is dropped
for its processes (without .pyc files every start compiles the doctor's sources again).
--save NAME writes the table, with date, machine and load, to benchmarks/results/NAME.txt (and NAME.json).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import os
import platform
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from timing_table import print_table, save_json

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "machines" / "v100-pcie-16gb-healthy.json"
FIRST_FRAME = (b"Checks", b"Quit")  # the list's border title and the footer's keys: the first frame the user can act on
LISTED = b"compute-capability"  # a check's line in the list (by id): the checks are listed (they may still be running)
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cache on, as for users


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) a running process has used so far: unlike wall time, it does not
    grow when other processes on a shared machine take the cores."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


FRAME_CPU: list[float] = []  # CPU seconds of the TUI's process at each first frame, in the order of the runs
LISTED_S: list[float] = []  # seconds from spawn until the check list showed a check's line, in the order of the runs
LISTED_CPU: list[float] = []  # CPU seconds of the TUI's process at that moment


def first_frame_s(argv: list[str], size=(24, 80), timeout: float = 20.0) -> tuple[float, int]:
    """Seconds from spawn to the first painted frame, and the exit code after pressing q (the process's CPU seconds
    up to that frame go to FRAME_CPU)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    env = {**CHILD_ENV, "TERM": "xterm-256color", "COLUMNS": str(size[1]), "LINES": str(size[0])}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, start_new_session=True)
    os.close(slave)
    seen, painted, listed = b"", None, None
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
            if painted is None and all(marker in seen for marker in FIRST_FRAME):
                painted = time.perf_counter() - start
                try:
                    FRAME_CPU.append(cpu_s(proc.pid))
                except OSError:
                    pass
            if painted is not None and listed is None and LISTED in seen.replace(b"\x1b", b""):
                listed = time.perf_counter() - start
                LISTED_S.append(listed)
                try:
                    LISTED_CPU.append(cpu_s(proc.pid))
                except OSError:
                    pass
                os.write(master, b"q")  # after the list is filled, so that both moments are timed
            elif painted is not None and listed is None and time.perf_counter() - start - painted > 5:
                listed = float("nan")
                os.write(master, b"q")  # the list never showed a check: stop waiting
            if proc.poll() is not None:
                break
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    if painted is None:
        raise RuntimeError(f"no frame painted within {timeout} s: {' '.join(argv)}")
    return painted, code


PLAIN_CPU: list[float] = []  # CPU seconds of each plain-text run, as FRAME_CPU


def plain_s(argv: list[str], ok: tuple[int, ...] = (0,)) -> float:
    """Wall seconds of a whole command (its CPU seconds go to PLAIN_CPU)."""
    before = os.times()
    start = time.perf_counter()
    code = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, env=CHILD_ENV).returncode
    wall = time.perf_counter() - start
    after = os.times()
    PLAIN_CPU.append(after.children_user + after.children_system - before.children_user - before.children_system)
    if code not in ok:
        raise RuntimeError(f"exit {code}: {' '.join(argv)}")
    return wall


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", metavar="OUT", help="also write the raw timings as JSON")
    ap.add_argument("--save", metavar="NAME", help="write the table to benchmarks/results/NAME.txt and NAME.json")
    return ap.parse_args()


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "")
    mem = next((int(line.split()[1]) // 1024 // 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    return f"{platform.node()}: {cpu or platform.processor()}, {os.cpu_count()} CPUs, {mem} GiB, {platform.platform()}"


def main() -> None:
    args = parse_args()
    py = sys.executable
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    rows: dict[str, list[float]] = {
        "python -c pass": [plain_s([py, "-c", "pass"]) for _ in range(args.runs)],
        "import doctor.tui.app": [plain_s([py, "-c", "import doctor.tui.app"]) for _ in range(args.runs)],
    }
    plain = [py, "-m", "doctor", "--replay", str(FIXTURE), "--no-tui"]
    plain_s(plain, ok=(0, 1, 2))  # untimed, as below
    PLAIN_CPU.clear()
    rows["plain text, replay (ref.)"] = [plain_s(plain, ok=(0, 1, 2)) for _ in range(args.runs)]
    rows["  its CPU s, plain text"] = list(PLAIN_CPU)
    scenarios = {"TUI first frame, replay": [py, "-m", "doctor", "--replay", str(FIXTURE)],
                 "TUI first frame, live": [py, "-m", "doctor"]}
    for name, argv in scenarios.items():
        first_frame_s(argv)  # one untimed run: the page cache holds the modules afterwards
        FRAME_CPU.clear()
        LISTED_S.clear()
        LISTED_CPU.clear()
        rows[name] = [first_frame_s(argv)[0] for _ in range(args.runs)]
        rows[name.replace("TUI first frame", "  its CPU s")] = list(FRAME_CPU)
        rows[name.replace("TUI first frame", "  check list shown")] = list(LISTED_S)
        rows[name.replace("TUI first frame", "    its CPU s, list")] = list(LISTED_CPU)
    load = f"load {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after (1-min averages)"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print(f"{started}, {machine()}")
        med = print_table(rows, f"{'from spawn to':<26} {'median s':>9} {'min s':>7} {'max s':>7}   (n={args.runs}, 80x24 pty, "
                                f"Python {sys.version.split()[0]}, bytecode cache on, {load})")
        worst = max(med["TUI first frame, replay"], med["TUI first frame, live"])
        listed = max(med["  check list shown, replay"], med["  check list shown, live"])
        cpu = max(med["  its CPU s, replay"], med["  its CPU s, live"])
        print(f"\nslowest median to the first frame: {worst:.3f} s wall, {cpu:.3f} s CPU of the TUI's process; "
              f"reference, the whole replay as plain text: {med['plain text, replay (ref.)']:.3f} s wall, "
              f"{med['  its CPU s, plain text']:.3f} s CPU\n(target <= 0.6 s, issue 29: "
              f"{'met' if worst <= 0.6 else 'MISSED'} in wall time at this load)\n"
              f"slowest median until the check list shows the checks' lines: {listed:.3f} s wall "
              f"({'within' if listed <= 0.6 else 'over'} 0.6 s; aim <= 0.5 s at load ~3)")
    print(out.getvalue(), end="")
    save_json(args.json, rows)
    if args.save:
        results = ROOT / "benchmarks" / "results"
        (results / f"{args.save}.txt").write_text(out.getvalue())
        save_json(str(results / f"{args.save}.json"), rows)
        print(f"saved to benchmarks/results/{args.save}.txt and .json")

if __name__ == "__main__":
    main()
