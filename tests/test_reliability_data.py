"""Lesson 04's data: loaders, the shipped tables, and the InfiniteHBD tables recomputed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from labkit import fault_trace
from labkit import reliability as rel
from labkit.data import DataError, data_dir
from labkit.data import reliability as data


def test_llama3_table_loads_with_source() -> None:
    table = data.load_llama3_interruptions()
    assert len(table) == 18 and table["interruptions"].sum() == 419
    assert set(table["source"]) == {table.attrs["meta"]["source"]}
    assert "2407.21783" in table.attrs["meta"]["source"]
    assert table.loc[0, "as_of"] == "2024-07-31"


def test_failure_rates_cover_section_10() -> None:
    rates = data.load_failure_rates().set_index("cluster")["rate_per_1000_node_days"]
    assert rates["Meta RSC-1"] == 6.50 and rates["Meta RSC-2"] == 2.34
    # derived rows re-derived here
    assert rates["Llama 3 405B"] == pytest.approx(1000 * 419 / (2048 * 54), abs=5e-4)
    assert rates["Meta 8-GPU jobs"] == pytest.approx(1000 / 47.7, abs=5e-3)
    assert rates["StepFun InfiniteHBD trace"] == pytest.approx(584 / (400 * 348) * 1000,
                                                               abs=5e-4)


def test_meta_mttf_projections_follow_the_rate() -> None:
    mttf = data.load_meta_mttf().set_index("n_gpus")
    rsc1 = rel.gpu_mtbf_h_from_rate(6.50, "per_1000_node_days")
    for n in (16_384, 131_072):
        assert mttf.loc[n, "kind"] == "projected"
        printed = mttf.loc[n, "mttf_h"]
        digits = len(f"{printed:g}".split(".")[1])
        assert abs(rel.job_mtbf_h(n, rsc1) - printed) <= 0.5 * 10**-digits
    assert mttf.loc[8, "mttf_h"] == pytest.approx(47.7 * 24)


def test_daly_intervals_match_the_model() -> None:
    for row in data.load_daly_intervals().itertuples():
        published = row.published_optimum_min
        half_digit = 0.5 if published == round(published) else 0.05
        assert abs(rel.daly_interval(row.checkpoint_cost_min, row.mtbf_min) - published) \
            <= half_digit


def test_month_model_reproduces_the_worksheet_within_half_an_hour() -> None:
    from labkit.data.goodput import load_worksheet_seed

    month = data.load_month_model()
    seed = load_worksheet_seed().worksheet
    expected = rel.expected_month(**month.kwargs())
    assert month.n_gpus == 4_096 and month.hours == seed.reserved_h
    for name in rel.LEDGER_COLUMNS:
        assert abs(expected.losses[name] - seed.losses[name]) < 0.5, name
    assert abs(expected.goodput - seed.goodput) < 0.001
    assert month.gpu_mtbf_h == pytest.approx(16_384 * 54 * 24 / 419, abs=0.5)
    assert month.straggler_slowdown == 670 / 640


def test_month_model_rejects_bad_values(tmp_path: Path) -> None:
    good = (data_dir() / "reliability/month_model.yaml").read_text()
    bad = tmp_path / "m.yaml"
    bad.write_text(good.replace("checkpoint_interval_h: 0.5", "checkpoint_interval_h: 0"))
    with pytest.raises(DataError, match="m.yaml: checkpoint_interval_h must be > 0"):
        data.load_month_model(str(bad))


@pytest.mark.parametrize("name", sorted(data.STEPFUN_TABLES))
def test_shipped_stepfun_tables_load_with_source_and_license(name: str) -> None:
    table = data.load_stepfun_table(name)
    meta = table.attrs["meta"]
    assert "InfiniteHBD" in meta["source"] and "Apache-2.0" in meta["license"]
    assert len(table) > 0


def test_shipped_stepfun_tables_hold_the_reference_figures() -> None:
    rates = data.load_stepfun_table("stepfun_fault_rates").set_index(["level", "class"])
    assert rates.loc[("all", "all"), "fault_starts"] == 584
    assert round(rates.loc[("all", "all"), "rate_per_1000_node_days"], 2) == 4.20
    assert round(rates.loc[("Hardware Failure", "all"), "rate_per_1000_node_days"], 2) == 2.14
    assert rates.loc[("Hardware Failure", "GPU"), "fault_starts"] == 158
    repair = data.load_stepfun_table("stepfun_repair_days").set_index("group")
    assert round(repair.loc["all", "median_days"], 2) == 0.85
    assert round(repair.loc["all", "mean_days"], 1) == 5.5
    assert round(repair.loc["Hardware Failure", "median_days"], 2) == 1.36
    assert repair.loc["all", "zero_length"] == 14
    gaps = data.load_stepfun_table("stepfun_interarrival").set_index("statistic")["value"]
    assert round(gaps["mean_gap_days"], 2) == 0.59 and round(gaps["median_gap_days"], 2) == 0.23
    assert round(gaps["gap_cv"], 2) == 1.76
    assert gaps["max_starts_same_time"] == 8 and gaps["max_faults_one_node"] == 14
    assert gaps["nodes_with_5_or_more"] == 33 and gaps["nodes_with_faults"] == 231
    assert round(gaps["unavailable_frac"], 3) == 0.023


def test_unknown_stepfun_table_is_a_data_error() -> None:
    with pytest.raises(DataError, match="unknown table"):
        data.load_stepfun_table("stepfun_everything")


TRACE = data.find_stepfun_trace()


@pytest.mark.skipif(TRACE is None, reason="InfiniteHBD trace (shared/reference) not present")
@pytest.mark.parametrize("name", sorted(data.STEPFUN_TABLES))
def test_shipped_stepfun_tables_recomputed_from_the_trace(name: str) -> None:
    assert TRACE is not None
    derived = data.derive_stepfun_tables(TRACE)[name]
    shipped = data.load_stepfun_table(name)[list(derived.columns)]
    assert list(shipped.iloc[:, 0]) == list(derived.iloc[:, 0])
    pd.testing.assert_frame_equal(shipped.reset_index(drop=True), derived, check_dtype=False,
                                  rtol=1e-5)


@pytest.mark.skipif(TRACE is None, reason="InfiniteHBD trace (shared/reference) not present")
def test_trace_pairs_by_fault_type() -> None:
    assert TRACE is not None
    pairs = fault_trace.pair_faults(data.read_stepfun_trace(TRACE))
    assert len(pairs) == 584 and (pairs["repair_days"] >= 0).all()


def test_read_stepfun_trace_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read"):
        data.read_stepfun_trace(tmp_path)
    (tmp_path / "fault_trace.json").write_text("{not json")
    with pytest.raises(DataError, match="invalid JSON"):
        data.read_stepfun_trace(tmp_path)
    (tmp_path / "fault_trace.json").write_text('{"a": 1}')
    with pytest.raises(DataError, match="list of event"):
        data.read_stepfun_trace(tmp_path)
    (tmp_path / "fault_trace.json").write_text(
        '[{"node_id": "a", "event_time": 1, "event_type": "fault_end",'
        ' "fault_type": {"Level": "L", "Class": "C", "Desc": "D"}}]')
    with pytest.raises(DataError, match="no open"):
        data.derive_stepfun_tables(tmp_path)


def _ev(node: str, time: float, kind: str, cls: str = "GPU") -> dict[str, object]:
    return {"node_id": node, "event_time": time, "event_type": kind,
            "fault_type": {"Level": "Hardware Failure", "Class": cls, "Desc": cls + " x"}}


def test_pair_faults_matches_the_fault_type_when_faults_overlap() -> None:
    events = [_ev("a", 1, "fault_start", "GPU"), _ev("a", 2, "fault_start", "CPU"),
              _ev("a", 3, "fault_end", "CPU"), _ev("a", 9, "fault_end", "GPU"),
              _ev("b", 5, "fault_start"), _ev("b", 5, "fault_end")]
    pairs = fault_trace.pair_faults(events).set_index(["node_id", "class"])
    assert pairs.loc[("a", "GPU"), "repair_days"] == 8
    assert pairs.loc[("a", "CPU"), "repair_days"] == 1
    assert pairs.loc[("b", "GPU"), "repair_days"] == 0


def test_fault_statistics_on_a_small_trace() -> None:
    events = [_ev("a", 0, "fault_start"), _ev("a", 1, "fault_end"),
              _ev("a", 2, "fault_start"), _ev("a", 5, "fault_end"),
              _ev("b", 2, "fault_start", "NIC"), _ev("b", 4, "fault_end", "NIC")]
    pairs = fault_trace.pair_faults(events)
    rates = fault_trace.fault_rates(pairs, nodes=10, days=100)
    assert rates.iloc[0]["fault_starts"] == 3
    assert rates.iloc[0]["rate_per_1000_node_days"] == pytest.approx(3)
    assert list(rates["class"]) == ["all", "all", "GPU", "NIC"]
    repair = fault_trace.repair_days(pairs).set_index("group")
    assert repair.loc["all", "median_days"] == 2 and repair.loc["all", "max_days"] == 3
    stats = fault_trace.interarrival_stats(pairs, nodes=10, days=100).set_index("statistic")
    assert stats.loc["max_starts_same_time", "value"] == 2
    assert stats.loc["unavailable_frac", "value"] == pytest.approx(6 / 1000)
    assert stats.loc["max_faults_one_node", "value"] == 2


@pytest.mark.parametrize(
    ("events", "message"),
    [([_ev("a", 1, "fault_start")], "never end"),
     ([{"node_id": "a"}], "needs node_id"),
     (["x"], "mapping"),
     ([{**_ev("a", 1, "fault_start"), "event_type": "fault_middle"}], "must be one of"),
     ([{**_ev("a", 1, "fault_start"), "event_time": float("nan")}], "finite")],
)
def test_pair_faults_rejects_bad_events(events: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fault_trace.pair_faults(events)  # type: ignore[arg-type]


def test_fault_statistics_reject_bad_inputs() -> None:
    pairs = fault_trace.pair_faults([_ev("a", 0, "fault_start"), _ev("a", 1, "fault_end")])
    with pytest.raises(ValueError):
        fault_trace.fault_rates(pairs, nodes=0)
    with pytest.raises(ValueError):
        fault_trace.fault_rates(pairs, days=0)
    with pytest.raises(ValueError, match="at least 3"):
        fault_trace.interarrival_stats(pairs)
