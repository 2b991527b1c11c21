"""The story view (`v100-doctor demo`): each recorded case's stages side by side, each with its measured speed,
its ceiling, the cause the doctor names and the fix that leads to the next stage.

It draws the CaseViews of doctor.render.panels (every figure from a replayed example's report); enter opens a
stage's whole report on the main screen, and escape (or `t`) comes back here.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from doctor.render.panels import CaseView, StageView
from doctor.tui.verdict_panel import bar

COMPACT_BELOW = 80  # a narrower terminal shows one stage at a time
HEADLINE_FROM = 30  # rows: the selected stage's verdict sentence under the cards (the full report has it anyway)


class StageCard(Static):
    """One stage; the selected one has the bright border."""

    def __init__(self, stage: StageView, number: int, of: int, **kw) -> None:
        super().__init__(**kw)
        self.stage, self.number, self.of = stage, number, of

    def on_mount(self) -> None:
        self.border_title = f"stage {self.number} of {self.of}" if self.of > 1 else "recorded run"

    def render(self):
        s = self.stage
        width = max(self.content_size.width, 8)
        parts = []
        if s.measured_tok_s is not None and s.ceiling_tok_s:
            share = s.measured_tok_s / s.ceiling_tok_s
            parts += [Text(f"{s.measured_tok_s:.1f} tok/s", style="bold"),
                      Text(f"of {s.ceiling_tok_s:.1f} ceiling", style="dim" if not self.app.no_color else ""),
                      Text(f"{bar(share, max(width - 5, 3))} {share:.0%}")]
        else:
            parts.append(Text("no measured speed recorded"))
        if s.cause:
            parts.append(Text.assemble(("Cause: ", "bold"), s.cause))
        if s.fix:
            parts.append(Text.assemble(("Fix → next: " if self.number < self.of else "Fix: ", "bold"), s.fix))
        parts.append(Text(s.setup, style="italic"))
        return Group(*parts)


class StoryScreen(Screen):
    """Cases as tabs along the top, the selected case's stages side by side below."""

    BINDINGS = [
        Binding("left,h", "stage(-1)", "Stage", key_display="←→hl"),
        Binding("right,l", "stage(1)", "Next", show=False),
        Binding("tab", "case(1)", "Case", key_display="tab"),
        Binding("shift+tab", "case(-1)", "Previous case", show=False),
        Binding("enter", "open", "Open", key_display="⏎"),
        Binding("s", "save('json')", "Save"),
        Binding("m", "save('markdown')", "Md"),
        Binding("c", "copy_fix", "Copy"),
        Binding("escape", "noop", "", show=False),  # the story is the demo's first screen: escape stays here
    ]

    def __init__(self, cases: tuple[CaseView, ...], case: int = 0, stage: int = 0) -> None:
        super().__init__()
        self.cases = cases
        self.case = min(case, len(cases) - 1)
        self.stage = stage

    def compose(self) -> ComposeResult:
        yield Static(id="story-tabs")
        yield Static(id="story-title")
        yield Horizontal(id="story-stages")
        yield Static(id="story-headline")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one(Footer).compact = True
        self.query_one(Footer).show_command_palette = False  # ctrl+p is in help (?): the room goes to the keys
        await self._show_case()

    def on_resize(self, event) -> None:
        self.set_class(event.size.width < COMPACT_BELOW, "-compact")
        self.query_one("#story-headline").display = event.size.height >= HEADLINE_FROM
        self._paint_selection()

    async def _show_case(self) -> None:
        case = self.cases[self.case]
        self.stage = min(self.stage, len(case.stages) - 1)
        row = self.query_one("#story-stages")
        await row.remove_children()
        await row.mount_all([StageCard(s, i + 1, len(case.stages), classes="stage") for i, s in enumerate(case.stages)])
        self._paint_tabs()
        self._paint_selection()

    def _paint_tabs(self) -> None:
        tabs = Text()
        for i, case in enumerate(self.cases):
            tabs.append(f" {case.label} ", style="reverse bold" if i == self.case else "")
            tabs.append("  ")
        tabs.append("(tab: next case)", style="dim" if not self.app.no_color else "")
        self.query_one("#story-tabs", Static).update(tabs)

    def _paint_selection(self) -> None:
        cards = list(self.query(StageCard))
        for i, card in enumerate(cards):
            card.set_class(i == self.stage, "-selected")
        if not cards:
            return
        stage = cards[self.stage].stage
        self.query_one("#story-title", Static).update(Text(
            f"RECORDED EXAMPLES, not this machine · stage {self.stage + 1} of {len(cards)}: {stage.name} "
            "(enter: its full report)", no_wrap=True, overflow="ellipsis"))
        self.query_one("#story-headline", Static).update(Text(stage.headline))

    def action_stage(self, step: int) -> None:
        count = len(self.cases[self.case].stages)
        self.stage = (self.stage + step) % count
        self._paint_selection()

    async def action_case(self, step: int) -> None:
        self.case = (self.case + step) % len(self.cases)
        self.stage = 0
        await self._show_case()

    def action_open(self) -> None:
        name = self.cases[self.case].stages[self.stage].name
        case, stage = self.case, self.stage
        self.app.pop_screen()
        self.app.open_stage(case, stage, name)

    def action_save(self, what: str) -> None:
        """s / m: the selected stage's report, as the full report's keys save it."""
        self.app.save_stage(self.selected.name, markdown=what == "markdown")

    def action_copy_fix(self) -> None:
        """c: the commands of the selected stage's first fix."""
        self.app.copy_stage_fix(self.selected.name)

    def action_noop(self) -> None:
        pass

    @property
    def selected(self) -> StageView:
        return self.cases[self.case].stages[self.stage]
