"""Fixes fit the paste (issue 24): a Windows paste gets cmd/PowerShell lines instead of `export`/`unset`, and a memory
fix names the max_seq_len and cache mode the log printed."""

from __future__ import annotations

from doctor.knowledge.paste import fit_to_paste, is_windows_paste, windows_commands, windows_text
from doctor.knowledge.signatures import by_id
from doctor.model.ids import CheckId
from doctor.model.log_analysis import MatchGroup, PlanHint

# quoted from https://github.com/LlamaChinese/Llama-Chinese/issues/123 and https://github.com/theroyallab/tabbyAPI/issues/356
WINDOWS = ("C:\\ProgramData\\anaconda3\\envs\\llama2\\lib\\site-packages\\bitsandbytes\\cextension.py:34: UserWarning: "
           "The installed version of bitsandbytes was compiled without GPU support.")
LINUX = "/home/user/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:262: UserWarning:"


def group(signature: str, text: str) -> MatchGroup:
    s = by_id(signature)
    return MatchGroup(signature=s.id, engine=s.engine, checks=s.checks, severity=s.severity, title=s.title, fix=s.fix,
                      commands=s.commands, source=s.source, first_line=1, text=text, matched=text, numbers={}, count=1,
                      lines=(1,))


def test_windows_pastes_are_told_apart():
    assert is_windows_paste([WINDOWS]) and is_windows_paste(["(venv) F:\\tabbyAPI>start.bat"])
    assert is_windows_paste(["PS C:\\Windows\\system32> nvidia-smi"])
    assert not is_windows_paste([LINUX, "INFO:     Loading model: /home/derp/exl2-models/x", "ratio 3:1 of 10\\n"])


def test_posix_lines_become_cmd_and_powershell():
    assert windows_commands(("pip uninstall -y flash-attn", "export EXLLAMA_NO_FLASH_ATTN=1", "unset CUDA_VISIBLE_DEVICES")) \
        == ("pip uninstall -y flash-attn", "set EXLLAMA_NO_FLASH_ATTN=1", "set CUDA_VISIBLE_DEVICES=")
    text = windows_text("Install a CUDA 12.x toolkit and export CUDA_HOME=/usr/local/cuda-12.x, or install a wheel.")
    assert "set CUDA_HOME=" in text and '$env:CUDA_HOME = "' in text and "export" not in text


def test_a_windows_paste_gets_no_export_and_a_linux_one_keeps_it():
    flash = by_id("flash-attn-needs-ampere")
    assert any(c.startswith("export ") for c in flash.commands)  # the row is written for Linux: the test can fail
    (win,) = fit_to_paste((group("flash-attn-needs-ampere", WINDOWS),))
    assert not any("export" in c for c in win.commands) and "set EXLLAMA_NO_FLASH_ATTN=1" in win.commands
    (lin,) = fit_to_paste((group("flash-attn-needs-ampere", LINUX),))
    assert lin.commands == flash.commands and lin.fix == flash.fix


def test_a_memory_fix_names_the_settings_the_log_printed():
    hints = (PlanHint("max_seq_len", 32768, 12), PlanHint("cache_mode", "fp16", 13))
    (oom,) = fit_to_paste((group("cuda-oom-plain", LINUX),), hints)
    assert oom.fix.endswith("This log runs max_seq_len 32768 and cache_mode fp16.") and CheckId.MEMORY_BUDGET in oom.checks
    (other,) = fit_to_paste((group("no-kernel-image", LINUX),), hints)
    assert "This log runs" not in other.fix


def test_vllm_max_model_len_is_read_as_the_plan_s_max_seq_len():
    import io

    from doctor.commands.log_input import open_log
    from doctor.logscan.scanner import Scanner

    # vLLM's V0 argument dump, as in fixtures/logs/engines/vllm-bf16-v100.log
    text = "INFO 09-05 10:11:12 api_server.py:495] args: Namespace(host=None, port=8000, max_model_len=8192, quantization=None)\n"
    hints = Scanner().scan(open_log("-", stdin=io.BytesIO(text.encode()))).plan_hints
    assert [(h.field, h.value) for h in hints] == [("max_seq_len", 8192)]


def test_a_windows_prompt_at_the_top_of_the_paste_counts_when_the_error_line_names_no_path():
    """TabbyAPI's FlashAttention error names no path; the `(venv) F:\\tabbyAPI>` prompt above it shows the shell
    (the shape of https://github.com/theroyallab/tabbyAPI/issues/356)."""
    error = "ERROR:    FlashAttention only supports Ampere GPUs or newer."
    (linux,) = fit_to_paste((group("flash-attn-needs-ampere", error),))
    assert any(c.startswith("export ") for c in linux.commands)  # nothing says Windows: the row as written
    (win,) = fit_to_paste((group("flash-attn-needs-ampere", error),),
                          head=("(venv) F:\\tabbyAPI>start.bat", "INFO:     Python version: 3.11"))
    assert not any("export" in c for c in win.commands) and any(c.startswith("set ") for c in win.commands)
