"""labkit.data.economics: rows carry source, as_of and a reliability tag; bad rows fail loudly."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.data import DataError, data_dir
from labkit.data import economics as data
from labkit.data.benchmarks import load_mlperf

LOADERS = [data.load_power, data.load_hardware_prices, data.load_cloud_prices,
           data.load_api_prices, load_mlperf]


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
def test_shipped_tables_load_with_provenance(loader) -> None:  # type: ignore[no-untyped-def]
    frame = loader()
    assert len(frame) > 0
    assert frame["source"].str.len().min() > 0
    assert frame["as_of"].notna().all()
    assert set(frame["reliability"]) <= set(data.RELIABILITY)


def test_defaults_load_with_ranges_and_provenance() -> None:
    defaults = data.load_defaults()
    assert set(data.REQUIRED_DEFAULTS) <= set(defaults)
    for d in defaults.values():
        assert d.low <= d.value <= d.high and d.source and d.as_of
        assert d.reliability in data.RELIABILITY
    assert defaults.value("server_capex_usd") == 300_000
    assert defaults["tokens_per_s_per_gpu"].reliability == "primary"


def _copy(tmp_path: Path, name: str, edit) -> Path:  # type: ignore[no-untyped-def]
    text = (data_dir() / "economics" / name).read_text(encoding="utf-8")
    path = tmp_path / name
    path.write_text(edit(text), encoding="utf-8")
    return path


def _first_row(text: str, old: str, new: str) -> str:
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    assert old in lines[header + 1]
    lines[header + 1] = lines[header + 1].replace(old, new, 1)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "loader", "old", "new", "message"),
    [
        ("api_prices.csv", data.load_api_prices, "2024-08-01", "", "'as_of' is empty"),
        ("api_prices.csv", data.load_api_prices, ',"OpenAI pricing, as mirrored in open price '
         'tables"', ",", "'source' is empty"),
        ("api_prices.csv", data.load_api_prices, "secondary", "rumour", "'reliability'"),
        ("cloud_gpu_prices.csv", data.load_cloud_prices, "12.29", "-1", "must be >= 0"),
        ("power.csv", data.load_power, "700,,tdp", "700,,nameplate", "'basis'"),
        ("hardware_prices.csv", data.load_hardware_prices, "2023-08-01", "soon",
         "'as_of' must be date"),
    ],
)
def test_loaders_reject_rows_without_provenance(  # type: ignore[no-untyped-def]
    tmp_path: Path, name: str, loader, old: str, new: str, message: str
) -> None:
    path = _copy(tmp_path, name, lambda t: _first_row(t, old, new))
    with pytest.raises(DataError, match=message) as err:
        loader(path)
    assert name in str(err.value) and ":" in str(err.value)


def test_loader_rejects_a_file_without_source_column(tmp_path: Path) -> None:
    path = tmp_path / "api_prices.csv"
    path.write_text("model,provider,usd_per_m_input,usd_per_m_output,as_of,reliability\n"
                    "m,p,1,2,2026-01-01,primary\n", encoding="utf-8")
    with pytest.raises(DataError, match="every row needs 'source'"):
        data.load_api_prices(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [(lambda t: _first_row(t, "05,server_capex_usd,300000", "05,server_capex_usd,900000"),
      "outside"),
     (lambda t: t + "05,pue,1.5,unitless,1.1,2,0.05,x,2026-01-01,teaching assumption\n",
      "appears twice"),
     (lambda t: "\n".join(line for line in t.splitlines() if ",rack_kw," not in line),
      "missing parameter"),
     (lambda t: _first_row(t, "teaching assumption", "folklore"), "'reliability'")],
)
def test_defaults_loader_rejects_bad_files(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    path = _copy(tmp_path, "defaults.csv", edit)
    with pytest.raises(DataError, match=message):
        data.load_defaults(path)


def test_scenario_from_defaults_reports_an_invalid_default() -> None:
    defaults = data.load_defaults()
    items = {k: v for k, v in defaults.items()}
    items["pue"] = data.Default("pue", 0.5, "", 0, 2, 0.1, "s", "2026-01-01", "primary")
    with pytest.raises(DataError, match="pue"):
        data.scenario_from_defaults(data.Defaults(items, defaults.frame))
