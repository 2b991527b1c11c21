"""Every key the TUI answers to, with what it does: the help screen (`?`) and the docs (docs/reference/keys.md, generated) show
this table, and a test checks it against the bindings, so neither can leave a key out. The command palette
(ctrl+p) offers the PALETTE rows' actions under the same words."""

from __future__ import annotations

MAIN_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ ↓  j k", "move between checks"),
    ("enter", "open the check's details full-screen"),
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

# (row of MAIN_KEYS by its keys, DoctorApp action): what the command palette offers beside the checks
PALETTE: tuple[tuple[str, str], ...] = (("/", "filter"), ("c", "copy_fix"), ("p", "probe"), ("r", "rerun"),
                                        ("s", "save_json"), ("m", "save_markdown"), ("t", "story"), ("? F1", "help"))


def palette_actions() -> list[tuple[str, str, str]]:
    """(title, help, action) for the palette: the help screen's words, the key as the help line."""
    what = dict(MAIN_KEYS)
    return [(what[keys][0].upper() + what[keys][1:], f"key: {keys}", action) for keys, action in PALETTE]


STORY_KEYS: tuple[tuple[str, str], ...] = (
    ("← →  h l", "move between the stages"),
    ("tab shift+tab", "the next / previous case (the V100 story, the H200 run)"),
    ("enter", "open the stage's full report (escape comes back)"),
    ("s", "save the stage's JSON report (redacted unless --no-redact)"),
    ("m", "save the stage's Markdown for an issue, and copy it"),
    ("c", "copy the stage's first fix commands (OSC 52)"),
    ("? F1", "this help"),
    ("q ctrl+c", "quit"),
)


def key_names(table: tuple[tuple[str, str], ...]) -> set[str]:
    """The single keys a table names ("↑ ↓  j k" names ↑, ↓, j and k)."""
    return {k.lower() for keys, _ in table for k in keys.split()}
