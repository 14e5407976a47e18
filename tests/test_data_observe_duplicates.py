"""A wrong reading is never silent (issue 26): two readings of one (moment, GPU, metric).

The readers check what they return. A wrapper script's own GPU column is used where the file
shows it (it cycles where ``index`` does not), or the log is refused naming the columns and the
line; columns that are not nvidia-smi fields never become metrics; and shuffling or repeating
rows and columns of real captures (tests/fixtures/observe/SOURCES.md) gives the same readings or
a refusal, never other readings.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.data import observe as dobs
from labkit.observe import LogError, LogImport
from labkit.ui.observe.upload import log_error_text

FIXTURES = Path(__file__).parent / "fixtures" / "observe"

#: The issue's wrapper header: its ``gpu`` counts 0..7, its ``index`` is 0 on every row.
_WRAPPER_HEADER = "timestamp,gpu,index,memory.used,memory.total,power.draw,temperature.gpu"
_GPUS, _TICKS = 8, 3


def _wrapper_log(gpu_name: str = "gpu") -> str:
    rows = [_WRAPPER_HEADER.replace(",gpu,", f",{gpu_name},")]
    for t in range(_TICKS):
        for g in range(_GPUS):
            rows.append(f"2025/03/04 10:00:0{t}.{g:03d},{g},0,{1000 + 10 * g + t} MiB,"
                        f"81559 MiB,{300 + g}.50 W,{40 + g}")
    return "\n".join(rows) + "\n"


def _memory_used(log: LogImport) -> dict[tuple[int, int], float]:
    f = log.frame[log.frame.metric == "fb_used_mib"]
    return {(int(g), round(float(t))): float(v)
            for g, t, v in zip(f.gpu, f.timestamp_s, f.value, strict=True)}


def test_parse_nvidia_smi_csv_uses_a_wrapper_gpu_column_that_cycles() -> None:
    log = dobs.parse_nvidia_smi_csv(_wrapper_log(), source="wrapper.csv")
    assert log.gpu_column == "gpu"
    assert sorted(int(g) for g in log.frame.gpu.unique()) == list(range(_GPUS))
    assert "gpu" not in set(log.frame.metric) and "index" in log.ignored_fields
    # memory.used was written as 1000 + 10 * gpu + tick above
    assert _memory_used(log) == {(g, t): 1000.0 + 10 * g + t
                                 for g in range(_GPUS) for t in range(_TICKS)}


def test_read_nvidia_smi_csv_file_in_chunks_resolves_the_same(tmp_path: Path) -> None:
    path = tmp_path / "wrapper.csv"
    path.write_text(_wrapper_log())
    log = dobs.read_nvidia_smi_csv(path)
    assert log.gpu_column == "gpu" and len(log.frame.gpu.unique()) == _GPUS
    assert _memory_used(log) == _memory_used(dobs.parse_nvidia_smi_csv(_wrapper_log()))


def test_parse_nvidia_smi_csv_uses_the_wrapper_column_when_stamps_coincide() -> None:
    same = _wrapper_log().replace(".001,", ".000,").replace(".002,", ".000,")
    log = dobs.parse_nvidia_smi_csv(same)  # GPUs 0-2 at one moment each tick: resolved
    assert log.gpu_column == "gpu" and len(log.frame.gpu.unique()) == _GPUS


def test_parse_nvidia_smi_csv_refuses_doubled_readings_naming_columns_and_line() -> None:
    # "host" does not say GPU: the file does not say how; GPUs 0 and 1 share a stamp
    text = _wrapper_log("host").replace(".001,", ".000,")
    with pytest.raises(LogError) as info:
        dobs.parse_nvidia_smi_csv(text, source="wrapper.csv")
    err = info.value
    assert err.kind == "duplicate" and err.line == 3  # line 2: GPU 0, line 3: GPU 1 (index 0)
    assert "time column timestamp, GPU column index" in str(err)
    korean = log_error_text(err, source="wrapper.csv")
    assert "wrapper.csv 3번째 줄" in korean and "2번째 줄" in korean and "`index`" in korean
    assert "GPU 번호가 든 열" in korean and "repeats" not in korean


def test_read_nvidia_smi_csv_refuses_from_a_file_too(tmp_path: Path) -> None:
    path = tmp_path / "wrapper.csv"
    path.write_text(_wrapper_log("host").replace(".001,", ".000,"))
    with pytest.raises(LogError, match="line 3 repeats"):
        dobs.read_nvidia_smi_csv(path)


def test_parse_nvidia_smi_csv_takes_the_operators_gpu_column() -> None:
    text = _wrapper_log("host").replace(".001,", ".000,")
    log = dobs.parse_nvidia_smi_csv(text, gpu_column="host")
    assert log.gpu_column == "host" and len(log.frame.gpu.unique()) == _GPUS
    with pytest.raises(LogError, match="no column 'slot'"):
        dobs.parse_nvidia_smi_csv(text, gpu_column="slot")


def test_header_fields_lists_the_columns_for_the_picker() -> None:
    assert dobs.header_fields("# source: x\ntimestamp, index, power.draw [W]\n1,2,3\n") == [
        "timestamp", "index", "power.draw"]
    assert dobs.header_fields("2025/01/01 00:00:00.000, 0, 5\n") == []


def test_non_nvidia_smi_columns_are_ignored_fields_never_metrics() -> None:
    text = ("timestamp, index, job_step, host, utilization.gpu [%]\n"
            "2024/06/01 11:30:00.001, 0, 17, 3, 45 %\n"
            "2024/06/01 11:30:01.001, 0, 18, 3, 46 %\n")
    log = dobs.parse_nvidia_smi_csv(text)
    assert set(log.frame.metric) == {"gpu_util_frac"}
    assert {"job_step", "host"} <= set(log.ignored_fields)


def test_dmon_refuses_two_lines_of_one_gpu_at_one_time() -> None:
    lines = (FIXTURES / "dmon_mutc_TD.txt").read_text().splitlines()
    first_data = next(k for k, ln in enumerate(lines) if ln.strip() and not ln.startswith("#"))
    doubled = [*lines[:first_data + 1], lines[first_data], *lines[first_data + 1:]]
    with pytest.raises(LogError) as info:
        dobs.parse_nvidia_smi_dmon("\n".join(doubled) + "\n", source="d.txt")
    assert info.value.kind == "duplicate" and "GPU 0" in str(info.value)
    assert "두 번" in log_error_text(info.value, source="d.txt")


_DCGM_UUID = ('DCGM_FI_DEV_GPU_TEMP{{gpu="0", UUID="GPU-{u}", device="nvidia0", '
              'modelName="NVIDIA H100 80GB HBM3", Hostname="{h}"}} {v}')


def test_dcgm_refuses_one_gpu_label_on_two_devices() -> None:
    text = "\n".join([_DCGM_UUID.format(u="aaaa", h="node-1", v=40),
                      _DCGM_UUID.format(u="bbbb", h="node-2", v=70)]) + "\n"
    with pytest.raises(LogError) as info:
        dobs.read_dcgm_exporter(text, source="m.prom")
    assert info.value.kind == "duplicate" and info.value.line == 2
    assert "UUID" in log_error_text(info.value, source="m.prom")


def test_dcgm_refuses_a_mig_device_without_gpu_instance_id() -> None:
    text = ('DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0", UUID="GPU-a", GPU_I_PROFILE="1g.10gb"} 0.5\n'
            'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0", UUID="GPU-a", GPU_I_PROFILE="1g.10gb"} 0.1\n')
    with pytest.raises(LogError) as info:
        dobs.read_dcgm_exporter(text, source="m.prom")
    assert info.value.kind == "duplicate" and info.value.line == 1
    assert "GPU_I_ID" in log_error_text(info.value, source="m.prom")


# -- property tests: shuffle and repeat rows and columns of real captures ------------------------

_CSV_FIXTURES = ("smi_units_multi_gpu.csv", "smi_query_gpu_tee.csv", "smi_nounits.csv",
                 "smi_consumer.csv")


def _readings(log: LogImport) -> set[tuple[object, ...]]:
    """Every reading keyed by wall-clock moment and the GPU's identity (not its number: GPUs
    told apart by bus id are numbered in order of appearance)."""
    f = log.frame
    out: set[tuple[object, ...]] = set()
    for t, g, m, v, s in zip(f.timestamp_s, f.gpu, f.metric, f.value, f.status, strict=True):
        ident = tuple(sorted(log.devices.get(int(g), {}).items())) or int(g)
        moment = (log.start.isoformat() if log.start else "", round(float(t), 3))
        out.add((moment, ident, str(m), None if math.isnan(v) else float(v), str(s)))
    return out


def _split_csv(text: str) -> tuple[list[str], list[list[str]]]:
    header, *rows = [ln for ln in text.splitlines() if ln.strip()]
    return header.split(","), [r.split(",") for r in rows]


def _join(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(",".join(r) for r in [header, *rows]) + "\n"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_CSV_FIXTURES), st.randoms(use_true_random=False),
       st.sampled_from(["rows", "columns", "repeat_row", "repeat_column"]))
def test_csv_reader_shuffled_or_repeated_gives_same_readings_or_refuses(
        name: str, rnd: random.Random, change: str) -> None:
    text = (FIXTURES / name).read_text()
    want = _readings(dobs.parse_nvidia_smi_csv(text))
    header, rows = _split_csv(text)
    if change == "rows":
        rnd.shuffle(rows)
    elif change == "columns":
        order = list(range(len(header)))
        rnd.shuffle(order)
        header, rows = [header[k] for k in order], [[r[k] for k in order] for r in rows]
    elif change == "repeat_row":
        rows.insert(rnd.randrange(len(rows) + 1), rows[rnd.randrange(len(rows))])
    else:
        k = rnd.randrange(len(header))
        header, rows = [*header, header[k]], [[*r, r[k]] for r in rows]
    changed = _join(header, rows)
    for read in (lambda: dobs.parse_nvidia_smi_csv(changed),
                 lambda: dobs.parse_nvidia_smi_csv(changed, strict=True)):
        try:
            got = _readings(read())
        except ValueError:
            continue  # a refusal is allowed, never other readings
        assert change in ("rows", "columns"), "a repeated row or column was read silently"
        assert got == want


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["columns", "repeat_row"]))
def test_dmon_reader_shuffled_or_repeated_gives_same_readings_or_refuses(
        rnd: random.Random, change: str) -> None:
    text = (FIXTURES / "dmon_mutc_TD.txt").read_text()
    want = _readings(dobs.parse_nvidia_smi_dmon(text))
    lines = text.splitlines()
    heads = [ln for ln in lines if ln.startswith("#")]
    data = [ln.split() for ln in lines if ln.strip() and not ln.startswith("#")]
    names = [h.lstrip("#").split() for h in heads]
    if change == "columns":
        order = list(range(len(names[0])))
        rnd.shuffle(order)
        names = [[n[k] for k in order] for n in names]
        data = [[r[k] for k in order] for r in data]
    else:
        data.insert(rnd.randrange(len(data) + 1), data[rnd.randrange(len(data))])
    changed = "\n".join(["#" + " ".join(n) for n in names] + [" ".join(r) for r in data]) + "\n"
    try:
        got = _readings(dobs.parse_nvidia_smi_dmon(changed))
    except ValueError:
        return
    assert change == "columns", "a repeated dmon line was read silently"
    assert got == want


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["rows", "repeat_row"]))
def test_dcgm_reader_shuffled_or_repeated_gives_same_readings_or_refuses(
        rnd: random.Random, change: str) -> None:
    text = (FIXTURES / "dcgm_two_gpus.prom").read_text()
    samples = [ln for ln in text.splitlines() if ln.startswith("DCGM_")]
    stamped = [f"{s} 1700000000000" for s in samples]  # one scrape, one moment
    want = _readings(dobs.read_dcgm_exporter("\n".join(stamped) + "\n"))
    if change == "rows":
        rnd.shuffle(stamped)
    else:
        stamped.insert(rnd.randrange(len(stamped) + 1), stamped[rnd.randrange(len(stamped))])
    try:
        got = _readings(dobs.read_dcgm_exporter("\n".join(stamped) + "\n"))
    except ValueError:
        return
    assert change == "rows", "a repeated sample was read silently"
    assert got == want


def _two_gpu_dmon(order: list[int], *, mig: bool = False) -> str:
    """Plain ``nvidia-smi dmon`` (no -o T/DT) of two GPUs from two real captures' lines: the
    k-th line of GPU 0 is dmon_l40s.txt's, of GPU 1 dmon_h100_mig.txt's (same columns).
    ``mig``: the MIG header ``# gpu gi ci ...``, GPU 1's lines becoming GPU 0's GI 0 CI 0."""
    cap = {g: [ln.split() for ln in (FIXTURES / name).read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
           for g, name in ((0, "dmon_l40s.txt"), (1, "dmon_h100_mig.txt"))}
    head = (FIXTURES / "dmon_l40s.txt").read_text().splitlines()[:2]
    if mig:
        head = [head[0].replace("# gpu ", "# gpu    gi    ci "),
                head[1].replace("# Idx ", "# Idx   Idx   Idx ")]
    seen = {0: 0, 1: 0}
    rows = []
    for g in order:
        cells = cap[g][seen[g] % 5][1:]
        seen[g] += 1
        ids = (["0", "-", "-"] if g == 0 else ["0", "0", "0"]) if mig else [str(g)]
        rows.append("   ".join(ids + cells))
    return "\n".join(head + rows) + "\n"


def test_plain_dmon_of_two_gpus_in_cycles_is_read() -> None:
    log = dobs.parse_nvidia_smi_dmon(_two_gpu_dmon([0, 1, 0, 1, 0, 1]))
    power = log.frame[log.frame.metric == "power_usage_w"]
    assert sorted(power.gpu.unique().tolist()) == [0, 1]
    assert power[power.gpu == 1].value.tolist() == [438.0, 440.0, 437.0]  # dmon_h100_mig.txt
    cut = dobs.parse_nvidia_smi_dmon(_two_gpu_dmon([1, 0, 1, 0]))  # a log cut mid-cycle
    assert cut.frame.timestamp_s.max() == 1.0
    assert dobs.parse_nvidia_smi_dmon(_two_gpu_dmon([0, 0, 0])).frame.timestamp_s.max() == 2.0


@pytest.mark.parametrize(("order", "mig", "line", "device"), [
    ([0, 0, 1, 1], False, 6, "GPU 1"),          # each GPU twice a second
    ([0, 1, 1], False, 5, "GPU 1"),
    ([0, 1, 0, 0, 1, 1], False, 8, "GPU 1"),
    ([0, 0, 1, 1], True, 6, "GPU 0 GI 0 CI 0"),  # MIG dmon: two lines a second per device
])
def test_plain_dmon_with_a_device_twice_in_one_cycle_is_refused(
        order: list[int], mig: bool, line: int, device: str) -> None:
    with pytest.raises(LogError) as info:
        dobs.parse_nvidia_smi_dmon(_two_gpu_dmon(order, mig=mig), source="d.txt")
    assert info.value.kind == "duplicate" and info.value.line == line
    assert f"{device} repeats within one dmon cycle" in str(info.value)
    said = log_error_text(info.value, source="d.txt")
    assert f"d.txt {line}번째 줄" in said and "한 측정 주기 안에 두 번" in said
    assert ("MIG 장치(GI 0, CI 0)" in said) == mig and "repeats" not in said


def test_duplicate_messages_use_the_lessons_metric_labels_and_no_buffer_name() -> None:
    lines = (FIXTURES / "dmon_mutc_TD.txt").read_text().splitlines()
    first_data = next(k for k, ln in enumerate(lines) if ln.strip() and not ln.startswith("#"))
    doubled = [*lines[:first_data + 1], lines[first_data], *lines[first_data + 1:]]
    with pytest.raises(LogError) as info:
        dobs.parse_nvidia_smi_dmon("\n".join(doubled) + "\n")  # pasted: source "<text>"
    said = log_error_text(info.value)
    assert "_" not in said.split("자세히:")[1] and "<" not in said, said
    assert "붙여 넣은 로그" in said
    two = "# gpu pwr\n# Idx W\n0 60\n0 61\n1 60\n1 60\n"
    with pytest.raises(LogError) as info:
        dobs.read_nvidia_smi_dmon(__import__("io").StringIO(two))
    assert "<buffer>" not in log_error_text(info.value)
