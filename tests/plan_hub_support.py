"""A Hub on 127.0.0.1 that lists models as the plan asks for them: /api/models?filter=base_model:quantized:REPO,
/api/models/REPO/refs (branches), /api/models/REPO/tree/REVISION (files with sizes) and
/REPO/resolve/REVISION/FILE (config.json only). Repos come from a JSON fixture (fixtures/plans/*.json): per repo its
tags, its base model and, per branch, its files (a size, or the config.json's content)."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from contextlib import contextmanager
from urllib.parse import parse_qs, unquote, urlparse

from tests.hub_support import COMMIT


class _Handler(http.server.BaseHTTPRequestHandler):
    repos: dict = {}
    asked: list[str] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json", extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _not_found(self, code: str = "RepoNotFound") -> None:
        self._send(404, b'{"error": "not found"}', extra={"X-Error-Code": code, "X-Error-Message": "not found"})

    def _route(self) -> None:
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        self.asked.append(url.path)
        if parts[:2] == ["api", "models"] and len(parts) == 2:
            base = parse_qs(url.query).get("filter", [""])[0].removeprefix("base_model:quantized:")
            found = [{"id": r, "modelId": r, "tags": spec.get("tags", [])} for r, spec in self.repos.items()
                     if spec.get("base") == base]
            return self._send(200, json.dumps(found).encode())
        if parts[:2] == ["api", "models"] and len(parts) >= 5:
            repo, what = "/".join(parts[2:4]), parts[4]
            spec = self.repos.get(repo)
            if spec is None:
                return self._not_found()
            if what == "refs":
                branches = [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": COMMIT} for b in spec["branches"]]
                return self._send(200, json.dumps({"branches": branches, "converts": [], "tags": []}).encode())
            if what == "tree":
                files = spec["branches"].get(parts[5] if len(parts) > 5 else "main")
                if files is None:
                    return self._not_found("RevisionNotFound")
                tree = [{"type": "file", "path": name, "size": v if isinstance(v, int) else len(json.dumps(v)),
                         "oid": hashlib.sha1(name.encode()).hexdigest()} for name, v in files.items()]
                return self._send(200, json.dumps(tree).encode())
        if len(parts) >= 5 and parts[2] == "resolve":
            spec = self.repos.get("/".join(parts[:2]))
            files = spec["branches"].get(parts[3]) if spec else None
            value = files.get("/".join(parts[4:])) if files else None
            if not isinstance(value, dict):
                return self._not_found("EntryNotFound")
            body = json.dumps(value).encode()
            return self._send(200, body, extra={"X-Repo-Commit": COMMIT,
                                                "ETag": '"' + hashlib.sha256(body).hexdigest() + '"'})
        return self._not_found()

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._route()

    def do_HEAD(self) -> None:  # noqa: N802
        self._route()


@contextmanager
def plan_hub(repos: dict):
    """Yields (endpoint URL, the paths asked for)."""
    handler = type("Handler", (_Handler,), {"repos": repos, "asked": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.asked
    finally:
        server.shutdown()
        server.server_close()
