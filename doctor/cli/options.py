"""The command line's shared vocabulary: every subcommand's argument types, option groups and the plan they build.

One set of argparse types for every subcommand, so the same flag is checked the same way everywhere.
"""

from __future__ import annotations

import argparse
import codecs
import math
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

from doctor.cli.suggest import closest, unrecognized
from doctor.knowledge.kv_cache import CACHE_MODE_ORDER
from doctor.model.errors import UsageError
from doctor.model.exitcodes import EXIT_CODE_HELP
from doctor.model.ids import Engine
from doctor.version import __version__

if TYPE_CHECKING:
    from checks.base import Check
    from doctor.facts.python.torch_facts import TorchGatherer
    from doctor.model.engines import EngineLaunch, EngineServer
    from doctor.model.plan import Plan
    from doctor.model.source import Source
    from doctor.run.run import Run

# subcommand -> module with add_arguments(parser) and run(args) -> ExitCode
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("doctor.commands.explain", "name the pitfall behind each error in a pasted log, confirmed on this machine"),
    "bundle": ("doctor.commands.bundle", "write one redacted .tar.gz/.zip with everything a support ticket needs"),
    "watch": ("doctor.commands.watch", "sample a running server: throttling, offload, competing processes (read-only)"),
    "probe": ("doctor.commands.probe", "time the engine in force on your model (or --synthetic) and explain the gap to the ceiling"),
    "fleet": ("doctor.commands.fleet", "one table over many hosts' reports: shared causes, slow outliers (text, JSON, Markdown)"),
    "plan": ("doctor.commands.plan", "before the download: which quantized version, cache and context fit a card, how fast, how to get it"),
    "fit": ("doctor.commands.fit", "which catalogued model to run on this card: every model, version and cache ranked, offline"),
    "demo": ("doctor.commands.demo", "replay recorded example cases (the reference V100 journey, an H200), clearly labelled"),
}


DESCRIPTION = """\
Diagnose a quantized-LLM setup on an old data-centre GPU (V100 first; P100, P40, T4,
TITAN V, RTX 2080 Ti too). Ordered checks of the GPU, driver, CUDA/PyTorch pairing and
flash-attn; with --model, the model's format, kernel path, memory budget and decode
ceiling; runtime health (throttling, offload, other processes); then a timed ExLlamaV2
probe and a verdict that names what explains the gap to the ceiling. Every finding has
the numbers behind it and the exact fix. It never changes anything: it prints commands.
"""


EXAMPLES = """\
examples:
  v100-doctor                          diagnose this machine
  v100-doctor --json -o report.json    a report for a support ticket (stdout: JSON only; redacted)
  v100-doctor --markdown               paste into a GitHub issue
  v100-doctor --replay report.json     re-run today's checks on a saved report's facts
  v100-doctor --list-checks            what is checked, in order
  v100-doctor --check cuda-pairing -v  one check, with its evidence
  v100-doctor --model /data/qwen27b-exl2 --max-seq-len 8192 --cache-mode q8
                                       does it fit, how fast can it go, how fast does it go
  v100-doctor --target-gpu v100-pcie-16gb --model DIR --no-probe
                                       plan a V100 deployment from a laptop
  v100-doctor demo                     the recorded examples (no GPU needed)
"""


class Parser(argparse.ArgumentParser):
    subcommands: tuple[str, ...] = ()  # the top-level parser's: suggested for a misspelt first word

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]  # one signature, not argparse's overloads
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        argv = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(argv, namespace)
        if extras:  # a word no option took: say what it most likely was (doctor/cli/suggest.py)
            self.error(unrecognized(self.prog, argv, extras, self._option_string_actions, self.subcommands))
        return parsed

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """Every lower-case set of choices takes any case (--cache-mode Q8, --engine LLAMA.CPP), in every subcommand."""
        choices = action.choices
        if choices and isinstance(arg_string, str) and all(isinstance(c, str) and c == c.lower() for c in choices):
            arg_string = arg_string.lower()
        return super()._get_value(action, arg_string)

    def error(self, message: str) -> NoReturn:  # argparse would exit 2, which means "a check failed" here
        raise UsageError(f"{message} (see: {self.prog} --help)")


def lower(text: str) -> str:
    """A choice in any case (--cache-mode Q8, as TabbyAPI's config writes it)."""
    return text.lower()


# Every number and path the command line takes is checked here, once, for every subcommand: a value argparse
# accepts must be finite and plausible, so nothing downstream meets NaN, inf, 1e309 or an empty path.
MAX_COUNT = 10**9  # the largest whole number any flag is believed (tokens, runs, context length, pid)


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r} (not a finite number)")
    return value


def finite_float(low: float, high: float, what: str = "a number", unit: str = "") -> Callable[[str], float]:
    """An argparse type: a finite float in [low, high] (low excluded when it is 0: a zero share or timeout means nothing)."""
    def parse(text: str) -> float:
        value = _number(text, what)
        too_low = value <= low if low == 0 else value < low
        if too_low or value > high:
            bounds = f"more than 0 and at most {high:g}" if low == 0 else f"between {low:g} and {high:g}"
            raise argparse.ArgumentTypeError(f"must be {bounds}{unit}, got {text}")
        return value

    parse.__name__ = what.replace(" ", "_")  # argparse names the type in its message
    return parse


def bounded_int(low: int, high: int = MAX_COUNT, what: str = "a whole number") -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high]."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:,} and {high:,}, got {text}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


positive_int = bounded_int(1, what="a whole number")
gpu_index = bounded_int(0, 63, what="a GPU index")
seconds_timeout = finite_float(0, 3600, what="seconds", unit=" s")
gigabytes = finite_float(0, 4096, what="gigabytes", unit=" GB")
synthetic_gb = finite_float(0, 256, what="gigabytes", unit=" GB")
watch_seconds = finite_float(1, 3600, what="seconds", unit=" s")


def sample_hz(text: str) -> float:
    """watch --hz: the sampler's own bounds."""
    from doctor.facts.sampling.sampler import MAX_HZ, MIN_HZ  # lazy: the sampler's bounds: its NVML and psutil readers load only for watch

    return finite_float(MIN_HZ, MAX_HZ, what="samples per second")(text)


def path_arg(text: str) -> str:
    """A file or directory argument: not empty, no NUL (the kernel cannot take either)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty string")
    if "\0" in text:
        raise argparse.ArgumentTypeError("a path cannot contain a NUL byte")
    return text


def encoding_name(text: str) -> str:
    """A text codec Python knows (not a bytes-to-bytes one such as base64 or zlib)."""
    try:
        info = codecs.lookup(text)
    except (LookupError, ValueError):
        raise argparse.ArgumentTypeError(f"unknown encoding {text!r} (e.g. utf-8, utf-16, gbk, cp1252, latin-1)") from None
    if not getattr(info, "_is_text_encoding", True):
        raise argparse.ArgumentTypeError(f"{text!r} is not a text encoding")
    return info.name


def target_gpu(text: str) -> str:
    """A --target-gpu key from the knowledge base (an NVML-style name is accepted too)."""
    import difflib  # lazy: --target-gpu only; --version and --help stay at the parser

    from doctor.knowledge.gpus import GPUS, spec_for_key, spec_for_name  # lazy: the GPU table (7 ms); --version and --help stay at the parser

    spec = spec_for_key(text) or spec_for_name(text)
    if spec is None:
        close = [g.key for g in GPUS if text.lower() in g.key] or difflib.get_close_matches(text.lower(), [g.key for g in GPUS], n=2)
        hint = f"; did you mean {' or '.join(close[:4])}?" if close else ""
        raise argparse.ArgumentTypeError(f"unknown GPU {text!r}{hint} (v100-doctor --list-gpus shows the known ones)")
    return spec.key


def gpu_split(text: str) -> tuple[float, ...]:
    """ExLlamaV2's gpu_split: finite, positive GB per GPU, at most 64 GPUs."""
    parts = text.split(",")
    if len(parts) > 64:
        raise argparse.ArgumentTypeError(f"at most 64 GPUs, got {len(parts)} shares")
    try:
        return tuple(gigabytes(p) for p in parts)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected GB per GPU like 16 or 10,14; got {text!r}: {exc}") from None


ENGINE_CHOICES = [str(e) for e in Engine]  # one per package in doctor/engines/ (doctor/model/ids.py Engine)


def engine_config(text: str) -> EngineLaunch:
    """--engine-config: read and parsed while the arguments are, so a bad one is a usage error (exit 3)."""
    from doctor.facts.engines.launch import LaunchError, read_engine_config  # lazy: read only when --engine-config is given

    try:
        return read_engine_config(path_arg(text) if "\n" not in text else text)
    except LaunchError as exc:  # argparse says "argument --engine-config:" itself
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--engine-config").lstrip(": ")) from None


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("deployment plan (what you intend to run)")
    g.add_argument("--model", metavar="PATH", action="append", type=path_arg,
                   help="model directory (EXL2, GPTQ, AWQ, FP16/BF16, GGUF), or a Hugging Face id org/name[@revision] "
                        "(from the HF cache; not cached: planned from its config.json and headers); quote paths with spaces")
    g.add_argument("--tabby-config", metavar="FILE", type=path_arg,
                   help="TabbyAPI's config.yml: model, max_seq_len, cache_mode/cache_size, gpu_split and tensor_parallel "
                        "from there (flags given beside it win)")
    g.add_argument("--max-seq-len", type=positive_int, metavar="N", help="context length you will load with (ExLlamaV2 max_seq_len)")
    g.add_argument("--cache-mode", type=lower, choices=list(CACHE_MODE_ORDER), default=None,
                   help="KV cache mode, in any case (default fp16)")
    g.add_argument("--gpu-split", type=gpu_split, metavar="GB[,GB...]", help="ExLlamaV2 gpu_split in GB per GPU")
    g.add_argument("--gpu", type=gpu_index, action="append", default=None, metavar="INDEX", dest="gpu_index",
                   help="judge only this GPU, by NVML/nvidia-smi index (repeatable; default: every GPU)")
    g.add_argument("--tensor-parallel", action="store_true", help="the plan shards every layer over the GPUs (needs P2P)")
    g.add_argument("--target-gpu", metavar="NAME", type=target_gpu, help="plan for a card you do not have (e.g. v100-pcie-16gb); see --list-gpus")
    g.add_argument("--engine", choices=ENGINE_CHOICES, default=None,
                   help="the engine you run (default: from the model's format and what is installed; tabbyapi = its "
                        "EXL3-only main branch, whose exl2-checkpoint branch is exllamav2)")
    g.add_argument("--engine-config", metavar="CMDLINE|FILE", type=engine_config,
                   help="how you launch it: a llama-server command line (quoted) or the output of `ollama show MODEL "
                        "--parameters`, as text or a file; GPU layers, context, K/V cache types, flash attention, split")


def add_engine_url_argument(p: argparse.ArgumentParser) -> None:
    """--engine-url, on the main command and `probe`: a running engine server, timed through its own API."""
    p.add_argument("--engine-url", metavar="URL", type=engine_url,
                   help="time a running engine server through its API: Ollama (http://127.0.0.1:11434) or an "
                        "OpenAI-compatible one (llama-server, vLLM, TabbyAPI, LM Studio); its engine is the one judged "
                        "(`probe --streams` drives it with concurrent streams)")


def engine_url(text: str) -> str:
    from doctor.probe.served.identify import url_problem  # lazy: the server probe loads only with --engine-url

    problem = url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text.strip()


def engine_server(args: argparse.Namespace) -> EngineServer | None:
    """The server at --engine-url as it answered, asked once per run (the plan is built more than once)."""
    url = getattr(args, "engine_url", None)
    if not url:
        return None
    known_server = getattr(args, "_engine_server", None)
    if known_server is None:
        from doctor.probe.served.identify import identify  # lazy: the HTTP client only with --engine-url

        known_server = identify(url)
        args._engine_server = known_server
    return known_server


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    fmt = g.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the JSON report only (schema v100-doctor/report/1)")
    fmt.add_argument("--markdown", action="store_true", help="print Markdown for a GitHub issue")
    g.add_argument("-o", "--output", metavar="FILE", type=path_arg, help="also write the JSON report to FILE (written even when the run is cut short)")
    g.add_argument("--prometheus", metavar="FILE", type=path_arg,
                   help="also write node_exporter textfile metrics to FILE (e.g. /var/lib/node_exporter/v100-doctor.prom), atomically")
    g.add_argument("--no-redact", action="store_true",
                   help="keep hostname, user name, home path, GPU serials/UUIDs and MAC addresses in --json, -o, "
                        "--markdown and the TUI's save (redacted by default)")
    g.add_argument("-v", "--verbose", action="store_true", help="show every check's evidence")
    g.add_argument("--no-tui", action="store_true", help="plain text even on a terminal")


def build_parser() -> Parser:
    p = Parser(prog="v100-doctor", description=DESCRIPTION, epilog=EXAMPLES + "\n" + EXIT_CODE_HELP + _subcommand_help(),
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"v100-doctor {__version__}")
    add_output_arguments(p)
    add_plan_arguments(p)
    add_engine_url_argument(p)
    g = p.add_argument_group("what to run")
    g.add_argument("--replay", metavar="FILE", type=path_arg, help="re-run today's checks on the facts saved in a report or fixture")
    g.add_argument("--list-checks", action="store_true", help="list the checks in the order they run, then exit")
    g.add_argument("--list-gpus", action="store_true", help="list the GPUs the knowledge base knows (for --target-gpu), then exit")
    g.add_argument("--check", action="append", metavar="ID", dest="only", help="run only this check (repeatable)")
    g.add_argument("--no-probe", action="store_true", help="skip the timed ExLlamaV2 generation")
    g.add_argument("--fresh", action="store_true", help="import torch again instead of using its cached static facts")
    g.add_argument("--no-cache", action="store_true",
                   help="neither read nor write ~/.cache/v100-doctor (the only file the doctor ever writes unasked)")
    g.add_argument("--torch-timeout", type=seconds_timeout, default=20.0, metavar="S", help="give up on torch's import/CUDA init after S seconds (default 20)")
    g.add_argument("--nvml-timeout", type=seconds_timeout, default=15.0, metavar="S",
                   help="give up on the NVIDIA driver's NVML (read in a child process) after S seconds (default 15)")
    p.subcommands = tuple(SUBCOMMANDS)
    p.usage = usage_with_subcommands(p)
    return p


def usage_with_subcommands(p: Parser) -> str:
    """The usage line names the subcommands first, then the options of a plain run (argparse's own wrapping)."""
    options = p.format_usage().removeprefix("usage: ").rstrip()
    return f"{p.prog} {{{','.join(SUBCOMMANDS)}}} ...\n       {options}"


def _subcommand_help() -> str:
    if not SUBCOMMANDS:
        return ""
    rows = "\n".join(f"  {name:<10} {blurb}" for name, (_, blurb) in SUBCOMMANDS.items())
    return f"\n\nsubcommands (v100-doctor SUBCOMMAND --help):\n{rows}"


def plan_from_args(args: argparse.Namespace, base: Plan | None = None) -> Plan:
    from doctor.model.plan import Plan  # lazy: the plan pulls the model's serialisation (4 ms); --version and --help stay at the parser

    plan = _with_tabby_config(args, base or Plan())
    changes: dict[str, Any] = {}
    if getattr(args, "model", None):
        changes["model_path"] = one_model(args.model)
        changes["model_path_parts"] = (changes["model_path"],)
        if hub := _hub_model(args, changes["model_path"]):  # org/name[@rev]: the HF cache's folder, or the id
            changes["model_path"], changes["model_path_parts"] = hub, (hub,)
    for name in ("max_seq_len", "cache_mode", "gpu_split", "target_gpu"):
        if getattr(args, name, None) is not None:
            changes[name] = getattr(args, name)
    chosen = getattr(args, "gpu_index", None)
    if chosen is not None:  # an explicit --gpu 0 counts; repeated: those GPUs, in the order given, once each
        chosen = tuple(dict.fromkeys([chosen] if isinstance(chosen, int) else chosen))
        changes.update(gpu_index=chosen[0], gpu_indices=chosen)
    if getattr(args, "tensor_parallel", False):
        changes["tensor_parallel"] = True
    launch = getattr(args, "engine_config", None)
    if launch is not None:
        changes["engine_launch"] = launch
        if launch.model_path and "model_path" not in changes and not plan.model_path:
            from doctor.model.plan import MODEL_PATH_FROM  # lazy: as Plan above

            changes.update(model_path=launch.model_path, model_path_parts=(launch.model_path,),
                           model_path_from=MODEL_PATH_FROM["engine"])
    if getattr(args, "engine", None):
        from doctor.model.ids import Engine  # lazy: ids load with the plan, after the parser

        changes["engine"] = Engine(args.engine)
    server = engine_server(args)
    if server is not None:
        changes["engine_server"] = server
    return replace(plan, **changes)


def one_model(paths: list[str] | None) -> str | None:
    """--model takes exactly one path (a path with a space is quoted); given twice, the run would judge one of them
    without saying which, so it is a usage error naming both."""
    if paths and len(paths) > 1:
        raise UsageError(f"--model was given {len(paths)} times ({', '.join(map(repr, paths))}): one model per run")
    return paths[0] if paths else None


def _with_tabby_config(args: argparse.Namespace, plan: Plan) -> Plan:
    """--tabby-config FILE under the flags: read once per run, and said on stderr how it was read."""
    path = getattr(args, "tabby_config", None)
    if not path:
        return plan
    from doctor.facts.engines.tabby_config import describe, read_tabby_config, tabby_plan  # lazy: PyYAML loads only for --tabby-config
    from doctor.render.untrusted import visible  # lazy: with the TabbyAPI reader, after the parser

    settings = getattr(args, "tabby_settings", None)
    if settings is None:
        settings = args.tabby_settings = read_tabby_config(path)
        print(visible(f"v100-doctor: TabbyAPI config {path}: {describe(settings)}"), file=sys.stderr)
    return tabby_plan(settings, plan)


def _hub_model(args: argparse.Namespace, text: str) -> str | None:
    """--model org/name[@revision] (doctor/facts/hub/model_id.py): resolved once per run, and said on stderr how."""
    resolved = getattr(args, "hub_resolved", None)
    if resolved is None or resolved[0] != text:
        from doctor.facts.hub.model_id import resolve  # lazy: huggingface_hub loads only for --model org/name

        found = resolve(text)
        args.hub_resolved = resolved = (text, found[0] if found else None)
        if found:
            print(f"v100-doctor: {found[1]}", file=sys.stderr)
    return resolved[1]


def source_from_args(args: argparse.Namespace) -> Source:
    """The Source the flags name: --replay FILE, --target-gpu KEY (this host, that card), or this machine."""
    from doctor.model.source import BundledExample, SavedFile, TargetCard, ThisMachine  # lazy: --version and --help stay at the parser

    if getattr(args, "replay", None):
        if not os.path.lexists(args.replay):  # an example's name where a file is expected: `demo NAME` runs the same
            from doctor.facts.examples import example_names  # lazy: the examples' folder is listed only for a name that is no file

            if args.replay in example_names():
                return BundledExample(args.replay)
            if guess := closest(args.replay, example_names()):
                raise UsageError(f"{args.replay}: no such file; did you mean the recorded example {guess}? "
                                 f"(v100-doctor demo {guess}, or --replay {guess})")
        return SavedFile(args.replay)
    if getattr(args, "target_gpu", None):
        return TargetCard(args.target_gpu)
    return ThisMachine()


def run_from_args(args: argparse.Namespace, checks: tuple[Check, ...] | None = None,
                  torch_gatherer: TorchGatherer | None = None, probe: bool = False) -> Run:
    """The one Run the flags ask for: its source, the flags over the source's plan, the checks, how to gather,
    and (probe=True, the plain CLI) the timed probe after the checks of a live run with --model."""
    from doctor.facts.source import GatherOptions  # lazy: the run and its gatherers load when a run is built, not for --version or --help
    from doctor.run.run import ProbeRequest, Run  # lazy: the run and its gatherers load when a run is built, not for --version or --help

    options = GatherOptions(torch_timeout_s=getattr(args, "torch_timeout", 20.0), fresh=getattr(args, "fresh", False),
                            nvml_timeout_s=getattr(args, "nvml_timeout", 15.0),
                            use_cache=not getattr(args, "no_cache", False), torch_gatherer=torch_gatherer)
    return Run(source_from_args(args), plan_overrides=lambda base: plan_from_args(args, base), checks=checks,
               options=options, probe=ProbeRequest() if probe else None)


def select_checks(only: list[str] | None) -> tuple[Check, ...] | None:
    from checks.registry import all_checks, check_ids  # lazy: the checks load after the torch child started (main.start_torch_early), never for --help

    if not only:
        return None  # the pipeline picks the checks that apply to the plan (model checks only with --model)
    unknown = [c for c in only if c not in check_ids()]
    if unknown:
        raise UsageError(f"unknown check id {', '.join(unknown)}; known: {', '.join(check_ids())}")
    return tuple(c for c in all_checks() if c.id in only)


def wants_tui(args: argparse.Namespace) -> bool:
    """The TUI on an interactive terminal; plain output for pipes, files, --json, --markdown or --no-tui."""
    if args.json or args.markdown or args.no_tui or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty() and sys.stdin.isatty()
