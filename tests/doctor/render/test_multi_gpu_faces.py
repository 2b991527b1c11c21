"""Issue 23: on a host with several GPUs each failing or warning GPU gets its own finding lines, its fix and its
route in text and Markdown (the TUI: tests/doctor/tui/test_app.py), summary lines count each check at its worst
over the GPUs, and route lines say which GPU they are for when the GPUs need different routes."""

from __future__ import annotations

from conftest import MACHINES, run_cli

MIXED = str(MACHINES / "mixed-2080ti-v100.json")


def test_text_shows_the_v100s_fix_and_route_without_gpu():
    proc = run_cli("--replay", MIXED, "--no-tui")
    out = proc.stdout
    assert proc.returncode == 2
    section = out[out.index("GPU 1 Tesla V100-PCIE-16GB (CUDA 1):"):]
    assert "[✗] cuda-pairing:" in section and "fix: Route" in section
    assert "Do this, in this order:" in out and "# route for GPU 1 Tesla V100-PCIE-16GB" in out
    assert 'pip install "torch==2.11.0" --index-url https://download.pytorch.org/whl/cu126' in out
    assert "Summary: 2 failed, 9 passed, 1 info, 1 skipped (each check at its worst over 2 GPUs)." in out


def test_markdown_shows_the_v100s_rows_fix_and_route_and_counts_the_worst():
    out = run_cli("--replay", MIXED, "--markdown").stdout
    assert out.startswith("### v100-doctor") and "2 failed" in out.splitlines()[0]
    visible = out[:out.index("<details>")]
    assert "**GPU 1 Tesla V100-PCIE-16GB (CUDA 1)**" in visible and "| ✗ | `cuda-pairing` |" in visible
    assert "**Fix:** Route" in visible
    assert "#### Do this, in this order" in out and "download.pytorch.org/whl/cu126" in out.split("#### Do this")[1]


def test_judging_only_gpu_1_keeps_the_plain_route_unnamed():
    out = run_cli("--replay", MIXED, "--gpu", "1", "--no-tui").stdout
    assert "# route: " in out and "# route for GPU" not in out


def test_a_healthy_multi_gpu_box_prints_no_gpu_sections():
    out = run_cli("--replay", str(MACHINES / "v100-sxm2-4x-nvlink.json"), "--no-tui").stdout
    assert "(CUDA 1):\n" not in out
