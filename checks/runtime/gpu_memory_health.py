"""`gpu-memory-health`: ECC errors, retired or pending pages (V100 and older), remapped rows (A100 and newer).

Sources: NVIDIA's Dynamic Page Retirement guide (https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html,
P): a page is retired after one double-bit or two single-bit errors at one address and the retirement
takes effect only after the driver reloads. NVIDIA's GPU memory error management guide
(https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/row-remapping.html, P): legacy GPUs support at
most 64 page retirements; row remapping needs a GPU reset to take effect, and a failed remap is a
hardware fault.
"""

from __future__ import annotations

from checks.base import Check, CheckContext
from checks.runtime.context import value
from doctor.model.findings import Finding, Status
from doctor.model.ids import CheckId

MAX_RETIRED_PAGES = 64  # legacy (pre-Ampere) page retirement capacity
RETIRED_WARN = 48  # three quarters used: our threshold for "ask about an RMA before it runs out"


def run(ctx: CheckContext) -> Finding:
    gpu = ctx.target_gpu()
    if gpu is None:
        return CHECK.finding(Status.SKIP, f"no facts for GPU {ctx.plan.gpu_index}", {})
    uncorrected, pages_retired = value(gpu.ecc_uncorrected_volatile), value(gpu.retired_pages_count)
    rows_uncorrectable, rows_failed = value(gpu.remapped_rows_uncorrectable), value(gpu.remapped_rows_failure)
    ev = {"ecc_mode": value(gpu.ecc_mode), "ecc_uncorrected_volatile": uncorrected,
          "ecc_corrected_volatile": value(gpu.ecc_corrected_volatile),
          "retired_pages_count": pages_retired, "retired_pages_pending": value(gpu.retired_pages_pending),
          "remapped_rows_correctable": value(gpu.remapped_rows_correctable),
          "remapped_rows_uncorrectable": rows_uncorrectable,
          "remapped_rows_pending": value(gpu.remapped_rows_pending), "remapped_rows_failure": rows_failed}
    if all(v is None for v in ev.values()):
        return CHECK.finding(Status.SKIP, "this GPU/driver reports no ECC, page-retirement or row-remapping data "
                             "(consumer cards have no ECC)", ev)
    i = ctx.plan.gpu_index
    fails, warns, commands = [], [], []
    if (uncorrected or 0) > 0:
        fails.append(f"{uncorrected} uncorrectable ECC errors since the driver loaded (results "
                     "computed since then may be corrupt)")
    if rows_failed:
        fails.append("a row remapping failed: the memory has no spare rows left where it needs them (hardware fault)")
    pages = pages_retired or 0
    if pages >= MAX_RETIRED_PAGES:
        fails.append(f"{pages} retired pages: the {MAX_RETIRED_PAGES}-page retirement capacity is used up")
    elif pages >= RETIRED_WARN:
        warns.append(f"{pages} of at most {MAX_RETIRED_PAGES} pages retired")
    if ev["retired_pages_pending"]:
        warns.append("a page retirement is pending: it takes effect after the driver reloads (reboot or GPU reset)")
        commands.append(f"sudo nvidia-smi -i {i} -r   # GPU reset: stop every process on it first")
    if ev["remapped_rows_pending"]:
        warns.append("a row remapping is pending: it takes effect after a GPU reset")
        commands.append(f"sudo nvidia-smi -i {i} -r   # GPU reset: stop every process on it first")
    if (rows_uncorrectable or 0) > 0 and not rows_failed:
        warns.append(f"{rows_uncorrectable} rows remapped after uncorrectable errors")
    commands = list(dict.fromkeys(commands)) + [f"nvidia-smi -i {i} -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER"]
    if fails:
        return CHECK.finding(Status.FAIL, "; ".join(fails + warns), ev,
                             "Drain the GPU, reset it, and if errors return contact the vendor about an RMA; results "
                             "computed while uncorrectable errors occurred should not be trusted.", commands)
    if warns:
        return CHECK.finding(Status.WARN, "; ".join(warns), ev, "Apply pending retirements/remappings with a GPU reset "
                             "or reboot at a quiet moment, and keep an eye on the counts.", commands)
    parts = [f"ECC {ev['ecc_mode']}" if ev["ecc_mode"] else "ECC mode unknown"]
    if ev["ecc_mode"] == "enabled":
        parts.append(f"{ev['ecc_uncorrected_volatile'] or 0} uncorrectable, {ev['ecc_corrected_volatile'] or 0} corrected errors since the driver loaded")
    if ev["retired_pages_count"] is not None:
        parts.append(f"{pages} retired pages, none pending")
    if ev["remapped_rows_correctable"] is not None:
        parts.append(f"{ev['remapped_rows_correctable']} correctable / {ev['remapped_rows_uncorrectable'] or 0} "
                     "uncorrectable rows remapped, none pending")
    return CHECK.finding(Status.PASS, "; ".join(parts), ev)


CHECK = Check(id=CheckId("gpu-memory-health"), title="GPU memory health (ECC, retired pages, remapped rows)", run=run,
              depends_on=(CheckId.GPU_PRESENT,), order=50, per_gpu=True)
