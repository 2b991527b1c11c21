"""The probe panel: phase and progress, decode tok/s as a sparkline, and the card's live readings."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import ProgressBar, Sparkline, Static

from doctor.render.panels import ProbeView

PHASE_NAMES = {"build": "JIT build", "jit": "JIT build", "import": "import", "load": "load", "warmup": "warm-up",
               "prefill": "prefill", "decode": "decode runs", "runs": "timed runs", "done": "finished"}


class ProbePanel(Vertical):
    """Draws a ProbeView; `show(view)` is the only way in (before it is mounted, the view waits for on_mount)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.view = ProbeView()
        self._drawn = False  # set in on_mount: its parts exist from then on

    def compose(self) -> ComposeResult:
        yield Static(id="probe-phase")
        yield ProgressBar(id="probe-progress", show_eta=False)
        with Horizontal(id="probe-speed-row"):
            yield Sparkline([], id="probe-spark")
            yield Static(id="probe-speed")
        yield Static(id="probe-live")

    def on_mount(self) -> None:
        self.border_title = "Probe"
        self._drawn = bool(self.query("#probe-phase"))  # not when the app quit as it mounted (its parts never came)
        self.show(self.view)

    def show(self, view: ProbeView) -> None:
        self.view = view
        if not self._drawn:  # mounted after the first frame: on_mount draws it
            return
        self.query_one("#probe-phase", Static).update(Text(phase_line(view)))
        bar = self.query_one("#probe-progress", ProgressBar)
        bar.update(total=view.total, progress=view.done if view.total else 0)
        measuring = view.state not in ("skipped", "idle")  # no bar animates for a probe that cannot run
        bar.display = measuring
        self.query_one("#probe-speed-row").display = measuring
        self.query_one("#probe-spark", Sparkline).data = list(view.tok_s)
        shown = view.reported_tok_s if view.reported_tok_s is not None else (view.tok_s[-1] if view.tok_s else None)
        speed = f"{shown:.1f} tok/s" if shown is not None else ""
        self.query_one("#probe-speed", Static).update(speed)
        self.query_one("#probe-live", Static).update(Text(live_line(view)))
        self.set_class(view.state == "failed", "-failed")
        self.set_class(view.state == "skipped", "-skipped")
        self.border_title = "No probe" if view.state == "skipped" else "Probe"


def phase_line(view: ProbeView) -> str:
    if view.state == "idle":
        return "not run yet"
    if view.state == "failed":
        return f"failed: {view.error}"
    if view.state == "skipped":
        return view.error
    if view.state == "cancelled":
        return "cancelled"
    if view.state == "done":
        return view.result or "finished"
    name = PHASE_NAMES.get(view.phase, view.phase)
    return f"{name}: {view.message}" if view.message else name


def live_line(view: ProbeView) -> str:
    parts = []
    if view.mem_clock_mhz is not None:
        top = f"/{view.mem_clock_max_mhz:.0f}" if view.mem_clock_max_mhz else ""
        parts.append(f"mem {view.mem_clock_mhz:.0f}{top} MHz")
    if view.temperature_c is not None:
        parts.append(f"{view.temperature_c:.0f} °C")
    if view.pcie_rx_mbs is not None:
        parts.append(f"PCIe RX {view.pcie_rx_mbs / 1000:.2f} GB/s")
    return " · ".join(parts)
