"""The course's answer parser (labkit.answers), shown by labkit.ui.exercises.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- answers: the course's answer parser (labkit.answers), shown by labkit.ui.exercises ----
    "answers.understood": "{typed} = {value}{ro} 읽었습니다.",
    "answers.understood_ratio": "{typed} = {value}{ro} 읽었습니다 (0과 1 사이의 비율로 보고 100을 곱했습니다).",
    "answers.hint.ratio": "비율(0–1)로 답한 것으로 보고 {typed} × 100 = {value} %로 읽었지만 정답과 다릅니다. 이 문제는 백분율(%)로 답합니다. 계산을 다시 확인해 보세요.",
    "answers.hint.other_unit": "숫자만 적으면 문제의 단위({unit})로 읽습니다. {other} 단위로 계산했다면 '{typed}{other}'처럼 단위를 붙여 적으세요.",
    "answers.no_unit": "단위 없는 수",
    "answers.error.empty": "답이 비어 있습니다. 숫자로 입력하세요 (예: 12.5).",
    "answers.error.no_number": "숫자로 입력하세요 (예: 12.5, 30분, 1.2만 원). 입력: {text}",
    "answers.error.two_numbers": "숫자가 둘 이상 있습니다. 답은 하나만 적으세요. 입력: {text}",
    "answers.error.unit": "알 수 없는 단위입니다: {typed}. 단위 없이 숫자만 적으면 {unit} 단위로 읽습니다. 입력: {text}",
    "answers.error.mismatch": "이 문제는 {unit} 단위로 답합니다. {typed} 단위는 {unit} 단위로 바꿀 수 없습니다. 입력: {text}",
    "answers.error.kind": "{typed_what}가 아니라 {asked_what}를 물었습니다. {unit} 단위로 답하세요. 입력: {text}",
    "answers.error.finite": "너무 크거나 유한하지 않은 값입니다. 입력: {text}",
    "answers.error.too_big": "값이 너무 큽니다. 이 과정의 답은 1경(10,000조)보다 작습니다. 입력: {text}",
    "answers.error.too_long": "답이 너무 깁니다. 숫자 하나와 단위만 적으세요. 입력: {text}…",
}
