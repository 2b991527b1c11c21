"""Take out of what a user shares what identifies a person or a machine: home paths, user names, hostnames, GPU
serials and UUIDs, MACs, machine and boot ids, secrets. Never the doctor's own words.

Redaction goes by structure. A document has parts read from the user's machine (a report's facts, plan, probe and
source; a log's lines; a launch config's lines) and parts the doctor wrote (findings, verdict, route, notes). The
Redactor first learns the values to hide from the read parts only: identifying fields by name (hostname, serial,
uuid), secret-named fields and variables, secret shapes in text (NAME=VALUE, `--api-key VALUE`, `Authorization:
Bearer ...`, URL passwords, hf_/sk-/ghp_/AKIA tokens, `boot <uuid>`, MACs), /home/<name> paths, and when given them
this machine's own home, user, hostnames and secret environment (gathered by doctor/facts/host/identities.py: the
redactor reads nothing from the machine itself). Then it replaces exactly those values wherever they
appear, the doctor's prose included (a finding that quotes the hostname); a pattern never runs over prose, so
"per token: 12.79 GB" stays as written. Stand-ins hold no Markdown or HTML syntax (`redacted-host`,
`GPU-uuid-1-redacted`), so GitHub shows them as a terminal does, and they are numbered in order of first
appearance, so a replay and two runs give the same ones. The Redactor counts what it replaced by kind; the values
themselves are never written anywhere.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from doctor.model.identities import Identities

if TYPE_CHECKING:
    from doctor.model.fleet import Fleet, FleetRow
    from doctor.model.log_analysis import LogAnalysis
    from doctor.model.report import Report

HOME = "~"
USER, HOST, SERIAL, SECRET = "redacted-user", "redacted-host", "redacted-serial", "redacted-secret"
MAC, MACHINE_ID, IP = "redacted-mac", "redacted-machine-id", "redacted-ip"
STAND_INS = (USER, HOST, SERIAL, SECRET, MAC, MACHINE_ID, IP)
# Host names in logs and configs: a site's own machines are redacted, public services kept (a fix's URL must still
# work, and the doctor's own sources cite them). A site's machine: under a private suffix or label (.corp, .internal,
# .lan, .local, ...), or a first label with a digit (gpu-node-17, worker03, ip-10-0-0-5) outside the public services
PRIVATE_LABELS = frozenset({"internal", "local", "lan", "corp", "home", "intranet", "localdomain", "private", "test", "priv"})
PUBLIC_DOMAINS = ("huggingface.co", "hf.co", "github.com", "githubusercontent.com", "github.io", "pytorch.org",
                  "pypi.org", "pythonhosted.org", "python.org", "pypa.io", "nvidia.com", "nvcr.io", "docker.com",
                  "docker.io", "ollama.com", "ollama.ai", "vllm.ai", "readthedocs.io", "readthedocs.org", "anaconda.org",
                  "anaconda.com", "conda-forge.org", "ubuntu.com", "debian.org", "kernel.org", "microsoft.com",
                  "google.com", "googleapis.com", "gitlab.com", "amazonaws.com", "cloudfront.net", "ggml.ai")
# only names that end in a top-level domain (a Python path such as transformers.models.llama is no host)
HOST_SUFFIXES = ("com", "net", "org", "io", "ai", "co", "dev", "app", "cloud", "edu", "gov", "mil", "int", "info", "biz",
                 "uk", "de", "fr", "nl", "se", "ch", "cn", "jp", "kr", "in", "ru", "us", "ca", "au", "eu", "tw", "sg",
                 *sorted(PRIVATE_LABELS))
_HOSTNAME = re.compile(r"(?<![\w.@-])(?:(?<=//)|(?<!/))(?P<value>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
                       r"(?:" + "|".join(HOST_SUFFIXES) + r"))(?![\w-]|\.\w)", re.IGNORECASE)
# Private, shared and link-local IPv4 addresses name a site's machines; loopback, 0.0.0.0 and public ones are kept
# (a version such as 1.11.1.1 has the shape of a public address: a report's facts must replay the same)
_IPV4 = re.compile(r"(?<![\w.])(?P<value>(?:10|127|169\.254|172\.(?:1[6-9]|2\d|3[01])|192\.168|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7]))"
                   r"(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){1,3})(?![\w]|\.\d)")
GENERIC = {"root", "user", "users", "admin", "home", "public", "shared", "default", "guest", "localhost",
           "server", "worker", "master", "main", "node", "host", "linux", "ubuntu", "debian", "runner"}
SECRET_PARTS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS",
                "KEY", "APIKEY", "AUTH", "PAT", "PRIVATE"}
NOT_SECRET_VALUES = {"true", "false", "none", "null", "yes", "no", "auto", "enabled", "disabled", "unset", "empty",
                     "required", "optional", "redacted"}

# The parts of a document the doctor wrote itself: learned from never, patterns never run over them.
REPORT_PROSE = frozenset({"findings", "gpus", "verdict", "prescription", "errors", "note"})
LOG_ANALYSIS_READ = frozenset({"text", "matched", "example", "value", "name", "facts_source", "plan_used"})

_HOME_IN_TEXT = re.compile(r"(?P<home>(?:/home|/Users)/(?P<user>[^/\s\"'\\:;,`]+))"
                           r"|(?P<whome>[A-Za-z]:\\{1,2}Users\\{1,2}(?P<wuser>[^\\\s\"':;,`]+))")
_NAME_VALUE = re.compile(r"(?P<name>\b[A-Za-z_][A-Za-z0-9_-]*)[\"']?\s*[=:]\s*[\"']?(?P<value>[^\s\"',;]+)")
_FLAG_VALUE = re.compile(r"(?<![\w-])--?(?P<name>[A-Za-z][A-Za-z0-9_.-]*)(?:=|\s+)[\"']?(?P<value>[^\s\"']+)")
_SAYS_KEY = re.compile(r"(?i)\b(?:api key|admin key|token|password|secret)\s+is:\s+(?P<value>\S+)")
# A secret given by context: a key word, then (after `=`, `:`, quotes or a few words of prose: "using secret X",
# "token X", "aws_secret_access_key: X") a value that looks random (high_entropy). Yelp's detect-secrets was weighed
# for this: its keyword plugin needs an assignment (`key = "v"`, `key: v`) and its entropy plugins a quoted string,
# so the prose form a log line carries ("… using secret wJalr…") passes it; it would also bring requests along.
_SECRET_WORD = (r"(?:aws_secret_access_key|aws_session_token|secret(?:[_ -]?(?:access[_ -]?)?key)?|client[_ -]?secret"
                r"|(?:access|auth|api|refresh|session|bearer)?[_ -]?token|password|passwd|passphrase|api[_ -]?key"
                r"|authorization|bearer|credentials?|private[_ -]?key)")
_CONTEXT_SECRET = re.compile(r"(?i)(?<![\w-])" + _SECRET_WORD + r"(?![\w-])[\"'`]?\s*(?:[:=]>?|\s(?:is|was|of|set\s+to)?)?\s*"
                             r"[\"'`]?(?P<value>[^\s\"'`,;]{16,})")
_BEARER = re.compile(r"(?i)\b(?:authorization\s*[:=]\s*[\"']?(?:bearer|basic|token)?|bearer|basic)\s+"
                     r"(?P<value>[A-Za-z0-9._~+/=-]{8,})")
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{30,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}"
                           r"|github_pat_[A-Za-z0-9_]{40,}|(?:AKIA|ASIA)[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,})\b")
_UUID = re.compile(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_SERIAL_IN_TEXT = re.compile(r"(?i)serial(?:[ _]?number)?[\"']?\s*[:=]\s*[\"']?(?P<value>\d{8,20})\b")
_URL_PASSWORD = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:(?P<value>[^@\s/]+)(?=@)")
_MACHINE_ID = re.compile(r"(?i)\b(?:machine[-_ ]?id|boot(?:[-_ ]?id)?)[\"']?\s*[:=]?\s*[\"']?"
                         r"(?P<value>[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12})\b")
_MAC = re.compile(r"(?<![0-9A-Fa-f:-])(?P<value>(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2})(?![0-9A-Fa-f:-])")
_NUMBER = re.compile(r"[\d.,:%+-]+")
TEXT_SEPARATOR = "\n\0\n"  # between the strings of one document searched as one text: no pattern spans it
_STAND_IN = re.compile(r"(?:GPU|MIG)-(?:uuid-\d+-redacted|<gpu-uuid-\d+>)|redacted-[a-z-]+|<[a-z-]+>")


@lru_cache(maxsize=4096)  # a fleet asks for the same few hundred field names in every report
def secret_name(name: str) -> bool:
    """HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD, MYSQL_PWD, --api-key (but not TOKENIZERS or CACHE_MODE)."""
    parts = re.split(r"[_\-.]", name.upper())
    return any(p in SECRET_PARTS for p in parts) or name.upper().endswith(("TOKEN", "APIKEY", "SECRET", "PASSWORD"))


def looks_secret(value: str) -> bool:
    """A value a secret-named field or flag may hold: not a word like "auto", a number, a path, a shell variable or
    a stand-in (a secret has no spaces, and is at least 6 characters)."""
    return (len(value) >= 6 and not any(c.isspace() for c in value) and value.lower() not in NOT_SECRET_VALUES
            and not _NUMBER.fullmatch(value) and not value.startswith(("/", "~", "$", "*", "-", "<", "`", "{", "%"))
            and not _STAND_IN.fullmatch(value))


def site_host(name: str) -> bool:
    """A host name that names a site's own machine (redacted), not a public service's (kept): see PRIVATE_LABELS."""
    labels = name.lower().split(".")
    if any(".".join(labels[i:]) in PUBLIC_DOMAINS for i in range(len(labels))):
        return False
    return bool(PRIVATE_LABELS & set(labels[1:])) or any(c.isdigit() for c in labels[0])


def high_entropy(value: str) -> bool:
    """Random-looking, as keys and tokens are: 16+ characters of two or more kinds (upper, lower, digit, symbol)
    and a Shannon entropy of at least 3.0 bits a character for hex, 3.5 otherwise (detect-secrets' own limits are
    3.0 for hex and 4.5 for base64 over longer strings; a 16-40 character key cannot reach 4.5). Words, numbers,
    file names and dotted versions are not."""
    if len(value) < 16 or "://" in value or value.count(".") > 2 or "=" in value.rstrip("="):
        return False  # too short, a URL, a dotted name, or an assignment of its own (base64 pads with = at the end)
    symbol = lambda c: not c.isalnum() and c not in "_.-"  # an identifier's or a file name's joints are no symbols
    kinds = sum(any(test(c) for c in value) for test in (str.isupper, str.islower, str.isdigit, symbol))
    if kinds < 2:
        return False
    counts = Counter(value)
    bits = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    hex_only = all(c in "0123456789abcdefABCDEF" for c in value)
    return bits >= (3.0 if hex_only else 3.5)


class Redactor:
    def __init__(self, machine: Identities | None = None):
        """`machine`: this machine's identities (doctor/facts/host/identities.py) when what is redacted was read here."""
        self.counts: Counter = Counter()
        self.secret_names: set[str] = set()
        self.homes: dict[str, None] = {}
        self.users: dict[str, None] = {}
        self.hosts: dict[str, None] = {}
        self.serials: dict[str, None] = {}
        self.secrets: dict[str, str] = {}  # value -> kind (secret, machine id, MAC address)
        self._uuid_aliases: dict[str, str] = {}  # in order of first appearance: the stand-ins' numbers
        if machine is not None:
            self._learn_machine(machine)

    @property
    def uuids(self) -> tuple[str, ...]:
        return tuple(self._uuid_aliases)

    # -- learning (only from what was read from the machine, never from the doctor's prose) ------------------
    def _learn_machine(self, machine: Identities) -> None:
        if machine.home not in ("/", "") and len(machine.home) > 3:
            self.homes[machine.home] = None
        self._add_user(machine.user)
        for name in machine.hostnames:
            self._add_host(name)
        for name, value in machine.environment:
            if secret_name(name) and looks_secret(value):
                self._add_secret(value, "secret")

    def _add_user(self, name: str) -> None:
        if name and len(name) >= 3 and name.lower() not in GENERIC and not _STAND_IN.fullmatch(name):
            self.users[name] = None

    def _add_host(self, name: str) -> None:
        for candidate in (name, name.split(".", 1)[0]):
            if candidate and len(candidate) >= 4 and candidate.lower() not in GENERIC and not _STAND_IN.search(candidate):
                self.hosts[candidate] = None

    def _add_secret(self, value: str, kind: str) -> None:
        if value and not _STAND_IN.fullmatch(value):
            self.secrets.setdefault(value, kind)

    def _add_uuid(self, uuid: str) -> None:
        if uuid.strip() and not _STAND_IN.fullmatch(uuid) and uuid not in self._uuid_aliases:
            kind = uuid[:3] if uuid[:4] in ("GPU-", "MIG-") else "GPU"
            self._uuid_aliases[uuid] = f"{kind}-uuid-{len(self._uuid_aliases) + 1}-redacted"

    def learn_text(self, text: str) -> None:
        """Values to hide in a text read from the machine (a log line, a config line, an environment value)."""
        for m in _HOME_IN_TEXT.finditer(text):
            home, user = (m.group("home"), m.group("user")) if m.group("home") else (m.group("whome"), m.group("wuser"))
            if user.lower() not in GENERIC and not _STAND_IN.fullmatch(user):
                self.homes[home] = None
            self._add_user(user)
        for m in _UUID.finditer(text):
            self._add_uuid(m.group(0))
        for pattern in (_NAME_VALUE, _FLAG_VALUE):
            for m in pattern.finditer(text):
                if secret_name(m.group("name")) and looks_secret(m.group("value")):
                    self._add_secret(m.group("value"), "secret")
                    self.secret_names.add(m.group("name"))
        for m in _HOSTNAME.finditer(text):
            if site_host(m.group("value")):
                self._add_host(m.group("value"))
        for m in _IPV4.finditer(text):
            if m.group("value").count(".") == 3 and not m.group("value").startswith("127."):
                self._add_secret(m.group("value"), "IP address")
        for m in _CONTEXT_SECRET.finditer(text):
            value = m.group("value").rstrip(".)]}>:!?")  # the sentence's own punctuation stays
            if looks_secret(value) and high_entropy(value):
                self._add_secret(value, "secret")
        for pattern, kind in ((_SAYS_KEY, "secret"), (_BEARER, "secret"), (_TOKEN_SHAPES, "secret"),
                              (_URL_PASSWORD, "secret"), (_MACHINE_ID, "machine id"), (_MAC, "MAC address"),
                              (_SERIAL_IN_TEXT, "GPU serial")):
            for m in pattern.finditer(text):
                value = m.group("value") if "value" in pattern.groupindex else m.group(0)
                if kind == "GPU serial":
                    self.serials[value] = None
                elif kind != "secret" or pattern is _TOKEN_SHAPES or looks_secret(value):
                    self._add_secret(value, kind)

    def learn_json(self, obj: Any, key: str = "") -> None:
        """Values to hide in data read from the machine: fields by name, and every string's text (gathered first and
        searched as one text: a report holds thousands of short strings, and each search has a fixed cost)."""
        texts: list[str] = []
        self._learn_fields(obj, key, texts)
        if texts:
            self.learn_text(TEXT_SEPARATOR.join(texts))

    def learn_fields(self, obj: Any) -> None:
        """Only the values named by their field (hostname, serial, uuid, HF_TOKEN, api_key): a quick pass for a
        fleet of thousands of reports, whose shown cells are then searched as text (fleet_rows)."""
        self._learn_fields(obj, "", [])

    def _learn_fields(self, obj: Any, key: str, texts: list[str]) -> None:
        # numbers name nobody: only containers and strings are visited (a report's samples are thousands of numbers)
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, (dict, list, str)):
                    self._learn_fields(v, str(k), texts)
        elif isinstance(obj, list):
            if obj and all(isinstance(v, str) for v in obj):  # an argv: ["--api-key", "VALUE"]
                texts.append(" ".join(obj))
            for v in obj:
                if isinstance(v, (dict, list, str)):
                    self._learn_fields(v, key, texts)
        elif isinstance(obj, str):
            if key == "hostname":
                self._add_host(obj)
            elif key == "serial" and obj.strip() and not _STAND_IN.fullmatch(obj):
                self.serials[obj] = None
            elif key == "uuid":
                self._add_uuid(obj)
            elif secret_name(key) and looks_secret(obj):
                self._add_secret(obj, "secret")
                self.secret_names.add(key)
            if "GPU-" in obj or "MIG-" in obj:  # UUID stand-ins are numbered in order of first appearance
                for m in _UUID.finditer(obj):
                    self._add_uuid(m.group(0))
            texts.append(obj)

    # -- replacing: exactly the learned values, wherever they are ---------------------------------------------
    def prose(self, s: str) -> str:
        """The doctor's own text: only the learned values are replaced; nothing else changes by a byte."""
        for value, kind in sorted(self.secrets.items(), key=lambda kv: -len(kv[0])):
            s = self._literal(s, value, kind, MACHINE_ID if kind == "machine id" else MAC if kind == "MAC address"
                              else IP if kind == "IP address" else SECRET)
        for uuid, alias in sorted(self._uuid_aliases.items(), key=lambda kv: -len(kv[0])):
            s = self._literal(s, uuid, "GPU UUID", alias)
        for serial in sorted(self.serials, key=len, reverse=True):
            s = self._literal(s, serial, "GPU serial", SERIAL)
        for home in sorted(self.homes, key=len, reverse=True):
            s = self._sub(re.compile(re.escape(home) + r"(?![\w.-])"), s, "home path", HOME)
        for host in sorted(self.hosts, key=len, reverse=True):
            s = self._sub(re.compile(r"(?<![\w.-])" + re.escape(host) + r"(?![\w-])", re.IGNORECASE), s, "hostname", HOST)
        for user in sorted(self.users, key=len, reverse=True):
            s = self._sub(re.compile(r"(?<![\w.-])" + re.escape(user) + r"(?![\w-])"), s, "user name", USER)
        return s

    def text(self, s: str) -> str:
        """A text read from the machine (a log, a config line): its own values are learned, then replaced."""
        self.learn_text(s)
        return self.prose(s)

    def json(self, obj: Any, key: str = "") -> Any:
        """A redacted copy of data read from the machine: keys kept, identifying and secret fields replaced."""
        if isinstance(obj, dict):
            return {k: self.json(v, str(k)) for k, v in obj.items()}
        if isinstance(obj, list):
            if obj and all(isinstance(v, str) for v in obj):
                self.learn_text(" ".join(obj))
            return [self.json(v, key) for v in obj]
        if isinstance(obj, str):
            if key == "uuid" and obj.strip():
                self._add_uuid(obj)
                return self._literal(obj, obj, "GPU UUID", self._uuid_aliases.get(obj, obj))
            for field, kind, label in (("serial", "GPU serial", SERIAL), ("hostname", "hostname", HOST)):
                if key == field and obj.strip():
                    return self._literal(obj, obj, kind, label)
            if secret_name(key) and looks_secret(obj):
                return self._literal(obj, obj, "secret", SECRET)
            return self.text(obj)
        return obj

    def prose_json(self, obj: Any) -> Any:
        """A redacted copy of what the doctor wrote: every string through prose(), keys kept."""
        if isinstance(obj, dict):
            return {k: self.prose_json(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.prose_json(v) for v in obj]
        return self.prose(obj) if isinstance(obj, str) else obj

    def document(self, data: dict, prose: Callable[[str], bool]) -> dict:
        """A whole document (a report's dict, a log analysis'): learn from the parts read from the machine, then
        replace in all; `prose(key)` says which top-level parts the doctor wrote."""
        read = {k: v for k, v in data.items() if not prose(k)}
        self.learn_json(read)
        return {k: self.prose_json(v) if prose(k) else self.json(v, k) for k, v in data.items()}

    def _sub(self, pattern: re.Pattern, s: str, kind: str, label: str) -> str:
        out, n = pattern.subn(label, s)
        if n and out != s:
            self.counts[kind] += n
        return out

    def _literal(self, s: str, value: str, kind: str, label: str) -> str:
        if value and value != label and value in s:
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


def report_prose(key: str) -> bool:
    return key in REPORT_PROSE


def analysis_prose(key: str) -> bool:
    """In a log analysis the read parts are the log's lines and name, the plan hints and the facts' source."""
    return key not in {"log", "matches", "unexplained", "plan_hints", "facts_source", "plan_used"}


def redact_report_dict(data: dict, redactor: Redactor) -> dict:
    return redactor.document(data, report_prose)


def redact_analysis_dict(data: dict, redactor: Redactor) -> dict:
    """A log analysis: the log's lines are read (learned and pattern-checked), its titles and fixes are prose."""
    out = dict(data)
    redactor.learn_json({k: v for k, v in data.items() if k in ("log", "plan_hints", "facts_source", "plan_used", "engine")})
    for group in (data.get("matches") or []):
        redactor.learn_json({k: v for k, v in group.items() if k in LOG_ANALYSIS_READ})
    for group in ((data.get("unexplained") or {}).get("groups") or []):
        redactor.learn_json({k: v for k, v in group.items() if k in LOG_ANALYSIS_READ})
    return redactor.prose_json(out)


def shareable(report: Report, redact: bool = True, redactor: Redactor | None = None,
              machine: Identities | None = None) -> Report:
    """The report as it may leave this machine: identifying values and secrets replaced (Redactor, above), the
    doctor's words and everything the checks read kept, so a replay of it gives the same findings. Every report
    output goes through here (--json, -o, --markdown, the TUI's saves and copy, watch, bundle); redact=False
    (--no-redact) returns it as it is. `machine`: the identities of the machine that gathered it, when that is this
    one (doctor/facts/host/identities.py identities_for; a replay hides what the report names, not the replayer's)."""
    if not redact:
        return report
    from doctor.model.report import Report, report_to_dict  # lazy: the report model (17 modules) loads when a report is redacted, not for --version/--help
    from doctor.model.serialize import from_jsonable  # lazy: as the report model, never for --version/--help

    if redactor is None:
        redactor = Redactor(machine)
    return from_jsonable(Report, redact_report_dict(report_to_dict(report), redactor), "$")


def shareable_analysis(analysis: LogAnalysis, redact: bool = True, redactor: Redactor | None = None,
                       machine: Identities | None = None) -> LogAnalysis:
    """A log analysis as it may leave this machine (explain --json/-o/--markdown, the bundle): the log's secrets
    and identifying values replaced wherever they appear, this machine's too (`machine`), the doctor's titles and
    fixes untouched."""
    if not redact:
        return analysis
    from doctor.model.log_analysis import LogAnalysis, analysis_to_dict  # lazy: loads when an analysis is shared
    from doctor.model.serialize import from_jsonable  # lazy: as the analysis model

    if redactor is None:
        redactor = Redactor(machine)
    return from_jsonable(LogAnalysis, redact_analysis_dict(analysis_to_dict(analysis), redactor), "$")


FLEET_ROW_READ = ("model", "source", "card", "driver", "torch", "top_cause")


def shareable_rows(doc: dict, rows: list[FleetRow]) -> list[FleetRow]:
    """One report's fleet rows as they may be shown: whatever the report was written with (--no-redact too), the
    values its read parts name by field (HF_TOKEN, api_key, serial, uuid) are learned, and the secret shapes in
    the cells themselves (an hf_ token or KEY=VALUE a --no-redact report's finding quotes: written by a doctor,
    but read here from a file), then replaced in every cell. Host names stay: naming each host is what a fleet is
    for. Not every string of the report is searched: 10,000 reports must aggregate in seconds."""
    from dataclasses import replace  # lazy: loads when a fleet is read, as the fleet model

    redactor = Redactor()
    redactor.learn_fields({k: v for k, v in doc.items() if not report_prose(k)})
    for row in rows:
        redactor.learn_text(TEXT_SEPARATOR.join(getattr(row, k) for k in FLEET_ROW_READ))
    redactor.hosts.clear()
    p = redactor.prose
    return [replace(row, model=p(row.model), source=p(row.source), card=p(row.card), driver=p(row.driver),
                    torch=p(row.torch), top_cause=p(row.top_cause)) for row in rows]


def shareable_fleet(fleet: Fleet, redact: bool = True, machine: Identities | None = None) -> Fleet:
    """A fleet as it may leave this machine: what its rows read from the reports (model paths, source files,
    card and package names) is learned from, the causes (the doctor's words) only get those values replaced.
    Host names stay: naming each host is what a fleet is for (reports shared redacted already name none)."""
    if not redact:
        return fleet
    from doctor.model.fleet import Fleet  # lazy: loads when a fleet is shared
    from doctor.model.serialize import from_jsonable, to_jsonable  # lazy: as the fleet model

    redactor = Redactor(machine)  # this machine's home, user and secrets (the reports' paths sit under it) ...
    redactor.hosts.clear()  # ... but not its host name: a fleet names its hosts
    data = to_jsonable(fleet)
    for row in data.get("rows") or []:
        redactor.learn_json({k: v for k, v in row.items() if k in FLEET_ROW_READ})
    return from_jsonable(Fleet, redactor.prose_json(data), "$")


def stand_ins_in(texts: Iterable[str]) -> set[str]:
    """The stand-ins a text holds (for tests and the bundle's manifest)."""
    return {m.group(0) for t in texts for m in _STAND_IN.finditer(t)}
