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
    # --- lesson 01: observe --------------------------------------------------------------------
    "observe.start": "▶ 측정 시작",
    "observe.stop": "■ 측정 멈춤",
    "observe.rate_label": "측정 간격",
    "observe.gpu_label": "GPU",
    "observe.gpu_option": "GPU {index}: {name}",
    "observe.scenario_label": "시뮬레이션 GPU에서 돌릴 작업",
    "observe.no_gpu": "이 페이지에서는 GPU를 읽을 수 없습니다 ({reason}). 아래의 로그 재생(replay)으로 같은 패널을 볼 수 있습니다.",
    "observe.real_gpu_note": "실제 GPU입니다: labkit은 실제 GPU에 작업을 띄우지 않습니다. 시나리오를 보려면 GPU에서 직접 작업을 실행하세요.",
    "observe.status_running": "측정 중 ({rate} Hz)",
    "observe.status_stopped": "멈춤 — ▶ 측정 시작을 누르면 갱신됩니다",
    "observe.status_auto_stopped": "오래 켜 두어 자동으로 멈췄습니다 — 다시 시작할 수 있습니다",
    "observe.status_error": "화면 갱신 중 오류로 멈췄습니다: {error}",
    "observe.fleet": "건강한 GPU {healthy}/{total}",
    "observe.status_detail": "실제 측정 간격 {interval} · 한 번 읽는 데 {duration} · {ticks}회 측정",
    "observe.status.ok": "정상",
    "observe.status.not_supported": "이 GPU에서 지원하지 않음",
    "observe.status.no_permission": "읽을 권한이 없음",
    "observe.status.gpu_lost": "GPU가 버스에서 떨어짐 — 리셋이나 재부팅이 필요",
    "observe.status.function_not_found": "드라이버가 이 호출보다 오래됨",
    "observe.status.not_available": "값이 없음",
    "observe.status.pending": "측정 중: 두 번째 샘플(100 ms 이상 뒤)이 필요",
    "observe.status.error": "NVML 오류, 다음 측정에서 다시 시도",
    "observe.status.not_read": "아직 읽지 않음",
    "observe.status.not_in_log": "이 로그에 없음",
    "observe.panel.gpu_util": "GPU 사용률 util.gpu",
    "observe.panel.sm_active": "SM 활동(SM activity)",
    "observe.panel.tensor_active": "텐서 코어 활동",
    "observe.panel.dram_active": "메모리 대역폭 활동(DRAM)",
    "observe.panel.memory": "GPU 메모리",
    "observe.panel.power": "전력 / 한도",
    "observe.panel.temperature": "온도",
    "observe.panel.clocks": "클럭과 스로틀 이유",
    "observe.panel.pcie": "PCIe 전송량",
    "observe.panel.errors": "오류(Xid, ECC, 행 재배치)",
    "observe.metric.gpu_util_frac": "GPU 사용률 (util.gpu)",
    "observe.metric.mem_copy_util_frac": "메모리 사용률 (util.memory)",
    "observe.metric.gr_engine_active_frac": "그래픽 엔진 활동 (GR engine active)",
    "observe.metric.sm_active_frac": "SM 활동 (SM active)",
    "observe.metric.sm_occupancy_frac": "SM 점유율 (occupancy)",
    "observe.metric.tensor_active_frac": "텐서 파이프 활동",
    "observe.metric.dram_active_frac": "DRAM 활동",
    "observe.metric.fb_used_mib": "사용 중인 메모리",
    "observe.metric.fb_total_mib": "전체 메모리",
    "observe.metric.power_usage_w": "전력",
    "observe.metric.power_limit_w": "전력 한도 (enforced)",
    "observe.metric.energy_j": "누적 에너지",
    "observe.metric.gpu_temp_c": "GPU 온도",
    "observe.metric.memory_temp_c": "메모리(HBM) 온도",
    "observe.metric.fan_speed_frac": "팬 속도",
    "observe.metric.sm_clock_mhz": "SM 클럭",
    "observe.metric.max_sm_clock_mhz": "최대 SM 클럭",
    "observe.metric.clocks_event_reasons": "클럭 이벤트(스로틀) 이유",
    "observe.metric.pcie_tx_kb_per_s": "PCIe 송신",
    "observe.metric.pcie_rx_kb_per_s": "PCIe 수신",
    "observe.metric.pcie_replay_count": "PCIe 재전송",
    "observe.metric.xid": "마지막 Xid 오류",
    "observe.metric.ecc_dbe_volatile_count": "정정 불가 ECC 오류",
    "observe.metric.remapped_rows_uncorrectable": "재배치된 메모리 행",
    "observe.metric.remapped_rows_pending": "행 재배치 대기",
    "observe.metric.row_remap_failure": "행 재배치 실패",
    "observe.detail.gpu_util": "커널이 하나라도 돈 시간의 비율",
    "observe.detail.occupancy": "점유율(occupancy) {occ}",
    "observe.detail.tensor": "행렬 곱(텐서 코어)이 돈 사이클 비율",
    "observe.detail.mem_copy": "util.memory {util}",
    "observe.detail.of_total": "전체 {total} 중 {pct}",
    "observe.detail.power_of_limit": "한도 {limit}의 {pct}",
    "observe.detail.limit_na": "한도: {reason}",
    "observe.detail.energy": "누적 에너지 {energy}",
    "observe.detail.fan": "팬",
    "observe.detail.clock_of_max": "최대 클럭의 {pct}",
    "observe.detail.reasons": "이유: {reasons}",
    "observe.detail.no_reason": "없음 (최대 클럭으로 동작)",
    "observe.detail.no_errors": "이상 없음",
    "observe.detail.errors_checked": "Xid · ECC · 행 재배치 · PCIe 재전송",
    "observe.detail.n_alerts": "경보 {n}건",
    "observe.reason.GpuIdle": "할 일이 없어 쉼",
    "observe.reason.ApplicationsClocksSetting": "관리자가 정한 클럭",
    "observe.reason.SwPowerCap": "전력 한도에 걸림",
    "observe.reason.HwSlowdown": "하드웨어 감속",
    "observe.reason.SyncBoost": "다른 GPU와 클럭 맞춤",
    "observe.reason.SwThermalSlowdown": "온도 때문에 소프트웨어 감속",
    "observe.reason.HwThermalSlowdown": "온도 때문에 하드웨어 감속",
    "observe.reason.HwPowerBrakeSlowdown": "외부 전력 브레이크",
    "observe.reason.DisplayClockSetting": "디스플레이 클럭 설정",
    "observe.alert.gpu_lost": "GPU 응답 없음 (LOST) — 리셋/재부팅 필요",
    "observe.alert.xid": "Xid {value} 발생",
    "observe.alert.ecc_dbe": "정정 불가 ECC 오류 {value}건",
    "observe.alert.remap_pending": "메모리 행 재배치가 리셋을 기다림",
    "observe.alert.remap_failure": "메모리 행 재배치 실패 — 서비스에서 빼야 함",
    "observe.alert.pcie_replay": "PCIe 재전송 {value}회",
    "observe.signal.busy_on": "바쁘지만 일하지 않음: util.gpu는 높은데 {basis}이(가) {value}",
    "observe.signal.busy_off": "util.gpu와 실제 일의 양이 어긋나지 않음",
    "observe.signal.busy_unknown": "판단 불가: 필요한 값이 n/a",
    "observe.signal.busy_not_working_short": "바쁘지만 일하지 않음!",
    "observe.signal.basis.sm_active": "SM 활동",
    "observe.signal.basis.power": "전력/한도",
    "observe.signal.throttle_on": "클럭이 눌림: {reasons}",
    "observe.chart.activity": "util.gpu 대 실제 활동 (SM · 점유율 · 텐서 · DRAM)",
    "observe.chart.power": "전력과 한도(왼쪽), SM 클럭과 최대(오른쪽)",
    "observe.chart.time_axis": "시간 (s)",
    "observe.scenario.idle": "쉬는 중 (idle)",
    "observe.scenario.training": "건강한 학습: 텐서 코어를 많이 씀 (training)",
    "observe.scenario.tiny_kernel": "스레드 하나짜리 커널 반복: util.gpu ~100 % (tiny_kernel)",
    "observe.scenario.collective_stall": "NCCL 집합 통신에서 늦은 동료를 기다림 (collective_stall)",
    "observe.scenario.dataloader_starved": "데이터 로더를 기다리는 학습 (dataloader_starved)",
    "observe.scenario.memory_bound": "메모리만 퍼 나르는 커널 (memory_bound)",
    "observe.scenario.inference_small_batch": "작은 배치 추론 (inference_small_batch)",
    "observe.scenario.burn_in": "전력 한도에 걸린 번인 테스트 (burn_in)",
    "observe.scenario_short.idle": "쉬는 중",
    "observe.scenario_short.training": "건강한 학습",
    "observe.scenario_short.tiny_kernel": "스레드 하나짜리 커널",
    "observe.scenario_short.collective_stall": "집합 통신 대기",
    "observe.scenario_short.dataloader_starved": "데이터 로더 대기",
    "observe.scenario_short.memory_bound": "메모리만 퍼 나름",
    "observe.scenario_short.inference_small_batch": "작은 배치 추론",
    "observe.scenario_short.burn_in": "전력 한도 (번인)",
    "observe.reveal": "이 작업을 드러내는 패널: <b>{panels}</b> — {why}",
    "observe.reveal.idle": "util.gpu가 0 %이고 클럭도 쉬는 값(GpuIdle)입니다. 정말 쉬고 있습니다.",
    "observe.reveal.training": "util.gpu 100 %에 SM 활동 85 %, 텐서 60 %, 전력도 한도 가까이: 일을 하고 있습니다.",
    "observe.reveal.tiny_kernel": "util.gpu는 100 %인데 SM 활동은 1/132(0.8 %)뿐입니다. 커널이 '돌기만' 하면 util.gpu는 꽉 찹니다.",
    "observe.reveal.collective_stall": "util.gpu는 100 %인데 SM 활동은 1 %, 전력은 쉬는 수준(70 W)입니다. 동료 GPU를 기다리며 헛돌고 있습니다.",
    "observe.reveal.memory_bound": "SM은 바쁘지만 텐서는 0 %, DRAM 활동이 90 %: 계산이 아니라 메모리가 병목입니다.",
    "observe.reveal.inference_small_batch": "util.gpu 60 %에 SM 활동 30 %: 커널이 짧고 사이가 비어 GPU 대부분이 놉니다.",
    "observe.reveal.dataloader_starved": "util.gpu가 100 %와 0 % 사이를 오가고, 쉬는 동안 PCIe로 데이터가 들어옵니다. 평균만 보면 '40 %'로 보입니다.",
    "observe.reveal.burn_in": "전력이 한도(700 W)에 붙어 있고 클럭 이유에 SwPowerCap이 켜졌습니다. SM 클럭이 최대보다 낮습니다.",
    "observe.export.button": "CSV로 내보내기",
    "observe.export.empty": "아직 내보낼 측정값이 없습니다.",
    "observe.export.too_big": "내보낼 파일이 너무 큽니다 ({size} MB).",
    "observe.error.rate_hz.at_most": "측정 간격은 최대 {limit} Hz입니다 (입력: {value}).",
    "observe.error.rate_hz.positive": "측정 간격은 0보다 커야 합니다 (입력: {value}).",
    "observe.error.scenario.choice": "알 수 없는 작업입니다: {value}.",
    "observe.wall.ok": "좋은 선택입니다. {explanation}",
    "observe.wall.missing": "꼭 있어야 할 패널이 빠졌습니다: {panels}.",
    "observe.wall.misleading": "'{panel}'은(는) 여기서 오해를 부릅니다: {why}",
    "observe.wall.hint": "다시 골라 보세요. 벽에는 세 개까지만 걸 수 있습니다.",
    "observe.wall.panels.at_most": "벽에는 패널을 {limit}개까지만 걸 수 있습니다 (고른 수: {value}).",
    "observe.wall.panels.choice": "알 수 없는 패널입니다: {value}.",
    "observe.wall.night_oncall.title": "야간 당직",
    "observe.wall.night_oncall.q": "밤새 혼자 지키는 당직자의 벽입니다. 사람이 지금 당장 움직여야 하는 일만 보여야 합니다. 어떤 패널을 걸까요?",
    "observe.wall.night_oncall.explain": "밤에 사람을 깨워야 하는 것은 GPU가 떨어졌거나(Xid 79) 메모리가 망가지는(정정 불가 ECC, 행 재배치) 일입니다. 온도와 전력은 그다음이고, 사용률은 아침에 봐도 됩니다.",
    "observe.wall.night_oncall.why.gpu_util": "사용률이 높든 낮든 밤중에 사람이 할 일은 없습니다. 벽 한 칸을 차지할 값이 아닙니다.",
    "observe.wall.night_oncall.why.tensor_active": "작업이 얼마나 효율적인지는 낮에 따질 문제입니다. 당직자가 밤에 고칠 수 없습니다.",
    "observe.wall.slow_training.title": "느려진 학습",
    "observe.wall.slow_training.q": "어제보다 스텝이 20 % 느려졌다는 연락이 왔습니다. 원인을 찾는 벽에는 무엇을 걸까요?",
    "observe.wall.slow_training.explain": "SM 활동이 떨어졌다면 GPU가 데이터나 동료를 기다리는 것이고, SM 활동은 그대로인데 클럭이 눌렸다면(SwPowerCap, 온도) 전력이나 냉각 문제입니다. 텐서·PCIe·전력은 세 번째 칸 후보입니다.",
    "observe.wall.slow_training.why.gpu_util": "느려진 학습도 util.gpu는 100 %로 똑같이 보입니다. 커널이 돌기만 하면 차기 때문입니다.",
    "observe.wall.shared_class.title": "GPU 한 장을 30명이 나눠 쓰는 수업",
    "observe.wall.shared_class.q": "학생 30명이 GPU 한 장을 함께 씁니다. 수업 중 앞에 띄워 둘 벽에는 무엇을 걸까요?",
    "observe.wall.shared_class.explain": "여럿이 나눠 쓰면 메모리가 먼저 바닥납니다(한 명이 다 잡으면 나머지가 OOM). SM 활동은 실제로 계산하는 사람이 있는지 보여 줍니다. 오류 패널이 세 번째 칸으로 좋습니다.",
    "observe.wall.shared_class.why.gpu_util": "학생 한 명의 작은 반복문만 돌아도 util.gpu는 100 %가 됩니다. MIG로 나누면 아예 읽을 수도 없습니다.",
    "observe.upload.files.at_least": "파일을 하나 골라 주세요.",
    "observe.upload.files.at_most": "파일은 한 번에 하나만 올릴 수 있습니다 (고른 파일: {value}개).",
    "observe.upload.files.other": "올린 파일을 읽지 못했습니다 ({value}).",
    "observe.upload.size.at_most": "파일이 너무 큽니다: {value} (최대 {limit}).",
    "observe.upload.suffix.choice": "이 형식의 파일은 받을 수 없습니다: {value} (받는 형식: {limit}).",
    "observe.replay.trace_label": "재생할 로그 (data/traces)",
    "observe.replay.upload": "로그 올리기",
    "observe.replay.fields_label": "헤더 없는(noheader) nvidia-smi 로그의 필드 목록",
    "observe.replay.time_label": "시각",
    "observe.replay.at": "{t} s / {total} s",
    "observe.replay.info": "<b>{source}</b> · {format} · 데이터 {rows}줄 · GPU {gpus}개 · 시작 {start} · 길이 {duration} s",
    "observe.replay.meta_source": "출처: {source}",
    "observe.replay.no_sm_active": "이 로그에는 SM 활동이 없습니다: nvidia-smi는 util.gpu만 기록합니다. 바쁜지 일하는지는 전력과 클럭으로 짐작해야 합니다.",
    "observe.replay.unparsed": "읽지 못한 줄 {n}개 (버리지 않고 알려 드립니다): {rows}",
    "observe.replay.ignored": "숫자가 아니어서 건너뛴 필드: {fields}",
    "observe.replay.bad_file": "로그를 읽지 못했습니다: {message}",
    "observe.replay.unknown_trace": "없는 로그입니다: {name}",
    "observe.replay.format.nvidia-smi-csv": "nvidia-smi CSV",
    "observe.replay.format.dcgm-exporter": "dcgm-exporter (Prometheus)",
    "observe.replay.format.labkit-tidy": "labkit 정리 CSV",
    "observe.ref.metric": "지표",
    "observe.ref.dcgm": "DCGM 필드 (id)",
    "observe.ref.nvml": "NVML 호출",
    "observe.ref.smi": "nvidia-smi --query-gpu",
    "observe.ref.units": "단위 NVML / DCGM / nvidia-smi",
    "observe.ref.labkit": "labkit 단위",
    "observe.ref.frac": "비율 0–1",
    "observe.summary.segment": "구간 (시나리오)",
    "observe.summary.util": "util.gpu",
    "observe.summary.sm": "SM 활동",
    "observe.summary.tensor": "텐서",
    "observe.summary.dram": "DRAM",
    "observe.summary.power": "전력 (W)",
    "observe.summary.clock": "SM 클럭 (MHz)",
    "observe.summary.busy": "바쁘지만 일하지 않음?",
    "observe.summary.yes": "예",
    "observe.summary.no": "아니오",
    "observe.units.source": "어디서 읽었나",
    "observe.units.raw": "받은 값 (원래 단위)",
    "observe.units.value": "labkit이 보여 주는 값",
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
