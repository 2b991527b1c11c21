"""`thermal`: clocks held back by heat or power, at rest from the NVML snapshot, under load from samples.

Decode speed follows memory bandwidth, so the memory clock's ratio to its maximum is reported
beside the throttle reasons. Idle clocks with the driver's gpu_idle reason are the card saving
power and are never reported as throttling.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.runtime.context import pct, target_summary, value
from doctor.knowledge.throttle import NVML_REASONS, REASONS, form_factor, reason_fix
from doctor.model.facts import GpuFacts
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId
from doctor.model.sample_summary import HEAT_REASONS, THROTTLE_REASONS, GpuSummary
from doctor.model.samples import GpuSeries

TEMP_MARGIN_WARN_C = 5  # closer than this to the slowdown threshold is a warning
POWER_LIMIT_SLACK = 0.98  # an enforced limit below 98% of the default was lowered by someone
HEAT_FAIL_FRACTION = 0.10  # heat slowdown during a tenth of the load is a failure
HW_FAIL_FRACTION = 0.05  # HW slowdown halves the clocks or worse: a twentieth is a failure
POWER_WARN_FRACTION = 0.10
MEM_CLOCK_FAIL_RATIO = 0.90

LABELS = {k: r.label for k, r in REASONS.items()}


def _fixes(gpu_index: int, heat: bool, power_limit: float | None, default_limit: float | None,
           reasons: tuple[str, ...] = (), name: str = "") -> tuple[str, list[str]]:
    """Each active reason's own fix (worded for this card's form factor); a power cap only against heat."""
    parts, commands = [], [f"nvidia-smi dmon -i {gpu_index} -s pct   # watch power, temperature and clocks live"]
    for key in reasons:
        if key in REASONS and key != "sw_power_cap":
            parts.append(f"{REASONS[key].label}: {reason_fix(key, name)}")
    if heat and not any(REASONS[k].heat for k in reasons if k in REASONS):
        parts.append(f"Temperature: {reason_fix('hw_thermal_slowdown', name)}")
    if heat and default_limit:
        commands.append(f"sudo nvidia-smi -i {gpu_index} -pl {int(default_limit * 0.8)}   # cooler, small SM-clock cost")
    if power_limit and default_limit and power_limit < default_limit * POWER_LIMIT_SLACK:
        parts.append(f"Someone lowered the enforced power limit to {power_limit:.0f} W (default {default_limit:.0f} W); "
                     "restore it unless that was done on purpose for cooling.")
        commands.append(f"sudo nvidia-smi -i {gpu_index} -pl {default_limit:.0f}")
    return " ".join(parts), commands


def _name(gpu: GpuFacts | None) -> str:
    return str(value(gpu.name) or "") if gpu else ""


def _limits(gpu: GpuFacts | None, g: GpuSeries | None) -> dict:
    pick = lambda series_v, facts_v: series_v if series_v is not None else (value(facts_v) if gpu else None)
    return {
        "slowdown_c": pick(g.slowdown_temperature_c if g else None, gpu.slowdown_temperature_c if gpu else None),
        "max_operating_c": pick(g.max_operating_temperature_c if g else None,
                                gpu.max_operating_temperature_c if gpu else None),
        "memory_max_c": pick(g.memory_max_temperature_c if g else None, gpu.memory_max_temperature_c if gpu else None),
        "power_limit_w": pick(g.power_limit_w if g else None, gpu.power_limit_w if gpu else None),
        "power_default_w": pick(g.power_default_limit_w if g else None, gpu.power_default_limit_w if gpu else None),
    }


def _at_board_limit(lim: dict) -> bool:
    """The enforced power limit is the board's default (a T4: 70 W, which is also its maximum): nobody lowered it."""
    pl, dflt = lim["power_limit_w"], lim["power_default_w"]
    return pl is not None and bool(dflt) and pl >= dflt * POWER_LIMIT_SLACK


def _temperature_problems(temp: float | None, mem_temp: float | None, lim: dict) -> list[tuple[Status, str]]:
    out = []
    if temp is not None and lim["slowdown_c"] is not None:
        margin = lim["slowdown_c"] - temp
        if margin <= 0:
            out.append((Status.FAIL, f"{temp:.0f} °C reached the {lim['slowdown_c']} °C slowdown threshold"))
        elif margin <= TEMP_MARGIN_WARN_C:
            out.append((Status.WARN, f"{temp:.0f} °C is {margin:.0f} °C below the {lim['slowdown_c']} °C slowdown threshold"))
    if mem_temp is not None and lim["memory_max_c"] is not None and mem_temp >= lim["memory_max_c"]:
        out.append((Status.WARN, f"memory at {mem_temp:.0f} °C, at or over its {lim['memory_max_c']} °C operating maximum"))
    pl, dflt = lim["power_limit_w"], lim["power_default_w"]
    if pl is not None and dflt and pl < dflt * POWER_LIMIT_SLACK:
        out.append((Status.WARN, f"enforced power limit {pl:.0f} W is below the default {dflt:.0f} W"))
    return out


def _at_rest(ctx: CheckContext, gpu: GpuFacts) -> Finding:
    lim = _limits(gpu, None)
    reasons = value(gpu.clocks_event_reasons)
    temp, mem_temp = value(gpu.temperature_c), value(gpu.memory_temperature_c)
    problems = _temperature_problems(temp, mem_temp, lim)
    active = [r for r in (reasons or ()) if r in THROTTLE_REASONS]
    mem_clock, mem_max = value(gpu.mem_clock_mhz), value(gpu.mem_clock_max_mhz)
    mem_holds = mem_clock is not None and mem_max is not None and mem_max > 0 and mem_clock >= mem_max * MEM_CLOCK_FAIL_RATIO
    board_cap = "sw_power_cap" in active and _at_board_limit(lim) and mem_holds
    for r in active:
        if r == "sw_power_cap" and board_cap:
            continue  # the board's own limit with the memory clock holding: how the card is built, not throttling
        problems.append((Status.WARN if r == "sw_power_cap" else Status.FAIL,
                         f"{LABELS[r]} is active right now ({REASONS[r].cause})"))
    evidence = {"measured": "at rest (one NVML snapshot)", "clocks_event_reasons": list(reasons or []),
                "temperature_c": temp, "slowdown_temperature_c": lim["slowdown_c"],
                "margin_c": (lim["slowdown_c"] - temp) if temp is not None and lim["slowdown_c"] is not None else None,
                "memory_temperature_c": mem_temp, "memory_max_temperature_c": lim["memory_max_c"],
                "sm_clock_mhz": value(gpu.sm_clock_mhz), "sm_clock_max_mhz": value(gpu.sm_clock_max_mhz),
                "mem_clock_mhz": value(gpu.mem_clock_mhz), "mem_clock_max_mhz": value(gpu.mem_clock_max_mhz),
                "power_draw_w": value(gpu.power_draw_w), "power_limit_w": lim["power_limit_w"],
                "power_default_limit_w": lim["power_default_w"], "form_factor": form_factor(_name(gpu), lim["power_default_w"]),
                "reason_causes": {r: REASONS[r].cause for r in (reasons or ()) if r in REASONS},
                "reasons_source": NVML_REASONS}
    if reasons is None and temp is None:
        return CHECK.finding(Status.SKIP, "NVML gave neither clocks-event reasons nor temperature for this GPU", evidence)
    idle = reasons is not None and "gpu_idle" in reasons
    if problems:
        status = Status.FAIL if any(s == Status.FAIL for s, _ in problems) else Status.WARN
        hot = any(REASONS[r].heat for r in active) or any("°C" in m for _, m in problems)
        fix, commands = _fixes(ctx.plan.gpu_index, hot, lim["power_limit_w"], lim["power_default_w"], tuple(active), _name(gpu))
        return CHECK.finding(status, "At rest: " + "; ".join(m for _, m in problems), evidence, fix, commands)
    temp_text = "temperature unknown" if temp is None else f"{temp:.0f} °C"
    if temp is not None and lim["slowdown_c"] is not None:
        temp_text += f", {lim['slowdown_c'] - temp:.0f} °C below the {lim['slowdown_c']} °C slowdown point"
    state = "idle clocks with the idle reason (normal power saving, not throttling)" if idle else "no throttle reason active"
    if board_cap:
        state = (f"at the board's own power limit ({lim['power_limit_w']:.0f} W, its default) with the memory clock at "
                 f"{mem_clock:.0f} of {mem_max:.0f} MHz: the SW power cap trims the SM clock only, which decode barely "
                 "needs (not throttling)")
    return CHECK.finding(Status.PASS, f"At rest: {temp_text}; {state}. Under load it is judged by "
                         "`v100-doctor watch` or the probe.", evidence)


def _under_load(ctx: CheckContext, gpu: GpuFacts | None, g: GpuSeries, s: GpuSummary) -> Finding:
    lim = _limits(gpu, g)
    counter_frac = {k: round(v / s.window_s, 3) for k, v in s.counter_throttle_s.items() if s.window_s and v > 0}
    heat = max([s.throttle_fraction_busy.get(r, 0.0) for r in HEAT_REASONS] + [counter_frac.get("thermal", 0.0)])
    hw = max(s.throttle_fraction_busy.get("hw_slowdown", 0.0), s.throttle_fraction_busy.get("hw_power_brake_slowdown", 0.0))
    power = max(s.throttle_fraction_busy.get("sw_power_cap", 0.0), counter_frac.get("power", 0.0))
    evidence = {
        "measured": f"under load: {s.samples} samples over {s.window_s:.1f} s, {s.busy_samples} busy",
        "throttle_fraction_of_busy_samples": s.throttle_fraction_busy,
        "throttle_seconds_from_driver_counters": s.counter_throttle_s,
        "reason_fraction_all_samples": s.reason_fraction,
        "sm_clock_median_mhz": s.sm_clock_median_mhz, "sm_clock_max_mhz": g.sm_clock_max_mhz,
        "sm_clock_ratio": s.sm_clock_ratio, "mem_clock_ratio": s.mem_clock_ratio,
        "mem_clock_ratio_min": s.mem_clock_ratio_min, "mem_clock_dropped_fraction": s.mem_clock_dropped_fraction,
        "temperature_max_c": s.temperature_max_c, "slowdown_temperature_c": lim["slowdown_c"],
        "margin_c": (lim["slowdown_c"] - s.temperature_max_c) if s.temperature_max_c is not None and lim["slowdown_c"] else None,
        "max_operating_temperature_c": lim["max_operating_c"],
        "memory_temperature_max_c": s.memory_temperature_max_c, "memory_max_temperature_c": lim["memory_max_c"],
        "power_mean_w": s.power_mean_w, "power_max_w": s.power_max_w, "power_source": s.power_source,
        "power_limit_w": lim["power_limit_w"], "power_default_limit_w": lim["power_default_w"],
        "form_factor": form_factor(_name(gpu), lim["power_default_w"]), "reasons_source": NVML_REASONS,
        "reason_causes": {r: REASONS[r].cause for r in s.throttle_fraction_busy if r in REASONS},
    }
    if s.busy_samples == 0:
        problems = _temperature_problems(s.temperature_max_c, s.memory_temperature_max_c, lim)
        status = max((p[0] for p in problems), default=Status.PASS, key=_rank)
        text = "; ".join(m for _, m in problems) or "no throttling"
        fix, commands = _fixes(ctx.plan.gpu_index, False, lim["power_limit_w"], lim["power_default_w"],
                               name=_name(gpu)) if problems else ("", [])
        return CHECK.finding(status, f"The GPU was idle for the whole {s.window_s:.0f} s window (idle clocks are not "
                             f"throttling): {text}. Watch again while it generates.", evidence, fix, commands)
    problems = _temperature_problems(s.temperature_max_c, s.memory_temperature_max_c, lim)
    mem_dropped = s.mem_clock_dropped_fraction or 0.0
    if heat >= HEAT_FAIL_FRACTION or hw >= HW_FAIL_FRACTION:
        problems.append((Status.FAIL, _reason_text(s, counter_frac)))
    elif heat > 0 or hw > 0:
        problems.append((Status.WARN, _reason_text(s, counter_frac)))
    board_cap = (power >= POWER_WARN_FRACTION and _at_board_limit(lim) and s.mem_clock_ratio is not None
                 and not mem_dropped)
    if power >= POWER_WARN_FRACTION and not board_cap:
        problems.append((Status.WARN, f"SW power cap held the clocks during {pct(power)} of the load "
                         f"(mean {s.power_mean_w} W of {lim['power_limit_w']} W)"))
    if s.mem_clock_ratio_min is not None and mem_dropped > 0:
        severity = Status.FAIL if s.mem_clock_ratio_min < MEM_CLOCK_FAIL_RATIO and mem_dropped >= HW_FAIL_FRACTION else Status.WARN
        problems.append((severity, f"memory clock fell below max in {pct(mem_dropped)} of the load (down to "
                         f"{pct(s.mem_clock_ratio_min)} of {g.mem_clock_max_mhz} MHz); decode speed follows memory bandwidth"))
    mem_text = "memory clock unknown"
    if s.mem_clock_ratio is not None:
        mem_text = f"memory clock at {pct(s.mem_clock_ratio)} of max"
        if (s.mem_clock_ratio_min or 1.0) < s.mem_clock_ratio:
            mem_text = f"memory clock median {pct(s.mem_clock_ratio)}, min {pct(s.mem_clock_ratio_min)} of max"
    if not problems:
        temp = (f"peak {s.temperature_max_c} °C, {lim['slowdown_c'] - s.temperature_max_c} °C below slowdown"
                if s.temperature_max_c is not None and lim["slowdown_c"] else "temperature unknown")
        cap = (f"; the SW power cap held the SM clock during {pct(power)} of the load at the board's own limit "
               f"({lim['power_limit_w']:.0f} W, its default), which decode barely needs" if board_cap else "")
        return CHECK.finding(Status.PASS, f"No throttling under load ({s.busy_samples} busy samples over {s.window_s:.0f} s): "
                             f"{mem_text}, SM clock at {pct(s.sm_clock_ratio)} of max; {temp}{cap}", evidence)
    status = max((p[0] for p in problems), key=_rank)
    heat_now = heat > 0 or any("°C" in m for _, m in problems)
    seen = tuple(r for r, f in s.throttle_fraction_busy.items() if f > 0)
    fix, commands = _fixes(ctx.plan.gpu_index, heat_now, lim["power_limit_w"], lim["power_default_w"], seen, _name(gpu))
    return CHECK.finding(status, "Under load: " + "; ".join(m for _, m in problems) + f" ({mem_text})", evidence, fix, commands)


def _reason_text(s: GpuSummary, counter_frac: dict[str, float]) -> str:
    """Each reason with its share of the load and its own cause: a power brake is never called heat."""
    parts = [f"{LABELS[r]} {pct(f)} of the load: {REASONS[r].cause}"
             for r, f in s.throttle_fraction_busy.items() if r != "sw_power_cap" and f > 0]
    if counter_frac.get("thermal"):
        parts.append(f"driver thermal counter {pct(counter_frac['thermal'])} of the window")
    return "clocks slowed (" + "; ".join(parts) + ")"


def _rank(status: Status) -> int:
    return {Status.PASS: 0, Status.WARN: 1, Status.FAIL: 2}.get(status, 0)


def run(ctx: CheckContext) -> Finding:
    gpu = ctx.target_gpu()
    loaded = target_summary(ctx)
    if loaded is not None:
        return _under_load(ctx, gpu, *loaded)
    if gpu is None:
        return CHECK.finding(Status.SKIP, f"no facts for GPU {ctx.plan.gpu_index}", {})
    return _at_rest(ctx, gpu)


CHECK = Check(id=CheckId("thermal"), title="Thermal and power throttling", run=run, depends_on=(CheckId.GPU_PRESENT,), order=10, per_gpu=True)
