"""Sniff a log (a file or stdin) and stream it as blocks that end on line boundaries.

Never reads the whole log: blocks are CHUNK bytes plus at most one partial line. A line longer than
MAX_LINE is cut into pieces at block edges (each piece keeps its line number). The first bytes
decide the encoding: a UTF-16/UTF-32 BOM (or the NUL pattern of BOM-less UTF-16, as Windows
PowerShell's `>` writes) is transcoded to UTF-8 on the fly; NUL bytes otherwise mean a binary file.

It reads only the stream it is handed: `doctor/facts/files/log_file.py` opens the file, FIFO or stdin.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from doctor.model.errors import LogInputError

CHUNK = 4 << 20
MAX_LINE = 64 << 10
SNIFF = 64 << 10
_ALLOWED_CONTROLS = set(b"\t\n\r\f\b\x1b\x07")  # tabs, line ends, ANSI colour escapes, bell


@dataclass
class LogSource:
    name: str
    stream: BinaryIO
    head: bytes  # the sniffed first bytes, not yet consumed from `stream`
    size: int | None  # bytes on disk; None for stdin
    encoding: str  # what the bytes are: utf-8, utf-16-le, ... or the user's --encoding
    decode_as: str  # how candidate lines are decoded after transcoding (utf-8 unless the user's codec is ASCII-compatible)
    _owns_stream: bool = True

    def close(self) -> None:
        if self._owns_stream:
            self.stream.close()

    def raw_chunks(self) -> Iterator[bytes]:
        """The bytes in order, transcoded to UTF-8 when the encoding is not ASCII-compatible."""
        chunks = _chain(self.head, self.stream)
        if self.encoding == self.decode_as:
            yield from chunks
            return
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        for chunk in chunks:
            yield decoder.decode(chunk).encode("utf-8")
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail.encode("utf-8")


def _chain(head: bytes, stream: BinaryIO) -> Iterator[bytes]:
    if head:
        yield head
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return
        yield chunk


def read_log(stream: BinaryIO, name: str = "<stdin>", size: int | None = None, encoding: str | None = None,
             owns_stream: bool = False) -> LogSource:
    """Sniff an opened log (doctor/facts/files/log_file.py opens it); every problem is a LogInputError with a one-line
    reason. `size` is its bytes on disk (None for a pipe); an owned stream is closed here if the log is refused."""
    owns = owns_stream
    try:
        head = stream.read(SNIFF)
    except OSError as exc:
        raise LogInputError(f"{name}: cannot read it ({exc.strerror})") from None
    if not head:
        if owns:
            stream.close()
        raise LogInputError(f"{name}: is empty, nothing to explain (capture both streams: your-command 2>&1 | tee run.log)")
    try:
        detected, head = _detect_encoding(head, name, encoding)
    except LogInputError:
        if owns:
            stream.close()
        raise
    decode_as = detected if _ascii_compatible(detected) else "utf-8"
    return LogSource(name=name, stream=stream, head=head, size=size, encoding=detected, decode_as=decode_as,
                     _owns_stream=owns)


def _ascii_compatible(codec: str) -> bool:
    try:
        return "a:\n".encode(codec) == b"a:\n"
    except (LookupError, UnicodeError):
        return False


def check_encoding(name: str) -> str:
    """The canonical codec name, or a LogInputError naming the problem."""
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise LogInputError(f"unknown encoding {name!r} (try utf-8, utf-16, gbk, cp1252, latin-1)") from None


def _detect_encoding(head: bytes, name: str, forced: str | None) -> tuple[str, bytes]:
    if forced:
        codec = check_encoding(forced)
        try:  # UTF-32/UTF-16 without their BOM refuse to start even with errors="replace"
            codecs.getincrementaldecoder(codec)(errors="replace").decode(head[:4096])
        except UnicodeError as exc:
            raise LogInputError(f"{name}: cannot be read as {forced} ({exc}); try another --encoding or none") from None
        return codec, head
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
                       (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if head.startswith(bom):
            return codec, head[len(bom):]
    if b"\x00" in head:
        utf16 = _bomless_utf16(head)
        if utf16:
            return utf16, head
        at = head.index(b"\x00")
        raise LogInputError(f"{name}: looks like a binary file (a NUL byte at offset {at}), not a text log; "
                            "give the console output or crash log as text")
    controls = sum(1 for b in head if b < 32 and b not in _ALLOWED_CONTROLS)
    if controls > len(head) // 10:
        raise LogInputError(f"{name}: looks like a binary file ({controls} control bytes in the first "
                            f"{len(head)}), not a text log")
    return "utf-8", head


def _bomless_utf16(head: bytes) -> str | None:
    """UTF-16 text without a BOM has NULs at almost every odd (LE) or even (BE) byte for ASCII content."""
    even, odd = head[0::2], head[1::2]
    if not odd:
        return None
    nul_even, nul_odd = even.count(0) / len(even), odd.count(0) / len(odd)
    if nul_odd > 0.3 and nul_even < 0.05:
        return "utf-16-le"
    if nul_even > 0.3 and nul_odd < 0.05:
        return "utf-16-be"
    return None


def blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Re-cut chunks into blocks ending at a newline; a line longer than MAX_LINE is split at block edges.
    Each block is copied once (the carried partial line joined to the chunk's lines through a memoryview)."""
    carry = b""
    for raw in chunks:
        if not raw:
            continue
        last = raw.rfind(b"\n")
        if last == -1:  # no line ends here: carry it all, or emit a too long line in pieces
            buf = carry + raw
            carry = b"" if len(buf) > MAX_LINE else buf
            if not carry:
                yield buf
            continue
        cut = last + 1
        if len(raw) - cut > MAX_LINE:  # the unfinished last line is too long to carry: emit it in pieces
            yield carry + raw if carry else raw
            carry = b""
            continue
        if carry:
            yield b"".join((carry, memoryview(raw)[:cut]))
        else:
            yield raw if cut == len(raw) else raw[:cut]
        carry = raw[cut:]
    if carry:
        yield carry
