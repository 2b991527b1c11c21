"""Take out of a ticket bundle what identifies a person or a machine: home paths, user names, hostnames, GPU serials and UUIDs, secrets.

One Redactor sees every file of a bundle. It first learns the values to hide (the facts' hostname,
serials and UUIDs, secret-named variables, /home/<name> paths found anywhere, and this machine's own
home, user and hostnames), then replaces them everywhere. JSON is redacted value by value and keeps
its keys, so a redacted report still replays. It counts what it replaced by kind; the values
themselves are never recorded. Short or generic names ("root", "gpu", "localhost") are left alone:
replacing them would mangle the report without hiding anyone.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from collections import Counter
from pathlib import Path
from typing import Any

HOME = "~"
USER, HOST, SERIAL, UUID, SECRET = "<user>", "<host>", "<gpu-serial>", "<gpu-uuid>", "<redacted>"
GENERIC = {"root", "user", "users", "admin", "home", "public", "shared", "default", "guest", "localhost",
           "server", "worker", "master", "main", "node", "host", "linux", "ubuntu", "debian", "runner"}
SECRET_PARTS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "CREDENTIALS", "KEY", "APIKEY",
                "AUTH", "PAT", "PRIVATE"}
_HOME_IN_TEXT = re.compile(r"(?P<home>(?:/home|/Users)/(?P<user>[^/\s\"'\\:;,]+))|(?P<whome>[A-Za-z]:\\{1,2}Users\\{1,2}(?P<wuser>[^\\\s\"':;,]+))")
_NAME_VALUE = re.compile(r"(?P<name>\b[A-Za-z_][A-Za-z0-9_]*)(?P<sep>[\"']?\s*[=:]\s*[\"']?)(?P<value>[^\s\"',;]+)")
_SAYS_KEY = re.compile(r"(?i)(?P<lead>\b(?:api key|admin key|token|password|secret)\s+is:?\s+)(?P<value>\S+)")
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}"
                           r"|github_pat_[A-Za-z0-9_]{40,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,})\b")
_UUID = re.compile(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_SERIAL_IN_TEXT = re.compile(r"(?i)(?P<lead>serial(?:[ _]?number)?[\"']?\s*[:=]\s*[\"']?)(?P<value>\d{8,20})\b")


# Identifiers a pasted log can carry that name this machine or hold a credential (issue 12)
_URL_PASSWORD = re.compile(r"(?P<lead>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)(?P<value>[^@\s/]+)(?=@)")
_MACHINE_ID = re.compile(r"(?i)(?P<lead>\b(?:machine[-_ ]?id|boot[-_ ]?id)[\"']?\s*[:=]?\s*[\"']?)"
                         r"(?P<value>[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})\b")
_MAC = re.compile(r"(?<![0-9A-Fa-f:-])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![0-9A-Fa-f:-])")


def secret_name(name: str) -> bool:
    """HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD, MY-SECRET ... (but not TOKENIZERS or CACHE_MODE)."""
    parts = re.split(r"[_\-.]", name.upper())
    return any(p in SECRET_PARTS for p in parts) or name.upper().endswith(("TOKEN", "APIKEY", "SECRET", "PASSWORD"))


class Redactor:
    def __init__(self, live: bool = True):
        self.counts: Counter = Counter()
        self.secret_names: set[str] = set()
        self.homes: set[str] = set()
        self.users: set[str] = set()
        self.hosts: set[str] = set()
        self.serials: set[str] = set()
        self.uuids: set[str] = set()
        self.secrets: set[str] = set()
        self._uuid_aliases: dict[str, str] = {}
        if live:
            self._learn_this_machine()

    # -- learning -------------------------------------------------------------------------------------------
    def _learn_this_machine(self) -> None:
        home = str(Path.home())
        if home not in ("/", "") and len(home) > 3:
            self.homes.add(home)
        try:
            self._add_user(getpass.getuser())
        except Exception:  # no user name (a container without /etc/passwd entry): nothing to hide
            pass
        for name in (socket.gethostname(), socket.getfqdn()):
            self._add_host(name)
        for name, value in os.environ.items():
            if secret_name(name) and len(value) >= 6:
                self.secrets.add(value)

    def _add_user(self, name: str) -> None:
        if name and len(name) >= 3 and name.lower() not in GENERIC:
            self.users.add(name)

    def _add_host(self, name: str) -> None:
        for candidate in (name, name.split(".", 1)[0]):
            if candidate and len(candidate) >= 4 and candidate.lower() not in GENERIC:
                self.hosts.add(candidate)

    def learn_text(self, text: str) -> None:
        for m in _HOME_IN_TEXT.finditer(text):
            home, user = (m.group("home"), m.group("user")) if m.group("home") else (m.group("whome"), m.group("wuser"))
            if user.lower() not in GENERIC:
                self.homes.add(home)
            self._add_user(user)
        for m in _NAME_VALUE.finditer(text):
            if secret_name(m.group("name")) and len(m.group("value")) >= 6:
                self.secrets.add(m.group("value"))
                self.secret_names.add(m.group("name"))

    def learn_json(self, obj: Any, key: str = "") -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                self.learn_json(v, str(k))
        elif isinstance(obj, list):
            for v in obj:
                self.learn_json(v, key)
        elif isinstance(obj, str):
            if key == "hostname":
                self._add_host(obj)
            elif key == "serial" and obj.strip():
                self.serials.add(obj)
            elif key == "uuid" and obj.strip():
                self.uuids.add(obj)
            elif secret_name(key) and len(obj) >= 6:
                self.secrets.add(obj)
                self.secret_names.add(key)
            self.learn_text(obj)

    # -- replacing --------------------------------------------------------------------------------------------
    def text(self, s: str) -> str:
        s = self._sub(_NAME_VALUE, s, "secret", lambda m: f"{m.group('name')}{m.group('sep')}{SECRET}"
                      if secret_name(m.group("name")) else m.group(0))
        s = self._sub(_SAYS_KEY, s, "secret", lambda m: m.group("lead") + SECRET)
        s = self._sub(_TOKEN_SHAPES, s, "secret", SECRET)
        s = self._sub(_URL_PASSWORD, s, "secret", lambda m: m.group("lead") + SECRET)
        s = self._sub(_MACHINE_ID, s, "machine id", lambda m: m.group("lead") + "<machine-id>")
        s = self._sub(_MAC, s, "MAC address", "<mac>")
        s = self._literals(s, self.secrets, "secret", SECRET)
        s = self._sub(_UUID, s, "GPU UUID", lambda m: self._uuid_alias(m.group(0)))
        for value in sorted(self.uuids, key=len, reverse=True):
            s = self._literals(s, {value}, "GPU UUID", self._uuid_alias(value))
        s = self._sub(_SERIAL_IN_TEXT, s, "GPU serial", lambda m: m.group("lead") + SERIAL)
        s = self._literals(s, self.serials, "GPU serial", SERIAL)
        for home in sorted(self.homes, key=len, reverse=True):
            s = self._sub(re.compile(re.escape(home) + r"(?![\w.-])"), s, "home path", HOME)
        for host in sorted(self.hosts, key=len, reverse=True):
            s = self._sub(re.compile(r"(?<![\w.-])" + re.escape(host) + r"(?![\w-])", re.IGNORECASE), s, "hostname", HOST)
        for user in sorted(self.users, key=len, reverse=True):
            s = self._sub(re.compile(r"(?<![\w.-])" + re.escape(user) + r"(?![\w-])"), s, "user name", USER)
        return s

    def json(self, obj: Any, key: str = "") -> Any:
        """A redacted copy: keys kept, values of secret-named, serial, uuid and hostname fields replaced."""
        if isinstance(obj, dict):
            return {k: self.json(v, str(k)) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.json(v, key) for v in obj]
        if isinstance(obj, str):
            if key == "uuid" and obj.strip():
                self.counts["GPU UUID"] += 1
                return self._uuid_alias(obj)
            for field, kind, label in (("serial", "GPU serial", SERIAL), ("hostname", "hostname", HOST)):
                if key == field and obj.strip():
                    self.counts[kind] += 1
                    return label
            if secret_name(key) and obj:
                self.counts["secret"] += 1
                return SECRET
            return self.text(obj)
        return obj

    def _uuid_alias(self, uuid: str) -> str:
        """One stand-in per UUID ("GPU-<gpu-uuid-1>"): CUDA_VISIBLE_DEVICES=GPU-... still names the same GPU in a
        redacted report, so its replay numbers the GPUs as the original did (checks/arithmetic/gpu_numbering.py)."""
        if uuid.startswith(("GPU-<", "MIG-<")) or uuid.startswith("<"):
            return uuid  # already a stand-in
        if uuid not in self._uuid_aliases:
            kind = uuid.split("-", 1)[0] if uuid[:4] in ("GPU-", "MIG-") else "GPU"
            self._uuid_aliases[uuid] = f"{kind}-{UUID[:-1]}-{len(self._uuid_aliases) + 1}>"
        return self._uuid_aliases[uuid]

    def _sub(self, pattern: re.Pattern, s: str, kind: str, repl) -> str:
        """Replace and count only the matches that really changed."""
        changed = 0

        def one(m: re.Match) -> str:
            nonlocal changed
            new = repl(m) if callable(repl) else repl
            changed += new != m.group(0)
            return new

        out = pattern.sub(one, s)
        if changed:
            self.counts[kind] += changed
        return out

    def _literals(self, s: str, values: set[str], kind: str, label: str) -> str:
        for value in sorted(values, key=len, reverse=True):
            if value and value in s:
                self.counts[kind] += s.count(value)
                s = s.replace(value, label)
        return s

    def describe(self) -> str:
        if not self.counts:
            return "nothing to redact was found"
        parts = [f"{kind} ×{n}" for kind, n in sorted(self.counts.items())]
        if self.secret_names:
            parts.append(f"(secret-named variables: {', '.join(sorted(self.secret_names))})")
        return ", ".join(parts)


def shareable(report, redact: bool = True):
    """The report as it may leave this machine: hostname, user name, home path, GPU serials and UUIDs, MAC
    addresses, machine-ids and secrets replaced (Redactor, above), everything the checks read kept, so
    a replay of it gives the same findings. Every report output goes through here (--json, -o, --markdown, the
    TUI's save); redact=False (--no-redact) returns it as it is."""
    if not redact:
        return report
    from doctor.model.report import Report, report_to_dict  # lazy: the report model (17 modules) loads when a report is redacted, not for --version/--help
    from doctor.model.serialize import from_jsonable  # lazy: as the report model, never for --version/--help

    redactor = Redactor(live=not report.source.recorded)  # a replay: hide what the report names, not the replayer
    data = report_to_dict(report)
    redactor.learn_json(data)
    return from_jsonable(Report, redactor.json(data), "$")
