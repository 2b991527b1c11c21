"""explain never cuts a quoted log line without saying so: a cut line ends in "…" (issue 39)."""

from __future__ import annotations

import pytest
from conftest import run_cli

from doctor.render.log_analysis import clip

LONG = "ERROR: " + "the worker failed while loading shard seventeen from the network share; " * 4 + "END"


@pytest.mark.parametrize("limit", [10, 140, 150, 160])
def test_clip_marks_the_cut(limit):
    out = clip(LONG, limit)
    assert len(out) <= limit and out.endswith("…") and LONG.startswith(out[:-1].rstrip())
    assert clip("short line", limit) == "short line"


@pytest.mark.parametrize("fmt", [(), ("--markdown",)])
def test_a_long_quoted_line_is_marked_as_cut(tmp_path, fmt):
    log = tmp_path / "run.log"
    log.write_text(LONG + "\n")
    out = run_cli("explain", str(log), "--no-live", *fmt).stdout
    assert "…" in out and "END" not in out
