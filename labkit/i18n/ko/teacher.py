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
}
