"""Input errors: one sentence per labkit.validate.InputError rule.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- input errors (labkit.validate.InputError rules) ---------------------------------------
    "error.number": "숫자여야 합니다 (입력: {value}).",
    "error.finite": "유한한 숫자여야 합니다 (입력: {value}).",
    "error.positive": "0보다 커야 합니다 (입력: {value}).",
    "error.non_negative": "0 이상이어야 합니다 (입력: {value}).",
    "error.fraction": "허용 범위 {limit:을/를} 벗어났습니다 (입력: {value}).",
    "error.interval.open_closed": "{low} 초과 {high} 이하",
    "error.interval.closed": "{low} 이상 {high} 이하",
    "error.at_most": "{limit} 이하여야 합니다 (입력: {value}).",
    "error.too_big": "값이 너무 큽니다. 이 과정의 값은 1경(10,000조)보다 작습니다 (입력: {value}).",
    "error.at_least": "{limit} 이상이어야 합니다 (입력: {value}).",
    "error.bound.max": "최댓값({limit})입니다. 이 슬라이더는 {limit}보다 큰 값을 받지 않고 {limit}에 맞춥니다.",
    "error.bound.min": "최솟값({limit})입니다. 이 슬라이더는 {limit}보다 작은 값을 받지 않고 {limit}에 맞춥니다.",
    "error.integer": "{limit} 이상의 정수여야 합니다 (입력: {value}).",
    "error.option": "목록에 없는 선택입니다 (입력: {value}). 목록에서 고르세요.",
    "error.choice": "알 수 없는 값입니다: {value}.",
    "error.other": "입력을 확인하세요: {message}",
    "error.arithmetic": "값이 너무 커서(또는 작아서) 계산할 수 없습니다. 더 작은 값을 넣어 보세요.",
    "error.unexpected": "계산 중 오류가 났습니다: {message}",
}
