"""The capstone's model: buy / rent / API for 우리 학교 and the class's sharing mode.

Expected values are worked by hand from the published figures: NVIDIA DGX H100 (10.2 kW,
8 GPUs), MLPerf Inference v5.0 DGX-H100 Llama 2 70B Server (31,106.28 tokens/s per 8 GPUs =
3,888.3 per GPU), the economics check case 1 (fixed costs 105 + 12 + 21 + 4 M won), the
2026 calendar's 190 school days, and lesson 02's one-GPU sharing rules.
"""

from __future__ import annotations

import pytest

from labkit import capstone
from labkit.data import school as school_data
from labkit.data.tariff import load_tariff
from labkit.school import SchoolCase
from labkit.validate import InputError


def _decide(case: SchoolCase) -> capstone.Decision:
    return capstone.decide(case, school_data.server_for_case(case),
                           load_tariff(case.tariff_class), school_data.load_school_calendar())


@pytest.fixture(scope="module")
def class_only() -> capstone.Decision:
    # used only in class hours: 8 GPUs x 8 h x 190 school days = 12,160 GPU-hours a year
    case = SchoolCase(class_frac=1.0, exam_frac=1.0, after_school_frac=0.0, vacation_frac=0.0,
                      always_on_frac=0.0)
    return _decide(case)


def test_used_hours_and_tokens(class_only: capstone.Decision) -> None:
    room = class_only.room
    assert room.used_gpu_h == pytest.approx(8 * 8 * 190)
    assert class_only.utilization == pytest.approx(8 * 190 / 8_760)  # 17.4 %
    # output tokens: GPU-hours x 3,600 s x 3,888.3 tokens/s x derate 0.5
    assert room.tokens == pytest.approx(12_160 * 3_600 * 3_888.3 * 0.5)


def test_three_options_by_hand(class_only: capstone.Decision) -> None:
    c = class_only.costs_krw
    # rent: the same GPU-hours at USD 2.99 x 1,400 = 4,186 won each
    assert c["rent"] == pytest.approx(12_160 * 2.99 * 1_400)  # 50,901,760 won
    # API: the same output tokens at USD 0.60 x 1,400 = 840 won per 1M
    assert c["api"] == pytest.approx(12_160 * 3_600 * 3_888.3 * 0.5 / 1e6 * 840)  # 71.5 M
    # buy: case 1's fixed 142 M won (105 capital + 12 staff + 21 maintenance + 4 facility)
    # plus the year's 12 KEPCO bills
    b = class_only.room.breakdown
    assert b.capital_krw + b.staff_krw + b.maintenance_krw + b.facility_krw == pytest.approx(
        142_000_000)
    assert c["buy"] == pytest.approx(142_000_000 + class_only.room.electricity_krw)
    assert class_only.cheapest == "rent"
    assert class_only.ranked()[0] == ("rent", c["rent"])
    assert class_only.saving_krw == pytest.approx(c["api"] - c["rent"])


def test_buy_wins_when_busy() -> None:
    busy = _decide(SchoolCase(class_frac=1.0, exam_frac=1.0, after_school_frac=1.0,
                              vacation_frac=1.0, always_on_frac=1.0))
    assert busy.utilization == pytest.approx(1.0)
    # at 100 %: 70,080 GPU-h x 4,186 won = 293.4 M won to rent, more than owning
    assert busy.costs_krw["rent"] == pytest.approx(70_080 * 4_186)
    assert busy.cheapest == "buy"


def test_sharing_by_hand(class_only: capstone.Decision) -> None:
    by_mode = {s.mode: s for s in class_only.sharing}
    # 28 students / 8 GPUs -> 4 jobs per GPU, 1 h each, 8 GB each
    assert capstone.students_per_gpu(class_only.case) == 4
    fifo = by_mode["fifo"]  # one after another: waits 0, 1, 2, 3 h
    assert (fifo.makespan_h, fifo.mean_wait_h, fifo.mean_jct_h) == (4.0, 1.5, 2.5)
    mig = by_mode["mig"]  # 7 x 1g.10gb (10 GB >= 8 GB): all four start at once
    assert (mig.makespan_h, mig.mean_wait_h, mig.oom_jobs, mig.done_jobs) == (1.0, 0.0, 0, 4)
    assert class_only.share_mode == "mig"  # ties with MPS; MIG isolates


def test_mig_layout_for() -> None:
    lay = capstone.mig_layout_for(SchoolCase(), "H100-80GB")
    assert lay is not None and lay.counts() == {"1g.10gb": 7}
    big = capstone.mig_layout_for(SchoolCase(job_memory_gb=30), "H100-80GB")
    assert big is not None and big.counts() == {"3g.40gb": 2}  # 40 GB slices, two fit
    assert capstone.mig_layout_for(SchoolCase(job_memory_gb=90), "H100-80GB") is None
    assert capstone.mig_layout_for(SchoolCase(), "L40S") is None  # no MIG


def test_too_big_jobs_oom_everywhere() -> None:
    d = _decide(SchoolCase(job_memory_gb=100))  # 100 GB > the H100's 80 GB
    assert all(s.oom_jobs > 0 or s.done_jobs == 0 for s in d.sharing)
    assert d.share_mode is None


@pytest.mark.parametrize(("changes", "field"), [
    ({"students": 0}, "students"),
    ({"contract_kw": -1}, "contract_kw"),
])
def test_bad_input(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        _decide(SchoolCase(**changes))  # type: ignore[arg-type]
    assert err.value.field == field


def test_bad_gpu_memory() -> None:
    with pytest.raises(InputError) as err:
        capstone.class_sharing(SchoolCase(), "H100-80GB", 0)
    assert err.value.field == "gpu_memory_mib"
