"""A Hugging Face Hub on 127.0.0.1 (for HF_ENDPOINT) serving fixture model folders, and a cache laid out as
huggingface_hub documents it (https://huggingface.co/docs/huggingface_hub/guides/manage-cache): blobs, snapshots
of symlinks, refs. It serves `/{org}/{name}/resolve/{revision}/{file}` with HEAD, GET and byte ranges, which is
all hf_hub_download and get_safetensors_metadata ask for; it records what each GET asked for."""

from __future__ import annotations

import hashlib
import http.server
import os
import threading
from contextlib import contextmanager
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class _Handler(http.server.BaseHTTPRequestHandler):
    repos: dict[str, Path] = {}
    sent: list[tuple[str, int]] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _file(self) -> Path | None:
        parts = self.path.split("?", 1)[0].lstrip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return None
        folder = self.repos.get("/".join(parts[:2]))
        path = folder / "/".join(parts[4:]) if folder else None
        return path if path is not None and path.is_file() else None

    def _answer(self, body: bool) -> None:
        path = self._file()
        if path is None:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("X-Error-Message", "Entry not found")
            self.end_headers()
            return
        data = path.read_bytes()
        start, end = 0, len(data) - 1
        if rng := self.headers.get("Range"):
            first, _, last = rng.removeprefix("bytes=").partition("-")
            start, end = int(first), min(int(last) if last else end, len(data) - 1)
        chunk = data[start:end + 1]
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(len(chunk)))
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("ETag", '"' + hashlib.sha256(data).hexdigest() + '"')
        self.end_headers()
        if body:
            self.wfile.write(chunk)
            self.sent.append((path.name, rng or "whole file"))

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's names
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(body=True)


@contextmanager
def fake_hub(repos: dict[str, Path]):
    """Yields (endpoint URL, list of (file, Range header or "whole file") per GET)."""
    handler = type("Handler", (_Handler,), {"repos": dict(repos), "sent": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.sent
    finally:
        server.shutdown()
        server.server_close()


def cache_with(cache: Path, repo: str, folder: Path, revision: str = "main") -> Path:
    """`folder`'s files cached as huggingface_hub lays them out; returns the snapshot folder."""
    root = cache / ("models--" + repo.replace("/", "--"))
    snapshot = root / "snapshots" / COMMIT
    (root / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for f in sorted(folder.iterdir()):
        data = f.read_bytes()
        blob = root / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / f.name)
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / revision).write_text(COMMIT)
    return snapshot
