"""labkit.hub.gpushare: each student's GPU share, pure assignment and on the simulated lab."""

from __future__ import annotations

import json
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labkit import mig
from labkit.gpu import mig_live
from labkit.hub import gpushare
from labkit.hub.gpushare import GpuUnit, LabGpus, NoShareLeft, Share
from labkit.ui import gpu_share_text
from tests.conftest import SimFactory


def gpus(n: int) -> tuple[GpuUnit, ...]:
    return tuple(GpuUnit("gpu", i, f"GPU-{i}", "NVIDIA H100 80GB HBM3") for i in range(n))


def migs(per_gpu: int, gpus_: int = 1) -> tuple[GpuUnit, ...]:
    return tuple(GpuUnit("mig", g, f"MIG-{g}-{k}", "NVIDIA H100 80GB HBM3", "1g.10gb", k)
                 for g in range(gpus_) for k in range(per_gpu))


ROSTER = [f"s{i:02d}" for i in range(1, 29)]  # 28 students


# --- resolve_policy / assign (pure) --------------------------------------------------------------


@pytest.mark.parametrize(("lab", "students", "expected"), [
    (LabGpus(gpus(1), migs(7)), 30, "mig"),        # MIG devices exist: mig, even if too few
    (LabGpus(gpus(4)), 4, "whole"),
    (LabGpus(gpus(4)), 5, "shared"),
    (LabGpus(), 3, "shared"),
    (LabGpus(gpus(2)), 0, "whole"),
])
def test_resolve_policy_auto(lab: LabGpus, students: int, expected: str) -> None:
    assert gpushare.resolve_policy(lab, students, "auto") == expected


def test_assign_mig_follows_roster_order_and_runs_out() -> None:
    lab = LabGpus(gpus(1), migs(7, gpus_=4))  # 28 MIG devices, one non-MIG GPU
    shares = gpushare.assign(lab, [*ROSTER, "late"], "mig")
    assert shares["s01"] == Share("mig", lab.mig[0], 1, 1)
    assert shares["s08"] is not None and shares["s08"].unit.uuid == "MIG-1-0"
    assert shares["s28"] is not None and shares["s28"].unit.uuid == "MIG-3-6"
    assert shares["late"] is None
    uuids = [s.unit.uuid for s in shares.values() if s is not None]
    assert len(set(uuids)) == 28  # no MIG device handed out twice


def test_assign_whole_uses_only_gpus_with_mig_off() -> None:
    lab = LabGpus(gpus(2), migs(7))
    shares = gpushare.assign(lab, ["a", "b", "c"], "whole")
    assert [s.unit.uuid if s else None for s in shares.values()] == ["GPU-0", "GPU-1", None]


def test_assign_shared_spreads_round_robin_and_counts_sharers() -> None:
    lab = LabGpus(gpus(3))
    names = [f"u{i}" for i in range(7)]  # 7 students on 3 GPUs: 3, 2, 2
    shares = gpushare.assign(lab, names, "shared")
    got = [(s.unit.gpu_index, s.sharers) for s in shares.values() if s is not None]
    assert got == [(0, 3), (1, 2), (2, 2), (0, 3), (1, 2), (2, 2), (0, 3)]


def test_assign_shared_includes_mig_devices_in_the_pool() -> None:
    lab = LabGpus(gpus(1), migs(2))
    shares = gpushare.assign(lab, ["a", "b", "c", "d"], "shared")
    assert [s.unit.uuid for s in shares.values() if s] == ["GPU-0", "MIG-0-0", "MIG-0-1",
                                                            "GPU-0"]


def test_assign_is_stable_when_students_join_at_the_end() -> None:
    lab = LabGpus((), migs(7, gpus_=2))
    before = gpushare.assign(lab, ROSTER[:10], "mig")
    after = gpushare.assign(lab, [*ROSTER[:10], "new1", "new2"], "mig")
    assert all(after[name] == share for name, share in before.items())


@given(st.integers(0, 40), st.integers(0, 4), st.integers(0, 14),
       st.sampled_from(gpushare.POLICIES))
def test_assign_never_hands_an_exclusive_unit_twice(
        students: int, n_gpus: int, n_mig: int, policy: str) -> None:
    lab = LabGpus(gpus(n_gpus), migs(n_mig))
    shares = gpushare.assign(lab, [f"u{i}" for i in range(students)], policy)
    given_out = [s for s in shares.values() if s is not None]
    resolved = gpushare.resolve_policy(lab, students, policy)
    if resolved == "shared":
        pool = n_gpus + n_mig
        assert len(given_out) == (students if pool else 0)
        # the sharers of a unit are exactly the students given it
        for s in given_out:
            assert s.sharers == sum(1 for o in given_out if o.unit == s.unit)
        if given_out:
            counts = [s.sharers for s in given_out]
            assert max(counts) - min(counts) <= 1
    else:
        pool = n_mig if resolved == "mig" else n_gpus
        assert len(given_out) == min(students, pool)
        assert len({s.unit.uuid for s in given_out}) == len(given_out)
        assert all(s.sharers == 1 for s in given_out)


@pytest.mark.parametrize(("roster", "policy", "match"), [
    (["a", "a"], "mig", "twice"),
    (["a", ""], "mig", "non-empty"),
    ("abc", "mig", "sequence"),
    (["a"], "best", "policy must be one of"),
    ([f"u{i}" for i in range(501)], "mig", "at most 500"),
])
def test_assign_rejects_bad_input(roster: object, policy: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gpushare.assign(LabGpus(gpus(1)), roster, policy)  # type: ignore[arg-type]


def test_share_for_raises_no_share_left_in_korean() -> None:
    lab = LabGpus((), migs(7))
    with pytest.raises(NoShareLeft) as err:
        gpushare.share_for(lab, "s08", ROSTER, "mig")
    assert err.value.reason == "no_slice" and err.value.username == "s08"
    assert "MIG 장치(MIG device) 7개" in str(err.value) and "8번째" in str(err.value)
    with pytest.raises(NoShareLeft) as none:
        gpushare.share_for(LabGpus(gpus(2)), "s01", ROSTER, "mig")
    assert none.value.reason == "no_gpu" and "나눠 줄" in str(none.value)
    with pytest.raises(ValueError, match="not on the class roster"):
        gpushare.share_for(lab, "stranger", ROSTER, "mig")


def test_no_share_left_is_what_jupyterhub_shows_on_the_spawn_page() -> None:
    format_exception = pytest.importorskip("jupyterhub.utils").format_exception
    err = NoShareLeft("s08", "no_slice", "남은 GPU 몫이 없습니다")
    assert format_exception(err, only_jupyterhub=True) == ("남은 GPU 몫이 없습니다", None)


# --- the lesson banner's line ---------------------------------------------------------------------


def test_share_env_round_trips_into_the_banner_text() -> None:
    mig_share = Share("mig", GpuUnit("mig", 2, "MIG-abc", "H100", "1g.10gb", 3), 1, 17)
    assert json.loads(mig_share.to_env())["uuid"] == "MIG-abc"
    assert gpu_share_text(mig_share.to_env()) == (
        "내 GPU 몫: GPU 2의 MIG 장치 3 (1g.10gb, MIG-abc) — 나만 쓰는 조각입니다.")
    whole = Share("whole", GpuUnit("gpu", 1, "GPU-x", "H100"), 1, 2)
    assert gpu_share_text(whole.to_env()) == "내 GPU 몫: GPU 1 한 장 전체 (GPU-x)."
    shared = Share("shared", GpuUnit("gpu", 0, "GPU-y", "H100"), 4, 5)
    assert "GPU 0, 학생 4명이 번갈아" in (gpu_share_text(shared.to_env()) or "")


@pytest.mark.parametrize("raw", [None, "", "not json", "[]", '{"policy": "mig"}',
                                 '{"policy": "x", "gpu_index": 0, "uuid": "u"}',
                                 '{"policy": "mig", "gpu_index": "zero", "uuid": "u"}'])
def testgpu_share_text_ignores_what_it_cannot_read(raw: str | None) -> None:
    assert gpu_share_text(raw) is None


def test_gpu_banner_shows_the_share(sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    import labkit.ui as ui

    sim("sim:H100-80GB")
    share = Share("mig", GpuUnit("mig", 0, "MIG-zz", "H100", "1g.10gb", 0), 1, 1)
    monkeypatch.setenv(gpushare.ENV_SHARE, share.to_env())
    assert "MIG 장치 0 (1g.10gb, MIG-zz)" in ui.gpu_banner().value
    monkeypatch.delenv(gpushare.ENV_SHARE)
    assert "내 GPU 몫" not in ui.gpu_banner().value


# --- on the simulated lab (NVML) ------------------------------------------------------------------


def _seven_1g(nv: ModuleType, index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(mig_live.ALLOW_ENV, "1")
    mig_live.apply(nv, index, mig.presets("H100-80GB")["all-1g.10gb"], dry_run=False)


def test_read_lab_lists_mig_devices_and_gpus_with_mig_off(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    nv, _ = sim("sim:2xH100-80GB")
    _seven_1g(nv, 1, monkeypatch)
    lab = gpushare.read_lab(nv)
    h0, h1 = nv.nvmlDeviceGetHandleByIndex(0), nv.nvmlDeviceGetHandleByIndex(1)
    assert [u.uuid for u in lab.whole] == [nv.nvmlDeviceGetUUID(h0)]
    expected = [nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetMigDeviceHandleByIndex(h1, k))
                for k in range(7)]
    assert [u.uuid for u in lab.mig] == expected
    assert all(u.uuid.startswith("MIG-") and u.profile == "1g.10gb" and u.gpu_index == 1
               for u in lab.mig)


def test_environment_for_gives_mig_devices_then_no_share_left(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = "sim:H100-80GB"
    monkeypatch.setenv("LABKIT_GPU", spec)
    # what connect("auto") gives under $LABKIT_GPU: the shared lab, on the wall clock
    nv, _ = sim(spec, clock="wall", noise=True, shared=True)
    _seven_1g(nv, 0, monkeypatch)
    roster = [f"s{i}" for i in range(1, 9)]
    env = gpushare.environment_for("s3", roster, "auto")
    h = nv.nvmlDeviceGetHandleByIndex(0)
    assert env["CUDA_VISIBLE_DEVICES"] == nv.nvmlDeviceGetUUID(
        nv.nvmlDeviceGetMigDeviceHandleByIndex(h, 2))
    doc = json.loads(env[gpushare.ENV_SHARE])
    assert (doc["policy"], doc["profile"], doc["slot"]) == ("mig", "1g.10gb", 3)
    assert env["LABKIT_GPU"] == "sim:H100-80GB"  # the student's lessons simulate the same lab
    again = gpushare.environment_for("s3", roster, "mig")  # a hub restart: the same slice
    assert again == env
    with pytest.raises(NoShareLeft) as err:
        gpushare.environment_for("s8", roster, "mig")
    assert err.value.reason == "no_slice"
    shared = gpushare.environment_for("s8", roster, "shared")  # 8 students, 7 MIG devices
    first = gpushare.environment_for("s1", roster, "shared")
    assert shared["CUDA_VISIBLE_DEVICES"] == first["CUDA_VISIBLE_DEVICES"]
    assert json.loads(shared[gpushare.ENV_SHARE])["sharers"] == 2


def test_environment_for_without_mig_gives_whole_gpus(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = "sim:2xA100-40GB"
    monkeypatch.setenv("LABKIT_GPU", spec)
    nv, _ = sim(spec, clock="wall", noise=True)
    env = gpushare.environment_for("b", ["a", "b"], "auto")
    assert env["CUDA_VISIBLE_DEVICES"] == nv.nvmlDeviceGetUUID(nv.nvmlDeviceGetHandleByIndex(1))
    three = gpushare.environment_for("c", ["a", "b", "c"], "auto")  # 3 students, 2 GPUs
    assert json.loads(three[gpushare.ENV_SHARE])["policy"] == "shared"


def test_environment_for_says_why_when_the_gpu_cannot_be_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import labkit.gpu as gpu

    gpu.disconnect()
    monkeypatch.setenv("LABKIT_GPU", "sim:NoSuchBoard")
    try:
        with pytest.raises(NoShareLeft) as err:
            gpushare.environment_for("a", ["a"], "auto")
        assert err.value.reason == "nvml" and "실습 GPU를 읽을 수 없어" in str(err.value)
    finally:
        gpu.disconnect()


def test_pre_spawn_hook_adds_the_share_to_the_spawner_environment(
        sim: SimFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    monkeypatch.setenv("LABKIT_GPU", "sim:2xA30")
    nv, _ = sim("sim:2xA30", clock="wall", noise=True)
    hook = gpushare.pre_spawn_hook(["a", "b"], "whole")
    spawner = SimpleNamespace(user=SimpleNamespace(name="b"), environment={"KEEP": "1"})
    hook(spawner)
    assert spawner.environment["KEEP"] == "1"
    assert spawner.environment["CUDA_VISIBLE_DEVICES"] == nv.nvmlDeviceGetUUID(
        nv.nvmlDeviceGetHandleByIndex(1))
    with pytest.raises(ValueError, match="policy"):
        gpushare.pre_spawn_hook(["a"], "fair")
    with pytest.raises(ValueError, match="twice"):
        gpushare.pre_spawn_hook(["a", "a"], "auto")
