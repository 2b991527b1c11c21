"""The log `explain` reads: opened by the gatherer (doctor/facts/files/log_file.py), sniffed by the scanner's source
(doctor/logscan/source.py), which reads only the stream it is handed."""

from __future__ import annotations

from typing import BinaryIO

from doctor.facts.files.log_file import open_log_file
from doctor.logscan.source import LogSource, read_log


def open_log(path: str, encoding: str | None = None, stdin: BinaryIO | None = None) -> LogSource:
    """Open and sniff `path` (- for stdin); every problem is a LogInputError with a one-line reason."""
    log = open_log_file(path, stdin)
    return read_log(log.stream, log.name, log.size, encoding, owns_stream=log.owns_stream)
