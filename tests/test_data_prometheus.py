"""read_prometheus against a real Prometheus (Debian's) scraping labkit's exporter on a simulated
lab with a running workload: the values read back through query_range are the simulator's."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import labkit.gpu as gpu
from labkit.data.prometheus import (
    MAX_POINTS_PER_SERIES,
    PrometheusError,
    parse_step,
    read_prometheus,
    read_query_range,
)
from labkit.gpu.sim import SCENARIOS
from labkit.observe import FRAME_COLUMNS, Trace
from tests.prometheus_servers import (
    LAB_SPEC,
    exporter_process,
    free_port,
    prometheus_process,
    query,
)

TRAIN = SCENARIOS["training"].phases[0].values
# bcrypt (cost 4) of "labkit-test", made with the bcrypt package for this test
BASIC_AUTH = "teacher:$2b$04$MExmOys1XDpR8ifVi3m8X.beR0Ss1wdPIc.178GfnIJ0QUx.YKClq"


@pytest.fixture
def prometheus(prometheus_lab: tuple[str, float]) -> tuple[str, float]:
    """The session's real Prometheus scraping the exporter (tests/conftest.py)."""
    return prometheus_lab


@pytest.fixture(scope="module")
def oracle() -> Iterator[dict[str, Any]]:
    """What the same simulated lab gives through pynvml directly (seeded: same UUIDs)."""
    gpu.disconnect()
    nv = gpu.connect(LAB_SPEC, clock="virtual", noise=False)
    lab = gpu.simulator()
    lab.start("training", device=0)
    lab.advance(5.0)
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(2)]
    out = {"uuid": [nv.nvmlDeviceGetUUID(h) for h in handles],
           "name": nv.nvmlDeviceGetName(handles[0]),
           "fb_used_mib": [nv.nvmlDeviceGetMemoryInfo(h).used / 2**20 for h in handles],
           "fb_total_mib": nv.nvmlDeviceGetMemoryInfo(handles[0]).total / 2**20,
           "power_limit_w": nv.nvmlDeviceGetEnforcedPowerLimit(handles[0]) / 1000,
           "power_w": nv.nvmlDeviceGetPowerUsage(handles[0]) / 1000}
    gpu.disconnect()
    yield out


def _series(frame: Any, g: int, metric: str) -> np.ndarray:
    part = frame[(frame["gpu"] == g) & (frame["metric"] == metric)]
    return part["value"].to_numpy(dtype=float)


def test_round_trip_values_are_the_simulators(prometheus: tuple[str, float],
                                              oracle: dict[str, Any]) -> None:
    url, _started = prometheus
    now = time.time()
    log = read_prometheus(url, now - 120, now, step="1s")
    frame = log.frame
    assert list(frame.columns) == list(FRAME_COLUMNS)
    assert log.format == "prometheus" and log.source == url
    assert sorted(log.devices) == [0, 1]
    assert [log.devices[g]["UUID"] for g in (0, 1)] == oracle["uuid"]
    assert log.devices[0]["modelName"] == oracle["name"]
    # steady training on GPU 0: every GPM ratio is the scenario's, exactly
    for metric, expected in (("sm_active_frac", TRAIN["sm_active"]),
                             ("tensor_active_frac", TRAIN["tensor_active"]),
                             ("dram_active_frac", TRAIN["dram_active"]),
                             ("sm_occupancy_frac", TRAIN["sm_occupancy"])):
        values = _series(frame, 0, metric)
        assert len(values) >= 8, metric
        assert set(values[2:]) == {expected}, metric  # first seconds: GPM warm-up
        assert set(_series(frame, 1, metric)) == {0.0}, metric  # GPU 1 idle
    # util.gpu (DCGM %) -> fraction; memory exactly what NVML reports (MiB)
    assert set(_series(frame, 0, "gpu_util_frac")[3:]) == {1.0}
    assert set(_series(frame, 1, "gpu_util_frac")) == {0.0}
    for g in (0, 1):
        assert set(_series(frame, g, "fb_used_mib")) == {oracle["fb_used_mib"][g]}
    assert set(_series(frame, 0, "DCGM_FI_DEV_FB_FREE")) == {
        oracle["fb_total_mib"] - oracle["fb_used_mib"][0]}
    # power: 650 W of 700 W (the scenario's anchor; the simulator adds a little noise)
    power = _series(frame, 0, "power_usage_w")[3:]
    assert np.allclose(power, oracle["power_w"], rtol=0.02)
    assert set(_series(frame, 0, "power_limit_w")) == {oracle["power_limit_w"]}
    # energy (mJ -> J) grows with power
    energy = _series(frame, 0, "energy_j")
    assert np.all(np.diff(energy) >= 0) and energy[-1] > energy[0]
    assert "fan_speed_frac" not in set(frame["metric"])  # NotSupported on an H100: absent
    trace = Trace(frame)  # lesson 01's replay takes it as it is
    assert trace.gpus == (0, 1) and trace.duration_s >= 5


def test_step_and_window_are_the_servers(prometheus: tuple[str, float]) -> None:
    url, _ = prometheus
    now = time.time()
    log = read_prometheus(url, now - 60, now, step="5s")
    times = np.unique(log.frame["timestamp_s"])
    assert np.allclose(np.diff(times), 5.0)


def test_empty_window_before_the_exporter_started(prometheus: tuple[str, float]) -> None:
    url, started = prometheus
    with pytest.raises(PrometheusError, match="no DCGM samples") as err:
        read_prometheus(url, started - 7200, started - 3600, step="15s")
    assert err.value.kind == "empty"


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(PrometheusError, match="cannot reach") as err:
        read_prometheus(url, 0, 60, timeout_s=5)
    assert (err.value.kind, err.value.detail) == ("unreachable", "unreachable.refused")
    assert err.value.params["url"].startswith(url)


def test_real_prometheus_behind_basic_auth_answers_401(tmp_path: Path) -> None:
    with prometheus_process(f"127.0.0.1:{free_port()}", tmp_path, basic_auth=BASIC_AUTH) as url:
        with pytest.raises(PrometheusError, match="401") as err:
            read_prometheus(url, time.time() - 60, time.time(), token="wrong")
    assert err.value.kind == "unauthorized"


@pytest.mark.parametrize(("url", "start", "end", "step", "kind", "detail", "params"), [
    ("ftp://x", 0, 60, "15s", "bad_url", "bad_url", {"value": "ftp://x"}),
    ("not a url", 0, 60, "15s", "bad_url", "bad_url", {"value": "not a url"}),
    ("http://127.0.0.1:9", 60, 60, "15s", "bad_window", "end_before_start", {}),
    ("http://127.0.0.1:9", 60, 0, "15s", "bad_window", "end_before_start", {}),
    ("http://127.0.0.1:9", 0, 60, "fast", "bad_window", "bad_step", {"value": "fast"}),
    ("http://127.0.0.1:9", 0, 60, "0s", "bad_window", "step_not_positive", {"value": "0s"}),
    ("http://127.0.0.1:9", "yesterday", 60, "15s", "bad_window", "bad_time.start",
     {"value": "yesterday"}),
    ("http://127.0.0.1:9", 0, "어제 오후", "15s", "bad_window", "bad_time.end",
     {"value": "어제 오후"}),
    ("http://127.0.0.1:9", 0, MAX_POINTS_PER_SERIES * 15, "15s", "too_many_points",
     "too_many_points", {"points": "11,001", "limit": "11,000"}),
])
def test_bad_input(url: str, start: Any, end: Any, step: str, kind: str, detail: str,
                   params: dict[str, str]) -> None:
    with pytest.raises(PrometheusError) as err:
        read_prometheus(url, start, end, step)
    assert err.value.kind == kind and isinstance(err.value, ValueError)
    assert err.value.detail == detail
    assert {k: err.value.params[k] for k in params} == params  # the typed value, echoed


def test_an_exporters_address_is_named_as_one(tmp_path: Path) -> None:
    """labkit's real exporter answers 405 to POST /api/v1/query_range: the error says it is an
    exporter (not "try a shorter window")."""
    with exporter_process(tmp_path) as target:
        with pytest.raises(PrometheusError, match="405") as err:
            read_prometheus(f"http://{target}", time.time() - 60, time.time())
    assert err.value.kind == "exporter"
    assert err.value.params["code"] == "405"


@pytest.mark.parametrize(("step", "seconds"), [("15s", 15.0), ("1m", 60.0), ("500ms", 0.5),
                                               ("2h", 7200.0), (30, 30.0), ("1.5s", 1.5)])
def test_parse_step(step: Any, seconds: float) -> None:
    assert parse_step(step) == seconds


def _answer(result: list[Any], status: str = "success") -> str:
    # compact, as Prometheus writes it (the reader's fast path)
    return json.dumps({"status": status, "data": {"resultType": "matrix", "result": result}},
                      separators=(",", ":"))


def _same(a: Any, b: Any) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.devices == b.devices and a.metadata == b.metadata and a.start == b.start


def test_fast_reader_and_json_agree_on_the_real_servers_answer(
        prometheus: tuple[str, float]) -> None:
    url, _ = prometheus
    now = time.time()
    form = {"query": '{__name__=~"DCGM_.*"}', "start": str(now - 60), "end": str(now),
            "step": "1"}
    req = urllib.request.Request(url + "/api/v1/query_range",
                                 data=urllib.parse.urlencode(form).encode())
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
    assert body.startswith(b'{"status":"success","data":{"resultType":"matrix"')
    _same(read_query_range(body), read_query_range(json.loads(body)))


def _series_doc(name: str, gpu: str, values: Sequence[tuple[float, str]], **labels: str
                ) -> dict[str, Any]:
    return {"metric": {"__name__": name, "gpu": gpu, **labels},
            "values": [[t, v] for t, v in values]}


def test_blank_sentinels_and_hosts_and_mig_series() -> None:
    # DCGM blanks as Prometheus returns them (float64): int64 blank, fp64 "not supported"
    body = _answer([
        _series_doc("DCGM_FI_DEV_MEMORY_TEMP", "0", [(100, "9223372036854775794"), (101, "41")],
                    Hostname="a"),
        _series_doc("DCGM_FI_PROF_SM_ACTIVE", "0", [(100, "140737488355330"), (101, "0.5")],
                    Hostname="a"),
        _series_doc("DCGM_FI_DEV_GPU_UTIL", "0", [(100, "37"), (101, "NaN")], Hostname="b"),
        _series_doc("DCGM_FI_DEV_FB_USED", "0", [(100, "10")], Hostname="a",
                    GPU_I_ID="1", GPU_I_PROFILE="1g.10gb"),
        _series_doc("up", "0", [(100, "1")]),
    ])
    log = read_query_range(body, source="saved")
    _same(log, read_query_range(json.loads(body), source="saved"))  # json path: the same
    f = log.frame.set_index(["gpu", "metric", "timestamp_s"])
    temp = f.loc[(0, "memory_temp_c", 0.0)]
    assert np.isnan(temp["value"]) and temp["reason"] == "DCGM blank"
    assert f.loc[(0, "memory_temp_c", 1.0), "value"] == 41.0
    sm = f.loc[(0, "sm_active_frac", 0.0)]
    assert sm["status"] == "not_supported" and sm["reason"] == "DCGM blank (not supported)"
    # two hosts: GPUs numbered host by host (a -> 0, b -> 1)
    assert f.loc[(1, "gpu_util_frac", 0.0), "value"] == 0.37
    assert f.loc[(1, "gpu_util_frac", 1.0), "status"] == "not_available"
    assert log.devices[1]["Hostname"] == "b"
    # the MIG device is its own series, numbered after the GPUs
    assert f.loc[(2, "fb_used_mib", 0.0), "value"] == 10.0
    assert log.devices[2]["GPU_I_PROFILE"] == "1g.10gb" and log.devices[2]["parent_gpu"] == "0"
    assert log.metadata["mig_devices"] == "1"
    assert sorted(log.devices) == [0, 1, 2]


@pytest.mark.parametrize("same_grid", [True, False])
def test_rows_come_in_the_tidy_order(same_grid: bool) -> None:
    """By time, GPU, metric, whatever order the server lists the series in (one time grid
    for all: the transposed fast path; different grids: the sort)."""
    late = [(100, "1"), (115, "2")] if same_grid else [(115, "2")]
    body = _answer([
        _series_doc("DCGM_FI_DEV_POWER_USAGE", "1", [(100, "300"), (115, "301")]),
        _series_doc("DCGM_FI_DEV_GPU_TEMP", "1", late),
        _series_doc("DCGM_FI_DEV_POWER_USAGE", "0", [(100, "200"), (115, "201")]),
        _series_doc("DCGM_FI_DEV_GPU_TEMP", "0", [(100, "50"), (115, "51")]),
    ])
    frame = read_query_range(body).frame
    rows = [(t, g, str(m), v) for t, g, m, v in frame[["timestamp_s", "gpu", "metric",
                                                       "value"]].itertuples(index=False)]
    first = [(0.0, 0, "gpu_temp_c", 50.0), (0.0, 0, "power_usage_w", 200.0)]
    first += [(0.0, 1, "gpu_temp_c", 1.0)] if same_grid else []
    assert rows == [*first, (0.0, 1, "power_usage_w", 300.0),
                    (15.0, 0, "gpu_temp_c", 51.0), (15.0, 0, "power_usage_w", 201.0),
                    (15.0, 1, "gpu_temp_c", 2.0), (15.0, 1, "power_usage_w", 301.0)]
    assert list(frame.index) == list(range(len(rows)))


@pytest.mark.parametrize(("body", "kind", "detail"), [
    ("<html>", "not_prometheus", "not_json"),
    (json.dumps({"status": "error", "errorType": "bad_data", "error": "x"}), "query_failed",
     "server_error"),
    (json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}),
     "not_prometheus", "not_matrix"),
    (_answer([]), "empty", "empty"),
    (_answer([_series_doc("up", "0", [(1, "1")])]), "empty", "empty"),
])
def test_bad_answers(body: str, kind: str, detail: str) -> None:
    with pytest.raises(PrometheusError) as err:
        read_query_range(body)
    assert (err.value.kind, err.value.detail) == (kind, detail)


def test_read_prometheus_is_public_where_lesson_01_readers_are() -> None:
    """Issue 16's public names: every reader of operator data is in labkit.data.observe."""
    import labkit.data.observe as readers
    from labkit.data import prometheus

    assert readers.read_prometheus is prometheus.read_prometheus
    for name in ("read_nvidia_smi_csv", "read_dcgm_exporter", "read_nvidia_smi_dmon",
                 "read_nvidia_smi_query"):
        assert callable(getattr(readers, name)), name


def test_prometheus_stores_the_exporters_counters_as_counters(
        prometheus: tuple[str, float]) -> None:
    """Prometheus' own metadata API: the energy and PCIe-replay families are counters, stored
    under dcgm-exporter's names (no ``_total``)."""
    url, _ = prometheus
    for name in ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"):
        meta_url = f"{url}/api/v1/metadata?" + urllib.parse.urlencode({"metric": name})
        deadline = time.monotonic() + 30
        while True:  # metadata arrives with the scrapes after startup
            with urllib.request.urlopen(meta_url, timeout=10) as r:
                meta = json.loads(r.read())["data"]
            if name in meta or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert [m["type"] for m in meta[name]] == ["counter"]
        assert query(url, name), f"no series named {name}"
