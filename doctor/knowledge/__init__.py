"""The knowledge base: data tables, each row with its source URL and a confidence tag.

Confidence: P = primary (vendor/project doc or source, maintainer statement), S = secondary
(mirror, user report), K = recalled and not confirmed in a source (shown as such in output).
"""
