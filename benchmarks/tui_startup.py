"""Start-up of the TUI to its first painted frame, as a user sees it: a real pseudo-terminal.

Run on purpose:  python benchmarks/tui_startup.py [--runs 7] [--json OUT]
Each run starts `python -m doctor ...` on a fresh 80x24 pty and times, from the spawn, until the
terminal has received a painted frame (the checklist's border title and the footer's keys, which
textual draws in its first full frame), then presses q and waits for the exit.
  replay   --replay of a machine fixture: today's checks on recorded facts
  live     this machine: the first frame comes before fact gathering (NVML, torch child) finishes
Rows for `python -c pass` and `import doctor.tui.app` show where the time goes; "its CPU s" is the CPU time the
TUI's process had used when its first frame arrived (on a shared machine, wall time also counts other
processes' turns on the cores; the load average is in the header). Target: 0.6 s (issue 29; 1 s in issue 17).
Run it as users run Python, with bytecode caching on (`env -u PYTHONDONTWRITEBYTECODE` where a sandbox
sets it): without .pyc files every start compiles the doctor's sources again. The header says which.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from timing_table import parse_args, print_table, save_json

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "machines" / "v100-pcie-16gb-healthy.json"
FIRST_FRAME = (b"Checks", b"Quit")  # both are in textual's first full paint of the main screen


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) a running process has used so far: unlike wall time, it does not
    grow when other processes on a shared machine take the cores."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


FRAME_CPU: list[float] = []  # CPU seconds of the TUI's process at each first frame, in the order of the runs


def first_frame_s(argv: list[str], size=(24, 80), timeout: float = 20.0) -> tuple[float, int]:
    """Seconds from spawn to the first painted frame, and the exit code after pressing q (the process's CPU seconds
    up to that frame go to FRAME_CPU)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(size[1]), "LINES": str(size[0])}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, start_new_session=True)
    os.close(slave)
    seen, painted = b"", None
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
                os.write(master, b"q")
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


def plain_s(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    args = parse_args(__doc__)
    py = sys.executable
    rows: dict[str, list[float]] = {
        "python -c pass": [plain_s([py, "-c", "pass"]) for _ in range(args.runs)],
        "import doctor.tui.app": [plain_s([py, "-c", "import doctor.tui.app"]) for _ in range(args.runs)],
    }
    scenarios = {"TUI first frame, replay": [py, "-m", "doctor", "--replay", str(FIXTURE)],
                 "TUI first frame, live": [py, "-m", "doctor"]}
    for name, argv in scenarios.items():
        first_frame_s(argv)  # one untimed run: the page cache holds the modules afterwards
        FRAME_CPU.clear()
        rows[name] = [first_frame_s(argv)[0] for _ in range(args.runs)]
        rows[name.replace("TUI first frame", "  its CPU s")] = list(FRAME_CPU)
    pyc = "off (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    med = print_table(rows, f"{'from spawn to':<26} {'median s':>9} {'min s':>7} {'max s':>7}   (n={args.runs}, 80x24 pty, "
                            f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, bytecode cache {pyc}, "
                            f"load {os.getloadavg()[0]:.1f})")
    worst = max(med["TUI first frame, replay"], med["TUI first frame, live"])
    cpu = max(med["  its CPU s, replay"], med["  its CPU s, live"])
    print(f"\nslowest median to the first frame: {worst:.3f} s wall, {cpu:.3f} s CPU of the TUI's process "
          f"(target <= 0.6 s, issue 29: {'met' if worst <= 0.6 else 'MISSED'} in wall time at this load)")
    save_json(args.json, rows)

if __name__ == "__main__":
    main()
