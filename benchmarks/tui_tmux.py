"""Drive the TUI in a real terminal (tmux) as a user would, and keep what the screen showed.

Run on purpose:  python benchmarks/tui_tmux.py [--out benchmarks/results/tui]
Each scenario starts `v100-doctor ...` in a detached tmux session of the given size, sends keys
with `tmux send-keys`, and after each step writes `tmux capture-pane -p` to OUT/<scenario>-<step>.txt.
Needs tmux. Scenarios whose input file is missing are skipped (and said so).

  python benchmarks/tui_tmux.py --kill-session 0.3,0.7,1.2,2.2 [--fresh]
kills the tmux session that runs a live `v100-doctor` that many seconds after its start (a dropped SSH
session, issue 13) and prints how long the doctor and every process it started took to be gone.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MACHINES = ROOT / "fixtures" / "machines"

# name -> (argv after v100-doctor, [(step name, keys to send before capturing)])
STEPS_FAILING = [("start", []), ("detail-open", ["Enter"]), ("detail-closed", ["Escape"]), ("moved", ["j"]),
                 ("help", ["?"]), ("help-closed", ["Escape"]), ("filter", ["/", "f", "l", "a"]),
                 ("filter-cleared", ["Escape"]), ("save-dialog", ["s"]), ("saved", ["Enter"])]
STEPS_STORY = [("start", []), ("stage-3", ["l", "l"]), ("stage-3-report", ["Enter"]), ("back", ["Escape"]),
               ("h200", ["Tab"])]  # issue 13: the story view


def scenarios(save_dir: Path) -> dict[str, tuple[list[str], list[tuple[str, list[str]]]]]:
    out = {
        "live-this-machine": ([], [("start", []), ("second-line", ["j"])]),
        "demo-story": (["demo"], STEPS_STORY),
        "replay-v100-healthy": (["--replay", str(MACHINES / "v100-pcie-16gb-healthy.json")], [("start", [])]),
        "replay-v100-torch-2.11": (["--replay", str(MACHINES / "v100-torch-2.11-cu130.json"),
                                    "-o", str(save_dir / "v100-torch-2.11-report.json")], STEPS_FAILING),
    }
    h200 = ROOT / "benchmarks" / "results" / "tui-h200" / "report.json"  # a real probe, recorded by tui_pty.py
    if h200.exists():
        out["replay-h200-probe"] = (["--replay", str(h200)], [("start", []), ("decode-speed", ["End"])])
    for example in sorted((ROOT / "doctor" / "examples").glob("*.json")):
        out[f"example-{example.stem}"] = (["--replay", str(example)], [("start", []), ("decode-speed", ["End"])])
    return out


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def run_scenario(name: str, argv: list[str], steps, size: tuple[int, int], out: Path, settle_s: float) -> list[Path]:
    session = f"v100doc-{name}-{size[0]}x{size[1]}".replace(".", "_")
    command = f"cd {shlex.quote(str(ROOT))} && {shlex.quote(sys.executable)} -m doctor {shlex.join(argv)}; sleep 5"
    tmux("new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]), command)
    written = []
    try:
        time.sleep(settle_s)
        for step, keys in steps:
            for key in keys:
                tmux("send-keys", "-t", session, key)
                time.sleep(0.4)  # ESC then a letter too fast would read as Alt+letter
            time.sleep(settle_s / 2)
            path = out / f"{name}-{size[0]}x{size[1]}-{step}.txt"
            path.write_text(tmux("capture-pane", "-p", "-t", session))
            written.append(path)
        tmux("send-keys", "-t", session, "q")
        time.sleep(1.0)
        path = out / f"{name}-{size[0]}x{size[1]}-after-quit.txt"
        path.write_text(tmux("capture-pane", "-p", "-t", session))
        written.append(path)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    return written


def tagged(tag: str) -> list[int]:
    """Live processes whose environment carries the tag: the doctor and everything it started."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"V100_DOCTOR_RUN={tag}\0".encode() in Path(f"/proc/{pid}/environ").read_bytes() and \
                    Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(pid))
        except (OSError, IndexError):
            pass
    return found


def kill_session_run(delay_s: float, argv: list[str], limit_s: float = 10.0) -> str:
    """Start the doctor in tmux, kill the session after delay_s; how long until it and its children were gone."""
    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    session = f"v100doc-hangup-{tag}"
    command = f"cd {shlex.quote(str(ROOT))} && exec {shlex.quote(sys.executable)} -m doctor {shlex.join(argv)}"
    tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-e", f"V100_DOCTOR_RUN={tag}", command)
    time.sleep(delay_s)
    had = len(tagged(tag))
    tmux("kill-session", "-t", session)
    killed = time.monotonic()
    while tagged(tag) and time.monotonic() - killed < limit_s:
        time.sleep(0.01)
    took, left = time.monotonic() - killed, tagged(tag)
    for pid in left:  # leave nothing behind, whatever the result
        os.kill(pid, 9)
    verdict = f"gone after {took:.2f} s" if not left else f"STILL RUNNING after {limit_s:g} s ({len(left)} processes)"
    return f"killed at {delay_s:.2f} s with {had} processes: {verdict}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "tui"))
    ap.add_argument("--settle", type=float, default=3.0, help="seconds to let the screen settle after start")
    ap.add_argument("--kill-session", metavar="S,S,...", help="seconds after the start at which to kill the session")
    ap.add_argument("--fresh", action="store_true", help="with --kill-session: run `v100-doctor --fresh`")
    ap.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    args = ap.parse_args()
    if not shutil.which("tmux"):
        sys.exit("tmux is not installed")
    if args.kill_session:
        for delay in (float(d) for d in args.kill_session.split(",")):
            print(kill_session_run(delay, ["--fresh"] if args.fresh else []), flush=True)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for size in ((80, 24), (160, 48), (60, 15)):
        for name, (argv, steps) in scenarios(out).items():
            if args.only and name not in args.only:
                continue
            for path in run_scenario(name, argv, steps, size, out, args.settle):
                print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
