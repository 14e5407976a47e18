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
    # --- lesson 04: reliability ----------------------------------------------------------------
    "reliability.col_item": "항목",
    "reliability.col_value": "값",
    "reliability.minutes": "{value}분",
    "reliability.days": "{value}일",
    "reliability.at_most": "이 앱에서 다룰 수 있는 범위({limit})를 넘었습니다 (입력: {value}).",
    "reliability.scaling.preset": "GPU 1장의 고장 간격 출처",
    "reliability.scaling.preset_llama3": "Llama 3 (54일, 16,384장, 419회 중단)",
    "reliability.scaling.preset_epoch": "Epoch AI 가정 (GPU 1장당 50,000 h)",
    "reliability.scaling.preset_rate": "{name} ({rate}건 / 1,000 노드-일)",
    "reliability.scaling.gpu_mtbf": "GPU 1장의 평균 고장 간격(MTBF)",
    "reliability.scaling.title": "클러스터가 커질수록 작업이 멈추는 간격은 짧아진다",
    "reliability.scaling.x": "작업에 쓰는 GPU 수 (로그 눈금)",
    "reliability.scaling.y": "작업의 평균 고장 간격, 시간 (로그 눈금)",
    "reliability.scaling.model": "모형: 작업 MTBF = GPU 1장 MTBF ÷ GPU 수",
    "reliability.scaling.school": "우리 학교 {n}장",
    "reliability.scaling.worksheet": "워크시트 클러스터 {n}장",
    "reliability.scaling.llama3": "Llama 3 {n}장",
    "reliability.scaling.meta_measured": "Meta RSC-1 실측 (8장, 1,024장)",
    "reliability.scaling.meta_projected": "Meta RSC-1 예측 (고장률 6.50으로 계산)",
    "reliability.scaling.row": "{name}: 평균 {mtbf}마다 한 번 멈춤 · 한 달(720 h)에 {month}번 · 하루 동안 한 번도 안 멈출 확률 {free}",
    "reliability.interval.interval": "체크포인트 간격 (계산 시간)",
    "reliability.interval.write": "체크포인트 쓰기 시간 (학습이 멈추는 부분)",
    "reliability.interval.mtbf": "작업의 평균 고장 간격(MTBF)",
    "reliability.interval.restart": "재시작 시간 (감지 + 재배치 + 불러오기)",
    "reliability.interval.async": "비동기 체크포인트 (멈추는 시간 5초)",
    "reliability.interval.title": "체크포인트 간격에 따른 기대 오버헤드",
    "reliability.interval.x": "체크포인트 간격, 분",
    "reliability.interval.y": "기대 오버헤드 (유효 작업 대비 추가 시간), %",
    "reliability.interval.curve": "정확한 기대 오버헤드 (Daly 2006)",
    "reliability.interval.young": "Young 근사 {value}",
    "reliability.interval.daly": "Daly 근사 {value}",
    "reliability.interval.exact": "정확한 최적값 {value}",
    "reliability.interval.chosen": "지금 고른 간격",
    "reliability.interval.optima": "최적 간격 — Young: {young} · Daly: {daly} · 정확한 값(Lambert W): {exact}",
    "reliability.interval.result": "간격 {tau}: 오버헤드 {overhead} (최적일 때 {best}) → ETTR {ettr}",
    "reliability.interval.write_used": "계산에 쓴 체크포인트 쓰기 시간: {write}",
    "reliability.interval.checkpoint_cost.at_most": "쓰기 시간은 MTBF({limit}분)보다 짧아야 합니다 (입력: {value}분).",
    "reliability.interval.at_most": "이 앱에서 다룰 수 있는 범위({limit})를 넘었습니다 (입력: {value}).",
    "reliability.ettr.n_gpus": "작업에 쓰는 GPU 수",
    "reliability.ettr.write": "체크포인트 쓰기 시간 (멈추는 부분)",
    "reliability.ettr.title": "ETTR: Meta의 근사식과 정확한 기대값",
    "reliability.ettr.y": "ETTR (유효 학습 시간 비율)",
    "reliability.ettr.meta": "Meta 근사식 (1차 근사)",
    "reliability.ettr.exact": "정확한 기대값 (포아송 고장)",
    "reliability.ettr.chosen": "고른 GPU 수",
    "reliability.ettr.result": "GPU {n}장: Meta 근사식 {meta}, 정확한 기대값 {exact}",
    "reliability.ettr.checkpoint_write_h.at_most": "쓰기 시간이 작업의 MTBF({limit} h)보다 짧아야 합니다.",
    "reliability.ettr.at_most": "이 앱에서 다룰 수 있는 범위({limit})를 넘었습니다 (입력: {value}).",
    "reliability.month.trials": "시뮬레이션할 달의 수 (시행 횟수)",
    "reliability.month.sample": "장부를 볼 표본 달 번호",
    "reliability.month.redraw": "새로 뽑기",
    "reliability.month.hist_title": "{n}개의 달을 시뮬레이션한 goodput 분포",
    "reliability.month.x": "한 달의 goodput, %",
    "reliability.month.y": "달의 수",
    "reliability.month.reference": "워크시트 {pct}",
    "reliability.month.expected": "정확한 기대값 {pct}",
    "reliability.month.sample_title": "표본 달 #{k}: goodput {pct}, 중단 {n}번",
    "reliability.month.result": "시뮬레이션 평균 {mean} (표준편차 {sd}) — 정확한 기대값 {expected}",
    "reliability.month.below": "워크시트의 {ref}보다 나쁜 달의 비율: {pct}",
    "reliability.month.interruptions": "한 달의 중단 횟수: 평균 {mean}번 (가장 적은 달 {low}번, 가장 많은 달 {high}번)",
    "reliability.month.checkpoint_write_h.at_most": "쓰기 시간이 작업의 MTBF({limit} h)보다 짧아야 합니다.",
    "reliability.month.trials.at_most": "한 번에 시뮬레이션할 수 있는 달은 {limit}개까지입니다 (입력: {value}).",
    "reliability.month.trial.at_most": "표본 달 번호는 {limit} 이하여야 합니다 (입력: {value}).",
    "reliability.month.at_most": "이 앱에서 다룰 수 있는 범위({limit})를 넘었습니다 (입력: {value}).",
    "reliability.log.restart": "작업이 다시 시작된 시각 (충돌은 25초)",
    "reliability.log.resume": "마지막 체크포인트가 저장한 스텝",
    "reliability.log.title": "작업 {total}초가 어디에 쓰였나",
    "reliability.log.x": "시간, 초",
    "reliability.log.result": "goodput {pct} · 중단 {n}번 · 마지막으로 보존된 스텝 {step}",
    "reliability.log.show": "이벤트 로그 보기",
    "reliability.log.restart_s.at_least": "충돌({limit}초) 뒤에 다시 시작해야 합니다 (입력: {value}).",
    "reliability.bucket.productive": "유효 학습 (productive)",
    "reliability.bucket.tpu_initialization": "장치 초기화",
    "reliability.bucket.training_prep": "학습 준비",
    "reliability.bucket.program_startup": "프로그램 시작(컴파일)",
    "reliability.bucket.data_loading_sync": "데이터 로딩 (동기)",
    "reliability.bucket.unproductive_checkpoint_save_time": "체크포인트 저장",
    "reliability.bucket.unproductive_checkpoint_restore_time": "체크포인트 복원",
    "reliability.bucket.wasted_progress_from_disruption": "되감기로 버린 진행",
    "reliability.bucket.infrastructure_recovery_from_disruption": "인프라 복구",
    "reliability.bucket.custom_badput_events": "사용자 지정 손실",
    "reliability.bucket.other": "기타",
    "reliability.llama3.title": "Llama 3 405B 학습 54일 동안의 예기치 않은 중단 419건, 원인별",
    "reliability.llama3.x": "중단 횟수 (괄호: 419건 중 비율)",
    "reliability.llama3.cat.gpu": "GPU",
    "reliability.llama3.cat.host": "호스트(서버)",
    "reliability.llama3.cat.network": "네트워크",
    "reliability.llama3.cat.dependency": "소프트웨어·의존성",
    "reliability.llama3.cat.unplanned_maintenance": "계획에 없던 정비",
    "reliability.llama3.cat.unknown": "원인 불명",
    "reliability.llama3.sum": "중단 횟수 합계",
    "reliability.llama3.printed_sum": "논문에 인쇄된 비율의 합",
    "reliability.llama3.mismatch": "횟수와 맞지 않는 인쇄 비율",
    "reliability.llama3.gpu_count": "GPU 범주의 비율 (횟수로 계산)",
    "reliability.llama3.gpu_printed": "GPU 범주의 비율 (인쇄된 비율의 합, 본문의 58.7 %)",
    "reliability.rates.title": "1,000 노드-일당 고장 수: 출처마다 세는 방법이 다르다",
    "reliability.rates.x": "1,000 노드-일(8-GPU 서버)당 고장 수",
    "reliability.rates.published": "논문이 발표한 값",
    "reliability.rates.derived": "발표된 횟수로 계산한 값",
    "reliability.rates.measured": "공개 로그에서 직접 계산",
    "reliability.rates.anecdotal": "운영 일지의 어림값",
    "reliability.stepfun.rate_all": "모든 고장 (1,000 노드-일당)",
    "reliability.stepfun.rate_hw": "하드웨어 고장 (1,000 노드-일당)",
    "reliability.stepfun.rate_gpu": "그중 GPU (1,000 노드-일당)",
    "reliability.stepfun.repair": "수리 시간 중앙값 / 평균 / 90 백분위 (일)",
    "reliability.stepfun.gap": "클러스터 전체 고장 사이 간격 평균 / 중앙값 (일)",
    "reliability.stepfun.cv": "간격의 변동계수 (포아송이면 1)",
    "reliability.stepfun.lemons": "고장이 5번 이상 난 노드 / 고장이 난 노드",
    "reliability.stepfun.top": "고장이 가장 많은 10 % 노드가 차지한 비율",
    "reliability.stepfun.unavailable": "고장으로 쓰지 못한 노드-일 비율",
    "reliability.num.gpu_mtbf": "GPU 1장의 MTBF (Llama 3)",
    "reliability.num.per_gpu_day": "GPU 1장·1일당 중단 수",
    "reliability.num.per_node": "1,000 노드-일당 중단 수",
    "reliability.num.job_mtbf": "GPU {n}장 작업의 MTBF",
    "reliability.num.job_mtbf_all": "GPU 16,384장 작업의 MTBF (계획 중단 47건 포함 466건)",
    "reliability.num.month": "GPU {n}장, 720 h 동안 기대 중단 수 (± 표준편차)",
    "reliability.num.free": "GPU {n}장이 {h}시간 동안 한 번도 안 멈출 확률",
    "reliability.num.exact": "정확한 최적값",
    "reliability.num.published": "Daly 논문 그림",
    "reliability.num.reported": "논문이 보고한 값",
    "reliability.num.worksheet": "워크시트 (03)",
    "reliability.num.model": "모형의 정확한 기대값",
    "reliability.ex1.q": "GPU 1장이 평균 50,000시간마다 한 번 고장 난다고 합니다. GPU 16,384장을 한꺼번에 쓰는 작업은 평균 몇 시간마다 멈춥니까? (소수 첫째 자리까지)",
    "reliability.ex1.hint": "작업의 MTBF = GPU 1장의 MTBF ÷ GPU 수 입니다.",
    "reliability.ex1.explain": "50,000 ÷ 16,384 ≈ 3.05 h. Llama 3가 실제로 겪은 3.09 h와 거의 같습니다.",
    "reliability.ex2.q": "체크포인트 쓰기에 6분이 걸리고 작업의 MTBF가 4시간(240분)입니다. Young의 공식으로 최적 체크포인트 간격은 몇 분입니까?",
    "reliability.ex2.hint": "Young: 간격 = √(2 × 쓰기 시간 × MTBF), 단위를 분으로 맞추세요.",
    "reliability.ex2.explain": "√(2 × 6 × 240) = √2,880 ≈ 53.7분. (69분이라는 답을 본 적이 있다면, 그것은 쓰기 시간이 10분일 때의 값입니다.)",
    "reliability.ex3.q": "Llama 3의 GPU당 고장률(GPU 1장당 50,677 h에 한 번)로 GPU 4,096장 작업이 12시간 동안 한 번도 멈추지 않을 확률은 몇 %입니까?",
    "reliability.ex3.hint": "포아송 과정: P = exp(−시간 × GPU 수 ÷ GPU 1장의 MTBF) 입니다.",
    "reliability.ex3.explain": "exp(−12 × 4,096 ÷ 50,677) = exp(−0.970) ≈ 37.9 %. 반나절도 무사히 넘기기 어렵습니다.",
    "reliability.ex4.q": "이벤트 로그 예제에서 충돌 뒤 작업이 30초가 아니라 40초에 다시 시작됐다면 goodput은 몇 %입니까? (소수 첫째 자리까지)",
    "reliability.ex4.hint": "유효 학습 시간(15초)은 그대로이고 전체 시간만 늘어납니다.",
    "reliability.ex4.explain": "전체 59초 가운데 유효 학습 15초: 15 ÷ 59 ≈ 25.4 %. 늘어난 10초는 모두 인프라 복구로 들어갑니다.",
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
