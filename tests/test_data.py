"""labkit.data: the generic CSV/YAML/JSON readers name the file and the line.

The family schemas' bad-input cases are one table in tests/test_data_schemas.py.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from pathlib import Path

import pytest

from labkit.data import (
    Column,
    DataError,
    load_csv,
    load_json,
    load_yaml,
    parse_csv,
    parse_iso_date,
)
from labkit.data.goodput import load_worksheet_seed
from labkit.data.schema import NonNegative, Row, Text


class GpuRow(Row):
    """A test schema: a GPU, its power [W] and a count."""

    gpu: Text
    power_w: NonNegative
    count: int


SCHEMA = GpuRow


def test_parse_csv_reads_header_meta_and_types() -> None:
    text = (
        "# title: test\n# source: a datasheet, 2024\n# as_of: 2026-11-30\n"
        "gpu,power_w,count\nH100 #1,700,8\nA100,400,4\n"
    )
    frame = parse_csv(text, SCHEMA, name="t.csv")
    assert frame.attrs["meta"]["title"] == "test"
    assert list(frame["gpu"]) == ["H100 #1", "A100"]  # '#' inside a field is kept
    assert frame["power_w"].tolist() == [700.0, 400.0]
    assert frame["count"].tolist() == [8, 4]
    assert set(frame["source"]) == {"a datasheet, 2024"}
    assert set(frame["as_of"]) == {"2026-11-30"}


def test_parse_csv_per_row_source() -> None:
    text = "gpu,power_w,count,source,as_of\nH100,700,8,datasheet,2024-01-01\n"
    assert parse_csv(text, SCHEMA).loc[0, "source"] == "datasheet"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpu,power_w,count\nH100,700,8\n", "every row needs 'source'"),
        ("# source: s\ngpu,power_w,count\nH100,700,8\n", "every row needs 'as_of'"),
        ("# source: s\n# as_of: 2026-01-01\ngpu,count\nH100,8\n", "t.csv:3: missing column"),
        ("# source: s\n# as_of: 2026-01-01\ngpu,power_w,count\nH100,lots,8\n",
         "t.csv:4: column 'power_w' must be float"),
        ("# source: s\n# as_of: 2026-01-01\ngpu,power_w,count\nH100,700,8\nA100,-1,4\n",
         "t.csv:5: column 'power_w' must be >= 0"),
        ("# source: s\n# as_of: 2026-01-01\ngpu,power_w,count\nH100,700\n", "t.csv:4: 2 fields"),
        ("# source: s\n# as_of: 2026-01-01\ngpu,power_w,count\nH100,nan,8\n", "must be float"),
        ("# source: s\n# as_of: 2026-01-01\ngpu,power_w,count\n,700,8\n", "'gpu' is empty"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,,2024-01-01\n", "'source' is empty"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,yesterday\n",
         "t.csv:2: column 'as_of' must be a date YYYY-MM-DD, got 'yesterday'"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,today\n", "'as_of' must be a date"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,now\n", "'as_of' must be a date"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,20261130\n", "'as_of' must be a date"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,2026-11-30T10:00\n", "must be a date"),
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,2026-02-30\n", "must be a valid date"),
        ("# source: s\n# as_of: now\ngpu,power_w,count\nH100,700,8\n",
         "t.csv: header line '# as_of:' must be a date"),
        ("# source: s\n# retrieved: today\n# as_of: 2026-01-01\ngpu,power_w,count\nH,7,8\n",
         "header line '# retrieved:' must be a date"),
        ("# only comments\n", "no header row"),
    ],
)
def test_parse_csv_rejects_bad_files(text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        parse_csv(text, SCHEMA, name="t.csv")


def test_a_list_of_columns_is_the_same_schema() -> None:
    columns = [Column("gpu"), Column("power_w", "float", minimum=0), Column("count", "int"),
               Column("note", nullable=True), Column("w_max", "float", nullable=True)]
    text = "gpu,power_w,count,note,w_max,source,as_of\nH100,700,8,,,s,2026-01-01\n"
    row = parse_csv(text, columns).iloc[0]
    assert (row["gpu"], row["power_w"], row["count"]) == ("H100", 700.0, 8)
    assert row["note"] is None and math.isnan(row["w_max"])
    with pytest.raises(DataError, match="t.csv:2: column 'power_w' must be >= 0"):
        parse_csv(text.replace(",700,", ",-7,"), columns, name="t.csv")


def test_load_csv_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="nope.csv"):
        load_csv(tmp_path / "nope.csv", SCHEMA)


@pytest.mark.parametrize(("body", "message"), [
    ("source: here\nvalue: 1\n", "x.yaml: missing top-level 'as_of'"),
    ("as_of: 2026-01-01\n", "x.yaml: missing top-level 'source'"),
    ("source: s\nas_of: today\n", "x.yaml: as_of must be a date YYYY-MM-DD, got 'today'"),
    ("source: s\nas_of: 2026-02-30\n", "x.yaml: invalid value"),
    ("- a\n- b\n", "x.yaml: top level must be a mapping"),
])
def test_load_yaml_requires_source_and_strict_as_of(tmp_path: Path, body: str,
                                                    message: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(body)
    with pytest.raises(DataError, match=message):
        load_yaml(path)


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-30", "2026-11-30"), (" 2026-01-02 ", "2026-01-02"), (date(2024, 2, 29), "2024-02-29"),
])
def test_parse_iso_date_accepts_calendar_dates(value: object, expected: str) -> None:
    assert parse_iso_date(value) == expected


@pytest.mark.parametrize("value", ["today", "now", "20261130", "2026-W48-1", "2026-11",
                                   "2026-11-30T00:00", "2025-02-29", "", None, 20261130,
                                   datetime(2026, 11, 30)])
def test_parse_iso_date_refuses_everything_else(value: object) -> None:
    with pytest.raises(ValueError, match="must be a"):
        parse_iso_date(value)


def test_load_yaml_reports_line_of_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("source: a\nas_of: 2026-01-01\nlist: [1, 2\n")
    with pytest.raises(DataError, match=r"bad.yaml:\d+: invalid YAML"):
        load_yaml(path)


def test_load_json_accepts_meta_block_and_reports_line(tmp_path: Path) -> None:
    good = tmp_path / "g.json"
    good.write_text('{"_meta": {"source": "s", "as_of": "2026-01-01"}, "x": 1}')
    assert load_json(good)["x"] == 1
    vague = tmp_path / "v.json"
    vague.write_text('{"_meta": {"source": "s", "as_of": "2026"}, "x": 1}')
    with pytest.raises(DataError, match="v.json: as_of must be a date YYYY-MM-DD"):
        load_json(vague)
    bad = tmp_path / "b.json"
    bad.write_text('{"_meta": {"source": "s",\n "as_of": }}')
    with pytest.raises(DataError, match="b.json:2: invalid JSON"):
        load_json(bad)


def test_load_worksheet_seed_matches_course_worksheet() -> None:
    seed = load_worksheet_seed()
    assert seed.worksheet.reserved_h == 720
    assert dict(seed.worksheet.losses) == {
        "planned_maintenance": 8, "failure_stops": 22, "checkpoint_writes": 6, "rewind": 14,
        "straggler": 30}
    assert seed.cluster_gpus == 4096
    assert seed.comparison_goodput == 0.70
    assert seed.gpu_price_krw == 300_000 / 8 * 1_400
    assert seed.source and seed.as_of
