"""The story view (`v100-doctor demo`): each recorded case's stages side by side, each with its measured speed,
its ceiling, the cause the doctor names and the fix that leads to the next stage.

It draws the CaseViews of doctor.render.panels (every figure from a replayed example's report); enter opens a
stage's whole report on the main screen, and escape (or `t`) comes back here.
"""

from __future__ import annotations

import textwrap
from typing import Any, Protocol

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from doctor.render.panels import CaseView, StageView
from doctor.tui.keys_footer import KeysFooter
from doctor.tui.verdict_panel import bar

COMPACT_BELOW = 80  # a narrower terminal shows one stage at a time, and this key line instead of the footer
COMPACT_KEYS = "? keys  hl stage  tab case  ⏎ open  jk more  q quit"  # `?` lists the rest (v s m c), as the main screen
HEADLINE_FROM = 30  # rows: the selected stage's verdict sentence under the cards (the full report has it anyway)
HEADLINE_LINES = 4  # at most; cut with "…" (`v` shows it whole)


class StageRoutes(Protocol):
    """What the story asks of the app (doctor/tui/story_routes.py): a stage's report shown, saved, its fix copied."""

    def open_stage(self, case: int, stage: int, name: str) -> None: ...

    def save_stage(self, name: str, markdown: bool) -> None: ...

    def copy_stage_fix(self, name: str) -> None: ...


def at_most(text: str, width: int, lines: int) -> str:
    """`text` wrapped to `width`, in at most `lines` lines, the last one ending in "…" when it is cut."""
    wrapped = textwrap.wrap(text, max(width, 8)) or [""]
    if len(wrapped) <= lines:
        return "\n".join(wrapped)
    last = wrapped[lines - 1]
    return "\n".join(wrapped[:lines - 1] + [(last if len(last) < width else last[:width - 1]) + "…"])


class StageCard(Widget):
    """One stage; the selected one has the bright border. Its lines scroll (j/k, PageUp/PageDown on the story): a card
    cut short ends its last line in "…" (and its first, once scrolled), and `v` shows it whole."""

    def __init__(self, stage: StageView, number: int, of: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.stage, self.number, self.of = stage, number, of
        self.top = 0  # the first line shown

    def on_mount(self) -> None:
        self.border_title = f"stage {self.number} of {self.of}" if self.of > 1 else "recorded run"

    def paragraphs(self, width: int) -> list[Text]:
        """The card's text, a paragraph per item, its bar drawn for `width` columns."""
        s = self.stage
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
        return parts

    def content(self, width: int) -> list[Text]:
        """The card's lines at this width, uncut."""
        return [line for part in self.paragraphs(width) for line in part.wrap(self.app.console, max(width, 1))]

    @property
    def plain(self) -> str:
        """The whole card, a line per paragraph (the full-text view wraps it to its own width)."""
        return "\n".join(part.plain for part in self.paragraphs(24))

    def scroll_lines(self, step: int) -> None:
        """Move the shown window by `step` lines, within the card's text."""
        lines = len(self.content(max(self.content_size.width, 8)))
        self.top = max(0, min(self.top + step, lines - self.content_size.height))
        self._say_more()
        self.refresh()

    def on_resize(self) -> None:
        self._say_more()

    def _say_more(self) -> None:
        self.border_subtitle = "j/k: more" if any(self.cut) else ""

    @property
    def cut(self) -> tuple[bool, bool]:
        """(lines hidden above, lines hidden below)."""
        lines = len(self.content(max(self.content_size.width, 8)))
        return self.top > 0, self.top + self.content_size.height < lines

    def render(self) -> RenderableType:
        width, height = max(self.content_size.width, 8), max(self.content_size.height, 1)
        lines = self.content(width)
        self.top = max(0, min(self.top, len(lines) - height))
        shown = [line.copy() for line in lines[self.top:self.top + height]]
        above, below = self.top > 0, self.top + height < len(lines)
        if shown and above:
            shown[0] = Text("…") + shown[0]
            shown[0].truncate(width)
        if shown and below:
            shown[-1].truncate(width - 1)
            shown[-1].append("…")
        return Group(*shown)


class StoryScreen(Screen):
    """Cases as tabs along the top, the selected case's stages side by side below."""

    BINDINGS = [
        Binding("question_mark,f1", "app.help", "Help", key_display="?"),  # first: below 80 columns the rest may not fit
        Binding("left,h", "stage(-1)", "Stage", key_display="hl"),
        Binding("right,l", "stage(1)", "Next", show=False),
        Binding("tab", "case(1)", "Case", key_display="tab"),
        Binding("shift+tab", "case(-1)", "Previous case", show=False),
        Binding("enter", "open", "Open", key_display="⏎"),
        Binding("v", "full_text", "Full"),
        Binding("j,down", "scroll(1)", "More", key_display="jk"),
        Binding("k,up", "scroll(-1)", "Up", show=False),
        Binding("pagedown", "scroll_page(1)", "Page", show=False),
        Binding("pageup", "scroll_page(-1)", "Page up", show=False),
        Binding("s", "save('json')", "Save", key_display="s/m"),  # s JSON, m Markdown: one hint
        Binding("m", "save('markdown')", "Md", show=False),
        Binding("c", "copy_fix", "Copy"),
        Binding("escape", "noop", "", show=False),  # the story is the demo's first screen: escape stays here
    ]

    def __init__(self, cases: tuple[CaseView, ...], case: int = 0, stage: int = 0, *, routes: StageRoutes) -> None:
        super().__init__()
        self.routes = routes
        self.cases = cases
        self.case = min(case, len(cases) - 1)
        self.stage = stage

    def compose(self) -> ComposeResult:
        yield Static(id="story-tabs")
        yield Static(id="story-title")
        yield Horizontal(id="story-stages")
        yield Static(id="story-headline")
        yield Static(COMPACT_KEYS, id="story-keys")  # below 80 columns: the footer's nine keys do not fit in one line
        yield KeysFooter()

    async def on_mount(self) -> None:
        self.query_one(Footer).compact = True
        self.query_one(Footer).show_command_palette = False  # ctrl+p is in help (?): the room goes to the keys
        await self._show_case()

    def on_resize(self, event: Resize) -> None:
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
        self.query_one("#story-headline", Static).update(Text(at_most(stage.headline, self.size.width - 2, HEADLINE_LINES)))

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
        self.routes.open_stage(case, stage, name)

    @property
    def selected_card(self) -> StageCard | None:
        cards = list(self.query(StageCard))
        return cards[self.stage] if self.stage < len(cards) else None

    def action_scroll(self, step: int) -> None:
        """j/k: the selected card's lines, when it is cut short."""
        if (card := self.selected_card) is not None:
            card.scroll_lines(step)

    def action_scroll_page(self, step: int) -> None:
        if (card := self.selected_card) is not None:
            card.scroll_lines(step * max(card.content_size.height - 1, 1))

    def action_full_text(self) -> None:
        """v: the selected stage's card, the story's title and the case tabs, whole."""
        from doctor.tui.full_text import FullTextScreen, section  # lazy: loads when first asked for

        stage = self.selected
        card = self.selected_card
        parts = [section("Cases", *(c.label for c in self.cases)),
                 section(f"Stage {self.stage + 1} of {len(self.cases[self.case].stages)}: {stage.name}",
                         card.plain if card is not None else "", stage.headline)]
        self.app.push_screen(FullTextScreen("Full text (escape closes)", parts))

    def action_save(self, what: str) -> None:
        """s / m: the selected stage's report, as the full report's keys save it."""
        self.routes.save_stage(self.selected.name, markdown=what == "markdown")

    def action_copy_fix(self) -> None:
        """c: the commands of the selected stage's first fix."""
        self.routes.copy_stage_fix(self.selected.name)

    def action_noop(self) -> None:
        pass

    @property
    def selected(self) -> StageView:
        return self.cases[self.case].stages[self.stage]
