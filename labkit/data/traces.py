"""Schema of the ``# key: value`` header of the traces in ``data/traces/`` (lesson 01).

The traces themselves (nvidia-smi CSV logs, dcgm-exporter scrapes) are read by
:mod:`labkit.data.observe`; this module holds the schema their header lines must match, so that
every trace carries a ``source``, a strict ``as_of`` date, a ``title`` and a ``license``, and
that the optional ``interval_s`` (seconds between dcgm-exporter scrapes) is a positive number.
``segments`` (``name@start_s,...``) is checked by :func:`labkit.data.observe.trace_segments`.

Used in: notebooks/01_observe.ipynb (through labkit.data.observe.load_trace)
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ConfigDict

from labkit.data import validate
from labkit.data.schema import Document, Positive, Text

__all__ = ["TraceHeader", "check_trace_header"]


class TraceHeader(Document):
    """The header lines of a trace file; other ``# key: value`` lines are kept as they are.

    Header values are text, so the schema converts them (``interval_s: 1.25``).
    """

    model_config = ConfigDict(extra="allow", allow_inf_nan=False, frozen=True, strict=False)

    title: Text
    license: Text
    interval_s: Positive | None = None
    segments: Text | None = None


def check_trace_header(metadata: Mapping[str, str], where: str) -> TraceHeader:
    """Validate a trace's header (``LogImport.metadata``) against :class:`TraceHeader`.

    Parameters
    ----------
    metadata : mapping of str -> str
        The ``# key: value`` lines at the top of the file.
    where : str
        The file, for the message.

    Raises
    ------
    labkit.data.DataError
        ``"<where>: header as_of must be a date YYYY-MM-DD, got 'today'"`` and the like.
    """
    return validate(TraceHeader, dict(metadata), f"{where}: header")
