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
    # --- lesson 07: opex_lab --------------------------------------------------------------------
    "opex.tab.room": "서버실 설계",
    "opex.tab.tariff": "전기 요금제",
    "opex.tab.money": "사람·돈",
    "opex.tab.usage": "사용 계획",
    "opex.tab.calendar": "학사일정",
    "opex.f.server": "서버 종류",
    "opex.f.server_price": "서버 1대 가격",
    "opex.f.n_servers": "서버 대수",
    "opex.f.pue": "PUE (전력 사용 효율)",
    "opex.f.idle": "유휴 전력 (최대 대비)",
    "opex.f.contract_auto": "계약전력 자동 (최대 수요에 맞춤)",
    "opex.f.contract_kw": "계약전력",
    "opex.f.tariff_class": "한전 계약종별",
    "opex.f.school_exception": "초·중·고 특례 (하한 15 %)",
    "opex.f.staff_fte": "운영 인력 (FTE)",
    "opex.f.salary": "인력 1명 연간 인건비",
    "opex.f.maintenance": "유지보수 (장비값 대비, 연)",
    "opex.f.facility": "시설 공사비 (전기·냉방·UPS)",
    "opex.f.facility_years": "시설 공사비 상각 기간",
    "opex.f.depreciation": "서버 감가상각 기간",
    "opex.f.cost_of_capital": "자본 비용 (연 이자율)",
    "opex.f.fx": "환율",
    "opex.f.class_frac": "수업 시간 가동률",
    "opex.f.exam_frac": "시험 기간 가동률 (수업 시간)",
    "opex.f.after_school": "방과 후 가동률",
    "opex.f.after_school_end": "방과 후 사용 종료",
    "opex.f.vacation": "방학 평일 가동률 (수업 시간대)",
    "opex.f.always_on": "상시 서비스 (24시간)",
    "opex.f.students": "GPU 1장당 학생 수 (MIG)",
    "opex.f.derate": "실제 처리량 / MLPerf (derate)",
    "opex.f.rent": "클라우드 GPU 임대료",
    "opex.f.api": "API 가격 (입력 3 : 출력 1 평균)",
    "opex.f.class_start": "수업 시작",
    "opex.f.class_end": "수업 끝",
    "opex.f.terms": "학기 (한 줄에 '시작 ~ 끝 이름')",
    "opex.f.exams": "시험 기간",
    "opex.f.closures": "재량휴업일·개교기념일",
    "opex.terms.other": "학기를 확인하세요: 한 줄에 'YYYY-MM-DD ~ YYYY-MM-DD 이름', 같은 해 안에서 겹치지 않게 (문제: {value}).",
    "opex.exams.other": "시험 기간을 확인하세요: 한 줄에 'YYYY-MM-DD ~ YYYY-MM-DD 이름', 학기 안에 (문제: {value}).",
    "opex.closures.other": "휴업일을 확인하세요: 한 줄에 'YYYY-MM-DD 이름', 같은 해 안에 (문제: {value}).",
    "opex.class_end_h.other": "수업 시간은 0 ≤ 시작 < 끝 ≤ 24 이어야 합니다 (입력: {value}).",
    "opex.after_school_end_h.at_least": "방과 후 사용은 수업이 끝난 뒤({limit}시 이후)에 끝나야 합니다 (입력: {value}).",
    "opex.warn.unverified": "이 요금표({date} 기준)는 공개 저장소의 옮겨 적은 값으로, 한전 공식 요금표와 대조하지 않았습니다. 수업 전에 한전ON '전기요금표'에서 확인하세요.",
    "opex.warn.over_contract": "최대 수요 {peak} kW가 계약전력 {contract} kW를 넘습니다. 한전은 초과 사용에 부가금을 물립니다: 계약전력을 올리세요.",
    "opex.sum.electricity": "연간 전기요금",
    "opex.sum.kwh": "연간 사용 전력량",
    "opex.sum.peak": "요금적용전력 (최대)",
    "opex.sum.utilization": "연평균 가동률",
    "opex.bill.title": "월별 전기요금 (12개월, {cls})",
    "opex.bill.axis": "원 (부가세·기금 포함)",
    "opex.bill.base": "기본요금",
    "opex.bill.energy": "전력량요금",
    "opex.bill.adders": "기후환경·연료비조정",
    "opex.bill.taxes": "부가세·전력기금",
    "opex.line.capital": "서버 감가상각",
    "opex.line.energy": "전력량·부담금",
    "opex.line.base_charge": "기본요금",
    "opex.line.staff": "운영 인력",
    "opex.line.maintenance": "유지보수",
    "opex.line.facility": "시설 (상각)",
    "opex.cost.title": "1년 비용의 구성",
    "opex.cost.axis": "원 / 년",
    "opex.cost.opex": "연간 운영비(opex, 전기 + 인력 + 유지보수): {krw}",
    "opex.cost.tco": "연간 총소유비용(TCO, 운영비 + 감가상각 + 시설): {krw}",
    "opex.cost.lifetime": "서버 수명 {years}년 동안: {krw}",
    "opex.cost.electricity_share": "전기요금은 1년 비용의 {pct}입니다.",
    "opex.unit.calendar": "달력 시간 기준 GPU 1장·1시간 비용: {krw}",
    "opex.unit.used": "실제 사용한 GPU-시간당 비용: {krw} (연평균 가동률 {pct})",
    "opex.unit.student": "MIG로 GPU 1장을 학생 {n}명이 나눠 쓰면 학생 1명·1시간: {krw}",
    "opex.unit.tokens": "출력 토큰 100만 개당: {krw} (MLPerf 처리량의 {derate})",
    "opex.unit.idle": "놀고 있는 시간에 내는 돈: 1년 비용의 {pct} ({krw}), 전기요금만 보면 {elec}",
    "opex.unit.hours_title": "GPU-시간당 비용",
    "opex.unit.krw_h": "원 / GPU-시간",
    "opex.unit.bar_calendar": "보유 (달력 시간)",
    "opex.unit.bar_used": "보유 (사용 시간)",
    "opex.unit.bar_rent": "클라우드 임대",
    "opex.unit.year_title": "같은 일을 1년 동안",
    "opex.unit.krw_year": "만 원 / 년",
    "opex.unit.bar_own": "우리 서버실",
    "opex.unit.bar_rent_year": "GPU 임대",
    "opex.unit.bar_api": "API 구매",
    "opex.swing.pue": "PUE",
    "opex.swing.class_frac": "수업 시간 가동률",
    "opex.swing.always_on_frac": "상시 서비스",
    "opex.swing.idle_frac": "유휴 전력",
    "opex.swing.capex_scale": "서버 가격",
    "opex.swing.depreciation_years": "감가상각 기간",
    "opex.swing.cost_of_capital": "자본 비용",
    "opex.swing.staff_fte": "운영 인력",
    "opex.swing.maintenance_frac": "유지보수",
    "opex.swing.facility_upgrade_krw": "시설 공사비",
    "opex.sens.metric": "무엇을 볼까",
    "opex.sens.metric.tco": "연간 총비용 (TCO)",
    "opex.sens.metric.used_gpu_h": "사용 GPU-시간당 비용",
    "opex.sens.title": "어떤 입력이 비용을 가장 크게 움직이나 (지금: {base} {unit})",
    "opex.sens.unit_tco": "/ 년",
    "opex.sens.unit_h": "/ GPU-시간",
    "opex.sens.axis": "지금 설계 대비 변화 (원)",
    "opex.sens.low": "낮은 값일 때",
    "opex.sens.high": "높은 값일 때",
    "opex.ch.item": "항목",
    "opex.ch.plan": "지금 사용 계획",
    "opex.ch.class_only": "수업 시간에만",
    "opex.ch.utilization": "연평균 가동률",
    "opex.ch.electricity": "연간 전기요금",
    "opex.ch.tco": "연간 총비용 (TCO)",
    "opex.ch.used": "사용 GPU-시간당 비용",
    "opex.ch.student": "학생 1명·1시간 비용",
    "opex.ch.idle": "놀고 있는 시간에 내는 비율",
    "opex.ch.chart_title": "월별 평균 가동률",
    "opex.ch.axis": "가동률",
    "opex.export.button": "CSV와 요약 보고서 만들기",
    "opex.export.nothing": "먼저 위에서 올바른 설계를 만드세요.",
    "opex.export.csv": "시나리오 CSV 받기",
    "opex.export.html": "행정실용 요약 보고서 (HTML) 받기",
    "opex.export.where": "파일은 이 수업 세션의 임시 폴더에만 만들어지고, 세션이 끝나면 지워질 수 있습니다. 받은 HTML은 브라우저에서 열어 인쇄(PDF 저장)할 수 있습니다.",
    "opex.report.title": "학교 미니 AI 데이터센터 연간 운영비 요약",
    "opex.report.made": "작성일 {day} · labkit 07 운영비 실습으로 계산한 추정치입니다.",
    "opex.report.key": "핵심 숫자",
    "opex.report.servers": "서버",
    "opex.report.power": "최대 전력 (시설 전체)",
    "opex.report.contract": "계약전력 {kw} kW",
    "opex.report.tariff": "한전 계약종별",
    "opex.report.opex": "연간 운영비 (전기 + 인력 + 유지보수)",
    "opex.report.tco": "연간 총소유비용 (TCO)",
    "opex.report.tokens": "출력 토큰 100만 개당 비용",
    "opex.report.rent": "같은 GPU-시간을 클라우드에서 빌리면 (연)",
    "opex.report.api": "같은 토큰을 API로 사면 (연)",
    "opex.report.idle": "놀고 있는 시간에 내는 비용",
    "opex.report.bills": "월별 전기요금",
    "opex.report.chart": "월별 전기요금 누적 막대그래프",
    "opex.report.month": "월",
    "opex.report.billing_kw": "요금적용전력 (kW)",
    "opex.report.due": "청구액 (원)",
    "opex.report.year_total": "합계",
    "opex.report.notes": "계산 방법과 한계",
    "opex.report.method": "전기요금은 서버실의 시간별 부하(서버 전력 × PUE, 학사일정에 따른 가동률)를 한전 요금표로 달마다 계산했습니다: 기본요금(요금적용전력 × 단가), 계절·시간대별 전력량요금, 기후환경·연료비조정요금, 부가가치세 10 %, 전력산업기반기금 2.7 %. 서버 가격·인건비·유지보수·가동률은 수업용 가정이며, 학교의 실제 견적과 측정값으로 바꿔야 합니다.",
    "opex.report.sources": "출처:",
    "opex.key.col_item": "항목",
    "opex.key.col_value": "값",
    "opex.key.case1_total": "검증 사례 1: 8×H100, 가동률 100 %의 연간 비용",
    "opex.key.case1_used_100": "검증 사례 1: 사용 GPU-시간당 비용 (가동률 100 %)",
    "opex.key.case1_used_40": "검증 사례 1: 사용 GPU-시간당 비용 (가동률 40 %)",
    "opex.key.school_days": "기본 학사일정의 수업일수 (2026년)",
    "opex.key.room_electricity": "기본 설계의 연간 전기요금",
    "opex.key.room_utilization": "기본 설계의 연평균 가동률",
    "opex.key.room_used": "기본 설계의 사용 GPU-시간당 비용",
    "opex.key.class_only_utilization": "수업 시간에만 쓸 때 가동률",
    "opex.key.class_only_used": "수업 시간에만 쓸 때 사용 GPU-시간당 비용",
    "opex.ex1.q": "교육용(갑) 고압A 선택I 요금으로 10 kW를 1월 한 달(744시간) 내내 쓰면 전력량요금(기본요금·부담금·세금 제외)은 몇 원입니까? (겨울철 109.3 원/kWh, 원 미만 절사)",
    "opex.ex1.hint": "전력량요금 = 사용 전력량(kWh) × 계절 단가. 10 kW × 744 h = 7,440 kWh.",
    "opex.ex1.explain": "7,440 kWh × 109.3 원 = 813,192 원.",
    "opex.ex2.q": "계약전력이 100 kW인데 한 달 최대 수요가 10 kW뿐입니다 (특례 없음). 기본요금을 매기는 요금적용전력은 몇 kW입니까?",
    "opex.ex2.hint": "요금적용전력은 최대 수요와 '계약전력 × 30 %' 가운데 큰 값입니다.",
    "opex.ex2.explain": "max(10, 100 × 0.30) = 30 kW. 계약전력을 크게 잡으면 쓰지 않아도 기본요금을 냅니다.",
    "opex.ex3.q": "기본 학사일정(수업 190일, 09–17시)에서 수업 시간에만 GPU를 모두 쓰고 나머지는 놀린다면, 1년 가동률은 몇 %입니까? (소수 첫째 자리까지)",
    "opex.ex3.hint": "가동률 = 사용 시간 ÷ 1년의 시간(8,760 h). 하루 8시간 × 190일.",
    "opex.ex3.explain": "8 h × 190일 = 1,520 h, 1,520 ÷ 8,760 = 17.4 %.",
    "opex.ex4.q": "기본 설계에서 '사용한 GPU-시간당 비용'은 '달력 시간 기준 GPU-시간당 비용'의 몇 배입니까? (소수 첫째 자리까지)",
    "opex.ex4.hint": "비용은 달력 시간마다 나가고, 일은 사용한 시간에만 합니다. 배수 = 1 ÷ 연평균 가동률.",
    "opex.ex4.explain": "가동률이 약 19 %이므로 약 5.2배. 놀고 있는 GPU는 땅에 서 있는 비행기와 같습니다.",
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
