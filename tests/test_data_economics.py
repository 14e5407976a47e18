"""labkit.data.economics: rows carry source, as_of and a reliability tag; bad rows fail loudly."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from labkit.data import DataError, benchmarks, data_dir
from labkit.data import economics as data
from labkit.data.benchmarks import load_mlperf

LOADERS = [data.load_power, data.load_hardware_prices, data.load_cloud_prices,
           data.load_api_prices, load_mlperf]


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__)
def test_shipped_tables_load_with_provenance(loader: Callable[[], pd.DataFrame]) -> None:
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


def _shared_reference() -> Path:
    """The project's shared reference folder: ../shared beside the repository (CI and lead),
    or two levels up from a helper's worktree (/work/wt/<name> -> /work/shared)."""
    root = Path(__file__).resolve().parents[1]
    for base in (root.parent, root.parent.parent):
        folder = base / "shared" / "reference"
        if (folder / "economics.md").is_file():
            return folder
    pytest.skip(f"shared reference folder not found beside {root} (../shared/reference)")


def test_mlperf_table_matches_the_shared_reference() -> None:
    """Every MLPerf row equals the reference extract (``shared/reference/*.csv``, from
    mlcommons/inference_results_v4.1-v5.1), field by field; the reference's prose agrees."""
    ref_dir = _shared_reference()
    assert "39 MLPerf Inference LLM rows" in (ref_dir / "economics.md").read_text()
    ref = pd.read_csv(ref_dir / "mlperf_inference_llm.csv")
    ours = benchmarks.load_mlperf()
    key = ["version", "system", "benchmark", "scenario"]
    both = ref.merge(ours, on=key, how="outer", suffixes=("_ref", ""), indicator=True)
    assert (both["_merge"] == "both").all() and len(both) == len(ref) == 39
    assert (both["pub_date"] == both["as_of"]).all()
    for col in ("division", "accelerator", "availability", "total_accel", "result",
                "result_per_accel", "power_w_system", "tokens_per_joule"):
        same = (both[f"{col}_ref"] == both[col]) | (both[f"{col}_ref"].isna() & both[col].isna())
        assert same.all(), (col, both.loc[~same, key].to_dict("records"))
    assert (ours["reliability"] == "primary").all()


def test_power_table_matches_the_shared_reference() -> None:
    """The accelerator TDPs equal the single-figure rows of economics.md section 2."""
    text = (_shared_reference() / "economics.md").read_text()
    section = text.split("## 2. Power", 1)[1].split("\n## ", 1)[0]
    published = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        match = re.fullmatch(r"([\d,]+) W", cells[1]) if len(cells) > 2 else None
        if match:
            published[cells[0]] = float(match.group(1).replace(",", ""))
    power = data.load_power()
    tdp = power[(power["kind"] == "accelerator") & (power["basis"] == "tdp")]
    ours = dict(zip(tdp["item"], tdp["power_w"], strict=False))
    shared = sorted(set(published) & set(ours))
    assert len(shared) >= 6, (published, ours)  # H100 SXM5/PCIe, H200, B200, MI300X, L40S
    assert {k: ours[k] for k in shared} == {k: published[k] for k in shared}


def test_mlperf_rows_join_their_rated_power() -> None:
    frame = benchmarks.load_mlperf()
    h100 = frame[frame["accelerator"] == "H100-SXM-80GB"]
    assert (h100["tdp_w"] == 700).all()
    assert math.isnan(frame[frame["accelerator"] == "GB300"]["tdp_w"].iloc[0])
    interactive = frame[frame["benchmark"] == "llama2-70b-interactive-99.9"]
    assert list(interactive["scenario"]) == ["Server"] and list(interactive["slo"]) == [
        "Interactive"]
    assert frame["sparsity"].sum() == 1
    assert len(benchmarks.benchmark_results(frame)) == 39


def _copy(tmp_path: Path, name: str, edit: Callable[[str], str]) -> Path:
    text = (data_dir() / "economics" / name).read_text(encoding="utf-8")
    path = tmp_path / name
    path.write_text(edit(text), encoding="utf-8")
    return path


# File-level rules (across rows); row-level rules are in tests/test_data_schemas.py.
@pytest.mark.parametrize(
    ("edit", "message"),
    [(lambda t: t + "05,pue,1.5,unitless,1.1,2,0.05,x,2026-01-01,teaching assumption\n",
      "appears twice"),
     (lambda t: "\n".join(line for line in t.splitlines() if ",rack_kw," not in line),
      "missing parameter")],
)
def test_defaults_loader_rejects_bad_files(tmp_path: Path, edit: Callable[[str], str],
                                           message: str) -> None:
    path = _copy(tmp_path, "defaults.csv", edit)
    with pytest.raises(DataError, match=message):
        data.load_defaults(path)


def test_scenario_from_defaults_reports_an_invalid_default() -> None:
    defaults = data.load_defaults()
    items = {k: v for k, v in defaults.items()}
    items["pue"] = data.Default("pue", 0.5, "", 0, 2, 0.1, "s", "2026-01-01", "primary")
    with pytest.raises(DataError, match="pue"):
        data.scenario_from_defaults(data.Defaults(items, defaults.frame))
