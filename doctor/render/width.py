"""The width plain text wraps at where no terminal says otherwise: apart from render/common.py so that asking for it
(the CLI's text_width, `plan`) does not load the report's model."""

from __future__ import annotations

WIDTH = 100  # plain text in a file, a pipe or a log, and Markdown; on a terminal, the terminal's width
