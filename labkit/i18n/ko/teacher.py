"""What the teacher reads beside the lessons: the answer key and the lesson plans (docs/).

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- teacher.key: the answer key (labkit.ui.answer_key, docs/answer-key.md/.html) ----------
    "teacher.key.title": "정답과 풀이 (교사용)",
    "teacher.key.intro": "모든 차시의 예측, 실습 과제, 문제, 나가기 전 확인 문제의 정답과 풀이입니다. 차시가 채점할 때 쓰는 정의(문제의 정답·단위·허용 오차, 예측 도구의 계산, 과제의 확인 조건)에서 그대로 만들었으므로 차시의 ✔와 어긋나지 않습니다. 값은 기본 학교 설정 기준입니다. 09 차시 편집기에서 학교 값을 바꿨다면 예측과 과제의 목표도 함께 바뀝니다. 학생에게 나눠 주지 마세요.",
    "teacher.key.kind.predict": "예측(채점하지 않음)",
    "teacher.key.kind.task": "실습 과제(실험 도구를 움직여 맞춤)",
    "teacher.key.kind.wall": "벽에 걸 패널 고르기",
    "teacher.key.kind.exercise": "문제",
    "teacher.key.kind.exit": "나가기 전 확인(exit ticket)",
    "teacher.key.question": "질문",
    "teacher.key.answer": "정답",
    "teacher.key.working": "풀이",
    "teacher.key.record": "수업 현황 페이지의 기록 이름",
    "teacher.key.exact": "정확히 이 값",
    "teacher.key.plus_minus": "± {value}까지 정답",
    "teacher.key.predict_close": "실제 값의 ±{pct} % 안이면 '가깝다'고 알려 줍니다",
    "teacher.key.predict_choice": "고른 답과 실제 결과를 나란히 보여 줍니다",
    "teacher.key.task_answer": "질문의 조건을 맞춘 상태",
    "teacher.key.task_check": "확인 버튼이 실험 도구의 상태를 채점합니다",
    "teacher.key.wall_answer": "꼭 걸 패널: {essential} / 걸면 안 되는 패널: {misleading}",
    "teacher.key.wall_check": "{n}개까지 고릅니다. 꼭 걸 패널이 모두 있고 걸면 안 되는 패널이 없으면 정답입니다",
    "teacher.key.predict_label": "예측",
    "teacher.key.exit_label": "확인 {n}",
    # --- teacher.plan: the lesson plans (data/lessons/plans.yaml, docs/lesson-plans.md) --------
    "teacher.plan.title": "차시별 수업 계획 (교사용)",
    "teacher.plan.intro": "한 차시는 50분입니다. 차시마다 도입 → 예측 → 실험 → 문제 → 정리 순서로 나누고, 각 단계가 노트북의 어느 절(## 제목)을 쓰는지 적었습니다. '측정한 길이'는 노트북의 글과 실험 도구·과제·문제의 수로 잰 값이며(글은 1분에 300자, 실험 도구 4분, 예측 2분, 과제나 문제 묶음 8분, 나가기 전 확인 3분, 숫자 표 1분), 한 차시를 넘는 차시는 자연스러운 곳에서 둘로 나누었고, 짧은 차시에는 계획한 확장 활동을 넣었습니다. 정답과 풀이는 정답 쪽(answer-key.md, 인쇄용 answer-key.html)에 있습니다.",
    "teacher.plan.duration": "{n}차시({minutes}분)",
    "teacher.plan.periods": "차시",
    "teacher.plan.measured": "측정한 길이",
    "teacher.plan.measured_value": "약 {minutes}분",
    "teacher.plan.reshape": "차시에 맞춘 방법",
    "teacher.plan.objectives": "학습 목표(노트북의 학습 목표)",
    "teacher.plan.preparation": "수업 전 준비",
    "teacher.plan.period": "{n}차시",
    "teacher.plan.phase": "단계",
    "teacher.plan.minutes": "시간",
    "teacher.plan.minutes_value": "{n}분",
    "teacher.plan.sections": "노트북의 절",
    "teacher.plan.activity": "활동",
    "teacher.plan.total": "합계",
    "teacher.plan.extension": "확장 활동",
    "teacher.plan.skipped": "수업 시간 밖(과제)으로 돌린 절",
    "teacher.plan.talk": "'살펴볼 점'에서 묻고 답하기",
    "teacher.plan.talk_ask": "물을 것",
    "teacher.plan.talk_answer": "기대하는 답",
    "teacher.plan.talk_misconception": "바로잡을 오해",
    # --- hub.class: exit tickets on the teacher's class page (labkit.hub.tickets) ------------
    "hub.class.ex.exit": "{lesson}강 나가기 전 확인: {what}",
    "hub.class.tickets.title": "나가기 전 확인: 질문별 정답 학생 수",
    "hub.class.tickets.question": "질문",
    "hub.class.tickets.correct": "정답",
    "hub.class.tickets.correct_value": "{n}명 / {m}명",
    "hub.class.tickets.answered": "답한 학생",
    "hub.class.tickets.wrong": "아직 맞히지 못한 학생",
    "hub.class.tickets.none": "아직 나가기 전 확인에 답한 학생이 없습니다.",
}
