"""The UI string catalog: every label and message the widgets show, by language.

Widgets call :func:`t` with a dotted key (``"goodput.loss.rewind"``). Korean (``"ko"``) is the
course's language and the fallback; another language is a second dict with the same keys,
selected with ``LABKIT_LANG``. ``tests/test_messages.py`` checks that every key used in
``labkit/ui`` exists and that placeholders match across languages.

Korean style: keep the English technical term in parentheses the first time it appears in a
lesson, as the course notes do: 가동률(utilization).
"""

from __future__ import annotations

import os
from typing import Any

from labkit.validate import InputError

__all__ = ["CATALOGS", "error_text", "language", "t"]

KO: dict[str, str] = {
    # --- common -------------------------------------------------------------------------------
    "common.reset": "초기값으로",
    "common.check": "확인",
    "common.answer_placeholder": "답을 입력하세요",
    "common.correct": "정답입니다. {explanation}",
    "common.incorrect": "다시 생각해 보세요. {hint}",
    "common.not_a_number": "숫자로 입력하세요 (예: 12.5). 입력: {value}",
    "common.kept_last": "마지막으로 올바른 결과를 그대로 보여 줍니다.",
    "common.exercise": "문제 {n}",
    "common.na": "n/a",
    "common.na_reason": "n/a — {reason}",
    "common.banner.real": "실습 GPU: {name} (실제 GPU, NVML {nvml_version})",
    "common.banner.sim": "시뮬레이션 GPU: {name} — NVML과 똑같이 동작하는 가상 GPU입니다(같은 호출, 같은 오류, 실제 MIG 규칙).",
    "common.banner.none": "실습 GPU 연결 준비 중: 이 수업은 GPU 없이 계산만으로 진행합니다.",
    "common.banner.fallback": "실제 GPU를 쓰지 못한 이유: {reason}.",
    "common.banner.missing": "실제 GPU를 쓰도록 설정되어 있지만(LABKIT_GPU=real) 쓸 수 없습니다: {reason}. 이 수업은 GPU 없이 계산만으로 진행합니다.",
    "common.banner.reason.LibraryNotFound": "이 컴퓨터에는 NVIDIA 드라이버(NVML 라이브러리 libnvidia-ml)가 없습니다",
    "common.banner.reason.DriverNotLoaded": "NVIDIA 드라이버가 설치되어 있지만 로드되지 않았습니다",
    "common.banner.reason.LibRmVersionMismatch": "드라이버를 업데이트한 뒤 재부팅하지 않아 NVML과 커널 드라이버의 버전이 다릅니다",
    "common.banner.reason.NoDevices": "NVML은 동작하지만 GPU가 하나도 보이지 않습니다",
    "common.banner.reason.NoPermission": "GPU에 접근할 권한이 없습니다",
    "common.banner.reason.BadSpec": "LABKIT_GPU 설정값을 이해하지 못했습니다",
    "common.banner.reason.other": "NVML 오류 ({reason})",
    # --- input errors (labkit.validate.InputError rules) ---------------------------------------
    "error.number": "숫자여야 합니다 (입력: {value}).",
    "error.finite": "유한한 숫자여야 합니다 (입력: {value}).",
    "error.positive": "0보다 커야 합니다 (입력: {value}).",
    "error.non_negative": "0 이상이어야 합니다 (입력: {value}).",
    "error.fraction": "허용 범위 {limit}를 벗어났습니다 (입력: {value}).",
    "error.at_most": "{limit} 이하여야 합니다 (입력: {value}).",
    "error.at_least": "{limit} 이상이어야 합니다 (입력: {value}).",
    "error.integer": "{limit} 이상의 정수여야 합니다 (입력: {value}).",
    "error.choice": "알 수 없는 값입니다: {value}.",
    "error.other": "입력을 확인하세요: {message}",
    "error.unexpected": "계산 중 오류가 났습니다: {message}",
    # --- lesson 03: goodput --------------------------------------------------------------------
    "goodput.reserved_h": "예약된 시간",
    "goodput.loss.planned_maintenance": "계획 정비",
    "goodput.loss.failure_stops": "장애로 인한 정지",
    "goodput.loss.checkpoint_writes": "체크포인트 쓰기 (동기 부분)",
    "goodput.loss.rewind": "재시작 후 되감기로 날린 시간",
    "goodput.loss.straggler": "낙오 노드로 인한 감속 손실 (환산)",
    "goodput.effective": "유효 학습 시간",
    "goodput.ledger_title": "손실 장부: 예약 시간에서 유효 학습 시간까지",
    "goodput.big": "Goodput {pct}",
    "goodput.big_detail": "유효 {effective} ÷ 예약 {reserved}",
    "goodput.at_most": "손실을 모두 더하면 예약된 시간({limit} h)보다 큽니다. 이 줄을 줄이세요.",
    "goodput.straggler.at_most": "스텝이 돈 시간({limit} h)보다 작아야 합니다 (입력: {value}).",
    "goodput.straggler.at_least": "S는 1 이상이어야 합니다 (입력: {value}).",
    "goodput.hours_axis": "시간 (h)",
    "goodput.compare.other": "다른 클러스터의 goodput",
    "goodput.compare.n_gpus": "우리 클러스터 GPU 수",
    "goodput.compare.price": "GPU 1장 가격",
    "goodput.compare.reference": "기준(우리 클러스터) goodput: {pct}",
    "goodput.compare.factor": "필요한 장비 배수 {factor} — {sign}{pct} 장비",
    "goodput.compare.gpus": "같은 유효 GPU-시간을 내려면 GPU {needed}장 (추가 {extra}장)",
    "goodput.compare.money": "추가 장비 비용: {money}",
    "goodput.compare.chart_title": "같은 일을 하려면 필요한 GPU 수",
    "goodput.compare.ours": "우리 ({pct})",
    "goodput.compare.theirs": "다른 클러스터 ({pct})",
    "goodput.compare.gpus_axis": "GPU 수",
    "goodput.straggler.equivalent": "낙오 손실 (환산 시간)",
    "goodput.straggler.slowdown": "스텝 감속 배율 S",
    "goodput.straggler.stepping": "스텝이 돈 시간 {stepping} (예약 − 낙오 외 손실)",
    "goodput.straggler.result": "S = {s}: 스텝이 이상적인 경우보다 {pct} 느립니다.",
    "goodput.straggler.chart_title": "감속 배율 S와 환산 손실 시간",
    "goodput.straggler.curve": "환산 손실 = 스텝 시간 × (1 − 1/S)",
    "goodput.straggler.point": "현재 값",
    "goodput.straggler.x": "스텝 감속 배율 S",
    "goodput.ex1.q": "예약 720 h 가운데 손실이 모두 합해 100 h였습니다. goodput은 몇 %입니까? (소수 첫째 자리까지)",
    "goodput.ex1.hint": "goodput = (예약 − 손실) ÷ 예약 입니다.",
    "goodput.ex1.explain": "(720 − 100) ÷ 720 = 86.1 %.",
    "goodput.ex2.q": "goodput 80 % 클러스터가 goodput 90 % 클러스터와 같은 유효 GPU-시간을 내려면 장비가 몇 배 필요합니까? (소수 셋째 자리까지)",
    "goodput.ex2.hint": "필요 배수 = 기준 goodput ÷ 내 goodput 입니다.",
    "goodput.ex2.explain": "0.90 ÷ 0.80 = 1.125배. 12.5 % 더 사야 합니다.",
    "goodput.ex3.q": "스텝이 돈 시간이 500 h이고 스텝이 이상적인 경우보다 25 % 느렸습니다(S = 1.25). 장부에 적을 낙오 환산 손실은 몇 h입니까?",
    "goodput.ex3.hint": "환산 손실 = 스텝 시간 × (1 − 1/S) 입니다.",
    "goodput.ex3.explain": "500 × (1 − 1/1.25) = 100 h.",
    "goodput.seed.col_line": "항목",
    "goodput.seed.col_value": "값",
    "goodput.seed.goodput": "Goodput (유효 ÷ 예약)",
    "goodput.seed.factor": "장비 배수 (hardware factor)",
    "goodput.seed.gpus": "같은 일에 필요한 GPU 수",
    "goodput.seed.cost": "추가 장비 비용",
}

CATALOGS: dict[str, dict[str, str]] = {"ko": KO}
DEFAULT_LANGUAGE = "ko"


def language() -> str:
    """Return the UI language: ``$LABKIT_LANG`` when a catalog exists for it, else Korean."""
    lang = os.environ.get("LABKIT_LANG", DEFAULT_LANGUAGE)
    return lang if lang in CATALOGS else DEFAULT_LANGUAGE


def t(key: str, /, **values: Any) -> str:
    """Return the UI string ``key`` in the current language, formatted with ``values``.

    Falls back to Korean for a key the current language lacks.

    Raises
    ------
    KeyError
        If no catalog has ``key`` (a bug: tests check every key used in labkit/ui).
    """
    catalog = CATALOGS[language()]
    template = catalog.get(key, KO.get(key))
    if template is None:
        raise KeyError(f"no UI string for {key!r}")
    return template.format(**values) if values else template


def error_text(err: ValueError, *, prefix: str | None = None) -> str:
    """Return the user-facing text of a model error, in the UI language.

    An :class:`~labkit.validate.InputError` is translated by its rule (``error.<rule>``, or the
    more specific ``<prefix>.<field>.<rule>`` / ``<prefix>.<rule>`` when the catalog has one); any
    other ValueError shows its own message.
    """
    if isinstance(err, InputError):
        field = err.field.rsplit(".", 1)[-1]
        limit = err.limit
        if isinstance(limit, tuple):
            limit = ", ".join(map(str, limit))
        elif isinstance(limit, float):
            limit = f"{limit:g}"
        values = {"value": err.value, "limit": limit, "message": str(err)}
        catalog = CATALOGS[language()]
        for key in ([f"{prefix}.{field}.{err.rule}", f"{prefix}.{err.rule}"] if prefix else []):
            if key in catalog or key in KO:
                return t(key, **values)
        return t(f"error.{err.rule}", **values)
    return t("error.other", message=str(err))
