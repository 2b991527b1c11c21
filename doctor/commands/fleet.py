"""Aggregate many hosts' reports: `v100-doctor fleet reports/ host1.json bundle.tar.gz ...`

One row per host × GPU (status, top cause, card, driver, torch, probed decode tok/s and its share of the
ceiling), the causes hosts share, and hosts decoding well below the fleet's median for the same card and
model. Reads reports, bundles and folders of them; a bare facts file is replayed with today's checks.
Exit code: the worst row's, as for one host (3 when a path names nothing).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from doctor.cli.options import path_arg, positive_int
from doctor.cli.output import write_whole
from doctor.facts.host.identities import this_machine
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.render.fleet import render_fleet_json, render_fleet_markdown, render_fleet_text
from doctor.render.redact import shareable_fleet
from doctor.render.untrusted import visible
from doctor.run.fleet import collect

if TYPE_CHECKING:
    from doctor.model.fleet import Fleet

EXIT_FOR = {"fail": ExitCode.FAILURES, "error": ExitCode.INTERNAL, "unreadable": ExitCode.USAGE, "warn": ExitCode.WARNINGS}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", type=path_arg, metavar="PATH", help="report .json, bundle .tar.gz/.zip, or a folder of them")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON (schema v100-doctor/fleet/1)")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown")
    p.add_argument("-o", "--output", metavar="FILE", type=path_arg, help="also write the JSON to FILE")
    p.add_argument("--no-redact", action="store_true", help="keep home paths, user names, GPU UUIDs and secrets in what "
                   "fleet prints and writes (redacted by default, whatever the reports were written with; host names are "
                   "kept either way: naming them is what a fleet is for)")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N", help="worker processes for large fleets (default: up to 4)")
    p.add_argument("--max-rows", type=positive_int, default=200, metavar="N", help="rows shown in text/Markdown (default 200)")


def exit_code(fleet: Fleet) -> ExitCode:
    worst = [EXIT_FOR[r.status] for r in fleet.rows if r.status in EXIT_FOR]
    order = (ExitCode.FAILURES, ExitCode.INTERNAL, ExitCode.USAGE, ExitCode.WARNINGS)
    return next((code for code in order if code in worst), ExitCode.OK)


def run(args: argparse.Namespace) -> ExitCode:
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    fleet = collect(args.paths, jobs=args.jobs, redact=not args.no_redact)
    if not fleet.reports:
        raise UsageError(f"no report files (.json, .tar.gz, .zip) under {', '.join(args.paths)}")
    # shown or sent, redacted alike: each report's own values (collect), then this machine's home, user and secrets
    fleet = shareable_fleet(fleet, not args.no_redact, this_machine() if not args.no_redact else None)
    if args.output:
        try:  # whole or as it was: a full disk or a signal never leaves half a file (write_whole)
            write_whole(args.output, render_fleet_json(fleet))
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc.strerror}") from None
    if args.json:
        sys.stdout.write(render_fleet_json(fleet))
    elif args.markdown:
        sys.stdout.write(render_fleet_markdown(fleet, args.max_rows))
    else:
        sys.stdout.write(visible(render_fleet_text(fleet, args.max_rows)))
    return exit_code(fleet)
