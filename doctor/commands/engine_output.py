"""The llama.cpp and Transformers probes' outputs, with the main command's manners: `--json` prints the JSON alone
(it used to follow the text line, so stdout did not parse), `-o FILE` writes the same JSON (it was ignored), and
both are redacted unless --no-redact, since JSON and -o are made to be sent (doctor/cli/output.py)."""

from __future__ import annotations

import argparse
from typing import Any

from doctor.cli.output import write_report_text
from doctor.facts.host.identities import this_machine
from doctor.model.serialize import strict_json
from doctor.render.redact import Redactor


def emit_engine_probe(args: argparse.Namespace, text: str, doc: Any) -> None:
    """`text` for the terminal; `doc` (plain JSON data) for --json and -o."""
    wants_json, path = getattr(args, "json", False), getattr(args, "output", None)
    if wants_json or path:
        if not getattr(args, "no_redact", False):
            redactor = Redactor(this_machine())  # this machine's home, user, host and secrets, wherever they appear
            redactor.learn_json(doc)
            doc = redactor.prose_json(doc)
        rendered = strict_json(doc, indent=1)
    print(rendered if wants_json else text)
    if path:
        write_report_text(rendered + "\n", path)
