"""Every key the TUI answers to, with what it does: the help screen (`?`) and the docs (docs/reference/keys.md, generated) show
this table, and a test checks it against the bindings, so neither can leave a key out. The command palette
(ctrl+p) offers the PALETTE rows' actions under the same words."""

from __future__ import annotations

MAIN_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "move between checks"),
    ("enter", "open the check's details full-screen"),
    ("v", "the full text of every line the screen cuts with “…” (header, the check, probe, verdict); escape closes it"),
    ("escape", "back: full-screen details → list; filter → list; a demo report → the story"),
    ("/", "filter the checks by id or title (escape clears it)"),
    ("c", "copy the shown check's fix commands (OSC 52)"),
    ("p", "run the timed probe (live runs only)"),
    ("r", "re-run today's checks (on a saved report: on its recorded facts)"),
    ("s", "save the JSON report (redacted unless --no-redact)"),
    ("m", "save Markdown for an issue, and copy it"),
    ("t", "the story view (demo only)"),
    ("ctrl+p", "command palette: every check and action by name"),
    ("? F1", "this help"),
    ("q ctrl+c ctrl+q", "quit (a running probe is cancelled first)"),
)

# (row of MAIN_KEYS by its keys, DoctorApp action as its binding names it): what the command palette offers beside
# the checks
PALETTE: tuple[tuple[str, str], ...] = (("v", "full_text"), ("/", "filter"), ("c", "copy_fix"), ("p", "probe"),
                                        ("r", "rerun"), ("s", "save('json')"), ("m", "save('markdown')"), ("t", "story"),
                                        ("? F1", "help"))


def palette_actions() -> list[tuple[str, str, str]]:
    """(title, help, action) for the palette: the help screen's words, the key as the help line."""
    what = dict(MAIN_KEYS)
    return [(what[keys][0].upper() + what[keys][1:], f"key: {keys}", action) for keys, action in PALETTE]


STORY_KEYS: tuple[tuple[str, str], ...] = (
    ("← →  h l", "move between the stages"),
    ("tab shift+tab", "the next / previous case (the V100 story, the H200 run)"),
    ("enter", "open the stage's full report (escape comes back)"),
    ("j k ↓ ↑ pagedown pageup", "scroll the selected stage's card when it is cut short (“…”)"),
    ("v", "the stage's card, the title and the cases, whole; escape closes it"),
    ("s", "save the stage's JSON report (redacted unless --no-redact)"),
    ("m", "save the stage's Markdown for an issue, and copy it"),
    ("c", "copy the stage's first fix commands (OSC 52)"),
    ("? F1", "this help"),
    ("q ctrl+c", "quit"),
)


PLAN_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "move between the options"),
    ("enter", "show the option's commands (download, config, launch line)"),
    ("s", "sort by the next column: speed, context, peak memory, download size, bits per weight"),
    ("v", "the answers and the shown commands, whole; escape closes it"),
    ("ctrl+p", "command palette"),
    ("q escape", "quit"),
)

# the full-text view (`v`) on every screen
FULL_TEXT_KEYS: tuple[tuple[str, str], ...] = (
    ("j k ↓ ↑", "scroll a line"),
    ("pagedown space pageup", "scroll a page"),
    ("escape q v", "close it"),
)


def key_names(table: tuple[tuple[str, str], ...]) -> set[str]:
    """The single keys a table names ("↑ ↓  j k" names ↑, ↓, j and k)."""
    return {k.lower() for keys, _ in table for k in keys.split()}
