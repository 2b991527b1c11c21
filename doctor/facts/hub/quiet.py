"""huggingface_hub's own log lines ("Retrying in 1s [Retry 1/5].", "'...' thrown while requesting GET ...") are
kept off the user's terminal while the doctor asks the Hub: they are counted, and one line of the doctor's own says
what happened and what to do. A call that fails still ends in its own one-line error (hub_model._why)."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from typing import Callable, Iterator

HUB_LOGGER = "huggingface_hub"


class _Collected(logging.Handler):
    """What huggingface_hub logged while the doctor asked it, kept instead of printed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.messages.append(record.getMessage())
        except Exception:  # noqa: BLE001 - a malformed record is dropped, never raised into the Hub call
            pass

    @property
    def retries(self) -> int:
        return sum("[Retry " in m for m in self.messages)


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):
        pass


@contextmanager
def hub_quiet(say: Callable[[str], None] = _say) -> Iterator[_Collected]:
    """Around the doctor's calls to the Hub: its log lines collected; retries summed up in one line afterwards."""
    try:  # its logging sets up its own handler when first imported: before ours are put in place, not inside
        import huggingface_hub.utils.logging  # noqa: F401  # lazy: huggingface_hub loads only around the doctor's Hub calls
    except ImportError:
        pass
    hub = logging.getLogger(HUB_LOGGER)
    saved = (hub.handlers[:], hub.propagate)
    collected = _Collected()
    hub.handlers, hub.propagate = [collected], False
    failed = False
    try:
        yield collected
    except BaseException:
        failed = True  # the caller's error line says why; the retries are not repeated there
        raise
    finally:
        hub.handlers, hub.propagate = saved
        if collected.retries and not failed:
            say(f"v100-doctor: the Hugging Face Hub was slow to answer ({collected.retries} retries); if it keeps "
                "failing, check the network or proxy (HTTPS_PROXY), or set HF_HUB_OFFLINE=1 to use the cache only")
