"""Tables for people (labkit.ui.format.people_table) and every table lessons 02-08 show."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.ui import benchmarks, economics, goodput, mig, opex, orchestration, reliability
from labkit.ui import format as fmt

HANGUL = re.compile(r"[\uac00-\ud7a3]")
#: Headers that are a term the course keeps in English everywhere (no Korean word exists).
ENGLISH_HEADERS = {"GPU", "MPS", "MIG"}
RAW = re.compile(r"\d[eE][+-]?\d|\b(NaN|nan|None|True|False|NaT|<NA>)\b")

TABLES: dict[str, Callable[[], fmt.Table]] = {
    "02 layouts": mig.layout_counts,
    "02 modes": mig.sharing_modes,
    "02 case": mig.case1_numbers,
    "03 seed": goodput.seed_numbers,
    "04 scaling": reliability.scaling_numbers,
    "04 llama3": reliability.llama3_numbers,
    "04 stepfun": reliability.stepfun_numbers,
    "04 interval": reliability.interval_numbers,
    "04 ettr": reliability.ettr_numbers,
    "04 month": reliability.month_numbers,
    "04 eventlog": reliability.eventlog_numbers,
    "05 defaults": lambda: economics.defaults_table("05"),
    "05 hardware": economics.hardware_prices,
    "05 api": economics.api_prices,
    "05 cloud": economics.cloud_prices,
    "05 case": economics.case_numbers_05,
    "06 mlperf": benchmarks.mlperf_table,
    "06 case": benchmarks.case_numbers_06,
    "06 defaults": benchmarks.defaults_table,
    "07 key": opex.key_numbers,
    "08 workload": orchestration.workload_table,
    "08 policy": orchestration.policy_table,
    "08 key": orchestration.key_numbers,
}


@pytest.fixture(scope="module", params=sorted(TABLES))
def table(request: pytest.FixtureRequest) -> fmt.Table:
    return TABLES[request.param]()


def test_lesson_tables_read_as_written_for_people(table: fmt.Table) -> None:
    html_text = table._repr_html_()
    text = table.to_string()
    for shown in (html_text, text):
        assert not RAW.search(re.sub(r"<[^>]+>", " ", shown)), RAW.search(shown)
    for header in table.headers:
        assert HANGUL.search(header) or header in ENGLISH_HEADERS, header
    # no index column: the first header is the first thing in the table, no <th> in the body
    assert text.split()[0] == table.headers[0].split()[0]
    assert "<th" not in html_text.split("<tbody>")[1]
    # long text went to the footnotes, each one referenced from a cell
    for i, _note in enumerate(table.footnotes, 1):
        assert any(f"[{i}]" in c for row in table.rows for c in row)


def test_lesson_05_defaults_open_with_the_server_price_in_plain_numbers() -> None:
    table = economics.defaults_table("05")
    assert table.rows[0][:4] == ("서버 가격", "300,000", "USD", "200,000 ~ 450,000")
    staff = table.rows[[r[0] for r in table.rows].index("인건비")]
    assert staff[1:4] == ("1,200만", "원/년", "0 ~ 3,000만")  # 12,000,000 KRW/year
    utilization = table.rows[[r[0] for r in table.rows].index("가동률")]
    assert utilization[1:4] == ("40", "%", "5 ~ 100")        # fraction 0.4 as percent
    assert "수업용 가정" in table.data["신뢰도"].map(
        economics.reliability_words().get).tolist()


def test_lesson_06_mlperf_shows_throughput_before_the_details() -> None:
    table = benchmarks.mlperf_table()
    assert len(table) == 39
    assert table.headers.index("처리량 (토큰/초)") < 6
    first = dict(zip(table.headers, table.rows[0], strict=True))
    # data/economics/mlperf_inference_llm.csv row 1: v4.1 DGX-H100 Offline 24,524.9 tokens/s
    assert first["처리량 (토큰/초)"] == "24,525"
    assert first["가속기당 처리량 (토큰/초)"] == "3,066"
    assert first["희소성"] == "아니요" and first["측정 전력 (W)"] == ""
    assert first["시나리오"] == "오프라인"


@pytest.mark.parametrize(("value", "digits", "shown"), [
    (300_000, None, "300,000"), (132.197, None, "132.2"), (6254.85, None, "6,255"),
    (0.888889, None, "0.889"), (1.50, None, "1.5"),
    (0.0, None, "0"), (-0.0001, None, "0"), (3.0e5, 2, "300,000"), (math.nan, None, ""),
    (4.0, 1, "4"), (7.0, 2, "7"), (-0.0, 2, "0"), (2.5, 2, "2.50"), (-12.0, None, "-12"),
    (2.5e-7, None, "0"), (1e21, 0, "1,000,000,000,000,000,000,000"),
])
def test_number_never_uses_scientific_notation(value: float, digits: int | None,
                                               shown: str) -> None:
    assert fmt.number(value, digits) == shown


def _significant_digits(text: str) -> int:
    return len(text.replace(",", "").replace(".", "").lstrip("-").lstrip("0"))


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-10**15, max_value=10**15), st.one_of(st.none(),
                                                                    st.integers(0, 4)))
def test_a_whole_number_is_written_without_a_decimal_point(n: int, digits: int | None) -> None:
    # issue 17's trial: whole-number cells read "4.0" and "7.00"
    shown = fmt.number(float(n), digits)
    assert "." not in shown
    assert int(shown.replace(",", "")) == n  # the same number, grouped by thousands


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False).filter(
    lambda x: not float(x).is_integer() and abs(x) >= 1e-3))
def test_a_fraction_keeps_at_most_four_significant_digits(x: float) -> None:
    shown = fmt.number(x)
    whole = len(str(round(abs(x)))) if abs(x) >= 1 else 0  # 999,999,999.5 -> 1,000,000,000
    assert "e" not in shown.lower()
    assert _significant_digits(shown) <= max(4, whole)  # the whole part is never cut
    assert float(shown.replace(",", "")) == pytest.approx(x, rel=6e-4, abs=6e-4)


@pytest.mark.parametrize(("value", "shown"), [
    (12_000_000, "1,200만"), (300_000, "30만"), (8.92e9, "89.2억"), (1e8, "1억"),
    (31_106.28, "31,106"), (20_000, "20,000"), (150_000, "15만"), (math.inf, ""),
])
def test_large_uses_man_and_eok_where_natural(value: float, shown: str) -> None:
    assert fmt.large(value) == shown


def test_people_table_words_blanks_footnotes() -> None:
    long_source = "A source long enough that it cannot sit in a cell of the table at all"
    frame = pd.DataFrame({"name": ["a", "b", "c"], "flag": [True, False, None],
                          "x": [1.5e6, float("nan"), 2.0], "src": [long_source, "short",
                                                                  long_source]},
                         index=[7, 8, 9])
    table = fmt.people_table(frame, {
        "name": fmt.Col("이름"), "flag": fmt.Col("여부", "bool"),
        "x": fmt.Col("값 (원)", "large"), "src": fmt.Col("출처", "note")})
    assert table.rows == (("a", "예", "150만", "[1]"), ("b", "아니요", "", "short"),
                          ("c", "", "2", "[1]"))
    assert table.footnotes == (long_source,)
    text = table.to_string()
    assert text.splitlines()[0].startswith("이름") and "7" not in text.splitlines()[1]
    assert text.endswith(f"[1] {long_source}")
    assert table.data.columns.tolist() == ["이름", "여부", "값 (원)", "출처"]
    with pytest.raises(ValueError, match="unknown column kind"):
        fmt.people_table(frame, {"x": fmt.Col("값", "money")})
    # without columns: every column as it is named, row labels (set_index) first, no index
    labelled = pd.DataFrame({"항목": ["가", "나"], "값": ["1 h", "2 h"], "수": [2319, 7],
                             "비": [0.5, 1e-7]}).set_index("항목")
    shown = fmt.people_table(labelled)
    assert shown.headers == ("항목", "값", "수", "비")
    assert shown.row("나") == {"항목": "나", "값": "2 h", "수": "7", "비": "0"}
    assert shown.rows[0] == ("가", "1 h", "2,319", "0.5")
    assert "<th" not in shown._repr_html_().split("<tbody>")[1]
    with pytest.raises(KeyError):
        shown.row("다")


def test_text_is_aligned_for_wide_characters() -> None:
    table = fmt.rows_table([("가나", "1"), ("abcd", "22")], ["항목", "값"])
    assert table.to_string().splitlines() == ["항목  값", "가나   1", "abcd  22"]


def test_lesson_05_price_tables_name_offers_and_items_in_korean() -> None:
    cloud = economics.cloud_prices()
    offers = set(cloud.data["상품"]) - {"p5"}  # the AWS instance family keeps its name
    shown = {row[cloud.headers.index("상품")] for row in cloud.rows}
    assert "on-demand" in offers and "온디맨드(on-demand)" in shown
    assert "[1]" in shown and cloud.footnotes[0].startswith("온디맨드, 2025년 6월 인하 전")
    items = [row[0] for row in economics.hardware_prices().rows]
    assert "8xH100 서버 (수업 기본값)" in items and "A100 80GB (신품)" in items
    assert not any("server" in i for i in items)


@pytest.mark.parametrize(("shown", "expected"), [
    (fmt.pct(0.7), "70 %"), (fmt.pct(0.8889), "88.9 %"), (fmt.pct(1.0), "100 %"),
    (fmt.pct(0.99996), "100 %"), (fmt.pct(0.0), "0 %"), (fmt.hours(7.0, 2), "7 h"),
    (fmt.hours(1.29, 2), "1.29 h"), (fmt.hours(1.5, 1), "1.5 h"), (fmt.ratio(2.0, 2), "2"),
    (fmt.ratio(3.982, 3), "3.982"), (fmt.ratio(1.26984), "1.270"), (fmt.pct(float("nan")), "n/a"),
])
def test_percent_hours_and_ratios_write_a_whole_number_without_decimals(
        shown: str, expected: str) -> None:
    # stop 21's trials: "100.0 %", "7.00 h", "2.00배" read as machine output
    assert shown == expected
