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
    # --- lesson 08: orchestration --------------------------------------------------------------
    "orch.kind.training": "학습(training)",
    "orch.kind.fine_tuning": "파인튜닝(fine-tuning)",
    "orch.kind.quantization": "양자화(quantization)",
    "orch.kind.inference_realtime": "실시간 추론",
    "orch.kind.inference_batch": "배치 추론",
    "orch.kind.embedding": "임베딩 생성",
    "orch.kind.evaluation": "모델 평가",
    "orch.kind.class_lab": "수업 실습",
    "orch.kind.filler": "가치 없는 채우기 작업",
    "orch.tenant.service": "학교 서비스(챗봇·채점)",
    "orch.tenant.ai_basics": "AI 기초 수업",
    "orch.tenant.deep_learning": "딥러닝 실습 수업",
    "orch.tenant.research": "연구실",
    "orch.tenant.filler": "채우기 작업",
    "orch.policy.fifo": "FIFO (선착순)",
    "orch.policy.easy_backfill": "EASY 백필(backfill)",
    "orch.policy.greedy": "탐욕적 건너뛰기(greedy)",
    "orch.policy.priority": "우선순위(priority) + 백필",
    "orch.policy.fair_share": "공정 분배(fair share) + 백필",
    "orch.placement.pack": "모아 담기(pack)",
    "orch.placement.spread": "흩어 담기(spread)",
    "orch.placement.fgd": "FGD (단편화 최소화)",
    "orch.field.policy": "스케줄링 정책",
    "orch.field.placement": "배치(placement) 방식",
    "orch.field.preemption": "선점(preemption) 허용",
    "orch.unit.gpu": "GPU",
    "orch.unit.krw_per_gpu_h": "원 / GPU·시간",
    "orch.unit.people": "명",
    "orch.axis.time": "시각 (h, 0 = 자정)",
    "orch.axis.gpu": "노드{node} · GPU{gpu}",
    "orch.gantt.title": "GPU별 하루 일정 — {policy}, {placement}",
    "orch.queue.title": "대기열 길이와 점유 GPU",
    "orch.queue.queued": "기다리는 작업 수",
    "orch.queue.held": "점유 GPU",
    "orch.queue.installed": "설치 GPU",
    "orch.waits.title_kind": "워크로드 종류별 대기 시간",
    "orch.waits.title_tenant": "사용자(테넌트)별 대기 시간",
    "orch.waits.axis": "대기 시간 (h)",
    "orch.waits.mean": "평균 대기",
    "orch.waits.p95": "95번째 백분위 대기",
    "orch.waits.delay": "평균 지연 (완료 시간 − 실행 시간)",
    "orch.metric.occupancy": "점유율(occupancy, 하루)",
    "orch.metric.value_per_gpu": "설치 GPU 1장당 하루 가치",
    "orch.metric.net_value": "순가치 (가치 − 달력 시간 비용)",
    "orch.metric.mean_wait": "평균 대기",
    "orch.metric.mean_jct": "평균 작업 완료 시간(JCT)",
    "orch.metric.makespan": "마지막 작업 완료까지(makespan)",
    "orch.metric.wasted": "선점으로 잃은 작업",
    "orch.metric.fragmented": "평균 단편화 GPU (FGD 정의)",
    "orch.demand.title": "하루 수요(줄 서지 않는다면 쓰려 한 GPU)와 설치 용량",
    "orch.demand.axis": "요청 GPU 수",
    "orch.demand.installed": "설치 {gpus} GPU",
    "orch.demand.installed_label": "설치 GPU 수",
    "orch.demand.cost_label": "달력 시간당 GPU 1장 비용",
    "orch.demand.peak": "수요 최고점 (GPU)",
    "orch.demand.mean": "하루 평균 수요 (GPU)",
    "orch.demand.over": "수요가 용량을 넘는 시간",
    "orch.demand.best_occupancy": "일을 미루지 않을 때 가능한 최고 점유율",
    "orch.demand.cost": "하루 달력 시간 비용 (쓰든 안 쓰든)",
    "orch.demand.idle_cost": "그중 노는 GPU에 나간 비용",
    "orch.work.kind": "종류",
    "orch.work.tenant": "사용자(테넌트)",
    "orch.work.count": "작업 수",
    "orch.work.submit": "제출 시각 (h)",
    "orch.work.size": "크기",
    "orch.work.hours": "실행 시간 (h)",
    "orch.work.priority": "우선순위",
    "orch.work.value": "GPU·시간당 가치",
    "orch.work.share": "GPU {share}장 몫 (공유)",
    "orch.table.policy": "정책",
    "orch.table.wait_class": "수업 실습 평균 대기",
    "orch.table.wait_ft": "파인튜닝 평균 대기",
    "orch.filler.field": "빈 GPU를 채우기 작업으로 메우기",
    "orch.filler.preemption": "선점 허용 (급한 일이 먼저)",
    "orch.filler.real_wait": "진짜 작업의 평균 대기",
    "orch.filler.without": "채우기 없음",
    "orch.filler.with": "채우기 있음",
    "orch.filler.gantt": "GPU별 하루 일정 — {which}",
    "orch.mig.students": "AI 기초 수업 수강생",
    "orch.mig.mode": "실습 GPU 방식",
    "orch.mig.mode.mig": "MIG 조각 (1g.10gb / 2g.20gb)",
    "orch.mig.mode.whole": "GPU 통째로 1장씩",
    "orch.mig.class_gpu_h": "수업이 점유한 GPU-시간",
    "orch.mig.class_wait": "수업 실습 평균 대기",
    "orch.mig.ft_wait": "파인튜닝 평균 대기",
    "orch.mig.gantt": "GPU별 하루 일정 — {mode}",
    "orch.lab.quota": "{tenant} 쿼터",
    "orch.lab.borrowing": "남는 쿼터 빌리기 (Kueue cohort)",
    "orch.lab.quota_col": "쿼터 (GPU)",
    "orch.lab.used_col": "쓴 GPU-시간",
    "orch.lab.line": "점유율 {occupancy} · 설치 GPU당 하루 가치 {value} · 선점으로 잃은 작업 {wasted} GPU-시간",
    "orch.lab.gantt": "GPU별 하루 일정 — 정책 실험실",
    "orch.lab.gpus.at_most": "한 작업이 쓰는 GPU({value})가 그 사용자의 쿼터와 빌릴 수 있는 양을 합친 것({limit})보다 큽니다. 쿼터를 늘리거나 빌리기를 허용하세요.",
    "orch.lab.at_most": "{limit} 이하여야 합니다 (입력: {value}).",
    "orch.spec.specialized": "채점을 작은 특화 모델로 (4 → 1 GPU)",
    "orch.spec.lending": "서비스의 남는 쿼터 빌려주기",
    "orch.spec.no_lending": "빌려주지 않음",
    "orch.spec.with_lending": "빌려줌",
    "orch.spec.big": "큰 범용 모델",
    "orch.spec.small": "작은 특화 모델",
    "orch.spec.caption": "설치 GPU 1장당 하루 가치 (노란 칸 = 지금 선택)",
    "orch.spec.gantt": "GPU별 하루 일정 — 특화와 재할당",
    "orch.key.case": "사례 {case} · {policy}",
    "orch.key.col_case": "사례",
    "orch.key.col_alloc": "할당률(allocation)",
    "orch.key.col_starts": "시작 시각 (작업:h)",
    "orch.ex1.q": "A100 1장에 학생 7명이 1시간짜리 실습을 동시에 냈습니다. GPU를 통째로 한 명씩 선착순(FIFO)으로 쓰면 평균 작업 완료 시간(JCT)은 몇 시간입니까?",
    "orch.ex1.hint": "끝나는 시각은 1, 2, …, 7시간입니다. JCT = 완료 시각 − 제출 시각.",
    "orch.ex1.explain": "(1 + 2 + … + 7) ÷ 7 = 4 h. MIG 1g.10gb 조각 7개로 나누면 모두 1 h에 끝납니다.",
    "orch.ex2.q": "8-GPU 노드 하나에 J1(6 GPU, 4 h), J2(8 GPU, 2 h), J3(2 GPU, 4 h), J4(2 GPU, 2 h)가 0시에 이 순서로 들어왔습니다. EASY 백필일 때 할당률(allocation)은 몇 %입니까?",
    "orch.ex2.hint": "J3은 J2의 예약 시각(4 h)까지 끝나므로 먼저 들어갈 수 있습니다. 할당률 = Σ(GPU × 시간) ÷ (8 × makespan).",
    "orch.ex2.explain": "makespan 8 h, 52 GPU-시간 ÷ 64 = 81.25 %. FIFO라면 10 h, 65 %입니다.",
    "orch.ex3.q": "같은 작업에서 J3만 5시간이라면, 예약 없이 들어갈 수 있는 작업부터 넣는 탐욕적 건너뛰기(greedy)에서 J2는 몇 시간 기다립니까?",
    "orch.ex3.hint": "작은 작업이 먼저 계속 들어가면 8 GPU가 한꺼번에 비는 순간이 늦어집니다.",
    "orch.ex3.explain": "J2는 6 h에 시작합니다. EASY(4 h)보다 2 h 늦습니다. 작은 작업이 끝없이 오면 영영 못 들어갈 수도 있어 예약이 필요합니다.",
    "orch.ex4.q": "Slurm 공정 분배 인자는 F = 2^(−U/S)입니다. 몫 S = 0.5인 수업이 전체 사용량의 25 %(U = 0.25)를 썼다면 F는 얼마입니까? (소수 셋째 자리까지)",
    "orch.ex4.hint": "U/S = 0.25 ÷ 0.5 = 0.5 입니다.",
    "orch.ex4.explain": "2^(−0.5) ≈ 0.707. 0.5보다 크므로 몫보다 덜 쓴 편이라 대기열 앞쪽에 섭니다.",
    "orch.ex5.q": "1시간마다 체크포인트를 쓰는 학습이 2.5시간 돌다가 더 급한 수업 작업에 선점(preemption)되었습니다. 잃은 작업은 몇 시간입니까?",
    "orch.ex5.hint": "다시 시작할 때는 마지막 체크포인트(2시간 지점)부터 이어 갑니다.",
    "orch.ex5.explain": "2.5 − 2 = 0.5 h를 다시 계산해야 합니다. 체크포인트가 없었다면 2.5 h 전부를 잃습니다.",
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
