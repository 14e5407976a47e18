"""labkit.data: schema validation names the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.data import Column, DataError, load_csv, load_json, load_yaml, parse_csv
from labkit.data.goodput import load_worksheet_seed

SCHEMA = [Column("gpu"), Column("power_w", "float", minimum=0), Column("count", "int")]


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
        ("gpu,power_w,count,source,as_of\nH100,700,8,s,yesterday\n", "'as_of' must be date"),
        ("# only comments\n", "no header row"),
    ],
)
def test_parse_csv_rejects_bad_files(text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        parse_csv(text, SCHEMA, name="t.csv")


def test_load_csv_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="nope.csv"):
        load_csv(tmp_path / "nope.csv", SCHEMA)


def test_load_yaml_requires_source_and_as_of(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("source: here\nvalue: 1\n")
    with pytest.raises(DataError, match="x.yaml: missing top-level 'as_of'"):
        load_yaml(path)


def test_load_yaml_reports_line_of_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("source: a\nas_of: 2026-01-01\nlist: [1, 2\n")
    with pytest.raises(DataError, match=r"bad.yaml:\d+: invalid YAML"):
        load_yaml(path)


def test_load_json_accepts_meta_block_and_reports_line(tmp_path: Path) -> None:
    good = tmp_path / "g.json"
    good.write_text('{"_meta": {"source": "s", "as_of": "2026"}, "x": 1}')
    assert load_json(good)["x"] == 1
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


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("reserved_h: 720\nlosses: {rewind: 1}\n", "missing top-level 'source'"),
        ("source: s\nas_of: 2026-01-01\nreserved_h: 720\nlosses: {typo: 1}\n"
         "cluster_gpus: 1\ncomparison_goodput: 0.7\ngpu_price: {krw_per_gpu: 1}\n",
         "unknown loss line"),
        ("source: s\nas_of: 2026-01-01\nreserved_h: x\nlosses: {rewind: 1}\n"
         "cluster_gpus: 1\ncomparison_goodput: 0.7\ngpu_price: {krw_per_gpu: 1}\n",
         "'reserved_h' must be float"),
        ("source: s\nas_of: 2026-01-01\nreserved_h: 720\nlosses: {rewind: -1}\n"
         "cluster_gpus: 1\ncomparison_goodput: 0.7\ngpu_price: {krw_per_gpu: 1}\n",
         "losses.rewind must be >= 0"),
        ("source: s\nas_of: 2026-01-01\nreserved_h: 720\nlosses: {rewind: 1}\n"
         "comparison_goodput: 0.7\ngpu_price: {krw_per_gpu: 1}\n", "missing key 'cluster_gpus'"),
    ],
)
def test_load_worksheet_seed_rejects_bad_file(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "ws.yaml"
    path.write_text(body)
    with pytest.raises(DataError, match=message) as info:
        load_worksheet_seed(str(path))
    assert "ws.yaml" in str(info.value)


def test_every_data_file_has_source_and_as_of() -> None:
    from labkit.data import data_dir

    for path in sorted(data_dir().rglob("*")):
        if path.suffix in (".yaml", ".yml"):
            load_yaml(path)
        elif path.suffix == ".json":
            load_json(path)
        elif path.suffix == ".csv":
            text = path.read_text(encoding="utf-8")
            header = parse_csv(text, [], name=str(path))
            assert header["source"].notna().all() and header["as_of"].notna().all(), path
