"""Predict → try → check and the widget-state tasks: driven through the lesson apps' controls.

Every target is checked against arithmetic written here (the MIG geometry of the NVIDIA MIG
user guide; the KEPCO base charge worked by hand), and every task is driven to a solving state
and to failing ones.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

import labkit.ui as ui
from labkit.data.tariff import load_tariff
from labkit.ui import checks
from labkit.ui.components import find_by_class
from labkit.ui.predict import reflection
from labkit.ui.tasks import check_task


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABKIT_HOME", str(tmp_path / "lk"))  # the default school case
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)


def _task(box: Any, n: int) -> Any:
    return box.children[n]


def _check(box: Any, n: int) -> str:
    one = _task(box, n)
    one.children[1].click()
    return str(one.children[2].value)


# --- the prediction box -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def board() -> Any:
    return ui.mig.board_app("H100-80GB")


def test_predict_locks_then_compares(board: Any) -> None:
    board.clear()
    p = ui.predict.ask(board, "02.max_1g")
    assert "H100-80GB" in p.children[0].value and "1g.10gb" in p.children[0].value
    p.answer.value = "다섯"
    assert p.commit() is False and "숫자" in p.error.value and p.guess is None
    assert p.error in p.children[1].children  # beside the box, not under the chart
    p.answer.value = "5개"
    assert p.commit() is True
    assert p.answer.disabled and p.lock.disabled and p.guess == 5
    # H100: 7 compute slices, so at most 7 x 1g.10gb (NVIDIA MIG user guide, H100 profiles)
    assert "7개" in p.compare.value and "5개" in p.compare.value
    assert "29 % 작습니다" in p.compare.value  # (5 - 7) / 7
    p.answer.value = "6개"  # a client can still send a value: the lock holds
    assert p.commit() is True and p.guess == 5


@pytest.mark.parametrize(("key", "typed", "says"), [
    # issue 17's trial: 1e308 and negative % predictions were accepted
    ("01.tiny_kernel_sm", "1e308", "너무 큽니다"),
    ("01.tiny_kernel_sm", "-5", "0 %에서 100 % 사이"),
    ("01.tiny_kernel_sm", "150%", "0 %에서 100 % 사이"),
    ("03.goodput", "-0.5", "0 %에서 100 % 사이"),  # a negative ratio is -50 %
    ("05.break_even", "101", "0 %에서 100 % 사이"),
    ("02.max_1g", "-3개", "0개에서 100개 사이"),
    ("04.school_mtbf", "-3일", "0일에서 10만 일 사이"),
    ("04.school_mtbf", "1e9일", "0일에서 10만 일 사이"),
    ("06.per_chip", "-2배", "0배에서 100배 사이"),
    ("07.july_bill", "-10만 원", "0원에서 100억 원 사이"),
    ("07.july_bill", "1e308", "너무 큽니다"),
])
def test_predictions_are_bounded_by_their_own_range(key: str, typed: str, says: str,
                                                    board: Any) -> None:
    p = ui.predict.PredictWidget(board, checks.PREDICTIONS[key])
    p.answer.value = typed
    assert p.commit() is False and p.guess is None
    assert says in p.error.value and "입력: " in p.error.value and "⚠" in p.error.value
    assert not p.answer.disabled  # the student can correct it


@pytest.mark.parametrize(("key", "typed", "guess"), [
    ("04.school_mtbf", "약 264일", 264),  # issue 17's trial: refused before
    ("04.school_mtbf", "264일쯤", 264),
    ("01.tiny_kernel_sm", "대략 17 %", 17),
    ("01.tiny_kernel_sm", "0", 0),
    ("01.tiny_kernel_sm", "100", 100),
    ("07.july_bill", "약 80만 원 정도", 800_000),
])
def test_predictions_read_estimates(key: str, typed: str, guess: float, board: Any) -> None:
    p = ui.predict.PredictWidget(board, checks.PREDICTIONS[key])
    p.answer.value = typed
    assert p.commit() is True and p.guess == guess and p.error.value == ""


def test_every_numeric_prediction_has_a_range() -> None:
    for pred in checks.PREDICTIONS.values():
        if pred.choices:
            continue
        low, high = pred.bounds()
        assert low == 0 and high is not None, pred.key
        assert pred.out_of_range(-1) and pred.out_of_range(high * 2) and not pred.out_of_range(0)


def test_predict_records_on_the_hub(board: Any, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.data.progress import progress_path, read_progress

    monkeypatch.setenv("JUPYTERHUB_USER", "s1")
    monkeypatch.setenv("HOME", str(tmp_path))
    p = ui.predict.ask(board, "02.max_1g")
    p.answer.value = "7"
    p.commit()
    records, _skipped = read_progress(progress_path(tmp_path))
    got = [(r.exercise, r.answer, r.correct) for r in records]
    assert got == [("predict.02.max_1g", "7", None)]


def test_reflection_directions() -> None:
    pred = checks.PREDICTIONS["07.july_bill"]  # close within 20 %
    assert reflection(pred, 900_000, 800_000).startswith("예측이 실제와 거의 같습니다")
    assert reflection(pred, 1_200_000, 800_000).startswith("예측이 실제보다 50 % 큽니다")
    assert reflection(pred, 400_000, 800_000).startswith("예측이 실제보다 50 % 작습니다")
    assert reflection(pred, 1_600_000, 800_000).startswith("예측이 실제보다 100 % 큽니다")
    # far off: a ratio, not a 7-digit percentage (100억 원, the range's top, vs 80만 원)
    assert reflection(pred, 1e10, 800_000).startswith("예측이 실제의 12,500배입니다")


@pytest.mark.parametrize(("key", "guess", "actual", "head"), [
    # issue 25: 05's break-even guessed 50 % against 17.4 %: "188 % 큽니다" read as nonsense
    ("05.break_even", 50.0, 17.4, "예측이 실제보다 32.6 %p 높습니다."),
    ("05.break_even", 10.0, 17.4, "예측이 실제보다 7.4 %p 낮습니다."),
    ("03.goodput", 40.0, 88.9, "예측이 실제보다 48.9 %p 낮습니다."),
    ("03.goodput", 98.0, 88.9, "예측이 실제보다 9.1 %p 높습니다."),
    ("01.tiny_kernel_sm", 100.0, 2.0, "예측이 실제보다 98 %p 높습니다."),  # not "실제의 50배"
    ("03.goodput", 88.0, 88.9, "예측이 실제와 거의 같습니다."),
])
def test_a_percentage_prediction_is_off_by_percentage_points(
        key: str, guess: float, actual: float, head: str) -> None:
    line = reflection(checks.PREDICTIONS[key], guess, actual)
    assert line.startswith(head)
    assert not re.search(r"\d %(?!p)", line.split(". ")[0])  # no relative % of a percentage


def test_predict_unknown_key(board: Any) -> None:
    with pytest.raises(KeyError):
        ui.predict.ask(board, "02.nope")


# --- lesson 02 ---------------------------------------------------------------------------------

def test_02_demo_target_is_the_geometry(board: Any) -> None:
    # H100-80GB: 7 compute slices, 8 memory units; 3g.40gb takes 3 slices and 4 units, so 4
    # x 1g.10gb fit beside it (units 0-3 with 3g.40gb at 4), never 5.
    assert checks.max_beside("H100-80GB", "3g.40gb", "1g.10gb") == 4
    assert checks.max_beside("A30", "2g.12gb", "1g.6gb") == 2  # A30: 4 slices, 2 + 1 + 1


def _place(board: Any, profile: str, start: int | None) -> None:
    board.profile_select.value = profile
    assert board.press(start)


def test_02_tasks_solve_and_fail(board: Any) -> None:
    board.clear()
    box = ui.tasks.lesson("02", board)
    assert "3g.40gb 1개" in box.children[0].children[0].value
    # issue 25: checked before anything is placed, the hint said "1g.10gb 조각은 4개까지"
    # (문제 1's answer); it says where to start instead
    text = _check(box, 0)
    assert "먼저 3g.40gb 1개를 판에 놓으세요" in text and "4개" not in text
    # failing: 3g.40gb at 0 leaves 1g.10gb only units 4-6 (no 1g.10gb placement at 7)
    _place(board, "3g.40gb", 0)
    for _ in range(3):
        _place(board, "1g.10gb", None)
    text = _check(box, 0)
    assert "✘" in text and "1g.10gb 3개" in text
    board.clear()
    _place(board, "3g.40gb", 4)
    for _ in range(4):
        _place(board, "1g.10gb", None)
    assert "✔" in _check(box, 0)
    # task 2: 28 students on 8 GPUs -> 4 slices of >= 8 GB each; 3g + 4 x 1g is 5 slices
    assert "✔" in _check(box, 1)
    board.clear()
    _place(board, "3g.40gb", 4)
    _place(board, "3g.40gb", 0)
    text = _check(box, 1)
    assert "✘" in text and "조각이 2개" in text and "최소 4개" in text


def test_02_slices_too_small_on_a30() -> None:
    a30 = ui.mig.board_app("A30")
    box = ui.tasks.lesson("02", a30)
    for _ in range(4):
        _place(a30, "1g.6gb", None)
    text = _check(box, 1)  # 1g.6gb is ~6.3 GB < 8 GB: the class's jobs would OOM
    assert "✘" in text and "1g.6gb" in text and "메모리 부족" in text


# --- lesson 07 ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def room() -> Any:
    return ui.opex.room_app()


def _set(room: Any, **values: Any) -> None:
    room.reset()
    for key, value in values.items():
        room.fields[key].control.value = value


def test_07_contract_target_by_hand(room: Any) -> None:
    room.reset()
    box = ui.tasks.lesson("07", room)
    q = box.children[0].children[0].value
    # the 100 kW contract bills 30 kW (30 % floor, KEPCO 약관 제68조) instead of the room's
    # July peak of 15.0338 kW (summer PUE +0.2, data/opex/defaults.csv): the July bill is higher
    # by (30 - 15.0338) kW x base rate x 1.127 (VAT 10 % + fund levy 2.7 %) = 93,611 won at
    # the 2026-06-01 table's 5,550 won, less KEPCO's truncations; a 16 kW contract is above
    # that peak (no over-contract charge). The base rate is the data file's, so a newer tariff
    # table (docs/architecture.md "how to add a tariff") keeps this check.
    base = load_tariff(room.fields["tariff_class"].default).base_krw_per_kw_month
    big = checks._room_result(room, contract_auto=False, contract_kw=100.0)
    right = checks._room_result(room, contract_auto=False, contract_kw=16.0)
    diff = checks.july_bill_krw(big) - checks.july_bill_krw(right)
    assert abs(diff - (30 - 15.0338) * base * 1.127) < 100
    target = round((checks.july_bill_krw(big) + checks.july_bill_krw(right)) / 2, -3)
    assert f"{target:,.0f}원" in q and "100 kW" in q


@pytest.mark.parametrize(("values", "mark", "says"), [
    ({}, "✘", "지금 계약인 20 kW"),  # untouched: the school's 20 kW is already under the target
    ({"contract_auto": True}, "✘", "자동"),
    ({"contract_auto": False, "contract_kw": 100}, "✘", "목표는"),
    ({"contract_auto": False, "contract_kw": 10}, "✘", "넘는 달"),
    # the July peak 15.0338 kW is shown rounded up: "15.0 kW" would read as "15 is enough"
    ({"contract_auto": False, "contract_kw": 15}, "✘", "최대 수요 15.1 kW"),
    ({"contract_auto": False, "contract_kw": 20, "pue": 1.2}, "✘", "PUE"),
    ({"contract_auto": False, "contract_kw": 18}, "✔", "하한"),
    ({"contract_auto": False, "contract_kw": 16}, "✔", "하한"),  # July peak 15.03 kW
])
def test_07_contract_task(room: Any, values: dict[str, Any], mark: str, says: str) -> None:
    room.reset()
    box = ui.tasks.lesson("07", room)
    _set(room, **values)
    text = _check(box, 0)
    assert mark in text and says in text


@pytest.mark.parametrize(("values", "mark"), [
    ({}, "✘"),
    ({"school_exception": True}, "✔"),  # the exception lifts the summer ratchet
    # with the seasonal PUE the ratchet holds the summer peak all year: 선택II alone saves
    # less than half the way to the best choice; the K-12 exception gets there
    ({"tariff_class": "교육용(갑) 고압A 선택II"}, "✘"),
    ({"tariff_class": "교육용(갑) 고압A 선택II", "school_exception": True}, "✔"),
    ({"tariff_class": "교육용(갑) 고압A 선택II", "n_servers": 2}, "✘"),
])
def test_07_tariff_task(room: Any, values: dict[str, Any], mark: str) -> None:
    room.reset()
    box = ui.tasks.lesson("07", room)
    _set(room, **values)
    assert mark in _check(box, 1)


def test_07_prediction_is_the_july_bill(room: Any) -> None:
    room.reset()
    p = ui.predict.ask(room, "07.july_bill")
    p.answer.value = "80만 원"
    assert p.commit()
    july = checks.july_bill_krw(room.result)
    assert f"{july:,.0f}원" in p.compare.value and "800,000원" in p.compare.value
    _set(room, pue=2.0)  # the actual follows the simulator
    assert f"{checks.july_bill_krw(room.result):,.0f}원" in p.compare.value


def test_task_record_and_never_raises(room: Any) -> None:
    task = ui.tasks.Task("07.contract", lambda _r: 1 / 0)  # type: ignore[arg-type, return-value]
    assert check_task(task, room).hint == "task.no_result"
    assert find_by_class(ui.tasks.lesson("07", room), "lk-task-07-contract-check")


# --- lesson 08 ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def day() -> Any:
    return ui.orchestration.school_day_app()


def _brute_best(day: Any) -> tuple[str, str, float]:
    """Every policy x placement without preemption, written out here (the oracle)."""
    runs = []
    for policy in ("fifo", "easy_backfill", "greedy", "priority", "fair_share"):
        for placement in ("pack", "spread", "fgd"):
            r = day.compute({"policy": policy, "placement": placement, "preemption": False})
            runs.append((float(r.waits("kind").loc["class_lab", "mean_wait_h"]) * 60,
                         policy, placement))
    wait, policy, placement = min(runs)
    return policy, placement, wait


def test_08_best_policy_prediction(day: Any) -> None:
    policy, _placement, _wait = _brute_best(day)
    assert checks.best_policy(day) == policy
    p = ui.predict.ask(day, "08.best_policy")
    p.answer.value = "fifo"
    assert p.commit()
    assert "FIFO (선착순)" in p.compare.value
    assert ("예측한 대로" in p.compare.value) == (policy == "fifo")


def _set_day(day: Any, **values: Any) -> None:
    day.reset()
    for key, value in values.items():
        day.fields[key].control.value = value


@pytest.mark.parametrize(("values", "mark"), [
    ({}, "✘"),
    ({"preemption": True}, "✘"),  # FIFO with preemption: ~2 h
    ({"policy": "greedy", "preemption": True}, "✔"),
    ({"policy": "priority", "preemption": True}, "✔"),
])
def test_08_wait_task(day: Any, values: dict[str, Any], mark: str) -> None:
    box = ui.tasks.lesson("08", day)
    _set_day(day, **values)
    text = _check(box, 0)
    assert mark in text
    w = float(day.result.waits("kind").loc["class_lab", "mean_wait_h"]) * 60
    assert (w < 10) == (mark == "✔")


def test_08_best_task(day: Any) -> None:
    box = ui.tasks.lesson("08", day)
    policy, placement, _wait = _brute_best(day)
    _set_day(day, policy="fifo")
    assert "✘" in _check(box, 1)
    _set_day(day, policy=policy, placement=placement, preemption=True)
    assert "선점을 끈" in _check(box, 1)
    _set_day(day, policy=policy, placement=placement)
    assert "✔" in _check(box, 1)


# --- lesson 01 ---------------------------------------------------------------------------------

def test_01_class_share_is_the_calendar() -> None:
    from labkit.data.school import load_school_calendar

    cal = load_school_calendar()
    # 8 class hours x the calendar's school days / 8,760 h (2026 is not a leap year)
    assert checks.class_share_pct() == pytest.approx(8 * cal.school_days / 8_760 * 100)
    assert 16 < checks.class_share_pct() < 19  # ~190 days: 17 % (economics reference §6.3)


def test_01_tiny_kernel_is_one_sm_of_the_lab_gpu() -> None:
    import labkit.gpu as gpu

    gpu.connect("sim:H100-80GB")
    assert checks.tiny_kernel_sm_pct() == pytest.approx(100 / 132)  # H100 SXM: 132 SMs
    lab = ui.observe.scenario_lab()
    p = ui.predict.ask(lab, "01.tiny_kernel_sm")
    assert "SM 132개" in p.children[0].value and lab.layout.visibility == "hidden"
    p.answer.value = "0.5"  # a ratio to a % question: 50 %
    assert p.commit() and p.guess == 50 and lab.layout.visibility == "visible"
    assert "%p 높습니다" in p.compare.value  # percentage points (issue 25)
    assert "50 %" in p.compare.value and "50.0 %" not in p.compare.value  # a whole number
    assert "0.8 %" in p.compare.value  # the actual keeps a decimal
    lab.switch_scenario("tiny_kernel")  # the lab's own change refreshes the comparison
    assert "0.8 %" in p.compare.value
    lab.stop()


# --- lesson 03 ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ledger() -> Any:
    return ui.goodput.worksheet_app()


@pytest.mark.parametrize(("values", "n", "mark"), [
    # the worksheet: 720 h, losses 8 + 22 + 6 + 14 + 30 = 80 h -> 88.9 %; halving the 30 h
    # straggler loss gives (720 - 65) / 720 = 90.97 %, so the target is 90.9 %
    ({}, 0, "✘"),
    ({"straggler": 20}, 0, "✘"),   # (720 - 70) / 720 = 90.28 %
    ({"straggler": 15}, 0, "✔"),
    ({"straggler": 0, "rewind": 0}, 0, "✘"),
    ({"straggler": 0}, 1, "✔"),
    ({"failure_stops": 0}, 1, "✘"),
    ({"straggler": 0, "rewind": 0}, 1, "✘"),
])
def test_03_tasks(ledger: Any, values: dict[str, Any], n: int, mark: str) -> None:
    ledger.reset()
    box = ui.tasks.lesson("03", ledger)
    assert "90.9 %" in box.children[0].children[0].value
    _set(ledger, **values)
    assert mark in _check(box, n)


# --- lesson 04 ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def interval() -> Any:
    return ui.reliability.interval_app()


@pytest.mark.parametrize(("values", "n", "mark", "says"), [
    ({}, 0, "✘", "MTBF를 3 h"),
    # Young's interval sqrt(2 x 5 min x 180 min) = 42.4 min is within 2 % of the optimum
    ({"mtbf_h": 3.0, "interval_min": 42}, 0, "✔", "최적"),
    ({"mtbf_h": 3.0, "interval_min": 60}, 0, "✘", "목표는"),
    # only the named controls count: the target follows the others (the optimum for them)
    ({"mtbf_h": 3.0, "interval_min": 42, "restart_min": 0}, 0, "✔", "최적"),
    ({"mtbf_h": 3.0, "interval_min": 60, "restart_min": 0}, 0, "✘", "목표는"),
    ({"interval_min": 60}, 1, "✘", "비동기"),
    ({"async_write": True, "interval_min": 60}, 1, "✘", "목표는"),
    ({"async_write": True, "interval_min": 10}, 1, "✔", "쓰기 비용"),
    # issue 17's trial: task 2 right after task 1 (MTBF still 3 h) needed MTBF put back first;
    # now the interval is re-tuned where the student is (at 3 h with the asynchronous write
    # the optimum is near 6 min; 42 min, task 1's answer, is far off it)
    ({"mtbf_h": 3.0, "async_write": True, "interval_min": 42}, 1, "✘", "목표는"),
    ({"mtbf_h": 3.0, "async_write": True, "interval_min": 6}, 1, "✔", "쓰기 비용"),
])
def test_04_tasks(interval: Any, values: dict[str, Any], n: int, mark: str, says: str) -> None:
    interval.reset()
    box = ui.tasks.lesson("04", interval)
    _set(interval, **values)
    text = _check(box, n)
    assert mark in text and says in text


def test_04_school_mtbf() -> None:
    # 16,384 x 54 d x 24 h / 419 interruptions = 50,676 h per GPU; 8 GPUs: 6,335 h = 264 days
    assert checks.school_mtbf_days() == pytest.approx(16_384 * 54 * 24 / 419 / 8 / 24)


# --- lesson 05 ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def curves() -> Any:
    return ui.economics.cost_curves_app(ui.economics.cluster_app())


def test_05_tasks_need_the_students_change(curves: Any) -> None:
    """Issue 17's trial: both tasks passed without touching utilization (at the default 40 %
    buying already beats the API). They ask for the lowest utilization where buying still
    wins: ceil(u*) on the 1 % slider (u* = 18.3 % -> 19 %; at half the API price 37.2 % -> 38 %).
    """
    curves.reset()
    box = ui.tasks.lesson("05", curves)
    u_star = curves.result.u_star
    assert curves.result.owned_at_u < curves.result.api_at_u  # the default: buying is cheaper
    assert "✘" in _check(box, 0) and "✘" in _check(box, 1)  # untouched: not met
    lowest = math.ceil(u_star * 100)
    assert lowest != curves.fields["utilization"].default
    _set(curves, utilization=lowest + 1)
    assert "더 낮은 가동률" in _check(box, 0)
    _set(curves, utilization=lowest - 1)
    assert "API가 더 쌉니다" in _check(box, 0)
    _set(curves, utilization=lowest)
    text = _check(box, 0)
    assert "✔" in text and f"{u_star * 100:.1f} %" in text
    _set(curves, utilization=lowest, derate=90)
    assert "초기값" in _check(box, 0)
    # price halved: the break-even utilization F / (cap x (P - m)) more than doubles
    half = round(curves.fields["api_price_usd_per_m"].default / 2, 2)
    _set(curves, utilization=lowest)
    assert "API 가격을" in _check(box, 1)
    _set(curves, api_price_usd_per_m=half)
    u_half = curves.result.u_star
    assert u_half > 2 * u_star
    assert "✘" in _check(box, 1)  # the default 40 % already beats the halved price: not met
    _set(curves, api_price_usd_per_m=half, utilization=math.ceil(u_half * 100) + 1)
    assert "더 낮은 가동률" in _check(box, 1)
    _set(curves, api_price_usd_per_m=half, utilization=math.ceil(u_half * 100))
    assert "✔" in _check(box, 1)
    assert f"{math.ceil(u_half * 100)}" not in box.children[1].children[0].value  # not given away
    assert f"{u_half * 100:.1f} %" in box.children[1].children[2].value


# --- lesson 06 ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def claim() -> Any:
    return ui.benchmarks.claim_app()


@pytest.mark.parametrize(("item", "n"), [("precision", 0), ("chip_vs_system", 1)])
def test_06_tasks(claim: Any, item: str, n: int) -> None:
    claim.reset()
    box = ui.tasks.lesson("06", claim)
    baseline = claim.fields["baseline"].default
    assert "✘" in _check(box, n)  # the default claim differs from its baseline in both
    ok = [v for _label, v in claim.fields["claimant"].control.options if v != baseline
          and next(c.status for c in claim.compute({**claim.values(), "claimant": v}).checklist
                   if c.key == item) == "ok"]
    assert ok, "the data has a comparable claim"
    claim.fields["claimant"].control.value = ok[0]
    assert "✔" in _check(box, n)
    claim.fields["claimant"].control.value = baseline
    assert "다른 결과" in _check(box, n)


def test_06_per_chip_prediction(claim: Any) -> None:
    claim.reset()
    # the check case: 10,755.6 / 2,700.7 per GPU = 3.98x, "the 4x headline" (economics case 4)
    assert checks.per_accelerator_ratio(claim) == pytest.approx(3.98, abs=0.01)


# --- lesson 01: the replay ---------------------------------------------------------------------

def test_01_replay_tasks() -> None:
    replay = ui.observe.replay_app()
    box = ui.tasks.lesson("01", replay)
    gpu = replay.trace.gpus[0]
    util = replay.trace.series(gpu, "gpu_util_frac")
    sm = replay.trace.series(gpu, "sm_active_frac")
    times = list(replay.trace.times)
    # the oracle: scan the log written out here — the idle moment after the job first got busy
    # (the replay opens on t = 0, idle before the job starts: the untouched app is not right)
    first_busy = next(k for k, t_s in enumerate(times) if util.get(t_s, 0.0) >= 0.5)
    idle_k = next(k for k, t_s in enumerate(times)
                  if k > first_busy and util.get(t_s, 1.0) <= float(util.min()) + 0.005)
    assert replay.time.value == 0 and util.loc[times[0]] == util.min()
    assert "✘" in _check(box, 0) and "시작되기 전" in _check(box, 0)
    hidden = [k for k, t_s in enumerate(times) if t_s in sm.index and util.loc[t_s] >= 0.9
              and sm.loc[t_s] <= 0.02]
    busy = [k for k, t_s in enumerate(times) if t_s in sm.index and sm.loc[t_s] >= 0.5]
    assert hidden and busy
    replay.time.value = busy[0]
    assert "✘" in _check(box, 0) and "✘" in _check(box, 1)
    replay.time.value = idle_k
    assert "✔" in _check(box, 0)
    replay.time.value = hidden[0]
    assert "✔" in _check(box, 1)


def test_prediction_never_breaks_the_linked_app(room: Any) -> None:
    from labkit.ui.predict import Prediction, PredictWidget

    def broken(_r: Any) -> float:
        raise KeyError("july")

    room.reset()
    p = PredictWidget(room, Prediction("07.july_bill", broken, unit="원"))
    p.answer.value = "80만 원"
    assert p.commit()
    room.fields["pue"].control.value = 1.8  # the app still updates past the broken callback
    assert room.result is not None and room.result.design.pue == 1.8
    assert p.compare.value == ""


@pytest.mark.parametrize(("typed", "guess", "shown"), [
    ("52500000", 52_500_000, "52,500,000원"),  # issue 17: long numbers read back unformatted
    ("81만 3,192원", 813_192, "813,192원"),  # issue 25: the box kept as typed, never lossy
    ("-0", 0, "0원"),
    ("9000", 9000, "9,000원"),
])
def test_a_locked_prediction_keeps_what_was_typed_and_shows_its_reading(
        room: Any, typed: str, guess: float, shown: str) -> None:
    p = ui.predict.PredictWidget(room, checks.PREDICTIONS["07.july_bill"])
    p.answer.value = typed
    assert p.commit() and p.guess == guess and p.answer.value == typed
    assert shown in p.compare.value  # 내 예측, in people's numbers
    again = ui.predict.PredictWidget(room, checks.PREDICTIONS["07.july_bill"])
    again.answer.value = p.answer.value  # what the box shows reads back as the same value
    assert again.commit() and again.guess == guess
