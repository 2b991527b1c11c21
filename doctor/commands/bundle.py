"""Write one archive a user can attach to a support ticket: the report, a Markdown summary, samples and the log analysis.

The bundle holds report.json (replayable: `v100-doctor --replay BUNDLE` opens the archive directly),
summary.md, samples.json and probe.json when the report has them, log-analysis.json and
log-analysis.md when --log is given, and MANIFEST.json listing the files and what was redacted.

By default every file is redacted: the home path and user name; this machine's host names, and in logs and
configs every host name of a site's own machine (under .corp, .internal, .lan, .local and the like, or a first
label with a digit: gpu-node-17.example.com); private, shared and link-local IP addresses (10.x, 172.16-31.x,
192.168.x, 100.64-127.x, 169.254.x); GPU serials and UUIDs; values of variables whose names look like secrets
(token, key, secret, password), secrets given by context ("using secret X") and common token shapes (hf_...,
sk-..., ghp_...). Kept: public services' host names (huggingface.co, pytorch.org, pypi.org, github.com, ...:
the fixes cite them), loopback and public IP addresses. What was replaced is counted in MANIFEST.json and printed;
the values themselves are not kept anywhere. --no-redact keeps everything as it is.

It exits 0 once the bundle is written, whatever the findings (`bundle && upload` works); their status is printed
on stderr and kept in MANIFEST.json ("findings"). A bad input (a --model that names nothing) still exits 3.

examples:
  v100-doctor bundle                                      this machine -> v100-doctor-bundle-<time>.tar.gz
  v100-doctor bundle --model /models/qwen27b --log run.log -o ticket.zip
  v100-doctor bundle --replay report.json -o ticket.tar.gz   bundle a saved report instead of this machine
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from doctor.cli.options import add_plan_arguments, encoding_name, path_arg, plan_from_args
from doctor.cli.output import exit_code_for
from doctor.commands.explain import explain
from doctor.facts.archive import ArchiveError, archive_kind, write_archive
from doctor.facts.host.identities import this_machine
from doctor.model.errors import UsageError
from doctor.model.exitcodes import ExitCode
from doctor.model.log_analysis import LogAnalysis, analysis_to_dict
from doctor.model.report import Report, report_to_dict
from doctor.model.serialize import strict_json, to_jsonable
from doctor.model.source import Origin, SavedFile, ThisMachine
from doctor.render.common import counts_line
from doctor.render.log_analysis import render_markdown as render_log_markdown
from doctor.render.markdown import render_markdown
from doctor.render.redact import Redactor, shareable, shareable_analysis
from doctor.run.run import Run


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", metavar="FILE", type=path_arg, help="the archive to write: NAME.tar.gz, NAME.tgz or NAME.zip "
                                                        "(default v100-doctor-bundle-<time>.tar.gz here)")
    p.add_argument("--log", metavar="FILE", type=path_arg, help="also explain this log (see `v100-doctor explain --help`) and add the analysis")
    p.add_argument("--encoding", metavar="NAME", type=encoding_name, help="the log's encoding when it is not UTF-8")
    p.add_argument("--replay", metavar="REPORT", type=path_arg, help="bundle the facts of a saved report, fixture or bundle instead of this machine")
    p.add_argument("--no-redact", action="store_true", help="keep home paths, user and host names, serials and secrets as they are")
    add_plan_arguments(p)


def run(args: argparse.Namespace) -> ExitCode:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    output = args.output or f"v100-doctor-bundle-{stamp}.tar.gz"
    if archive_kind(output) is None:
        raise UsageError(f"-o {output}: the bundle's name must end in .tar.gz, .tgz or .zip")
    if args.log and not Path(args.log).is_file() and args.log != "-":
        raise UsageError(f"--log {args.log}: no such file")
    report = _report(args)
    analysis = _analysis(args, report) if args.log else None
    redactor = None
    if not args.no_redact:  # the log's values first, then the report's, then the log again with both known
        redactor = Redactor(None if args.replay else this_machine())  # a replay: hide what it names, not this machine
        if analysis is not None:
            shareable_analysis(analysis, redactor=redactor)
        report = shareable(report, redactor=redactor)
        analysis = shareable_analysis(analysis, redactor=redactor) if analysis is not None else None
    files = _files(report, analysis)
    status = exit_code_for(report)  # the findings' verdict goes into the bundle and on stderr, not into the exit code
    files["MANIFEST.json"] = _manifest(files, redactor, report, status)
    folder = Path(output).name.removesuffix(".zip").removesuffix(".tgz").removesuffix(".tar.gz") or "v100-doctor-bundle"
    try:
        write_archive(output, folder, {name: _bytes(content) for name, content in files.items()})
    except ArchiveError as exc:
        raise UsageError(str(exc)) from None
    size = Path(output).stat().st_size
    print(f"v100-doctor: bundle written to {output} ({len(files)} files, {size / 1000:.1f} KB)", file=sys.stderr)
    if redactor is None:
        print("v100-doctor: NOT redacted (--no-redact): it holds your home path, user and host names, GPU serials "
              "and any secrets in the log", file=sys.stderr)
    else:
        print(f"v100-doctor: redacted: {redactor.describe()}", file=sys.stderr)
    print(f"v100-doctor: findings: {counts_line(report.all_findings())} (a diagnosis would exit {int(status)}: "
          f"{status.description}); the bundle was written, so it exits 0", file=sys.stderr)
    return ExitCode.USAGE if status is ExitCode.USAGE else ExitCode.OK  # a bad --model stays an input error


def _report(args: argparse.Namespace) -> Report:
    if not args.replay:
        print("v100-doctor: diagnosing this machine for the bundle …", file=sys.stderr)
    source = SavedFile(args.replay) if args.replay else ThisMachine()
    return Run(source, plan_overrides=lambda base: plan_from_args(args, base)).execute()


def _analysis(args: argparse.Namespace, report: Report) -> LogAnalysis:
    log_args = argparse.Namespace(**vars(args))
    log_args.log, log_args.no_live = args.log, False
    source = report.source.to_wire() if report.source.recorded else "live (this machine, as in report.json)"
    return explain(log_args, facts=report.facts, base_plan=report.plan, facts_source=source)


def _files(report: Report, analysis: LogAnalysis | None) -> dict[str, object]:
    files: dict[str, object] = {"report.json": report_to_dict(report), "summary.md": render_markdown(report)}
    if report.facts.samples is not None:
        files["samples.json"] = to_jsonable(report.facts.samples)
    if report.probe is not None:
        files["probe.json"] = to_jsonable(report.probe)
    if analysis is not None:
        files["log-analysis.json"] = analysis_to_dict(analysis)
        files["log-analysis.md"] = render_log_markdown(analysis)
    return files


def _manifest(files: dict[str, object], redactor: Redactor | None, report: Report, status: ExitCode) -> dict:
    return {
        "schema": "v100-doctor/bundle/1",
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "doctor_version": report.doctor_version,
        "source": "replay" if report.source.origin is Origin.REPLAY else report.source.to_wire(),
        "files": sorted(files),
        "findings": {"summary": counts_line(report.all_findings()), "exit_code": int(status),
                     "meaning": status.description},
        "redacted": redactor is not None,
        "redactions": dict(sorted(redactor.counts.items())) if redactor else {},
        "secret_named_variables": sorted(redactor.secret_names) if redactor else [],
        "note": ("home paths, user names, this machine's and the site's host names, private IP addresses, GPU "
                 "serials/UUIDs and secret values were replaced (public services' host names and public IP addresses "
                 "are kept); the values are "
                 "not kept anywhere" if redactor else "not redacted (--no-redact)"),
    }


def _bytes(content: object) -> bytes:
    if isinstance(content, str):
        return content.encode("utf-8")
    return (strict_json(content, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
