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
    "common.banner.sim": "시뮬레이션 GPU: {name} — 실제 GPU가 없어 NVML과 똑같이 동작하는 가상 GPU를 씁니다.",
    "common.banner.none": "실습 GPU 연결 준비 중: 이 수업은 GPU 없이 계산만으로 진행합니다.",
    "common.banner.fallback": "실제 GPU를 찾지 못했습니다 ({reason}).",
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
    # --- classroom serving: gallery, error pages, kernel guards (labkit.serve) -------------------
    "serve.course": "학교 미니 AI 데이터센터 실습",
    "serve.back": "수업 목록",
    "serve.gallery.intro": "수업을 골라 여세요. 코드는 숨겨져 있고, 위젯을 움직이면 그래프가 바로 바뀝니다.",
    "serve.gallery.empty": "아직 수업 노트북이 없습니다.",
    "serve.gallery.goals": "학습 목표",
    "serve.gallery.duration": "소요 시간 {duration}",
    "serve.gallery.problem": "이 노트북의 머리말(제목, 학습 목표)을 읽지 못했습니다. 선생님께 알려 주세요.",
    "serve.error.title": "페이지를 열지 못했습니다",
    "serve.error.detail": "문제가 생겼습니다 (HTTP {status}). 잠시 뒤 다시 시도하고, 계속되면 선생님께 알려 주세요.",
    "serve.notfound.title": "없는 페이지입니다",
    "serve.notfound.detail": "주소를 확인하거나 수업 목록에서 다시 골라 주세요.",
    "serve.busy.title": "지금은 수업 서버가 가득 찼습니다",
    "serve.busy.full": "이 서버는 수업 화면을 동시에 {max_kernels}개까지 엽니다. 쓰지 않는 탭을 닫고 잠시 기다려 주세요. 이 페이지는 30초마다 다시 시도합니다. 계속되면 선생님께 알려 주세요.",
    "serve.busy.memory": "서버 메모리가 거의 다 찼습니다. 쓰지 않는 탭을 닫고 잠시 기다려 주세요. 이 페이지는 30초마다 다시 시도합니다. 계속되면 선생님께 알려 주세요.",
    "serve.cell_error": "이 부분을 보여 주지 못했습니다. 선생님께 알려 주세요 (자세한 내용은 서버 기록에 있습니다).",
    "serve.kernel_error": "⚠ 계산 중 오류가 났습니다. 선생님께 알려 주세요 (자세한 내용은 서버 기록에 있습니다).",
    "serve.upload.files.at_least": "파일을 하나 골라 주세요.",
    "serve.upload.files.at_most": "파일은 한 번에 하나만 올릴 수 있습니다 (고른 파일: {value}개).",
    "serve.upload.files.other": "올린 파일을 읽지 못했습니다 ({value}).",
    "serve.upload.size.at_most": "파일이 너무 큽니다: {value} (최대 {limit}).",
    "serve.upload.suffix.choice": "이 형식의 파일은 받을 수 없습니다: {value} (받는 형식: {limit}).",
    "serve.upload.encoding.other": "UTF-8 텍스트 파일이 아닙니다: {value}.",
    "serve.download": "내려받기: {name} ({size})",
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
