"""`python -m doctor ARGS` in a child process, from a server that started Python and imported the doctor once.

The suite runs the CLI hundreds of times with one environment and one working directory (conftest.run_cli, the
bad-input table). Each run is still a process of its own: forked from the server, with its own pipes for stdin,
stdout and stderr, and the doctor's __main__ run in it by runpy as `python -m doctor` runs it, so an uncaught
exception prints its traceback on the child's stderr and the interpreter's exit (SystemExit, atexit, the final
flush) decides the exit status. What the server saves is the interpreter's start and the imports (0.05-0.15 s of
CPU a run): they happened once, under the same environment and directory every run has. The server is
single-threaded, so forking it is safe.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# Runs in the server. Never touches sys.stdin/sys.stdout (their buffers stay empty for the children); requests come on
# a socket: one JSON message {"args": [...]} with three descriptors (stdin, stdout, stderr) passed beside it.
SERVER = r"""
import json, os, runpy, socket, sys
import doctor.cli.main, doctor.run.pipeline, doctor.model.report, doctor.render.text, doctor.render.markdown
control = socket.socket(fileno=int(sys.argv[1]))
while True:
    message, fds, _, _ = socket.recv_fds(control, 65536, 3)
    if not message:
        os._exit(0)
    args = json.loads(message)["args"]
    pid = os.fork()
    if pid == 0:
        break
    for fd in fds:
        os.close(fd)
    control.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    _, status = os.waitpid(pid, 0)
    control.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
control.close()
for target, fd in enumerate(fds):
    os.dup2(fd, target)
    os.close(fd)
sys.argv = ["-m", *args]
del json, socket, control, message, fds, args, pid
runpy.run_module("doctor", run_name="__main__", alter_sys=True)
"""


class DoctorForkServer:
    """One server per environment and working directory; `run(args)` is subprocess.run's answer for one CLI run."""

    def __init__(self, env: dict, cwd: Path) -> None:
        self.env, self.cwd = dict(env), cwd
        self._control, theirs = socket.socketpair()
        self._server = subprocess.Popen([sys.executable, "-c", SERVER, str(theirs.fileno())], env=env, cwd=cwd,
                                        pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
        theirs.close()
        self._lines = b""

    def run(self, args: list[str], timeout: float, input: bytes | None = None) -> subprocess.CompletedProcess:
        """As subprocess.run(capture_output=True, input=input, timeout=timeout): stdin is /dev/null without input."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if input is None:
            stdin = os.open(os.devnull, os.O_RDONLY)
        else:  # small inputs only: written whole before the child runs, so they must fit the pipe's buffer
            stdin, feed = os.pipe()
            assert len(input) < 60_000, "input larger than a pipe's buffer"
            os.write(feed, input)
            os.close(feed)
        try:
            socket.send_fds(self._control, [json.dumps({"args": args}).encode()], [stdin, out_w, err_w])
        finally:
            for fd in (stdin, out_w, err_w):
                os.close(fd)
        deadline = time.monotonic() + timeout
        pid = self._message(deadline)["pid"]
        streams = {out_r: bytearray(), err_r: bytearray()}
        with selectors.DefaultSelector() as sel:
            for fd in streams:
                sel.register(fd, selectors.EVENT_READ)
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:  # as subprocess.run's timeout: the child is killed, and the server waits for it
                    os.kill(pid, signal.SIGKILL)
                    for fd in list(sel.get_map()):
                        sel.unregister(fd)
                        os.close(fd)
                    self._message(time.monotonic() + 10)
                    raise subprocess.TimeoutExpired(args, timeout)
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        streams[key.fd] += chunk
                    else:
                        sel.unregister(key.fd)
                        os.close(key.fd)
        status = self._message(deadline)["status"]
        return subprocess.CompletedProcess(args, status, bytes(streams[out_r]), bytes(streams[err_r]))

    def _message(self, deadline: float) -> dict:
        while b"\n" not in self._lines:
            self._control.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self._control.recv(65536)
            if not chunk:
                raise RuntimeError(f"the doctor's fork server ended (exit {self._server.wait()})")
            self._lines += chunk
        line, _, self._lines = self._lines.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        self._control.close()  # the server reads an empty message and exits
        try:
            self._server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()
