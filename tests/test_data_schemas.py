"""Every file family of data/ is validated by its schema: a broken copy of a real file fails.

One table: each row breaks one shipped file in a copy of data/ (``LABKIT_DATA``), calls the
family's public loader, and expects a DataError naming the file and the row or key at fault.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ConfigDict

from labkit.data import (
    DataError,
    benchmarks,
    data_dir,
    economics,
    goodput,
    gpus,
    load_csv,
    load_document,
    observe,
    opex,
    plans,
    reliability,
    scheduling,
    school,
    tariff,
    traces,
)
from labkit.data.schema import Document, Row

TARIFF = "tariffs/kepco_2026-06-01.yaml"
GAP = "교육용(갑) 고압A 선택I"


def _tariff() -> Any:
    return tariff.load_tariff(GAP, TARIFF.removeprefix("tariffs/kepco_").removesuffix(".yaml"))


def _trace(name: str) -> Callable[[], Any]:
    def load() -> Any:
        return traces.check_trace_header(observe.load_trace(name).metadata, name)
    return load


def _gpu(name: str) -> Callable[[], Any]:
    def load() -> Any:
        gpus.load_gpu_model.cache_clear()
        return gpus.load_gpu_model(name)
    return load


# (family, file in data/, text to replace (first occurrence), replacement, loader, message)
CASES: list[tuple[str, str, str, str, Callable[[], Any], str]] = [
    ("economics", "economics/power.csv", "700,,tdp", "700,,nameplate", economics.load_power,
     r"power.csv:6: column 'basis' must be one of"),
    ("economics", "economics/api_prices.csv", "2024-08-01", "today", economics.load_api_prices,
     r"api_prices.csv:\d+: column 'as_of' must be a date YYYY-MM-DD, got 'today'"),
    ("economics", "economics/hardware_prices.csv", "2023-08-01", "2023-02-30",
     economics.load_hardware_prices, r"hardware_prices.csv:\d+: column 'as_of' must be a valid"),
    ("economics", "economics/cloud_gpu_prices.csv", "12.29", "-1", economics.load_cloud_prices,
     r"cloud_gpu_prices.csv:\d+: column 'usd_per_gpu_hour' must be >= 0"),
    ("economics", "economics/defaults.csv", "05,server_capex_usd,300000",
     "05,server_capex_usd,900000", economics.load_defaults,
     r"defaults.csv:6: parameter 'server_capex_usd': value 900000 is outside"),
    ("economics", "economics/mlperf_inference_llm.csv", ",H100-SXM-80GB,8,1,8,",
     ",H100-SXM-80GB,8,1,4,", benchmarks.load_mlperf,
     r"mlperf_inference_llm.csv:\d+: .*total_accel"),
    ("economics", "economics/mlperf_inference_llm.csv", ",FP8,", ",FP3,", benchmarks.load_mlperf,
     r"column 'precision' must be one of"),
    ("opex", "opex/servers.csv", ",8,8xH100 server", ",0,8xH100 server",
     lambda: opex.load_servers(1400.0), r"servers.csv:5: column 'gpus_per_server' must be >= 1"),
    ("opex", "opex/defaults.csv", ",teaching assumption", ",folklore", opex.load_opex_defaults,
     r"opex/defaults.csv:\d+: column 'reliability' must be one of"),
    ("reliability", "reliability/meta_mttf.csv", "# as_of: 2024-10-28", "# as_of: now",
     reliability.load_meta_mttf, r"meta_mttf.csv: header line '# as_of:' must be a date"),
    ("reliability", "reliability/llama3_interruptions.csv", ",GPU,", ",Gremlins,",
     reliability.load_llama3_interruptions, r"llama3_interruptions.csv:\d+: column 'category'"),
    ("reliability", "reliability/month_model.yaml", "trials: 10000", "trials: many",
     reliability.load_month_model, r"month_model.yaml: trials must be int, got 'many'"),
    ("scheduling", "scheduling/school_day.yaml", "    count: 24\n", "    count: many\n",
     scheduling.load_school_day, r"school_day.yaml: groups\[3\].count must be int"),
    ("scheduling", "scheduling/school_day.yaml", "    mig_profile: 1g.10gb\n",
     "    mig_profile: 1g.10gb\n    colour: red\n", scheduling.load_school_day,
     r"school_day.yaml: groups\[3\].colour is not a known key"),
    ("scheduling", "scheduling/school_day.yaml", "    filler: 0\n",
     "    filler: 0\n    mining: 5\n", scheduling.load_school_day,
     r"values.krw_per_gpu_h.mining \(key\) must be one of"),
    ("scheduling", "scheduling/school_day.yaml", "day_h: 24\n", "", scheduling.load_school_day,
     r"school_day.yaml: day_h is missing"),
    ("scheduling", "scheduling/philly_job_sizes.csv", "\n1,", "\n0,",
     scheduling.load_trace_distribution, r"philly_job_sizes.csv:\d+: column 'num_gpu' must be"),
    ("goodput", "goodput/worksheet.yaml", "  rewind: 14", "  rewinds: 14",
     goodput.load_worksheet_seed, r"worksheet.yaml: losses.rewinds \(key\) must be one of"),
    ("goodput", "goodput/worksheet.yaml", "reserved_h: 720", "reserved_h: lots",
     goodput.load_worksheet_seed, r"worksheet.yaml: reserved_h must be float, got 'lots'"),
    ("goodput", "goodput/worksheet.yaml", "  as_of: 2026-11-30", "  as_of: '20261130'",
     goodput.load_worksheet_seed, r"worksheet.yaml: gpu_price.as_of must be a date YYYY-MM-DD"),
    ("school", "school/calendar_2026.yaml", "class_start_h: 9", "class_start_h: nine",
     lambda: school.load_school_calendar(), r"calendar_2026.yaml: class_start_h must be float"),
    ("school", "school/calendar_2026.yaml", "as_of: 2026-11-30", "as_of: today",
     lambda: school.load_school_calendar(), r"calendar_2026.yaml: as_of must be a date"),
    ("school", "school/case.yaml", "    value: 8\n", "    value: eight\n",
     lambda: school.load_default_case(), r"figures.n_gpus.value: n_gpus must be a number"),
    ("school", "school/case.yaml", "    value: 1.5\n", "    value: 0.5\n",
     lambda: school.load_default_case(), r"case.yaml: figures.pue.value: pue must be >= 1"),
    ("school", "school/case.yaml", "  n_gpus:\n    value: 8\n    source:",
     "  n_gpus:\n    value: 8\n    sources:",
     lambda: school.load_default_case(), r"case.yaml: figures.n_gpus"),
    ("tariffs", TARIFF, "  climate_krw_per_kwh: 9.0", "  climate_krw_per_kwh: -9.0", _tariff,
     r"kepco_2026-06-01.yaml: adders.climate_krw_per_kwh must be >= 0"),
    ("tariffs", TARIFF, "saturday_peak_band: mid", "saturday_peak_band: noon", _tariff,
     r"kepco_2026-06-01.yaml: saturday_peak_band must be one of"),
    ("tariffs", TARIFF, "\nverified: false", "\nverified: maybe", _tariff,
     r"kepco_2026-06-01.yaml: verified must be bool"),
    ("traces", "traces/sim-h100_nvidia-smi_scenarios.csv", "# as_of: 2026-11-30",
     "# as_of: today", _trace("sim-h100_nvidia-smi_scenarios.csv"),
     r"nvidia-smi_scenarios.csv: header: as_of must be a date YYYY-MM-DD, got 'today'"),
    ("traces", "traces/sim-h100_dcgm-exporter_scenarios.prom",
     "# license: CC0 (constructed data)\n", "", _trace("sim-h100_dcgm-exporter_scenarios.prom"),
     r"scenarios.prom: header: license is missing"),
    ("gpus", "gpus/L40S.yaml", "sm_count: 142", "sm_count: many", _gpu("L40S"),
     r"L40S.yaml: device.sm_count must be int, got 'many'"),
    ("gpus", "gpus/H100-80GB.yaml", "  tdp_w: 700", "  tdp_w: 700\n  tdp_colour: red",
     _gpu("H100-80GB"), r"H100-80GB.yaml: board.tdp_colour is not a known key"),
    ("gpus", "gpus/A30.yaml", "as_of: 2026-11-30", "as_of: now", _gpu("A30"),
     r"A30.yaml: as_of must be a date"),
    # YAML scalars are strict: PyYAML typed them, a quoted number or a 1 for true is a mistake
    ("gpus", "gpus/L40S.yaml", "  ecc: true", "  ecc: 1", _gpu("L40S"),
     r"L40S.yaml: device.ecc must be bool \(true/false\), got 1"),
    ("reliability", "reliability/month_model.yaml", "hours: 720", "hours: '720'",
     reliability.load_month_model, r"month_model.yaml: hours must be float, got '720'"),
    ("lessons", "lessons/plans.yaml", "{period: 1, phase: 도입, minutes: 7,",
     "{period: 1, phase: 도입, minutes: 8,", lambda: plans.load_plans(),
     r"plans.yaml: lessons\.01.*period 1: minutes add up to 51, not 50"),
]


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(data_dir(), tmp_path / "data")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.mark.parametrize(("family", "name", "old", "new", "loader", "message"), CASES,
                         ids=[f"{c[0]}:{c[1].split('/')[-1]}:{c[3][:12]}" for c in CASES])
def test_a_broken_copy_of_a_real_file_names_file_and_place(
        data_copy: Path, family: str, name: str, old: str, new: str,
        loader: Callable[[], Any], message: str) -> None:
    path = data_copy / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{name} no longer holds {old!r}: update the case"
    loader()  # the shipped copy loads
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(DataError, match=message):
        loader()
    gpus.load_gpu_model.cache_clear()


def test_every_family_has_a_case() -> None:
    families = {p.name for p in data_dir().iterdir() if p.is_dir()}
    assert families == {c[0] for c in CASES}


def test_every_shipped_file_matches_the_base_schema() -> None:
    """Every CSV row and YAML file of data/ has a source and a strict as_of."""
    for path in sorted(data_dir().rglob("*")):
        if path.suffix == ".yaml":
            doc = load_document(path, _AnyDocument)
            assert doc.source and len(doc.as_of) == 10, path
        elif path.suffix == ".csv":
            frame = load_csv(path, Row)
            assert frame["source"].str.len().min() > 0, path
            assert frame["as_of"].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all(), path


class _AnyDocument(Document):
    """A YAML file's top-level provenance only (the other keys are the family schema's)."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, frozen=True)
