"""--model that names no model is refused first: the one-line error and exit 3 before the machine is read, a
screen opens or a report is printed (an empty or unrelated directory, a config.json that is no model's, a plain
file, a .gguf that is not GGUF, a path that does not exist, a path the shell split).

Whether it names a model is the `model-path` check's own judgement (its `input_error`), made on the model's
facts alone, so the early refusal and a report's finding can never disagree. -o still gets a partial report,
as after an interrupt: a replay's recorded machine with today's checks, or, live, the model's facts with every
fact of this machine unknown (the run stopped before reading it).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from doctor.cli.options import plan_from_args, select_checks, source_from_args
from doctor.cli.output import write_report_file
from doctor.model.errors import UsageError
from doctor.model.ids import CheckId

if TYPE_CHECKING:
    from doctor.facts.source import Resolved
    from doctor.model.model_dir import ModelFacts
    from doctor.model.plan import Plan
    from doctor.model.report import Report

NOT_READ = "not gathered: --model names no model, so the run stopped before reading this machine"


def refuse_non_model(args: argparse.Namespace, plan: Plan | None = None) -> None:
    """UsageError (after writing -o, if asked) when --model names no model the run could judge. The main command
    and `probe` both ask, so neither reads the machine (nor loads an engine) for a path that names no model."""
    if not any(getattr(args, name, None) for name in ("model", "engine_config", "tabby_config")):
        return  # no model named: nothing to read first
    only = getattr(args, "only", None)  # `probe` has no --check
    if only and CheckId.MODEL_PATH not in only:
        return  # checks asked for by id that do not judge the model
    if plan is None:
        plan = plan_from_args(args)  # an org/name is resolved (or refused: unknown, offline) here, once per run
    from doctor.facts.hub.model_id import hub_id  # lazy: the model's readers load only with --model
    from doctor.facts.modeldir.directory import gather_model  # lazy: as above

    if not plan.model_path or hub_id(plan.model_path) is not None:
        return  # no model after all, or a Hub id not in the cache: its headers are read once, by the run
    model = gather_model(plan.model_path, plan.model_path_parts)
    error = model_input_error(plan, model)
    if error is None:
        return
    from doctor.facts.source import is_live, resolve  # lazy: a replay is read here only to write -o or keep its record

    source = source_from_args(args)
    resolved = None if is_live(source) else resolve(source)
    if resolved is not None and resolved.facts.model is not None and resolved.facts.model.path == plan.model_path:
        return  # a replay keeps the model facts it recorded: the report shows what they say
    if args.output:
        write_report_file(partial_report(args, model, error, resolved), args.output, redact=not args.no_redact)
    raise UsageError(error)


def model_input_error(plan: Plan, model: ModelFacts) -> str | None:
    """The model-path check's one-line error and fix for these facts, or None when the path names a model."""
    from checks.base import CheckContext  # lazy: the one check, after the parser (--help never loads it)
    from checks.model.path import run as judge_model_path  # lazy: as above
    from doctor.model.facts import Facts, HostFacts, NvmlFacts, PythonFacts  # lazy: as above

    alone = Facts(gathered_at="", nvml=NvmlFacts(False, NOT_READ), python=PythonFacts(sys.version.split()[0], sys.executable),
                  host=HostFacts(), model=model)
    finding = judge_model_path(CheckContext(alone, plan))
    error = finding.evidence.get("input_error")
    if not error:
        return None
    return f"{error}; {finding.fix[:1].lower()}{finding.fix[1:]}" if finding.fix else str(error)


def partial_report(args: argparse.Namespace, model: ModelFacts, error: str, resolved: Resolved | None) -> Report:
    """What -o gets when the run stops at --model: the checks on what was read, marked as a partial report."""
    from doctor.run.pipeline import diagnose  # lazy: the checks load only to write this -o

    checks = select_checks(getattr(args, "only", None))
    if resolved is not None:  # a replay: the recorded machine, judged today, beside the model read here
        report = diagnose(plan_from_args(args, resolved.plan), replace(resolved.facts, model=model),
                          source=resolved.provenance, note=resolved.note, checks=checks)
    else:
        from doctor.facts.gather import partial_facts  # lazy: a live run's facts, none of them read
        from doctor.facts.source import base_plan  # lazy: as above

        report = diagnose(plan_from_args(args, base_plan(source_from_args(args))),
                          replace(partial_facts({}, NOT_READ), model=model), checks=checks)
    unread = "" if resolved is not None else "; nothing of this machine was read"
    return replace(report, errors=(f"the run stopped at --model, which names no model (no probe{unread}): {error}",))
