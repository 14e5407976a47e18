"""Predict → try → check (labkit.ui.predict) and the widget-state tasks (labkit.ui.tasks).

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
Per lesson: ``predict.<NN>.<name>.q`` / ``.why`` (the question and the reflection's second
half) and ``task.<NN>.<name>.q`` / ``.hint`` / ``.done``.
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- the prediction box -------------------------------------------------------------------
    "predict.title": "예측해 보세요.",
    "predict.placeholder": "예측 (예: 5, 80만 원)",
    "predict.lock": "예측 확정",
    "predict.locked": "확정했습니다",
    "predict.pick_one": "하나를 고른 뒤 확정하세요.",
    "predict.try_now": "예측을 확정했습니다. 이제 아래 실험 도구를 움직여 보고, 실제 값과 견주어 보세요.",
    "predict.mine": "내 예측",
    "predict.actual": "실제 (지금 설정)",
    "predict.reflect.close": "예측이 실제와 거의 같습니다.",
    "predict.reflect.high": "예측이 실제보다 {pct} % 큽니다.",
    "predict.reflect.low": "예측이 실제보다 {pct} % 작습니다.",
    "predict.reflect.same": "예측한 대로입니다.",
    "predict.reflect.other": "예측과 다릅니다.",
    # --- the tasks ----------------------------------------------------------------------------
    "task.title": "실습 과제 {n}",
    "task.not_yet": "아직 아닙니다. {hint}",
    "task.no_result": "아직 실험 도구에 결과가 없습니다. 입력 칸의 경고를 먼저 고치세요.",
    "task.only": "이 과제는 정해진 값만 바꿔야 합니다. 다음 값을 초기값으로 돌리세요: {fields}.",
    # --- lesson 02 ----------------------------------------------------------------------------
    "predict.02.max_1g.q": "빈 {model} GPU 1장에 가장 작은 조각({profile})을 최대 몇 개 만들 수 있을까요?",
    "predict.02.max_1g.why": "메모리는 8칸이지만 연산(compute) 조각이 7개라서, 가장 작은 조각도 7개까지만 만들 수 있습니다.",
    "task.02.demo.q": "교사 시연용으로 {big} 1개를 두고, 남는 자리에 {small} 조각을 가장 많이 넣으세요 ({model} 보드).",
    "task.02.demo.hint": "지금 {big} {have_big}개, {small} {have_small}개입니다. {big}의 시작 위치에 따라 남는 자리가 달라집니다. {small} 조각은 {n}개까지 들어갑니다.",
    "task.02.demo.done": "큰 조각을 한쪽 끝에 두면 나머지 칸을 작은 조각이 모두 쓸 수 있습니다.",
    "task.02.model": "{model} 보드에서 해 보세요 (위의 GPU 모델 선택).",
    "task.02.slices.q": "우리 학교는 한 반 {students}명이 GPU {n}장을 나눠 씁니다. 이 GPU 1장을 학생 {need}명 이상이 동시에 쓰도록 나누세요. 학생 1명의 실습에는 {gb} GB가 필요합니다.",
    "task.02.slices.hint": "지금 조각이 {have}개입니다. 최소 {need}개가 필요합니다.",
    "task.02.slices.too_small": "{profile} 조각은 {gb} GB보다 작아서 실습 작업이 메모리 부족(OOM)으로 멈춥니다.",
    "task.02.slices.done": "GPU 1장을 여러 조각으로 나누면 학생마다 자기 몫의 메모리와 연산을 가집니다.",
    # --- lesson 07 ----------------------------------------------------------------------------
    "predict.07.july_bill.q": "우리 학교 서버실(서버 1대)의 7월 전기 요금은 얼마일까요?",
    "predict.07.july_bill.why": "전기 요금은 쓴 전력량(kWh)에 더해, 가장 많이 쓴 순간의 전력(kW)에 매기는 기본요금이 있습니다. 여름철은 단가도 높습니다.",
    "task.07.contract.q": "우리 학교가 예전에 건물 전체에 맞춰 계약전력 {big} kW로 계약했다면 7월 요금은 {bill_big}입니다. 계약전력만 바꿔서 (자동을 끄고 직접 입력) 7월 요금을 {target} 아래로 낮추세요. 계약전력을 넘는 달이 있으면 안 됩니다.",
    "task.07.contract.hint": "지금 7월 요금은 {bill}입니다. 목표는 {target} 미만입니다. 기본요금은 계약전력의 30 % 아래로 내려가지 않습니다.",
    "task.07.contract.auto": "'계약전력 자동'을 끄고 계약전력을 직접 넣으세요.",
    "task.07.contract.over": "최대 수요 {peak} kW가 계약전력 {kw} kW를 넘는 달이 있습니다. 한전은 초과분에 추가 요금을 매깁니다.",
    "task.07.contract.done": "계약전력이 너무 크면 하한(30 %) 때문에 쓰지 않은 전력에도 기본요금을 냅니다. 최대 수요를 조금 넘게 잡는 것이 가장 쌉니다.",
    "task.07.tariff.q": "계약종별({family} 선택I/선택II)과 초·중·고 특례만 바꿔서 1년 전기 요금을 {target} 아래로 낮추세요. 지금은 {base}입니다.",
    "task.07.tariff.hint": "지금 1년 요금은 {year}입니다. 목표는 {target} 미만입니다. 선택II는 기본요금이 비싸고 전력량 요금이 쌉니다.",
    "task.07.tariff.done": "서버는 쉬는 시간에도 전기를 쓰므로 전력량이 많은 학교에는 선택II가 유리할 수 있습니다. 특례는 신청해야 적용됩니다.",
    # --- lesson 08 ----------------------------------------------------------------------------
    "predict.08.best_policy.q": "선점(preemption) 없이 하루를 돌리면, 수업 실습 작업이 가장 덜 기다리는 정책은 무엇일까요?",
    "predict.08.best_policy.choice.fifo": "FIFO (선착순)",
    "predict.08.best_policy.choice.easy_backfill": "EASY 백필(backfill)",
    "predict.08.best_policy.choice.greedy": "탐욕적 건너뛰기(greedy)",
    "predict.08.best_policy.choice.priority": "우선순위(priority) + 백필",
    "predict.08.best_policy.choice.fair_share": "공정 분배(fair share) + 백필",
    "predict.08.best_policy.why": "수업 실습은 작고 짧은 작업이라, 앞의 큰 작업을 기다리지 않고 빈 GPU에 먼저 들어가는 정책이 대기를 줄입니다.",
    "task.08.wait.q": "한 반 {students}명의 수업 실습 작업이 평균 {target}분 안에 시작하도록 정책·배치·선점을 고르세요.",
    "task.08.wait.hint": "지금 수업 실습의 평균 대기는 {wait}분입니다. 목표는 {target}분 미만입니다. 선점을 켜면 우선순위가 높은 작업이 낮은 작업을 잠시 멈출 수 있습니다.",
    "task.08.wait.done": "선점은 수업을 지키지만, 멈춘 작업은 다시 시작하느라 시간을 잃습니다. 정책은 누가 기다릴지를 정하는 일입니다.",
    "task.08.best.q": "선점 없이(끈 상태) 정책과 배치만 바꿔서, 수업 실습의 평균 대기가 가장 짧은 설정을 찾으세요.",
    "task.08.best.hint": "지금 평균 대기는 {wait}분입니다. 더 짧은 설정이 있습니다.",
    "task.08.best.preemption": "이 과제는 선점을 끈 상태에서 합니다.",
    "task.08.best.done": "선점 없이도 작은 작업을 먼저 넣는 정책이 수업 대기를 크게 줄입니다. 대신 큰 작업은 더 오래 기다릴 수 있습니다.",
}
