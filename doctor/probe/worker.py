"""The probe's child process: import (and maybe JIT-build) ExLlamaV2, load, warm up, time, report.

Run as `python -m doctor.probe.worker` with a ProbeSpec as JSON on stdin. The protocol goes to
the real stdout; everything else anything prints (ExLlamaV2's console messages, torch warnings,
the JIT build) is moved to stderr, which the runner keeps as the log. Phases, in order:
import (build) -> bandwidth -> load -> prefill -> warmup -> decode [-> reload -> warmup -> decode].
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from doctor.facts.engines.build_cache import has_prebuilt_extension, inspect_cache
from doctor.facts.modeldir.act_order import act_order_in
from doctor.knowledge.arithmetic.model_bytes import layer_linears
from doctor.knowledge.engines import JIT_UNITS
from doctor.knowledge.kv_cache import KV_CACHE_MODES
from doctor.knowledge.messages import PROBE_ENGINE_INSTALL
from doctor.knowledge.signatures import probe_failure_kind
from doctor.model.ids import FailureKind
from doctor.model.probe_results import BandwidthResult, DecodePass, DecodeRun, MemoryUse, ModelShape, PrefillResult, ProbeResult
from doctor.model.serialize import to_jsonable
from doctor.model.units import MIB
from doctor.model.unknown import Unknown
from doctor.probe import errors
from doctor.probe.bandwidth import measure_copy_bandwidth
from doctor.probe.hoststate import first_use, judge, settled_window, unsettled, wants_second_pass
from doctor.probe.protocol import PROTOCOL, Emitter, ProbeSpec, spec_from_json
from doctor.probe.timing import Decoder, time_prefill

PROMPT_TEXT = (
    "A deployment note for an old data-centre GPU. The card has sixteen gigabytes of HBM2 and about nine hundred "
    "gigabytes per second of memory bandwidth, so a quantized model of twelve gigabytes can decode at most about "
    "seventy tokens per second. Every decoded token reads all the weights once, plus the keys and values of the "
    "context. "
)
DEFAULT_MAX_SEQ_LEN = 4096
FIX_WINDOW_TOKENS = 64  # decode steps at fresh lengths with the first-use fix applied


class Worker:
    def __init__(self, spec: ProbeSpec, em: Emitter):
        self.spec, self.em = spec, em
        self.clock0 = time.perf_counter()
        self.phase_s: dict[str, float] = {}
        self.warnings: list[str] = []
        self._phase = "start"
        self._phase_t = self.clock0

    # ---- phases -------------------------------------------------------------------------------------
    def phase(self, name: str, message: str, total: float | None = None, **extra: Any) -> None:
        now = time.perf_counter()
        self.phase_s[self._phase] = round(self.phase_s.get(self._phase, 0.0) + now - self._phase_t, 3)
        self._phase, self._phase_t = name, now
        self.em.phase(name, message, total, **extra)

    def fail(self, kind: FailureKind, message: str, detail: str = "") -> errors.ProbeFailure:
        return errors.ProbeFailure(kind, self._phase, message, detail)

    # ---- import / build -----------------------------------------------------------------------------
    def import_engine(self) -> tuple[Any, Any]:
        self.phase("import", "importing torch and ExLlamaV2")
        for name, why in (("torch", "pip install torch (a CUDA build for this card)"),
                          ("exllamav2", PROBE_ENGINE_INSTALL),
                          ("tokenizers", f"{PROBE_ENGINE_INSTALL} (ExLlamaV2 0.3 needs tokenizers but does not declare it)")):
            if importlib.util.find_spec(name) is None:
                raise self.fail(FailureKind.NOT_INSTALLED, f"{name} is not installed in {sys.executable}: {why}")
        import torch  # lazy: imported after find_spec, so a missing torch becomes a finding

        if not torch.cuda.is_available():
            raise self.fail(FailureKind.NO_CUDA, f"torch {torch.__version__} sees no CUDA device (CUDA build: {torch.version.cuda or 'none'})")
        stop = threading.Event()
        if not has_prebuilt_extension():
            cache = inspect_cache(torch.version.cuda)
            if cache.stale_lock:
                assert cache.lock_age_s is not None  # a stale lock has an age
                raise self.fail(FailureKind.JIT_BUILD, f"a stale build lock ({cache.build_dir}/lock, {cache.lock_age_s / 60:.0f} min old) "
                                f"would make `import exllamav2` wait forever; delete it: rm {cache.build_dir}/lock")
            if not cache.built:
                self.phase("build", f"JIT-building ExLlamaV2's CUDA extension (first use only, about 2-3 minutes; "
                           f"cached afterwards in {cache.root})", JIT_UNITS, build_dir=cache.build_dir)
                threading.Thread(target=self._watch_build, args=(torch.version.cuda, stop), daemon=True).start()
        try:
            import exllamav2  # lazy: imported after find_spec, so a missing exllamav2 becomes a finding
        except Exception as exc:  # noqa: BLE001 - a build failure is a RuntimeError with the compiler output
            text = f"{type(exc).__name__}: {exc}"
            kind = probe_failure_kind(text)
            raise self.fail(kind if kind != FailureKind.INTERNAL else FailureKind.JIT_BUILD, f"import exllamav2 failed: {text.splitlines()[0][:300]}",
                            errors.tail(text + "\n" + traceback.format_exc())) from None
        finally:
            stop.set()
        return torch, exllamav2

    def _watch_build(self, torch_cuda: str, stop: threading.Event) -> None:
        last = -1
        while not stop.wait(1.0):
            done = inspect_cache(torch_cuda).objects
            if done != last:
                self.em.progress("build", min(done, JIT_UNITS), JIT_UNITS, "objects", f"{done} of {JIT_UNITS} units compiled")
                last = done

    # ---- bandwidth ----------------------------------------------------------------------------------
    def bandwidth(self, torch: Any) -> BandwidthResult | None:
        if not self.spec.measure_bandwidth:
            return None

        self.phase("bandwidth", "measuring the card's memory bandwidth (device-to-device copy)")
        return measure_copy_bandwidth(torch, 0)

    # ---- load ---------------------------------------------------------------------------------------
    def load(self, torch: Any, exl: Any, config: Any, again: bool = False,
             cache_len: int | None = None) -> tuple[Any, Any, float]:
        """The model and its cache of `cache_len` tokens (default: one sequence, config.max_seq_len)."""
        spec = self.spec
        cache_len = cache_len or config.max_seq_len
        self.phase("reload" if again else "load", ("independent second load of" if again else "loading") +
                   f" {spec.model_path} (max_seq_len {config.max_seq_len}, {spec.cache_mode} cache, "
                   f"{'gpu_split ' + ','.join(f'{g:g}' for g in spec.gpu_split) if spec.gpu_split else 'autosplit'})")
        cache_cls = getattr(exl, KV_CACHE_MODES[spec.cache_mode].exllamav2_class)
        t0 = time.perf_counter()
        progress = lambda done, total: self.em.progress(self._phase, done, total, "modules")
        try:
            model = exl.ExLlamaV2(config)
            if spec.gpu_split:
                model.load(list(spec.gpu_split), callback=progress)
                cache = cache_cls(model, max_seq_len=cache_len)
            else:
                cache = cache_cls(model, max_seq_len=cache_len, lazy=True)
                model.load_autosplit(cache, callback=progress)
        except Exception as exc:  # noqa: BLE001
            raise self._load_failure(exc) from None
        torch.cuda.synchronize()
        return model, cache, time.perf_counter() - t0

    def _load_failure(self, exc: BaseException) -> errors.ProbeFailure:
        text = f"{type(exc).__name__}: {exc}"
        kind = probe_failure_kind(text)
        detail = errors.tail(traceback.format_exc())
        if kind == FailureKind.OOM:
            return self.fail(FailureKind.OOM, f"out of GPU memory while loading: {text.splitlines()[0][:300]}", detail)
        if kind == FailureKind.INTERNAL:
            kind = FailureKind.MODEL_LOAD
        return self.fail(kind, f"ExLlamaV2 could not load the model: {text.splitlines()[0][:300]}", detail)

    def config(self, exl: Any) -> Any:
        try:
            config = exl.ExLlamaV2Config(self.spec.model_path)
        except Exception as exc:  # noqa: BLE001
            raise self._load_failure(exc) from None
        native = int(config.max_seq_len)
        if self.spec.max_seq_len:
            config.max_seq_len = self.spec.max_seq_len
            self.max_seq_len_source = "--max-seq-len"
        else:
            config.max_seq_len = min(native, DEFAULT_MAX_SEQ_LEN)
            self.max_seq_len_source = (f"default {config.max_seq_len}: --max-seq-len was not given "
                                       f"(ExLlamaV2 itself would use the model's {native})")
            if native > DEFAULT_MAX_SEQ_LEN:
                self.warnings.append(self.max_seq_len_source)
        need = self.spec.prompt_tokens + 2
        if config.max_seq_len < need:
            raise self.fail(FailureKind.BAD_SPEC, f"max_seq_len {config.max_seq_len} is shorter than the probe's prompt ({self.spec.prompt_tokens} tokens)")
        return config

    # ---- measure ------------------------------------------------------------------------------------
    def prompt(self, torch: Any, exl: Any, config: Any) -> Any:
        tok = exl.ExLlamaV2Tokenizer(config)
        ids = tok.encode(PROMPT_TEXT)
        reps = self.spec.prompt_tokens // max(ids.shape[-1], 1) + 1
        ids = torch.cat([ids] * reps, dim=-1)[:, : self.spec.prompt_tokens]
        return ids.clamp(0, min(tok.get_vocab_size(), config.vocab_size) - 1)

    def decode_pass(self, torch: Any, model: Any, cache: Any, ids: Any, index: int, load_s: float) -> DecodePass:
        spec = self.spec
        with torch.inference_mode():
            if index == 1:
                self.phase("prefill", f"prefill: {ids.shape[-1]} prompt tokens, 3 times")
                self.prefill = time_prefill(torch, model, cache, ids)
            else:
                time_prefill(torch, model, cache, ids, repeats=1)
            dec = Decoder(torch, model, cache, ids, self.clock0)
            self.phase("warmup", f"warm-up: {spec.warmup_tokens} decode tokens (ExLlamaV2 autotunes for 200 calls "
                       "and captures CUDA graphs on the 205th)", spec.warmup_tokens)
            def chunk(done: int, tps: float) -> None:
                self.em.progress("warmup", done, spec.warmup_tokens, "tokens")
                self.em.emit("sample", phase="warmup", tok_s=round(tps, 2), **{"pass": index})

            warm_s, warm_cpu, warm_faults = dec.steps(spec.warmup_tokens, every=32, on_chunk=chunk)
            self.phase("decode", f"timed decode: {spec.runs} runs of {spec.tokens} tokens (pass {index})",
                       spec.runs * spec.tokens)
            runs: list[DecodeRun] = []
            window, t0 = 0, time.perf_counter()
            while len(runs) < spec.runs or (not window and len(runs) < spec.max_runs
                                             and time.perf_counter() - t0 < spec.settle_budget_s):
                run = dec.timed_run(len(runs) + 1, spec.tokens)
                runs.append(run)
                window = settled_window(runs, spec.runs, spec.settle_pct)
                self.em.emit("sample", phase="decode", run=run.run, tokens=run.tokens, tok_s=run.tok_s, cpu_wall=run.cpu_wall,
                             faults_per_token=round(run.faults_per_token, 1), steal_pct=run.steal_pct, **{"pass": index})
                self.em.progress("decode", min(len(runs), spec.runs) * spec.tokens, spec.runs * spec.tokens, "tokens")
            p = DecodePass(index=index, load_s=round(load_s, 3), warmup_tokens=spec.warmup_tokens,
                           warmup_s=round(warm_s, 3), runs=tuple(runs), warmup_cpu_s=round(warm_cpu, 3),
                           warmup_faults=warm_faults, window=window or spec.runs,
                           unsettled="" if window else unsettled(tuple(runs), spec.runs, spec.settle_pct, spec.settle_budget_s))
            return self.measure_fix(torch, dec, p)

    def measure_fix(self, torch: Any, dec: Decoder, p: DecodePass) -> DecodePass:
        """A first-use cost seen in the warm-up: time the known fix at lengths never met, rather than promising
        the runs' speed (cuDNN SDPA's per-length graph builds, doctor/knowledge/engines.py)."""
        if not first_use(p) or not hasattr(torch.backends.cuda, "enable_cudnn_sdp"):
            return p
        was = torch.backends.cuda.cudnn_sdp_enabled()
        torch.backends.cuda.enable_cudnn_sdp(False)
        try:
            tok_s = dec.fresh_lengths(FIX_WINDOW_TOKENS)
        finally:
            torch.backends.cuda.enable_cudnn_sdp(was)
        return replace(p, fix_tok_s=round(tok_s, 2), fix_what="torch.backends.cuda.enable_cudnn_sdp(False)")

    def outcome(self) -> tuple[str, Any]:
        """(one line, the result) of the whole probe: what main() sends as the result event."""
        result = self.run()
        return f"{result.decode_tok_s:.1f} tok/s decode, {result.prefill.tok_s:.0f} tok/s prefill", result

    def run(self) -> ProbeResult:
        torch, exl = self.import_engine()
        if self.spec.cache_mode not in KV_CACHE_MODES:
            raise self.fail(FailureKind.BAD_SPEC, f"unknown cache mode {self.spec.cache_mode!r}")
        if not Path(self.spec.model_path).is_dir():
            raise self.fail(FailureKind.MODEL_LOAD, f"{self.spec.model_path}: not a directory")
        bw = self.bandwidth(torch)
        config = self.config(exl)
        torch.cuda.reset_peak_memory_stats()
        model, cache, load_s = self.load(torch, exl, config)
        ids = self.prompt(torch, exl, config)
        facts = self.describe(torch, exl, config, model, cache)
        first = self.decode_pass(torch, model, cache, ids, 1, load_s)
        second = None
        if wants_second_pass(self.spec.second_pass, first):
            self.phase("unload", "unloading for an independent second load")  # ends the decode window on the parent's clock
            model.unload()
            del model, cache
            gc.collect()
            torch.cuda.empty_cache()
            model, cache, load2 = self.load(torch, exl, config, again=True)
            second = self.decode_pass(torch, model, cache, ids, 2, load2)
        passes, reported = judge(first, second)
        shape, memory, attention = facts
        memory = replace(memory, peak_allocated_mib=round(sum(
            torch.cuda.max_memory_allocated(d) for d in range(torch.cuda.device_count())) / MIB, 1))
        self.phase("done", "probe finished")
        props = torch.cuda.get_device_properties(0)
        return ProbeResult(
            engine=f"exllamav2 {getattr(exl, '__version__', '?')}", torch=str(torch.__version__),
            device_name=props.name, compute_capability=f"{props.major}.{props.minor}", model_path=self.spec.model_path,
            shape=shape, memory=memory, max_seq_len=int(config.max_seq_len), max_seq_len_source=self.max_seq_len_source,
            cache_mode=self.spec.cache_mode,
            split="gpu_split " + ",".join(f"{g:g}" for g in self.spec.gpu_split) if self.spec.gpu_split else "autosplit",
            attention=attention, prompt_tokens=int(ids.shape[-1]),
            prefill=PrefillResult(tokens=int(ids.shape[-1]) - 1, seconds=self.prefill),
            passes=passes, reported_pass=reported, bandwidth=bw, synthetic=self._synthetic_label(),
            phase_seconds=self.phase_s, warnings=tuple(self.warnings))

    # ---- what was loaded ----------------------------------------------------------------------------
    def describe(self, torch: Any, exl: Any, config: Any, model: Any, cache: Any) -> tuple[ModelShape, MemoryUse, str]:
        keys = list(config.tensor_file_map)
        fmt = "exl2" if any(k.endswith(".q_weight") for k in keys) else "gptq" if any(k.endswith(".qweight") for k in keys) else "fp16"
        gpu = cpu = 0
        layer_bytes = 0
        for m in model.modules:
            size = int(m.weight_footprint())
            dev = m.device_idx if isinstance(m.device_idx, int) else 0
            if dev is not None and dev >= 0:
                gpu += size
            else:
                cpu += size
            if type(m).__name__ in ("ExLlamaV2Attention", "ExLlamaV2MLP", "ExLlamaV2ParallelDecoder"):
                layer_bytes += size
        params = _layer_params(config) * config.num_hidden_layers
        bpw = _quant_bits(self.spec.model_path) if fmt == "exl2" else None
        shape = ModelShape(architecture=str(config.architecture), format=fmt, layers=config.num_hidden_layers,
                           hidden_size=config.hidden_size, kv_heads=config.num_key_value_heads, head_dim=config.head_dim,
                           vocab_size=config.vocab_size,
                           bpw=round(bpw if bpw else 8.0 * layer_bytes / params, 3) if params else Unknown("no layer parameters"),
                           act_order=_act_order(self.spec.model_path, keys) if fmt == "gptq" else Unknown("not GPTQ"),
                           quantized_params=params)
        memory = MemoryUse(weight_bytes_gpu=gpu, weight_bytes_cpu=cpu, cache_bytes=int(sum(cache.footprint())),
                           kv_bytes_per_token=KV_CACHE_MODES[self.spec.cache_mode].bytes_per_token(
                               config.num_hidden_layers, config.num_key_value_heads, config.head_dim),
                           peak_allocated_mib=0.0,
                           reserved_mib=round(sum(torch.cuda.memory_reserved(d) for d in range(torch.cuda.device_count())) / MIB, 1),
                           device_total_mib=round(torch.cuda.get_device_properties(0).total_memory / MIB, 1))
        import exllamav2.attn as xattn  # lazy: ExLlamaV2 loads only after the import phase found it installed

        attention = ("flash-attn" if xattn.has_flash_attn and not config.no_flash_attn else
                     "xformers" if xattn.has_xformers and not config.no_xformers else
                     "torch SDPA" if xattn.has_lower_right_sdpa and not config.no_sdpa else "matmul")
        return shape, memory, attention

    def _synthetic_label(self) -> str:
        meta = Path(self.spec.model_path) / "synthetic.json"
        try:
            return str(json.loads(meta.read_text()).get("label", "")) if meta.exists() else ""
        except (OSError, ValueError):
            return ""


def _layer_params(config: Any) -> int:
    """Weights of one decoder layer's matrices, from the layer shape the budget uses (bpw = bits / these)."""
    return sum(fin * fout for _, fin, fout in layer_linears(config.hidden_size, config.intermediate_size,
                                                             config.num_attention_heads, config.num_key_value_heads,
                                                             config.head_dim))


def _quant_bits(model_dir: str) -> float | None:
    try:
        q = json.loads((Path(model_dir) / "config.json").read_text()).get("quantization_config") or {}
        return float(q["bits"]) if "bits" in q else None
    except (OSError, ValueError, TypeError):
        return None


def _act_order(model_dir: str, keys: list[str]) -> Any:
    """A GPTQ model's act-order, from the first g_idx tensor ExLlamaV2 maps (none: not act-order)."""
    key = next((k for k in keys if k.endswith(".g_idx")), None)
    return False if key is None else act_order_in(model_dir, key)


def main(worker_cls: type[Worker] = Worker) -> int:
    """The child's life: the protocol on the real stdout, the spec from stdin, the worker's outcome or its error."""
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints (ExLlamaV2's console, the JIT build) go to the log, not the protocol
    em = Emitter(proto)
    em.emit("phase", phase="start", message="probe worker started", total=None, protocol=PROTOCOL, pid=os.getpid())
    try:
        spec = spec_from_json(sys.stdin.read())
    except (ValueError, TypeError) as exc:
        em.error(FailureKind.BAD_SPEC, "start", f"bad probe spec: {exc}")
        return 3
    worker = worker_cls(spec, em)
    try:
        summary, result = worker.outcome()
    except errors.ProbeFailure as f:
        em.error(f.kind, f.phase, f.message, f.detail)
        return 2
    except BaseException as exc:  # noqa: BLE001 - anything else is reported, never a silent death
        text = f"{type(exc).__name__}: {exc}"
        em.error(probe_failure_kind(text), worker._phase, text.splitlines()[0][:400], errors.tail(traceback.format_exc()))
        return 2

    em.emit("result", summary=summary, result=to_jsonable(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
