"""Issue 24's log classes, each a whole paste (fixtures/logs/pitfalls/, the sources of each beside it in FILE.log.src):
the pitfall is named with its numbers, the healthy counterparts (a forward-compatibility container, vLLM's FA2 notice
on a T4, application Xids on sound hardware) name no error or warning, and the fixes fit the paste (no `export` for a
Windows paste, no torch advice for an engine that is not torch-based)."""

from __future__ import annotations

import pytest
from conftest import MACHINES, ROOT

from doctor.commands.log_input import open_log
from doctor.facts.replay import load_document
from doctor.logscan.scanner import Scanner
from doctor.model.plan import Plan
from doctor.run.confirm import confirm_matches

PITFALLS = ROOT / "fixtures" / "logs" / "pitfalls"

# log -> {signature: (severity, its pitfall, numbers it must carry)}
ERRORS = {
    "bnb-int8-p40-igemmlt.log": {"bnb-int8-matmul-unsupported": ("error", "quant-format", {})},
    "bnb-int8-v100-slow-warning.log": {"bnb-int8-slow-matmul": ("warning", "quant-format", {})},
    "transformers-bnb-dispatched-27b-v100.log": {"bnb-dispatched-cpu-or-disk": ("error", "memory-budget", {})},
    "transformers-bnb-dispatched-cpu-t4-windows.log": {
        "bnb-dispatched-cpu-or-disk": ("error", "memory-budget", {}),
        "bnb-compiled-without-gpu": ("warning", "cuda-pairing", {})},
    "exllamav2-jit-gcc13-cuda12.1.log": {
        "nvcc-unsupported-gcc": ("error", "exllamav2-ready", {"gcc_max": 12}),
        "exllamav2-ext-build-failed": ("error", "exllamav2-ready", {"extension": "exllamav2_ext"})},
    "exllamav2-import-stale-lock.log": {"torch-extension-stale-lock": ("error", "exllamav2-ready", {})},
    "exllamav3-t4-cp-async.log": {"ptxas-needs-sm80": ("error", "quant-format", {"feature": "cp.async", "min_cc": "8.0"})},
    "tabbyapi-main-v100-exl3-refused.log": {"tabbyapi-exllamav3-needs-ampere": ("error", "quant-format", {})},
    "llamacpp-docker-driver-insufficient.log": {"cuda-driver-insufficient": ("error", "cuda-pairing", {})},
    "ngc-compat-geforce-804.log": {"cuda-compat-unsupported-hw": ("error", "cuda-pairing", {})},
    "torch-cudnn-ld-library-path.log": {
        "cudnn-version-incompatible": ("error", "cuda-pairing", {"built": "8, 7, 0", "found": "8, 6, 0"})},
    "exllamav2-p40-fp16-slow.log": {
        "exllamav2-single-digit-decode": ("warning", "compute-capability", {"tok_s": "1.1905"})},
    "dcgm-diag-thermal-violation.log": {"dcgm-thermal-violation": ("error", "thermal", {"seconds": "13.3"})},
    "dmesg-xid48-dbe-v100.log": {
        "xid-48": ("error", "gpu-memory-health", {"xid": 48, "pci": "PCI:0000:07:00"}),
        "xid-64": ("error", "gpu-memory-health", {"xid": 64}),
        "uncorrectable-ecc-error": ("error", "gpu-memory-health", {})},
}
# healthy: what they may say, at info level only
HEALTHY = {
    "ngc-compat-v100-r470-healthy.log": {"cuda-compat-enabled"},
    "vllm-v1-t4-fa2-fallback-healthy.log": {"vllm-fa-version-unsupported"},
    "dmesg-xid-app-faults-healthy-hw.log": {"xid-13", "xid-31", "xid-43"},
    "exllamav2-v100-healthy-speed.log": set(),  # 20 tok/s on a V100: no crawl
}


def scan(name: str):
    source = open_log(str(PITFALLS / name))
    try:
        return Scanner().scan(source)
    finally:
        source.close()


def test_every_log_in_the_folder_is_tested_and_has_its_sources():
    logs = {p.name for p in PITFALLS.glob("*.log")}
    assert logs == set(ERRORS) | set(HEALTHY)
    for log in logs:
        assert "https://" in (PITFALLS / f"{log}.src").read_text(), log


@pytest.mark.parametrize("log", sorted(ERRORS))
def test_the_pitfall_is_named_with_its_numbers(log):
    result = scan(log)
    found = {m.signature: m for m in result.matches}
    for signature, (severity, pitfall, numbers) in ERRORS[log].items():
        assert signature in found, (signature, sorted(found))
        match = found[signature]
        assert (match.severity, match.checks[0]) == (severity, pitfall) and match.fix
        assert {k: match.numbers.get(k) for k in numbers} == numbers
    assert result.stats.lines > result.stats.matched_lines + 3  # a paste, not a quote


@pytest.mark.parametrize("log", sorted(HEALTHY))
def test_healthy_counterparts_say_at_most_info(log):
    result = scan(log)
    assert {m.signature for m in result.matches} == HEALTHY[log]
    assert {m.severity for m in result.matches} <= {"info"}
    assert result.unexplained.error_lines == 0, [g.example for g in result.unexplained.groups]


def test_application_xids_are_not_called_a_memory_fault():
    matches = scan("dmesg-xid-app-faults-healthy-hw.log").matches
    assert all("not a hardware fault" in m.fix.lower() for m in matches)
    assert all("rma" not in m.fix.lower() for m in matches)


def test_a_windows_paste_gets_no_posix_export():
    """The fixes shown for a Windows paste never say `export` (the gcc row, on a Linux paste, does: the test can fail)."""
    windows = scan("transformers-bnb-dispatched-cpu-t4-windows.log").matches
    assert windows and not any("export " in m.fix for m in windows)
    assert any("export " in m.fix for m in scan("exllamav2-jit-gcc13-cuda12.1.log").matches)


def test_an_engine_that_is_not_torch_based_gets_no_torch_reinstall():
    matches = scan("llamacpp-docker-driver-insufficient.log").matches
    assert matches and not any("torch" in (m.fix + " ".join(m.commands)).lower() for m in matches)


def test_the_cudnn_fix_points_at_ld_library_path_not_a_reinstall():
    (match,) = scan("torch-cudnn-ld-library-path.log").matches
    assert "LD_LIBRARY_PATH" in match.fix and "pip install" not in match.fix


def test_an_exl2_crawl_is_confirmed_by_a_p40s_fp16_rate_and_left_open_on_a_v100():
    matches = scan("exllamav2-p40-fp16-slow.log").matches
    for machine, verdict in (("p40-torch-cu126", "confirmed"), ("v100-pcie-16gb-healthy", "cannot-tell")):
        facts = load_document(str(MACHINES / f"{machine}.json")).facts
        (judged,) = confirm_matches(matches, Plan(), facts)[0]
        assert judged.confirmation.verdict == verdict, (machine, judged.confirmation.reason)
    assert "1:64" in judged.title or "1/64" in judged.title


def _scan_text(text: str):
    import io

    return Scanner().scan(open_log("-", stdin=io.BytesIO(text.encode("utf-8"))))


def test_a_zero_second_dcgm_violation_is_noise_not_a_thermal_error():
    (zero,) = _scan_text("GPU 0 Thermal violations totaling 0.0 seconds started at 30.0 seconds into the test\n").matches
    assert (zero.signature, zero.severity) == ("dcgm-thermal-violation-zero", "info")
    (real,) = _scan_text("GPU 0 Thermal violations totaling 13.3 seconds started at 9.7 seconds into the test\n").matches
    assert (real.signature, real.severity) == ("dcgm-thermal-violation", "error")


def test_no_cuda_gpus_is_confirmed_where_cuda_visible_devices_hides_the_card():
    matches = _scan_text("Traceback (most recent call last):\n    torch._C._cuda_init()\n"
                         "RuntimeError: No CUDA GPUs are available\n").matches
    for machine, verdict in (("v100-cuda-visible-hides-only-gpu", "confirmed"), ("v100-pcie-16gb-healthy", "ruled-out")):
        facts = load_document(str(MACHINES / f"{machine}.json")).facts
        (judged,) = confirm_matches(matches, Plan(), facts)[0]
        assert judged.confirmation.verdict == verdict, (machine, judged.confirmation.reason)
    assert "CUDA_VISIBLE_DEVICES" in judged.fix
