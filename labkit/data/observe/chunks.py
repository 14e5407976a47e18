"""Large logs read piece by piece: UTF-8 byte chunks cut at line ends, their lines classified
with numpy, and the tidy columns written into preallocated arrays.

A day of 1 Hz ``nvidia-smi dmon`` on 8 GPUs is 691,200 lines and 9.7 million tidy rows. Holding
the file's text, its list of lines and pandas' table of it at once (as a reader of the whole text
does) costs ~14x the file; read in chunks of :data:`CHUNK_BYTES`, only one chunk and the tidy
columns themselves are alive (the columns are the floor: ~21 bytes per tidy row).

- :func:`byte_chunks` reads a path or an open file as UTF-8 byte chunks, each ending at a line
  break (UTF-16 with a BOM is decoded incrementally and re-encoded; the same size, encoding and
  NUL errors as :func:`labkit.data.observe.decode_log`, word for word).
- :func:`classify` finds, per line of a chunk, its byte range, its number of whitespace-separated
  cells and whether it is a ``#`` line, without a Python object per line.
- :class:`TidySink` holds the growing tidy columns (capacity estimated from the file size; a
  numpy ``resize`` grows them in place when the estimate is short).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = ["CHUNK_BYTES", "ChunkLines", "TidySink", "byte_chunks", "checked_size", "classify",
           "cut_lines", "normalize_breaks"]

#: Bytes read at a time (~10,000 dmon lines; the temporaries of a chunk are ~5x it). [bytes]
CHUNK_BYTES = 1 << 20
#: ASCII characters ``str.split()`` splits on (str.isspace within ASCII).
_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
#: Line breaks ``str.splitlines`` knows besides ``\n`` and ``\r`` (UTF-8 bytes; the last three
#: are not ASCII). Looked for with ``in`` (memchr speed; a regex is 100x slower here).
_OTHER_BREAKS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
_OTHER_BREAKS_UTF8 = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def normalize_breaks(chunk: bytes) -> bytes:
    """Return ``chunk`` with every line break ``str.splitlines`` knows written as ``\\n``."""
    if b"\r" in chunk:
        chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if any(b in chunk for b in _OTHER_BREAKS) or (not chunk.isascii() and any(
            b in chunk for b in _OTHER_BREAKS_UTF8)):
        text = chunk.decode("utf-8")
        chunk = ("\n".join(text.splitlines()) + "\n").encode("utf-8")
    return chunk


def cut_lines(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """Re-cut a stream of bytes into chunks that end with ``\n`` (a CRLF is never split; a
    file with CR-only breaks comes as one chunk)."""
    carry = b""
    for piece in pieces:
        data = carry + piece if carry else piece
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        yield data[:cut]
        carry = data[cut:]
    if carry:
        yield carry + b"\n"


def _slices(data: bytes) -> Iterator[bytes]:
    memory = memoryview(data)
    for k in range(0, len(data), CHUNK_BYTES):
        yield bytes(memory[k:k + CHUNK_BYTES])


def _pieces(fh: IO[bytes], size: int) -> Iterator[bytes]:
    while piece := fh.read(size):
        yield piece


def _checked(chunks: Iterator[bytes], fail: Callable[[], object]) -> Iterator[bytes]:
    """Pass UTF-8 chunks on, breaks normalised; on a decoding error or a NUL call ``fail``
    (which raises). A chunk ends at ``\n``, so it never splits a multi-byte character."""
    for chunk in chunks:
        if b"\0" in chunk:
            fail()
        if not chunk.isascii():
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                fail()
        yield normalize_breaks(chunk)


def _utf16_recoded(pieces: Iterator[bytes], fail: Callable[[], object]) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder("utf-16")()
    try:
        for piece in pieces:
            text = decoder.decode(piece)
            if "\0" in text:
                fail()
            yield text.encode("utf-8")
        text = decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        fail()
        return
    if "\0" in text:
        fail()
    yield text.encode("utf-8")


def checked_size(path: Path, max_bytes: int) -> int:
    """Return the size of the file at ``path``, refusing one past ``max_bytes``. [bytes]

    Raises
    ------
    ValueError
        If the file cannot be stat'ed, or is larger than ``max_bytes`` (both named by file).
    """
    try:
        size = path.stat().st_size
    except OSError as err:
        raise ValueError(f"{path.name}: cannot read ({err.strerror})") from None
    if size > max_bytes:
        raise ValueError(f"{path.name}: {size:,} bytes, more than the {max_bytes:,} allowed")
    return size


def byte_chunks(path_or_buffer: str | os.PathLike[str] | IO[str] | IO[bytes], max_bytes: int,
                decode: Callable[[bytes, str, int], str]) -> tuple[Iterator[bytes], str]:
    """Return (UTF-8 chunks of a log, each ending with ``\\n``; the file's name).

    ``decode(data, name, max_bytes)`` is the whole-file decoder whose errors are the
    messages to give (:func:`labkit.data.observe.decode_log`): it is called on the whole file
    only when a chunk shows a problem, so the error is exactly the one it raises.

    Raises
    ------
    ValueError
        For a path that cannot be read or is larger than ``max_bytes`` (as the text readers).
    """
    if not isinstance(path_or_buffer, (str, os.PathLike)):
        from pathlib import PurePath

        name = PurePath(str(getattr(path_or_buffer, "name", "<buffer>"))).name
        data: Any = path_or_buffer.read(max_bytes + 1)
        if isinstance(data, str):
            if len(data.encode("utf-8")) > max_bytes:
                raise ValueError(f"{name}: more than the {max_bytes:,} bytes allowed")
            data = data.removeprefix("\ufeff").encode("utf-8", "replace")  # a lone surrogate: "?"
            return (normalize_breaks(c) for c in cut_lines(_slices(data))), name
        data = bytes(data)
        if len(data) > max_bytes or (not data.startswith(codecs.BOM_UTF8) and (
                any(data.startswith(bom) for bom, _ in _BOMS))):
            text = decode(data, name, max_bytes).encode("utf-8")
            return (normalize_breaks(c) for c in cut_lines(_slices(text))), name

        def fail() -> None:
            decode(data, name, max_bytes)
            raise AssertionError("the decoder accepted what a chunk refused")  # pragma: no cover

        return _from_pieces(_slices(data), data[:4], fail), name
    path = Path(path_or_buffer)
    name = path.name
    checked_size(path, max_bytes)
    fh = path.open("rb")
    head = fh.read(4)
    fh.seek(0)

    def whole() -> None:
        fh.seek(0)
        decode(fh.read(max_bytes + 1), name, max_bytes)
        raise AssertionError("the decoder accepted what a chunk refused")  # pragma: no cover

    def closing() -> Iterator[bytes]:
        with fh:
            yield from _from_pieces(_pieces(fh, CHUNK_BYTES), head, whole)

    return closing(), name


def _from_pieces(pieces: Iterator[bytes], head: bytes, fail: Callable[[], object]
                 ) -> Iterator[bytes]:
    """Strip a UTF-8 BOM, or decode UTF-16 (BOM-marked), and cut at line ends."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return (normalize_breaks(c) for c in cut_lines(_utf16_recoded(pieces, fail)))

    def stripped() -> Iterator[bytes]:
        first = True
        for piece in pieces:
            if first and piece.startswith(codecs.BOM_UTF8):
                piece = piece[len(codecs.BOM_UTF8):]
            first = False
            yield piece

    return _checked(cut_lines(stripped()), fail)


@dataclass(frozen=True)
class ChunkLines:
    """The lines of one chunk: byte ranges, cell counts, ``#`` lines.

    Attributes
    ----------
    chunk : bytes
        The chunk (every line ends with ``\\n``).
    starts, ends : numpy.ndarray of int64
        Byte offset of each line's first byte and of its ``\\n``.
    cells : numpy.ndarray of int32
        Whitespace-separated cells per line (0: a blank line).
    hashed : numpy.ndarray of bool
        Whether the line's first non-blank character is ``#``.
    lead : numpy.ndarray of uint8
        The line's first non-blank character (0: blank line; 255: not ASCII).
    """

    chunk: bytes
    starts: np.ndarray
    ends: np.ndarray
    cells: np.ndarray
    hashed: np.ndarray
    lead: np.ndarray

    def __len__(self) -> int:
        return len(self.ends)

    def text(self, k: int) -> str:
        """Line ``k`` (0-based in the chunk) as text, without its line break."""
        return self.chunk[self.starts[k]:self.ends[k]].decode("utf-8", "replace")

    def join(self, rows: np.ndarray) -> bytes:
        """The lines ``rows`` (sorted indices) as one bytes object, one slice per run."""
        if not len(rows):
            return b""
        breaks = np.flatnonzero(np.diff(rows) != 1) + 1
        firsts = rows[np.concatenate(([0], breaks))]
        lasts = rows[np.concatenate((breaks - 1, [len(rows) - 1]))]
        c = self.chunk
        return b"".join([c[self.starts[a]:self.ends[b] + 1]
                         for a, b in zip(firsts.tolist(), lasts.tolist(), strict=True)])


def classify(chunk: bytes) -> ChunkLines:
    """Split a chunk (ending with ``\\n``, breaks normalised) into :class:`ChunkLines`.

    Cells are counted as ``str.split()`` counts them (ASCII whitespace; a chunk with other
    characters is counted line by line in Python, the same rule).
    """
    a = np.frombuffer(chunk, dtype=np.uint8)
    ends = np.flatnonzero(a == 10)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    if not chunk.isascii():
        lines = chunk.decode("utf-8").split("\n")[:-1]
        cells = np.fromiter((len(s.split()) for s in lines), dtype=np.int32, count=len(lines))
        heads = (s.lstrip()[:1] or "\0" for s in lines)
        lead = np.fromiter((ord(c) if c < "\x80" else 255 for c in heads), dtype=np.uint8,
                           count=len(lines))
        return ChunkLines(chunk, starts, ends, cells, lead == ord("#"), lead)
    ws = _WS[a]
    first = ~ws
    first[1:] &= ws[:-1]  # the first byte of each cell
    positions = np.flatnonzero(first)
    upto = np.searchsorted(positions, ends)  # cells that start before each line's end
    cells = np.diff(upto, prepend=0).astype(np.int32)
    lead = np.zeros(len(ends), dtype=np.uint8)
    some = cells > 0
    lead[some] = a[positions[(upto - cells)[some]]]
    return ChunkLines(chunk, starts, ends, cells, lead == ord("#"), lead)


class TidySink:
    """Growing tidy columns: time, GPU, metric/unit/status/reason codes, value.

    Parameters
    ----------
    capacity : int
        Rows to allocate first (an estimate; grown in place with numpy's ``resize``).
    """

    def __init__(self, capacity: int) -> None:
        capacity = max(int(capacity), 1024)
        self.n = 0
        self.t = np.empty(capacity, dtype=np.float64)
        # the smallest integer types that hold the values (widened when a larger one comes)
        self.gpu = np.empty(capacity, dtype=np.int8)
        self.metric = np.empty(capacity, dtype=np.int8)
        self.value = np.empty(capacity, dtype=np.float64)
        self.unit = np.empty(capacity, dtype=np.int8)
        self.status = np.empty(capacity, dtype=np.int8)
        self.reason = np.empty(capacity, dtype=np.int8)

    def _arrays(self) -> tuple[str, ...]:
        return ("t", "gpu", "metric", "value", "unit", "status", "reason")

    def _resize(self, size: int) -> None:
        for name in self._arrays():
            getattr(self, name).resize(size, refcheck=False)

    def add(self, t: np.ndarray, gpu: np.ndarray, metric: np.ndarray, value: np.ndarray,
            unit: np.ndarray, status: np.ndarray, reason: np.ndarray) -> None:
        """Append rows (arrays of one length)."""
        k = len(value)
        if self.n + k > len(self.t):
            self._resize(max(self.n + k, int(len(self.t) * 1.5)))
        self.gpu = _wide_enough(self.gpu, gpu)
        self.metric = _wide_enough(self.metric, metric)
        end = self.n + k
        self.t[self.n:end] = t
        self.gpu[self.n:end] = gpu
        self.metric[self.n:end] = metric
        self.value[self.n:end] = value
        self.unit[self.n:end] = unit
        self.status[self.n:end] = status
        self.reason[self.n:end] = reason
        self.n = end

    def finish(self) -> None:
        """Shrink the columns to the rows written (in place)."""
        self._resize(self.n)

    def recode_metric(self, lookup: np.ndarray) -> None:
        """Replace each metric code ``c`` by ``lookup[c]``, in place (a slice at a time)."""
        step = 1 << 20
        for a in range(0, self.n, step):
            self.metric[a:a + step] = lookup[self.metric[a:a + step]]


    def in_tidy_order(self) -> bool:
        """Whether the rows run by time, GPU, then metric code (checked a slice at a time)."""
        step = 1 << 16
        for a in range(0, max(self.n - 1, 0), step):
            b = min(a + step + 1, self.n)
            dt = np.diff(self.t[a:b])
            dg = np.diff(self.gpu[a:b].astype(np.int64))
            dm = np.diff(self.metric[a:b].astype(np.int64))
            if not np.all((dt > 0) | ((dt == 0) & ((dg > 0) | ((dg == 0) & (dm > 0))))):
                return False
        return True

    def sort_tidy(self) -> None:
        """Sort the rows by time, GPU, metric code (stable), in place, one column at a time.

        Costs the order (4 bytes per row) and one column's copy, not a second frame: a log
        whose clock goes back (two runs concatenated out of order) stays within ~2x.
        """
        order = np.lexsort((self.metric[:self.n], self.gpu[:self.n], self.t[:self.n]))
        order = order.astype(np.int32) if self.n < np.iinfo(np.int32).max else order
        for name in self._arrays():
            column = getattr(self, name)
            column[:self.n] = column[:self.n][order]


def _wide_enough(store: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Return ``store``, or a copy in a wider integer type if ``values`` do not fit it."""
    if not len(values):
        return store
    low, high = int(values.min()), int(values.max())
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
            break
    if np.dtype(dtype).itemsize <= store.dtype.itemsize:
        return store
    return store.astype(dtype)
