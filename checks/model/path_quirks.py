"""Characters in a model path that break real tools, what exactly each breaks, and a safe rename.

Measured/read facts behind the wording (../shared/notes/device-recipes.md, exllamav2-research.md):
the ExLlamaV2 Python loader took '/tmp/synth model' without error (H200); square brackets break its
glob(os.path.join(dir, "*.safetensors")) with " ## No .safetensors files found"; unquoted shell
arguments split at whitespace.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

EXL2_GLOB = "https://github.com/turboderp-org/exllamav2/blob/v0.3.2/exllamav2/config.py (glob of *.safetensors)"
SHELL_SPECIAL = set("$`\"'\\;&|<>()!#{}~")


@dataclass(frozen=True)
class Quirk:
    kind: str  # whitespace | glob | non-ascii | shell
    chars: str  # the offending characters, as found
    breaks: str  # what exactly breaks
    severity: str  # "fail" (breaks ExLlamaV2 itself) | "warn" (breaks shells, launchers, other tools)


def quirks(path: str) -> list[Quirk]:
    found = []
    ws = sorted({c for c in path if c.isspace()})
    if ws:
        found.append(Quirk("whitespace", "".join(ws).replace(" ", "␠").replace("\t", "\\t"),
                           "unquoted in a shell or a launcher command line, the path splits into several arguments "
                           "(e.g. `python test_inference.py -m /data/tmp/qwen27b exl2` ends in \"unrecognized arguments: "
                           "exl2\"); the ExLlamaV2 Python loader itself loads it (measured on the H200)", "warn"))
    glob_chars = sorted({c for c in path if c in "[]*?"})
    if glob_chars:
        found.append(Quirk("glob", "".join(glob_chars),
                           "ExLlamaV2 finds its weights with glob(\"<dir>/*.safetensors\"), which reads [ ] * ? as "
                           "patterns: ExLlamaV2Config fails with \" ## No .safetensors files found in ...\" even though "
                           f"the files are there ({EXL2_GLOB})", "fail"))
    non_ascii = sorted({c for c in path if ord(c) > 127})
    if non_ascii:
        found.append(Quirk("non-ascii", "".join(non_ascii),
                           "fine for Python with a UTF-8 locale, but shells and launchers under LANG=C / POSIX, Windows "
                           "code pages and some config parsers mangle or reject it", "warn"))
    special = sorted({c for c in path if c in SHELL_SPECIAL})
    if special:
        found.append(Quirk("shell", "".join(special),
                           "unquoted in a shell these act: $ and ` expand, ; & | end the command, < > redirect, "
                           "( ) { } ! # ~ and quotes change the parse", "warn"))
    return found


def safe_name(component: str) -> str:
    """A name with only letters, digits, '.', '_' and '-' (non-ASCII letters transliterated away)."""
    ascii_only = component.encode("ascii", "ignore").decode()
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_only).strip("-")
    return cleaned or "model"


def rename_command(path: str) -> str:
    """`mv -- OLD NEW` for the last path component (printed, never run)."""
    trimmed = path.rstrip("/")
    parent, _, last = trimmed.rpartition("/")
    new = f"{parent}/{safe_name(last)}" if parent or trimmed.startswith("/") else safe_name(last)
    return f"mv -- {shlex.quote(trimmed)} {shlex.quote(new)}"


def parent_has_quirks(path: str) -> bool:
    parent = path.rstrip("/").rpartition("/")[0]
    return bool(parent and quirks(parent))
