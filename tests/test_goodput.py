"""labkit.goodput: the course worksheet exactly, invariants, and every bad-input class."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit import goodput
from labkit.goodput import Loss, Worksheet
from labkit.validate import InputError

# ../shared/cases/goodput.md, case 1 (seed worksheet, derived, exact)
RESERVED_H = 720.0
LOSSES = {
    Loss.PLANNED_MAINTENANCE: 8.0,
    Loss.FAILURE_STOPS: 22.0,
    Loss.CHECKPOINT_WRITES: 6.0,
    Loss.REWIND: 14.0,
    Loss.STRAGGLER: 30.0,
}
CLUSTER_GPUS = 4096
COMPARISON_GOODPUT = 0.70


def seed() -> Worksheet:
    return Worksheet(RESERVED_H, {str(k): v for k, v in LOSSES.items()})


def test_goodput_case1_effective_hours_and_goodput() -> None:
    ws = seed()
    assert ws.effective_h == 720 - (8 + 22 + 6 + 14 + 30) == 640
    assert ws.goodput == pytest.approx(640 / 720, rel=1e-12)
    assert round(ws.goodput, 6) == 0.888889


def test_goodput_case1_hardware_factor_vs_70_percent() -> None:
    factor = goodput.hardware_factor(COMPARISON_GOODPUT, seed().goodput)
    assert factor == pytest.approx((640 / 720) / 0.70, rel=1e-12)
    assert round(factor, 5) == 1.26984


def test_goodput_case1_gpus_needed_at_70_percent() -> None:
    eq = goodput.hardware_equivalent(CLUSTER_GPUS, COMPARISON_GOODPUT, seed().goodput, 1.0)
    assert round(eq.gpus_needed, 1) == 5201.3
    assert round(eq.extra_gpus, 1) == 1105.3
    assert eq.extra_cost_krw == pytest.approx(eq.extra_gpus)


def test_goodput_case1_straggler_slowdown() -> None:
    ws = seed()
    stepping = 720 - 8 - 22 - 6 - 14
    assert ws.stepping_h == stepping == 670
    s = goodput.straggler_slowdown(30, stepping)
    assert s == pytest.approx(670 / 640, rel=1e-12)
    assert round(s, 4) == 1.0469


def test_straggler_equivalent_h_inverts_slowdown() -> None:
    assert goodput.straggler_equivalent_h(670 / 640, 670) == pytest.approx(30, rel=1e-12)


def test_worksheet_table_rows_sum_to_effective() -> None:
    table = seed().table()
    assert list(table["line"]) == ["reserved", *[str(k) for k in LOSSES], "effective"]
    assert list(table["kind"]) == ["reserved"] + ["loss"] * 5 + ["effective"]
    assert table["hours"].iloc[:-1].sum() == pytest.approx(table["hours"].iloc[-1])
    assert table["fraction_of_reserved"].iloc[-1] == pytest.approx(640 / 720)


def test_worksheet_losses_are_read_only_copy() -> None:
    source = {"rewind": 14.0}
    ws = Worksheet(720, source)
    source["rewind"] = 99
    assert ws.losses["rewind"] == 14.0
    with pytest.raises(TypeError):
        ws.losses["rewind"] = 1  # type: ignore[index]


hours = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(reserved=st.floats(min_value=1e-3, max_value=8_784), parts=st.lists(hours, max_size=6))
def test_worksheet_goodput_within_unit_interval(reserved: float, parts: list[float]) -> None:
    total = sum(parts)
    scale = reserved / total if total > reserved else 1.0
    ws = Worksheet(reserved, {f"l{i}": p * scale * (1 - 1e-9) for i, p in enumerate(parts)})
    assert 0.0 <= ws.goodput <= 1.0


@given(base=st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=5),
       index=st.integers(min_value=0, max_value=4), extra=st.floats(min_value=0, max_value=100))
def test_worksheet_goodput_non_increasing_in_every_loss(
    base: list[float], index: int, extra: float
) -> None:
    index %= len(base)
    losses = {f"l{i}": h for i, h in enumerate(base)}
    more = dict(losses, **{f"l{index}": base[index] + extra})
    assert Worksheet(1000, more).goodput <= Worksheet(1000, losses).goodput


@given(g=st.floats(min_value=1e-6, max_value=1), ref=st.floats(min_value=1e-6, max_value=1))
def test_hardware_factor_is_reference_over_goodput(g: float, ref: float) -> None:
    assert goodput.hardware_factor(g, ref) == pytest.approx(ref / g)


@pytest.mark.parametrize(
    ("reserved", "losses", "field", "rule"),
    [
        (0, {}, "reserved_h", "positive"),
        (-720, {}, "reserved_h", "positive"),
        (math.nan, {}, "reserved_h", "finite"),
        (math.inf, {}, "reserved_h", "finite"),
        (1e308, {}, "reserved_h", "at_most"),
        (8_784.5, {}, "reserved_h", "at_most"),
        ("720", {}, "reserved_h", "number"),
        (None, {}, "reserved_h", "number"),
        (True, {}, "reserved_h", "number"),
        (720, {"rewind": -1}, "losses.rewind", "non_negative"),
        (720, {"rewind": math.nan}, "losses.rewind", "finite"),
        (720, {"rewind": "14"}, "losses.rewind", "number"),
        (720, {"rewind": 700, "straggler": 30}, "losses.rewind", "at_most"),
        (720, [("rewind", 1)], "losses", "other"),
    ],
)
def test_worksheet_rejects_bad_input(reserved, losses, field, rule) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field.split(".")[-1]) as info:
        Worksheet(reserved, losses)
    assert isinstance(info.value, InputError)
    assert (info.value.field, info.value.rule) == (field, rule)


@pytest.mark.parametrize(
    ("g", "ref", "field"),
    [(0, 0.9, "goodput"), (1.2, 0.9, "goodput"), (-0.1, 0.9, "goodput"),
     (math.nan, 0.9, "goodput"), (0.7, 0, "reference"), (0.7, 1.01, "reference"),
     (0.7, math.inf, "reference")],
)
def test_hardware_factor_rejects_goodput_outside_unit_interval(g, ref, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field) as info:
        goodput.hardware_factor(g, ref)
    assert info.value.field == field  # type: ignore[attr-defined]


def test_hardware_factor_accepts_goodput_of_one() -> None:
    assert goodput.hardware_factor(1.0, 1.0) == 1.0


@pytest.mark.parametrize(
    ("n", "price", "field"), [(0, 1.0, "n_gpus"), (-5, 1.0, "n_gpus"), (10, -1.0, "gpu_price_krw"),
                              (math.nan, 1.0, "n_gpus")],
)
def test_hardware_equivalent_rejects_bad_input(n, price, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        goodput.hardware_equivalent(n, 0.7, 0.9, price)


@pytest.mark.parametrize(
    ("eq", "stepping", "field"),
    [(-1, 670, "equivalent_h"), (670, 670, "equivalent_h"), (700, 670, "equivalent_h"),
     (30, 0, "stepping_h"), (30, -1, "stepping_h"), (math.nan, 670, "equivalent_h"),
     (30, math.nan, "stepping_h")],
)
def test_straggler_slowdown_rejects_bad_input(eq, stepping, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        goodput.straggler_slowdown(eq, stepping)


@pytest.mark.parametrize(("s", "stepping", "field"),
                         [(0.99, 670, "slowdown"), (math.nan, 670, "slowdown"),
                          (1.1, 0, "stepping_h")])
def test_straggler_equivalent_h_rejects_bad_input(s, stepping, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        goodput.straggler_equivalent_h(s, stepping)
