"""What a knowledge row's confidence tag means, in the words every listing that shows the tags prints beside them."""

from __future__ import annotations

CONFIDENCE = {
    "P": "measured by this project",
    "S": "from a published source (its URL is kept with the row)",
    "K": "recalled, not yet confirmed in a source: treat as approximate",
}


def confidence_legend() -> str:
    """One line: the tags a listing shows, each with its meaning."""
    return "; ".join(f"[{tag}] {meaning}" for tag, meaning in CONFIDENCE.items())
