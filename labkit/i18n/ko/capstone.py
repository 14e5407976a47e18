"""Lesson 09, the capstone (labkit.ui.capstone): buy / rent / API and a sharing policy.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    "capstone.option.buy": "서버 구입 (자체 운영)",
    "capstone.option.rent": "클라우드 GPU 임대",
    "capstone.option.api": "API 사용",
    "capstone.mode.fifo": "GPU 통째로 (선착순)",
    "capstone.mode.time_slicing": "시분할(time-slicing)",
    "capstone.mode.mps": "MPS (동시 실행)",
    "capstone.mode.mig": "MIG (조각 나누기)",
    "capstone.chart.title": "같은 일을 하는 데 드는 1년 비용",
    "capstone.chart.y": "만 원/년",
    "capstone.rec.title": "우리 반의 결정",
    "capstone.rec.cheapest": "가장 싼 방법은 {option}입니다: 1년 {cost}, 다음으로 싼 방법보다 {saving} 적습니다.",
    "capstone.rec.utilization": "서버 가동률은 {pct}입니다 (1년에 GPU {used}시간 사용).",
    "capstone.rec.share": "수업 시간에는 {mode} 방식으로 나눠 씁니다: 한 반 {students}명이 GPU {gpus}장을 쓰므로 GPU 1장에 {n}명입니다.",
    "capstone.rec.no_share": "학생 1명의 작업({gb} GB)이 GPU 1장에 들어가지 않습니다. 작업을 줄이거나 더 큰 GPU가 필요합니다.",
    "capstone.rec.why.buy": "서버를 많이 쓰므로 고정비를 나눠 낼 시간이 충분합니다. 운영 인력과 전기 요금 계약을 함께 준비해야 합니다.",
    "capstone.rec.why.rent": "서버를 쓰는 시간이 적어서, 쓸 때만 빌리는 편이 쌉니다. 수업 시간표에 맞춰 미리 예약해야 합니다.",
    "capstone.rec.why.api": "필요한 토큰만 사는 편이 쌉니다. 학생 데이터가 학교 밖으로 나가는지 확인해야 합니다.",
    "capstone.share.title": "한 수업 시간, GPU 1장에 학생 {n}명의 실습 작업",
    "capstone.share.mode": "나눠 쓰는 방식",
    "capstone.share.makespan": "모두 끝나는 시간",
    "capstone.share.wait": "평균 대기",
    "capstone.share.done": "끝난 작업",
    "capstone.share.state": "결과",
    "capstone.share.ok": "모두 끝남",
    "capstone.share.lost": "{n}개 실패 (메모리 부족 또는 자리 없음)",
    "capstone.report.title": "{name} AI 서버 결정 보고서",
    "capstone.report.for": "행정실과 담당 교사께 드리는 한 쪽 보고서입니다. 작성일: {date}",
    "capstone.report.case": "우리 학교",
    "capstone.report.costs": "1년 비용 비교",
    "capstone.report.option": "방법",
    "capstone.report.cost": "1년 비용",
    "capstone.report.same_work": "세 방법 모두 같은 일(같은 GPU 시간과 같은 출력 토큰)을 기준으로 계산했습니다.",
    "capstone.report.decision": "결정과 이유",
    "capstone.report.sharing": "수업 시간 나눠 쓰기",
    "capstone.report.sources": "출처",
    "capstone.report.tariff_source": "전기 요금: {source} (적용일 {date})",
    "capstone.report.model_source": "계산: labkit 수업 모형 (07 차시의 운영비 모형, 05 차시의 임대·API 모형, 02 차시의 GPU 나눠 쓰기 모형). 처리량은 MLPerf Inference v5.0 결과의 절반(작업 부하 보정)으로 잡았습니다.",
}
