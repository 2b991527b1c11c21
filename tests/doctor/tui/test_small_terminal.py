"""Issue 13: below 80x24 the screen is one pane: the selected check, its details, the verdict's first line and
the top fix, with a key line that fits; j/k still move and enter still opens."""

from __future__ import annotations

import pytest
from tui_support import TORCH_211, fixture_session, run_app, settle

from doctor.tui.app import DoctorApp


def compact_state(app) -> dict:
    return {"compact": app.is_compact, "list": app.checklist.display and app.checklist.region.width > 0,
            "head": str(app.query_one("#compact-head").render()), "foot": str(app.query_one("#compact-foot").render()),
            "keys": app.query_one("#compact-keys").region, "footer": app.query_one("Footer").display}


@pytest.mark.parametrize("size", [(60, 15), (100, 20)])  # too narrow; wide but too short
def test_below_80_by_24_one_pane_shows_the_check_its_fix_and_keys_that_fit(size):
    async def script(app, pilot):
        await settle(app, pilot)
        before = compact_state(app)
        await pilot.press("j")
        return before, app.checklist.highlighted_id, str(app.query_one("#compact-head").render())

    state, after_j, head = run_app(DoctorApp(fixture_session(TORCH_211, checks=None)), script, size=size)
    assert state["compact"] and not state["list"] and not state["footer"]
    assert state["head"].startswith("✗ cuda-pairing") and "of" in state["head"]
    assert "Fix first (cuda-pairing): Route" in state["foot"]
    assert state["keys"].width == size[0] and state["keys"].y == size[1] - 1  # the key line is on screen, whole
    assert after_j == "flash-attn" and head.startswith("✓ flash-attn")


def test_at_80_by_24_both_panes_and_a_footer_that_fits_and_a_resize_switches():
    async def script(app, pilot):
        await settle(app, pilot)
        wide = compact_state(app)
        footer = app.query_one("Footer").region
        await pilot.resize_terminal(60, 15)
        await pilot.pause()
        narrow = compact_state(app)
        await pilot.press("enter")
        opened = app.screen.maximized is app.detail
        return wide, footer, narrow, opened

    wide, footer, narrow, opened = run_app(DoctorApp(fixture_session(TORCH_211, checks=None)), script)
    assert not wide["compact"] and wide["list"] and footer.width == 80 and footer.y == 23
    assert narrow["compact"] and not narrow["list"] and opened


def test_one_pane_shows_the_verdicts_first_line_and_fix_first():
    from doctor.run.session import story_session

    async def script(app, pilot):
        await pilot.pause()
        return str(app.query_one("#compact-foot").render())

    foot = run_app(DoctorApp(story_session("seed-2-exl2-4.25bpw")), script, size=(60, 15))
    assert foot.startswith("Verdict: 100% of the gap to the ceiling is weights crossing PCIe every token")
    assert "Fix first: keep every weight in VRAM" in foot
