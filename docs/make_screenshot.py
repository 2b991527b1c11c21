"""Draws the README's TUI screenshot with the app itself (textual's export_screenshot), so it cannot drift from
what the screen shows: `python3 docs/make_screenshot.py` rewrites docs/images/tui.svg.

The screen is `v100-doctor --replay fixtures/machines/v100-torch-2.11-cu130.json` at 100x30, once its checks
have finished (a recorded V100 after a plain `pip install torch` in 2026)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doctor.model.source import SavedFile  # noqa: E402
from doctor.run.run import Run  # noqa: E402
from doctor.run.session import Session  # noqa: E402
from doctor.tui.app import DoctorApp  # noqa: E402

FIXTURE = ROOT / "fixtures" / "machines" / "v100-torch-2.11-cu130.json"
OUT = ROOT / "docs" / "images" / "tui.svg"
SIZE = (100, 30)


async def screenshot() -> str:
    app = DoctorApp(Session(run=Run(SavedFile(str(FIXTURE)))))
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 60
        while app.report is None and time.monotonic() < deadline:
            await app.workers.wait_for_complete()
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        if app.report is None:
            raise SystemExit("the checks did not finish within 60 s")
        return app.export_screenshot(title="v100-doctor --replay v100-torch-2.11-cu130.json")


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(asyncio.run(screenshot()), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
