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


def test_worksheet_boundaries() -> None:
    # losses may use every reserved hour (goodput 0), and float rounding of the sum is forgiven
    assert Worksheet(720, {"rewind": 720}).goodput == 0
    assert Worksheet(0.3, {"a": 0.1, "b": 0.2}).effective_h == 0  # 0.1 + 0.2 > 0.3 in floats
    assert Worksheet(720, {"rewind": 720 * (1 + 1e-12)}).goodput == 0  # the tolerance is inclusive
    assert Worksheet(goodput.MAX_RESERVED_H).goodput == 1
    ws = Worksheet(720, {"rewind": 14})
    assert type(ws.reserved_h) is float and type(ws.losses["rewind"]) is float


def test_hardware_equivalent_prices_the_extra_gpus() -> None:
    eq = goodput.hardware_equivalent(100, 0.5, 0.75, 40_000_000)  # 100 x 0.75 / 0.5 = 150
    assert (eq.factor, eq.gpus_needed, eq.extra_gpus) == (1.5, 150, 50)
    assert eq.extra_cost_krw == 50 * 40_000_000


def test_straggler_boundaries() -> None:
    assert goodput.straggler_equivalent_h(1, 670) == 0  # no slowdown, no loss
    assert goodput.straggler_slowdown(0, 670) == 1
    assert goodput.straggler_equivalent_h(2, 670) == 335


NAN = math.nan
BAD_INPUTS = [
    # (call, field, rule, rejected value, limit, words of the message)
    (lambda: Worksheet(0), "reserved_h", "positive", 0, None, "reserved_h"),
    (lambda: Worksheet(-720), "reserved_h", "positive", -720, None, "reserved_h"),
    (lambda: Worksheet(NAN), "reserved_h", "finite", NAN, None, "finite"),
    (lambda: Worksheet("720"), "reserved_h", "number", "720", None, "number"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: Worksheet(True), "reserved_h", "number", True, None, "number"),
    (lambda: Worksheet(8_784.5), "reserved_h", "at_most", 8_784.5, 8_784,
     "reserved_h must be <= one leap year (8784)"),
    (lambda: Worksheet(720, {"rewind": -1}), "losses.rewind", "non_negative", -1, None,
     "losses.rewind"),
    (lambda: Worksheet(720, {"rewind": "14"}), "losses.rewind", "number", "14", None, "number"),  # type: ignore[arg-type, dict-item]  # bad input, on purpose
    (lambda: Worksheet(720, {"rewind": 700, "straggler": 30}), "losses.rewind", "at_most", 700.0,
     720, "losses sum to 730 h, more than reserved_h (720 h); largest line: losses.rewind"),
    (lambda: Worksheet(720, {"a": 360, "b": 360.000001}), "losses.b", "at_most", 360.000001,
     720, "largest line: losses.b"),
    (lambda: Worksheet(720, [("rewind", 1)]), "losses", "other", [("rewind", 1)], None,  # type: ignore[arg-type, dict-item]  # bad input, on purpose
     "mapping of name -> hours, got list"),
    (lambda: goodput.hardware_factor(0, 0.9), "goodput", "fraction", 0, "(0, 1]", "goodput"),
    (lambda: goodput.hardware_factor(1.2, 0.9), "goodput", "fraction", 1.2, "(0, 1]", "(0, 1]"),
    (lambda: goodput.hardware_factor(0.7, 0), "reference", "fraction", 0, "(0, 1]", "reference"),
    (lambda: goodput.hardware_factor(0.7, math.inf), "reference", "finite", math.inf, None,
     "finite"),
    (lambda: goodput.hardware_equivalent(0, 0.7, 0.9, 1), "n_gpus", "positive", 0, None,
     "n_gpus"),
    (lambda: goodput.hardware_equivalent(10, 0.7, 0.9, -1), "gpu_price_krw", "non_negative",
     -1, None, "gpu_price_krw"),
    (lambda: goodput.hardware_equivalent(10, 0, 0.9, 1), "goodput", "fraction", 0, "(0, 1]",
     "goodput"),
    (lambda: goodput.straggler_slowdown(-1, 670), "equivalent_h", "non_negative", -1, None,
     "equivalent_h"),
    (lambda: goodput.straggler_slowdown(670, 670), "equivalent_h", "at_most", 670, 670,
     "equivalent_h must be < stepping_h (670 h), got 670"),
    (lambda: goodput.straggler_slowdown(30, 0), "stepping_h", "positive", 0, None, "stepping_h"),
    (lambda: goodput.straggler_equivalent_h(0.99, 670), "slowdown", "at_least", 0.99, 1.0,
     "slowdown must be >= 1, got 0.99"),
    (lambda: goodput.straggler_equivalent_h(NAN, 670), "slowdown", "finite", NAN, None,
     "slowdown"),
    (lambda: goodput.straggler_equivalent_h(1.1, 0), "stepping_h", "positive", 0, None,
     "stepping_h"),
]


@pytest.mark.parametrize(("call", "field", "rule", "value", "limit", "words"), BAD_INPUTS,
                         ids=[f"{row[1]}-{row[2]}-{i}" for i, row in enumerate(BAD_INPUTS)])
def test_bad_input_names_field_rule_value_and_limit(  # type: ignore[no-untyped-def]
        call, field: str, rule: str, value: object, limit: object, words: str) -> None:
    with pytest.raises(InputError) as info:
        call()
    err = info.value
    assert (err.field, err.rule, err.limit) == (field, rule, limit)
    assert err.value == value or (value != value and err.value != err.value)  # NaN is NaN
    assert type(err.value) is type(value)
    assert words in str(err)
