"""DCGM's blank sentinels: one definition (dcgm_structs.h's values), used by both readers.

Oracle: ``dcgmlib/dcgm_structs.h`` (DCGM 4.6.0) defines DCGM_INT32_BLANK 0x7ffffff0,
DCGM_INT64_BLANK 0x7ffffffffffffff0 and DCGM_FP64_BLANK 140737488355328.0, each followed by
NOT_FOUND (+1), NOT_SUPPORTED (+2), NOT_PERMISSIONED (+3).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from labkit.data import prometheus
from labkit.data.observe import dcgm
from labkit.observe import dcgm_blanks

ROOT = Path(__file__).resolve().parents[1]


def test_dcgm_blank_constants_are_dcgm_structs_h_values() -> None:
    assert dcgm_blanks.DCGM_INT32_BLANK == 2147483632
    assert dcgm_blanks.DCGM_INT64_BLANK == 9223372036854775792
    assert dcgm_blanks.DCGM_FP64_BLANK == 2.0 ** 47


@pytest.mark.parametrize("module", ["labkit/data/prometheus.py", "labkit/data/observe/dcgm.py"])
def test_dcgm_blank_sentinels_are_not_redefined(module: str) -> None:
    """No reader writes a sentinel's number itself: each imports labkit.observe.dcgm_blanks."""
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    numbers = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
               and isinstance(n.value, int | float) and not isinstance(n.value, bool)}
    assert not numbers & {0x7FFFFFF0, 0x7FFFFFFFFFFFFFF0, 140737488355328.0}
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and n.module == "labkit.observe.dcgm_blanks" for a in n.names}
    assert imports


@pytest.mark.parametrize(("raw", "status", "reason"), [
    (2147483632 + 2, "not_supported", "DCGM blank (not supported)"),
    (140737488355328.0 + 3, "no_permission", "DCGM blank (no permission)"),
    (9223372036854775792 + 1, "not_available", "DCGM blank (not found)"),
])
def test_dcgm_blank_reasons_agree_between_scrape_and_prometheus(raw: float, status: str,
                                                                  reason: str) -> None:
    import numpy as np

    found = dcgm.dcgm_blank(raw)
    assert found is not None and (str(found[0]), found[1]) == (status, reason)
    if raw < 2 ** 53:  # a float64 store keeps the kind (not the int64 ones)
        _, st, why = prometheus._blanks(np.array([float(raw)]), np.array([float(raw)]))
        assert (st[0], why[0]) == (status, reason)
