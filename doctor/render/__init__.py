"""Renderers: one Report drawn as plain text, Markdown or JSON. No logic of their own."""
