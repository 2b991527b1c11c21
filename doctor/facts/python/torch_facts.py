"""Torch facts, gathered in a child process with a timeout, plus a per-wheel cache.

A broken torch (import crash, hanging CUDA init) must never hang or kill the doctor.
Static facts of one installed wheel (version, CUDA build, arch list) never change, so
they are cached keyed by the wheel's files; live facts (CUDA init, torch's warnings about
this card) are never cached and need a fresh child.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from doctor.facts.children import interrupts_held, reap, spawn, stop
from doctor.facts.python.torch_static import StaticReadError, read_static
from doctor.model.facts import TorchFacts
from doctor.model.unknown import Unknown

MARKER = "@@TORCH_FACTS@@"
CACHE_VERSION = 1


def cache_dir() -> Path:
    """The user's cache folder as platformdirs defines it ($XDG_CACHE_HOME or ~/.cache on Linux) + v100-doctor.
    Without platformdirs (a broken install, or an image with only some of the dependencies, as seen on the
    H200 test machine) the Linux rule itself, so a cache never turns a diagnosis into a crash."""
    try:
        from platformdirs import user_cache_dir  # lazy: platformdirs may be missing (the H200 image); then the XDG rule
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "v100-doctor"
    return Path(user_cache_dir("v100-doctor", appauthor=False))


def wheel_key(python: str = sys.executable) -> str | None:
    """Identify the installed torch wheel by its files' paths, sizes and mtimes (no import)."""
    if python != sys.executable:
        return None
    try:
        spec = importlib.util.find_spec("torch")
    except Exception:
        return None
    if spec is None or not spec.origin:
        return None
    root = Path(spec.origin).parent
    parts = [str(root), str(CACHE_VERSION)]
    for rel in ("version.py", "__init__.py"):
        try:
            st = (root / rel).stat()
            parts.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            return None
    for so in sorted(root.glob("_C*.so"))[:1]:
        try:
            st = so.stat()
        except OSError:  # a dangling symlink: a broken install, which the child's import will report
            return None
        parts.append(f"{so.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:24]


def static_facts(python: str = sys.executable) -> dict | None:
    """The wheel's static facts from its files (no import), or None to fall back to the child."""
    if python != sys.executable:
        return None
    try:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.origin:
            return None
        return read_static(Path(spec.origin).parent)
    except (StaticReadError, ImportError, ValueError, OSError):
        return None


def torch_installed(python: str = sys.executable) -> bool:
    if python != sys.executable:
        return True  # another interpreter: ask the child
    try:
        return importlib.util.find_spec("torch") is not None
    except Exception:
        return True  # a broken finder: let the child say what is wrong


class TorchChild:
    """A running torch-facts child; start early, collect later, so it overlaps other gathering."""

    def __init__(self, timeout_s: float, static_only: bool = False, python: str = sys.executable,
                 env: dict[str, str] | None = None):
        self.timeout_s = timeout_s
        cmd = [python, "-m", "doctor.facts.python.torch_child"] + (["--static-only"] if static_only else [])
        child_env = dict(os.environ if env is None else env)
        child_env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).resolve().parents[3])] + ([child_env["PYTHONPATH"]] if child_env.get("PYTHONPATH") else [])
        )
        # its own session: a hanging CUDA init cannot take the terminal's signals; children.stop_all() ends it
        with interrupts_held():  # a signal during the start waits until the child is registered: stop_all() finds it
            self.proc = spawn(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              text=True, env=child_env)

    def collect(self) -> dict:
        try:
            out, err = self.proc.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            return {"ok": False, "error": f"timed out after {self.timeout_s:g} s (torch import or CUDA init hangs)", "timeout": True}
        reap(self.proc)
        for line in reversed(out.splitlines()):
            if line.startswith(MARKER):
                try:
                    data = json.loads(line[len(MARKER):])
                except (ValueError, RecursionError):
                    data = None
                if not isinstance(data, dict) or not isinstance(data.get("warnings", []), list):
                    return {"ok": False, "error": "the torch child printed malformed facts (a broken install?)", "crashed": True}
                stderr_warnings = [l.strip() for l in err.splitlines() if "capability" in l.lower() or "warn" in l.lower()]
                data.setdefault("warnings", []).extend(w for w in stderr_warnings if w not in data["warnings"])
                return data
        code = self.proc.returncode
        how = f"killed by signal {-code}" if code and code < 0 else f"exit code {code}"
        tail = " | ".join(err.strip().splitlines()[-3:])[:400]
        return {"ok": False, "error": f"the torch child crashed ({how}){': ' + tail if tail else ''}", "crashed": True}

    def kill(self) -> None:
        stop(self.proc)


def _well_formed(data: object) -> bool:
    """The child's (or the cache's) answer has the types the facts need; anything else is a broken answer."""
    if not isinstance(data, dict) or data.get("ok") is not True:
        return False
    strings = all(isinstance(data.get(k), str) for k in ("version", "cuda"))
    lists = all(isinstance(data.get(k, []), list) and all(isinstance(v, str) for v in data.get(k, []))
                for k in ("arch_list", "device_capabilities", "warnings"))
    arch = data.get("arch_list", []) is not None
    return strings and lists and arch and isinstance(data.get("location", ""), str) and \
        isinstance(data.get("cuda_available", True), bool) and type(data.get("device_count", 0)) is int


def facts_from_child(data: dict, from_cache: bool = False) -> TorchFacts:
    if data.get("ok") and not _well_formed(data):
        data = {"ok": False, "error": "the torch child answered with malformed facts (a broken install?)"}
    if not data.get("ok"):
        return TorchFacts(installed=True, reason=f"torch could not be inspected: {data.get('error', 'unknown error')}")
    where = ("read from the wheel's files without importing torch" if data.get("static_read")
             else "came from the per-wheel cache")
    not_init = Unknown(f"CUDA not initialised: static torch facts {where} (run with --fresh to initialise)")
    arch = data.get("arch_list")
    return TorchFacts(
        installed=True,
        version=data["version"],
        cuda=data["cuda"],
        arch_list=tuple(arch) if arch is not None else Unknown(data.get("arch_list_error", "not reported")),
        cuda_available=data["cuda_available"] if "cuda_available" in data else not_init,
        device_count=data["device_count"] if "device_count" in data else not_init,
        device_capabilities=tuple(data["device_capabilities"]) if "device_capabilities" in data else not_init,
        warnings=tuple(data.get("warnings", ())),
        location=data.get("location", Unknown("not reported")),
        static_from_cache=from_cache,
    )


MAX_CACHE_BYTES = 1 << 20  # an entry is ~1 KiB


def read_cache(key: str) -> dict | None:
    """The cached static facts, or None (absent) for anything unreadable, malformed, oversized or a symlink."""
    try:
        fd = os.open(cache_dir() / f"torch-{key}.json", os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            raw = fh.read(MAX_CACHE_BYTES + 1)
        data = json.loads(raw) if len(raw) <= MAX_CACHE_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    return data if _well_formed(data) else None


def write_cache(key: str, data: dict) -> None:
    """Only the static part of a successful child's answer is cached: written to a fresh temp file (never
    through a symlink someone left), then renamed over the entry atomically (a symlink entry is replaced)."""
    static = {k: data[k] for k in ("ok", "version", "cuda", "arch_list", "location") if k in data}
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if folder.is_symlink() or not folder.is_dir():
            return
        fd, tmp = tempfile.mkstemp(prefix=f"torch-{key}.", suffix=".tmp", dir=folder)  # O_EXCL: a new file
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(static))
            os.replace(tmp, folder / f"torch-{key}.json")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only home is fine: we just do not cache


class TorchGatherer:
    """Start (maybe) a child now; `result()` later. Uses the cache unless fresh=True."""

    def __init__(self, timeout_s: float = 20.0, fresh: bool = False, use_cache: bool = True,
                 python: str = sys.executable):
        self.child: TorchChild | None = None
        self.cached: dict | None = None
        self.key = wheel_key(python) if use_cache else None
        self.use_cache = use_cache
        if not torch_installed(python):
            self.installed = False
            return
        self.installed = True
        if not fresh:
            self.cached = static_facts(python)
        if self.cached is None and self.key and not fresh:
            self.cached = read_cache(self.key)
        if self.cached is None:
            self.child = TorchChild(timeout_s, python=python)

    def result(self) -> TorchFacts:
        if not self.installed:
            return TorchFacts(installed=False, reason="torch is not installed in this Python environment")
        if self.cached is not None:
            return facts_from_child(self.cached, from_cache=not self.cached.get("static_read"))
        assert self.child is not None
        data = self.child.collect()
        if data.get("ok") and self.key and self.use_cache:
            write_cache(self.key, data)
        return facts_from_child(data)
