"""The Textual TUI: one more renderer of the same check and probe events. Imported only on a terminal."""
