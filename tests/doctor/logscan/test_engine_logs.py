"""Whole pastes from the engines V100/P40/T4 owners try (vLLM, TabbyAPI, text-generation-webui, transformers, the
kernel log): each error is named among ordinary console output, with its numbers, and the machine confirms it or
says why it cannot; healthy start-ups give no cause and no error-looking line. The logs: fixtures/logs/README.md."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MACHINES, ROOT

from doctor.commands.log_input import open_log
from doctor.facts.replay import load_document
from doctor.logscan.scanner import Scanner
from doctor.model.plan import Plan
from doctor.model.unknown import Unknown
from doctor.run.confirm import confirm_matches

ENGINES = ROOT / "fixtures" / "logs" / "engines"

# log -> (signature, its pitfall, numbers it must carry)
ERRORS = {
    "vllm-bf16-v100.log": ("vllm-bf16-needs-cc80", "dtype", {"min_cc": "8.0", "card_cc": "7.0"}),
    "vllm-quant-scheme-v100-docker.log": ("vllm-quant-scheme-min-capability", "quant-format",
                                          {"min_cc": "7.5", "card_cc": "7.0"}),
    "tabbyapi-cuda-malloc-async-oom-docker.log": ("cuda-malloc-async-oom", "memory-budget",
                                                  {"allocated_mib": 15749.12, "tried_mib": 136.0, "total_mib": 16148.48}),
    "transformers-offload-cpu.log": ("accelerate-offloaded-to-cpu", "cpu-offload", {"offloaded_to": "cpu"}),
    "flash-attn-undefined-symbol.log": ("flash-attn-undefined-symbol", "flash-attn", {"symbol": "_ZN3c104cuda9SetDeviceEi"}),
    "vllm-triton-p40.log": ("triton-cc-too-old", "compute-capability", {"gpu_name": "Tesla P40", "card_cc": "6.1"}),
    "ptx-unsupported-toolchain.log": ("ptx-unsupported-toolchain", "cuda-pairing", {}),
    "xid-79-journal.log": ("gpu-fallen-off-bus", "gpu-present", {"xid": 79, "pci": "PCI:0000:3b:00"}),
    "nvidia-smi-device-handle.log": ("nvidia-smi-device-handle-unknown", "gpu-present", {"nvml_error": "Unknown Error"}),
    # llama.cpp and Ollama (issue 27): the numbers each fix needs, never a torch fix
    "llama-server-v100-partial-offload.log": ("llama-partial-offload", "engine-launch", {"gpu_layers": 48, "layers": 65}),
    "llama-server-v100-cuda-oom.log": ("ggml-cuda-alloc-oom", "gguf-budget", {"size_mib": 8192.0, "device": 0}),
    "ollama-v100-no-cuda-arch-700.log": ("ggml-no-cuda-arch", "engine-build", {"arch": 700}),
    "ollama-library-cpu.log": ("ollama-inference-on-cpu", "engine", {"host_memory": "62.7 GiB"}),
    "ollama-p40-cuda-v13-skipped.log": ("ollama-skipping-cuda-device", "engine",
                                        {"cc": 610, "archs": "750 800 860 870 890 900 1000 1030 1100 1200 1210",
                                         "runner": "cuda_v13"}),
}
# every finding a whole llama.cpp/Ollama log gives (no more, no fewer), each with the finding it follows from (issue 35:
# one pitfall, its knock-on messages under it)
ENGINE_FINDINGS: dict[str, dict[str, str | None]] = {
    "llama-server-v100-partial-offload.log": {"llama-partial-offload": None},
    "llama-server-v100-cuda-oom.log": {"ggml-cuda-alloc-oom": None, "ggml-buffer-alloc-failed": "ggml-cuda-alloc-oom"},
    "ollama-v100-no-cuda-arch-700.log": {"ggml-no-cuda-arch": None},
    "ollama-library-cpu.log": {"ollama-cuda-driver-unloadable": None,
                               "ollama-no-compatible-gpus": "ollama-cuda-driver-unloadable",
                               "ollama-inference-on-cpu": "ollama-cuda-driver-unloadable"},
    "ollama-p40-cuda-v13-skipped.log": {"ollama-skipping-cuda-device": None,
                                        "ollama-inference-on-cpu": "ollama-skipping-cuda-device"},
    "llama-server-v100-healthy.log": {},
}
HEALTHY = ("tabbyapi-v100-healthy.log", "vllm-v100-healthy.log", "textgen-webui-v100-healthy.log",
           "llama-server-v100-healthy.log")


def scan(name: str):
    source = open_log(str(ENGINES / name))
    try:
        return Scanner().scan(source)
    finally:
        source.close()


def machine(name: str):
    return load_document(str(MACHINES / f"{name}.json")).facts


def verdicts(log: str, facts) -> dict[str, tuple[str, str]]:
    judged, _ = confirm_matches(scan(log).matches, Plan(), facts)
    return {m.signature: (m.confirmation.verdict, m.confirmation.reason) for m in judged}


def test_every_log_in_the_folder_is_tested():
    assert {p.name for p in ENGINES.glob("*.log")} == set(ERRORS) | set(HEALTHY)


@pytest.mark.parametrize("log", sorted(ERRORS))
def test_the_error_is_named_among_ordinary_output(log):
    signature, pitfall, numbers = ERRORS[log]
    result = scan(log)
    found = {m.signature: m for m in result.matches}
    assert signature in found, [m.signature for m in result.matches]
    match = found[signature]
    assert match.checks[0] == pitfall and match.fix
    assert {k: match.numbers.get(k) for k in numbers} == numbers
    assert result.stats.lines >= 8 and result.stats.lines > result.stats.matched_lines + 3  # a paste, not a quote


@pytest.mark.parametrize("log", HEALTHY)
def test_healthy_v100_startups_give_no_cause_and_no_error_looking_line(log):
    result = scan(log)
    assert [m.signature for m in result.matches if m.severity != "info"] == []
    assert result.unexplained.error_lines == 0, [g.example for g in result.unexplained.groups]


def test_healthy_logs_hold_the_words_that_used_to_look_like_errors():
    """The test above can fail: these logs carry "Defaulting", "default" and an INFO "running out of memory"."""
    text = "".join((ENGINES / log).read_text() for log in HEALTHY)
    assert "Defaulting" in text and "running out of memory" in text


def test_triton_is_confirmed_on_a_p40_and_not_judged_on_a_v100():
    verdict, reason = verdicts("vllm-triton-p40.log", machine("p40-torch-cu126"))["triton-cc-too-old"]
    assert verdict == "confirmed" and "Triton needs cc 7.0+" in reason
    verdict, reason = verdicts("vllm-triton-p40.log", machine("v100-pcie-16gb-healthy"))["triton-cc-too-old"]
    assert verdict == "cannot-tell" and reason.startswith("the log is from a cc 6.1 card")


def test_triton_on_a_p100_is_confirmed_by_the_noted_limit_and_ruled_out_at_cc_7_or_more(tmp_path):
    """compute-capability passes on a healthy P100 (ExLlamaV2 does not need Triton) but notes triton False:
    that note confirms a Triton refusal; a cc 7.5 card's True rules it out."""
    def matches_of(text):
        log = tmp_path / "triton.log"
        log.write_text(text)
        source = open_log(str(log))
        try:
            return Scanner().scan(source).matches
        finally:
            source.close()

    matches = matches_of("INFO 01-02 10:00:00 Starting vLLM\nRuntimeError: Found Tesla P100-PCIE-12GB which is too old to be "
                   "supported by the triton GPU compiler, which is used as the backend. Triton only supports devices of "
                   "CUDA Capability >= 7.0, but your device is of CUDA capability 6.0\n")

    def judged(name):
        (m,) = [m for m in confirm_matches(matches, Plan(), machine(name))[0]
                if m.signature == "triton-cc-too-old"]
        return m.confirmation

    p100 = judged("p100-12gb-torch-2.6-cu126")
    assert (p100.verdict, p100.check, p100.check_status) == ("confirmed", "compute-capability", "pass")
    assert "Triton needs cc 7.0+" in p100.reason
    assert judged("t4-torch-2.11-cu130-healthy").reason.startswith("the log is from a cc 6.0 card")
    matches = matches_of("RuntimeError: Found Tesla T4 which is too old to be supported by the triton GPU compiler\n")
    t4 = judged("t4-torch-2.11-cu130-healthy")  # no cc in the log: the machine's cc 7.5 decides
    assert (t4.verdict, t4.check) == ("ruled-out", "compute-capability")


def test_a_lost_gpu_is_confirmed_by_gpu_present_and_a_healthy_one_does_not_rule_it_out():
    healthy = machine("v100-pcie-16gb-healthy")
    gpu = replace(healthy.nvml.gpus[0], name=Unknown("nvmlDeviceGetHandleByIndex: Unknown Error"),
                  memory_total_mib=Unknown("nvmlDeviceGetHandleByIndex: Unknown Error"))
    lost = replace(healthy, nvml=replace(healthy.nvml, gpus=(gpu,)))
    for log, signature in (("xid-79-journal.log", "gpu-fallen-off-bus"),
                           ("nvidia-smi-device-handle.log", "nvidia-smi-device-handle-unknown")):
        verdict, reason = verdicts(log, lost)[signature]
        assert verdict == "confirmed" and "no longer answer NVML" in reason
        verdict, reason = verdicts(log, healthy)[signature]
        assert verdict == "cannot-tell" and "a fault that came and went" in reason


def test_a_flash_attn_abi_error_is_never_ruled_out_by_a_passing_check():
    assert verdicts("flash-attn-undefined-symbol.log", machine("v100-flash-attn-2"))["flash-attn-undefined-symbol"][0] == "confirmed"
    verdict, reason = verdicts("flash-attn-undefined-symbol.log", machine("v100-pcie-16gb-healthy"))["flash-attn-undefined-symbol"]
    assert verdict == "cannot-tell" and "ABI" in reason


def test_the_cuda_malloc_async_fix_names_the_allocator_setting():
    match = next(m for m in scan("tabbyapi-cuda-malloc-async-oom-docker.log").matches if m.signature == "cuda-malloc-async-oom")
    assert "cuda_malloc_async: false" in match.fix and "backend:cudaMallocAsync" in match.fix


@pytest.mark.parametrize("log", sorted(ENGINE_FINDINGS))
def test_llama_cpp_and_ollama_logs_give_exactly_their_findings_and_no_torch_fix(log):
    matches = scan(log).matches
    assert {m.signature: m.consequence_of for m in matches} == ENGINE_FINDINGS[log]
    for m in matches:
        assert "torch" not in m.fix.lower() and "pip install" not in m.fix.lower(), (m.signature, m.fix)
        assert "cmake" not in m.fix.lower() or not log.startswith("ollama"), (m.signature, m.fix)  # Ollama: its runners


def test_the_buffer_that_did_not_fit_is_named_in_bytes_too():
    found = {m.signature: m for m in scan("llama-server-v100-cuda-oom.log").matches}
    assert found["ggml-buffer-alloc-failed"].numbers == {"buffer": "CUDA0", "bytes": 8 * 1024 ** 3}


def test_ollama_on_the_cpu_is_confirmed_where_only_cuda_v13_runners_meet_a_p40():
    engines = MACHINES / "engines"
    p40 = load_document(str(engines / "p40-ollama-cuda-v13-only.json")).facts
    got = verdicts("ollama-p40-cuda-v13-skipped.log", p40)
    assert got["ollama-skipping-cuda-device"][0] == "confirmed" and got["ollama-inference-on-cpu"][0] == "confirmed"
    # a healthy Ollama here does not rule out what the log says: the process that wrote it may not be this one
    t4 = load_document(str(engines / "t4-ollama-healthy.json")).facts
    verdict, reason = verdicts("ollama-library-cpu.log", t4)["ollama-inference-on-cpu"]
    assert verdict == "cannot-tell" and "not the Ollama process that wrote the log" in reason

