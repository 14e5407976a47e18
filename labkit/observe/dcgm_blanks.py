"""DCGM's blank sentinels: the values DCGM stores (and dcgm-exporter prints) for "no value".

When DCGM has no value for a field it stores a sentinel of the field's type, and dcgm-exporter
prints it as an ordinary number. From ``dcgmlib/dcgm_structs.h`` (DCGM 4.6.0,
https://github.com/NVIDIA/DCGM/blob/72fa3fe/dcgmlib/dcgm_structs.h):

- ``DCGM_INT32_BLANK`` = 0x7ffffff0 (2147483632);
- ``DCGM_INT64_BLANK`` = 0x7ffffffffffffff0 (9223372036854775792);
- ``DCGM_FP64_BLANK`` = 140737488355328.0 (2**47);

each followed by ``..._NOT_FOUND`` (+1), ``..._NOT_SUPPORTED`` (+2) and
``..._NOT_PERMISSIONED`` (+3). Stored as float64 (a Prometheus server, a parsed scrape), the four
int64 sentinels are one number (2**63), so their kind is lost there.

The one definition for every reader (``labkit.data.observe.dcgm`` for scrapes,
``labkit.data.prometheus`` for a Prometheus server). Pure: constants and one lookup.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from labkit.observe.readings import Status

__all__ = ["DCGM_BLANK_KINDS", "DCGM_FP64_BLANK", "DCGM_INT32_BLANK", "DCGM_INT64_BLANK",
           "blank_reason"]

#: ``DCGM_INT32_BLANK`` (``dcgm_structs.h``).
DCGM_INT32_BLANK = 0x7FFFFFF0
#: ``DCGM_INT64_BLANK`` (``dcgm_structs.h``).
DCGM_INT64_BLANK = 0x7FFFFFFFFFFFFFF0
#: ``DCGM_FP64_BLANK`` (``dcgm_structs.h``).
DCGM_FP64_BLANK = 140737488355328.0
#: Offset from a base -> (status, kind): ``*_BLANK``, ``*_NOT_FOUND``, ``*_NOT_SUPPORTED``,
#: ``*_NOT_PERMISSIONED`` (``dcgm_structs.h``).
DCGM_BLANK_KINDS: Mapping[int, tuple[Status, str]] = MappingProxyType({
    0: (Status.NOT_AVAILABLE, "blank"), 1: (Status.NOT_AVAILABLE, "not found"),
    2: (Status.NOT_SUPPORTED, "not supported"), 3: (Status.NO_PERMISSION, "no permission")})


def blank_reason(kind: str | None = None) -> str:
    """Return the reason a missing reading carries for a DCGM blank of ``kind``.

    ``"DCGM blank (not supported)"`` for a kind of :data:`DCGM_BLANK_KINDS`, ``"DCGM blank"``
    when the kind is lost (an int64 sentinel read as float64). The UI translates these.

    >>> blank_reason("no permission")
    'DCGM blank (no permission)'
    """
    return f"DCGM blank ({kind})" if kind else "DCGM blank"
