"""labkit.data.scheduling: the school day and the trace-derived distributions load and validate."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from labkit.data import DataError, data_dir
from labkit.data.scheduling import load_school_day, load_trace_distribution
from labkit.scheduling import Cluster, jobs_from_groups, simulate


def test_school_day_loads_cluster_costs_tenants_groups() -> None:
    day = load_school_day()
    assert day.cluster == Cluster(2, 8, "A100-80GB")
    assert day.cluster.mig is not None and day.cluster.mig.compute_slices == 7
    assert day.day_h == 24 and day.cost_krw_per_gpu_h == 1000
    assert {t.name for t in day.tenants} == {"service", "ai_basics", "deep_learning", "research"}
    assert sum(day.specialization_quotas.values()) == day.cluster.installed_gpus
    groups = {g.name: g for g in day.groups}
    assert groups["ai-lab"].mig_profile == "1g.10gb" and groups["ai-lab"].count == 24
    # a group without its own value takes its kind's value
    assert groups["eval"].value_per_gpu_h == day.values_krw_per_gpu_h["evaluation"] == 1500
    # variants keep the value of the same work: 1/7 of a GPU's work, on a whole GPU
    whole = groups["ai-lab"].with_variants(["whole_gpu"])
    assert whole.mig_profile is None and whole.value_per_gpu_h == pytest.approx(2100 / 7, abs=1)
    jobs = jobs_from_groups(day.groups)
    assert len(jobs) == sum(g.count for g in day.groups)
    assert simulate(jobs, day.cluster).makespan_h > day.day_h / 2


def test_trace_distribution_matches_the_derived_files() -> None:
    dist = load_trace_distribution()
    assert dist.gpu_counts == (1, 2, 4, 8)
    assert dist.gpu_weights[0] == pytest.approx(4658 / 4987)  # Philly: 93 % single-GPU jobs
    assert sum(dist.gpu_weights) == pytest.approx(1)
    assert dist.shares[-1] == 1.0
    fractional = sum(w for s, w in zip(dist.shares, dist.share_weights, strict=True) if s < 1)
    assert fractional == pytest.approx(3078 / 6989)  # Alibaba openb: 44 % ask for a share
    q1 = dict(dist.duration_quantiles[1])
    assert q1[0.5] == pytest.approx(0.32111)  # median single-GPU run: about 19 minutes
    assert "Philly" in dist.source and "openb" in dist.source


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(data_dir() / "scheduling", tmp_path / "scheduling")
    shutil.copytree(data_dir() / "gpus", tmp_path / "gpus")
    monkeypatch.setenv("LABKIT_DATA", str(tmp_path))
    return tmp_path / "scheduling"


def test_school_day_group_the_model_rejects_names_file_and_group(data_copy: Path) -> None:
    """Rules of the model (not of the schema) still name the file and the group."""
    path = data_copy / "school_day.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("    hours: 14\n", "    hours: -14\n", 1), encoding="utf-8")
    with pytest.raises(DataError, match=r"school_day.yaml: groups\[2\]: hours must be > 0"):
        load_school_day()


def test_trace_files_errors_name_file_and_line(data_copy: Path) -> None:
    path = data_copy / "philly_durations.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = next(i for i, line in enumerate(lines) if line.startswith("1,0.5,"))
    lines[bad] = "1,0.5,soon"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"philly_durations.csv:{bad + 1}: column 'duration_h'"):
        load_trace_distribution()


def test_trace_files_reject_quantiles_that_are_not_a_distribution(data_copy: Path) -> None:
    path = data_copy / "philly_durations.csv"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\n8,1.0,", "\n8,0.99,"), encoding="utf-8")
    with pytest.raises(DataError, match="duration quantiles for 8 GPUs"):
        load_trace_distribution()
