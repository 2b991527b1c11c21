"""Run the doctor's TUI on a real pseudo-terminal, drive it with keys, and record every byte it wrote.

For machines without tmux (the H200 box): the raw stream is replayed into tmux elsewhere with
`--render`, which writes what the terminal showed at each step as text (tmux capture-pane).

  python benchmarks/tui_pty.py --out DIR --size 160x48 \
      --step 'checks::passed' --step 'probe::decode runs:2' --step 'verdict::Fix first' \
      --step 'save-dialog:s:Save the' --step 'saved:Enter:saved to' --resize 80x24 -- --model /tmp/synth
  python benchmarks/tui_pty.py --render DIR        # DIR/<step>-<size>.txt from DIR/tty.raw and DIR/steps.json

A step is LABEL:KEYS:TEXT[:EXTRA_S]: send KEYS (comma-separated: Enter, Escape, Down, Up, End, Home or characters),
wait until TEXT has been written after them, wait EXTRA_S more seconds (default 0.5), then mark the
stream: what the screen shows at that moment is rendered as that step.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"Enter": b"\r", "Escape": b"\x1b", "Down": b"\x1b[B", "Up": b"\x1b[A", "End": b"\x1b[F", "Home": b"\x1b[H"}


def set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class Tty:
    def __init__(self, argv: list[str], cols: int, rows: int) -> None:
        self.master, slave = pty.openpty()
        set_size(slave, cols, rows)
        env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                                     start_new_session=True)
        os.close(slave)
        self.raw = b""

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    self.raw += os.read(self.master, 1 << 16)
                except OSError:
                    return

    def wait_for(self, text: bytes, timeout: float, since: int) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            if text in self.raw[since:]:
                return True
            self.pump(0.1)
        return text in self.raw[since:]

    def send(self, keys: str) -> None:
        for key in keys.split(","):
            if key:
                os.write(self.master, KEYS.get(key, key.encode()))
                self.pump(0.3)


def record(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cols, rows = (int(x) for x in args.size.split("x"))
    tty = Tty([sys.executable, "-m", "doctor", *args.doctor_args], cols, rows)
    steps = []
    try:
        for spec in args.step:
            label, keys, text, extra = (spec.split(":") + ["", "", ""])[:4]
            since = len(tty.raw)
            tty.send(keys)
            found = tty.wait_for(text.encode(), args.timeout, since)
            tty.pump(float(extra or 0.5))
            steps.append({"label": label, "offset": len(tty.raw), "size": [cols, rows], "found": found,
                          "t_s": round(time.monotonic() - tty.t0, 2)})
            print(f"{steps[-1]['t_s']:7.2f} s  {label}: {'seen' if found else 'NOT SEEN'} {text!r}", flush=True)
        if args.resize:
            cols, rows = (int(x) for x in args.resize.split("x"))
            start = len(tty.raw)
            set_size(tty.master, cols, rows)
            os.killpg(tty.proc.pid, signal.SIGWINCH)
            tty.pump(2.0)
            steps.append({"label": f"resized-{args.resize}", "offset": len(tty.raw), "start": start, "size": [cols, rows],
                          "found": True, "t_s": round(time.monotonic() - tty.t0, 2)})
        since = len(tty.raw)
        tty.send("q")
        tty.wait_for(b"\x1b[?1049l", args.timeout, since)
        tty.pump(1.0)
        code = tty.proc.wait(timeout=args.timeout)
    finally:
        if tty.proc.poll() is None:
            os.killpg(tty.proc.pid, signal.SIGKILL)
        code = tty.proc.wait()
    (out / "tty.raw").write_bytes(tty.raw)
    (out / "steps.json").write_text(json.dumps({"argv": args.doctor_args, "exit_code": code, "steps": steps}, indent=1))
    print(f"exit code {code}; {len(tty.raw):,} bytes in {out / 'tty.raw'}")
    return 0


def render(folder: Path) -> None:
    """Replay the recorded stream into tmux, step by step, and keep what the pane showed."""
    if not shutil.which("tmux"):
        sys.exit("tmux is needed to render")
    raw = (folder / "tty.raw").read_bytes()
    meta = json.loads((folder / "steps.json").read_text())
    for step in meta["steps"]:
        cols, rows = step["size"]
        part = folder / f".{step['label']}.part"
        part.write_bytes(raw[step.get("start", 0):step["offset"]])
        session = f"render-{os.getpid()}"
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(cols), "-y", str(rows),
                        f"stty raw -echo; cat {part}; sleep 30"], check=True)
        time.sleep(1.0)
        text = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
        subprocess.run(["tmux", "kill-session", "-t", session])
        part.unlink()
        (folder / f"{step['label']}-{cols}x{rows}.txt").write_text(text)
        print(folder / f"{step['label']}-{cols}x{rows}.txt")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="tui-pty")
    ap.add_argument("--size", default="160x48")
    ap.add_argument("--resize", help="COLSxROWS: resize the terminal after the last step and mark the repaint")
    ap.add_argument("--step", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds to wait for each step")
    ap.add_argument("--render", metavar="DIR", help="render a recorded DIR with tmux instead of recording")
    ap.add_argument("doctor_args", nargs="*")
    args = ap.parse_args()
    if args.render:
        render(Path(args.render))
    else:
        sys.exit(record(args))


if __name__ == "__main__":
    main()
