"""A student server's output into the hub's log, at a bounded rate.

A student's server and kernels inherit the server's stdout/stderr (jupyter_client starts kernels
with them; ipykernel keeps a copy of the original descriptor), so student code can write to the
hub's own output without limit — onto the hub's disk when the operator sends the hub's log to a
file. The spawner gives each server a pipe instead (``LocalProcessSpawner.popen_kwargs``) and
:class:`OutputRelay` copies it to the hub's stderr through a token bucket: :data:`RATE_BPS` on
average, bursts up to :data:`BURST_BYTES`; what is over is dropped and counted, with one note
per :data:`NOTE_EVERY_S` naming the account.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["BURST_BYTES", "NOTE_EVERY_S", "RATE_BPS", "OutputRelay"]

#: A server logs a few hundred bytes per request; a spawn's tracebacks a few kB. [bytes/s]
RATE_BPS = 16 * 1024
#: Enough for a failed start's whole traceback at once. [bytes]
BURST_BYTES = 256 * 1024
#: How often a note says how much was dropped. [s]
NOTE_EVERY_S = 10.0
CHUNK = 64 * 1024


class OutputRelay:
    """Copy ``source_fd`` to ``sink`` through a token bucket, until the pipe closes.

    Parameters
    ----------
    name : str
        The student account (named in the notes).
    source_fd : int
        The read end of the server's output pipe (closed at the end).
    sink : BinaryIO
        Where the hub's log goes (the hub's ``sys.stderr.buffer``).
    rate_bps, burst_bytes : int
        The bucket. [bytes/s], [bytes]
    clock : callable, optional
        Seconds, monotonic (tests pass a fake one).
    close_sink : bool
        Close ``sink`` when the pipe closes (a sink of its own, e.g. a dup of the hub's fd 2).
    """

    def __init__(self, name: str, source_fd: int, sink: BinaryIO, *, rate_bps: int = RATE_BPS,
                 burst_bytes: int = BURST_BYTES,
                 clock: Callable[[], float] = time.monotonic, close_sink: bool = False) -> None:
        if rate_bps <= 0 or burst_bytes <= 0:
            raise ValueError(f"rate_bps and burst_bytes must be > 0, got {rate_bps}, "
                             f"{burst_bytes}")
        self.name, self.source_fd, self.sink = name, source_fd, sink
        self.rate_bps, self.burst_bytes, self.clock = rate_bps, burst_bytes, clock
        self.tokens = float(burst_bytes)
        self.dropped = 0  # bytes dropped since the last note
        self.dropped_total = 0
        self.passed_total = 0
        self._last = clock()
        self._last_note = self._last
        self.close_sink = close_sink

    def feed(self, chunk: bytes) -> None:
        """Pass ``chunk`` on if the bucket holds it, else drop and count it."""
        now = self.clock()
        self.tokens = min(float(self.burst_bytes), self.tokens + (now - self._last) * self.rate_bps)
        self._last = now
        if len(chunk) <= self.tokens:
            self.tokens -= len(chunk)
            self._write(chunk)
            self.passed_total += len(chunk)
        else:
            self.dropped += len(chunk)
            self.dropped_total += len(chunk)
        if self.dropped and now - self._last_note >= NOTE_EVERY_S:
            self.note()

    def note(self) -> None:
        """Write how much was dropped since the last note (nothing if nothing was)."""
        if self.dropped:
            self._write(f"\n[labkit hub] {self.name}: {self.dropped} bytes of server output "
                        f"dropped (over {self.rate_bps} B/s)\n".encode())
            self.dropped = 0
        self._last_note = self.clock()

    def _write(self, data: bytes) -> None:
        try:
            self.sink.write(data)
            self.sink.flush()
        except (OSError, ValueError):  # the hub's own output is gone: keep draining the pipe
            pass

    def run(self) -> None:
        """Relay until the server and every process holding the pipe have exited."""
        try:
            while True:
                try:
                    chunk = os.read(self.source_fd, CHUNK)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self.feed(chunk)
            self.note()
        finally:
            os.close(self.source_fd)
            if self.close_sink:
                self.sink.close()

    @classmethod
    def to_hub_stderr(cls, name: str, source_fd: int) -> OutputRelay:
        """A relay from ``source_fd`` to the hub's stderr (fd 2, where its log goes)."""
        return cls(name, source_fd, open(os.dup(2), "wb", buffering=0), close_sink=True)

    def start(self) -> threading.Thread:
        """Run :meth:`run` in a daemon thread; return it."""
        thread = threading.Thread(target=self.run, name=f"labkit-log-{self.name}", daemon=True)
        thread.start()
        return thread
