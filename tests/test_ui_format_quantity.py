"""labkit.ui.format.readable / quantity: numbers read back to people (answers, predictions)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit.ui.format import READABLE_MAX, quantity, readable


@pytest.mark.parametrize(("x", "text"), [
    (0, "0"),
    (264.0, "264"),
    (0.86111, "0.8611"),
    (1.5, "1.5"),
    (-3.5, "−3.5"),
    (8_784, "8,784"),
    (12_345.6, "12,346"),  # below 10만 whole numbers read as written
    (100_000, "10만"),
    (123_456, "12.35만"),
    (12_000_000, "1,200만"),
    (99_999_999.9, "1억"),  # 9,999.99…만 rounds up into the next unit
    (8.92e9, "89.2억"),
    (3e12, "3조"),
    (1e15, "1,000조"),
    (1e-9, "약 0"),
    (1e308, "1경 이상"),  # issue 17: was a 309-digit string
    (-1e308, "−1경 이하"),
    (math.inf, "n/a"),
    (math.nan, "n/a"),
])
def test_readable(x: float, text: str) -> None:
    assert readable(x) == text


@pytest.mark.parametrize(("x", "unit", "text"), [
    (4, "개", "4개"),  # issue 17's trial: "4 개"
    (264, "일", "264일"),
    (30, "분", "30분"),
    (3.98, "배", "3.98배"),
    (0.5, "h", "0.5 h"),
    (86.1, "%", "86.1 %"),
    (30, "kW", "30 kW"),
    (813_192, "원", "813,192원"),  # won below 1억 exact, as a bill prints them
    (5.8e10, "원", "580억 원"),
    (12_000, "", "12,000"),
    (89.2, "억 토큰", "89.2억 토큰"),
    (150_000, "억 토큰", "15조 토큰"),  # 150,000 x 억 = 15조, not "15만억"
    (1.2e5, "토큰", "12만 토큰"),
])
def test_quantity(x: float, unit: str, text: str) -> None:
    assert quantity(x, unit) == text


@given(st.floats(min_value=-1e20, max_value=1e20, allow_nan=False))
def test_readable_never_prints_scientific_or_long_digit_runs(x: float) -> None:
    text = readable(x)
    assert "e" not in text and "E" not in text
    assert all(len(run) <= 6 for run in re.findall(r"\d+", text.replace(",", "")))
    if abs(x) >= READABLE_MAX:
        assert "1경" in text


@given(st.floats(min_value=1e-4, max_value=1e15))
def test_readable_keeps_four_significant_digits(x: float) -> None:
    """Read back, the shown number is within half a unit of its 4th significant digit."""
    text = readable(x).replace(",", "")
    words = {"만": 1e4, "억": 1e8, "조": 1e12}
    scale = words.get(text[-1], 1.0)
    shown = float(text.rstrip("만억조")) * scale
    assert shown == pytest.approx(x, rel=5e-4, abs=5e-7)
