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
    # --- lesson 02: mig ------------------------------------------------------------------------
    "mig.board.unit": "유닛 {n}",
    "mig.board.stranded": "못 씀",
    "mig.board.free": "빈 유닛",
    "mig.board.compute": "연산 슬라이스 {used}/{total}",
    "mig.board.model": "GPU 모델",
    "mig.board.profile": "프로필",
    "mig.board.presets": "프리셋(mig-parted 이름):",
    "mig.board.preset_apply": "프리셋 놓기",
    "mig.board.auto": "드라이버에 맡기기",
    "mig.board.auto_tip": "시작 위치를 정하지 않고 만듭니다 (nvidia-smi mig -cgi에 프로필만 주는 것과 같음)",
    "mig.board.clear": "모두 지우기",
    "mig.board.click": "시작 위치(메모리 유닛)를 누르세요:",
    "mig.board.remove": "지우기:",
    "mig.board.remove_one": "지우기",
    "mig.board.placed": "{profile}을(를) 유닛 {units}에 놓았습니다 (시작 {start}).",
    "mig.board.nothing_there": "유닛 {unit}에는 GPU 인스턴스가 없습니다.",
    "mig.board.removed": "{profile}@{start}을(를) 지웠습니다.",
    "mig.board.cleared": "모든 GPU 인스턴스를 지웠습니다.",
    "mig.board.no_preset": "이 GPU에는 '{key}' 프리셋이 없습니다.",
    "mig.board.preset_done": "프리셋 {key}: {layout}",
    "mig.board.loaded": "불러온 배치: {layout}",
    "mig.board.empty": "(비어 있음)",
    "mig.board.model_changed": "{model}(으)로 바꿨습니다. 판이 비었습니다.",
    "mig.cap.title": "프로필별 남은 자리 (nvidia-smi mig -lgip의 Free/Total)",
    "mig.cap.profile": "프로필",
    "mig.cap.id": "ID",
    "mig.cap.free_total": "Free/Total",
    "mig.cap.memory": "메모리",
    "mig.cap.compute": "연산 슬라이스",
    "mig.cap.placements": "시작 위치:크기 (-lgipp)",
    "mig.frag.full": "메모리 유닛을 모두 썼습니다.",
    "mig.frag.none": "빈 메모리 유닛 {free}개 — 모두 아직 쓸 수 있습니다 (단편화 없음).",
    "mig.frag.some": "단편화(fragmentation): 빈 유닛 {units}({n}개, 메모리의 {pct}, 약 {gib})은(는) 남은 어떤 프로필로도 쓸 수 없습니다.",
    "mig.target.title": "도전 목표:",
    "mig.target.check": "한 장으로 될까?",
    "mig.target.compute": "연산 슬라이스가 {need}개 필요한데 GPU 한 장에는 {have}개뿐입니다",
    "mig.target.memory": "메모리 유닛이 {need}개 필요한데 GPU 한 장에는 {have}개뿐입니다",
    "mig.target.rule": "배치 규칙({rule})에 걸립니다",
    "mig.target.impossible": "GPU 한 장으로는 안 됩니다: {reason}. 큰 것부터 채우면 GPU {n}장이 필요합니다 — {plan}",
    "mig.target.other_model": "이 도전은 H100-80GB의 프로필로 되어 있습니다. 보드의 GPU 모델({model})을 H100-80GB로 바꾸세요.",
    "mig.target.possible": "GPU 한 장에 모두 들어갑니다. 보드에서 배치를 찾아보세요!",
    "mig.export.smi": "nvidia-smi 명령",
    "mig.export.parted": "mig-parted 설정",
    "mig.export.download": "{file} 파일로 받기",
    "mig.import.title": "불러오기: mig-parted 설정이나 nvidia-smi mig -cgi 명령을 붙여 넣으세요.",
    "mig.import.placeholder": "version: v1\nmig-configs:\n  ...",
    "mig.import.load": "보드로 불러오기",
    "mig.import.done": "불러왔습니다: {layout}",
    "mig.import.does_not_fit": "GPU 한 장에 들어가지 않습니다: {message}",
    "mig.import.choice": "'{value}'은(는) 이 GPU의 프로필이나 설정 항목이 아닙니다 (쓸 수 있는 것: {limit}). 아무것도 바꾸지 않았습니다.",
    "mig.import.other": "설정을 읽을 수 없습니다: {message}. 아무것도 바꾸지 않았습니다.",
    "mig.import.integer": "개수는 0 이상의 정수여야 합니다 (입력: {value}).",
    "mig.live.refresh": "새로 고침",
    "mig.live.kind_sim": "시뮬레이션",
    "mig.live.kind_real": "실제 GPU",
    "mig.live.gpu": "실습 GPU {index}: {name} ({kind})",
    "mig.live.other_model": "— 보드는 {board}, 실습 GPU는 {model}입니다. 적용하려면 보드의 GPU 모델을 {model}(으)로 바꾸세요.",
    "mig.live.no_mig": "이 GPU는 MIG를 지원하지 않습니다.",
    "mig.live.on": "켜짐",
    "mig.live.off": "꺼짐",
    "mig.live.mode": "MIG 모드: {mode}",
    "mig.live.pending": "MIG 모드 변경이 대기(pending) 중입니다: GPU를 리셋해야 적용됩니다.",
    "mig.live.processes": "실행 중인 계산 프로세스: {pids}",
    "mig.live.none": "없음",
    "mig.live.no_ci": "CI 없음 (MIG 장치 아님)",
    "mig.live.gi": "GI ID",
    "mig.live.placement": "배치(시작:크기)",
    "mig.live.ci": "계산 인스턴스(CI)",
    "mig.live.uuid": "MIG 장치 UUID",
    "mig.live.no_gi": "GPU 인스턴스가 없습니다.",
    "mig.live.devices": "CUDA가 볼 수 있는 MIG 장치: {n}개",
    "mig.live.apply_title": "보드의 배치를 실습 GPU에 적용하기",
    "mig.live.dry_run": "미리 보기 (dry run)",
    "mig.live.apply": "적용",
    "mig.live.allowed": "LABKIT_ALLOW_MIG_APPLY=1이 설정되어 있습니다: '적용'은 실습 GPU의 MIG 구성을 실제로 바꿉니다 (계산 프로세스가 돌고 있으면 거부합니다).",
    "mig.live.why.disabled": "실제 적용은 꺼져 있습니다. 선생님이 LABKIT_ALLOW_MIG_APPLY=1을 설정하고 JupyterLab을 시작해야 켜집니다. 미리 보기는 GPU를 바꾸지 않습니다. 아래 명령을 root 권한으로 직접 실행해도 됩니다.",
    "mig.live.why.voila": "발표용 앱(voila)에서는 GPU 구성을 바꿀 수 없습니다. 아래 명령을 복사해 관리자(root) 터미널에서 실행하세요.",
    "mig.live.commands": "이 배치를 만드는 명령 (root 권한 필요):",
    "mig.live.done_dry": "미리 보기: GPU를 바꾸는 NVML 호출 {n}개를 실행하지 않고 보여 줍니다.",
    "mig.live.done": "적용했습니다: GPU를 바꾼 NVML 호출 {n}개.",
    "mig.live.nothing": "이미 이 배치입니다: 바꿀 것이 없습니다.",
    "mig.live.error.voila": "voila 앱에서는 적용할 수 없습니다.",
    "mig.live.error.disabled": "실제 적용이 꺼져 있습니다 (LABKIT_ALLOW_MIG_APPLY=1 필요).",
    "mig.live.error.not_supported": "이 GPU는 MIG를 지원하지 않습니다.",
    "mig.live.error.model_mismatch": "보드의 배치가 이 GPU와 맞지 않습니다: {message}",
    "mig.live.error.processes": "GPU에서 계산 프로세스가 돌고 있어 거부했습니다. 아무것도 바꾸지 않았습니다: {message}",
    "mig.live.error.pending": "MIG 모드 변경이 대기 상태라 멈췄습니다. GPU를 리셋해야 합니다: {message}",
    "mig.live.error.no_permission": "권한이 없습니다(root가 아님). 아무것도 바꾸지 않았습니다. 위의 명령을 root 권한(sudo)으로 실행하세요.",
    "mig.live.error.failed": "NVML 호출이 실패해 바꾼 것을 되돌렸습니다(rollback): {message}",
    "mig.log.call": "NVML 호출",
    "mig.log.args": "인자",
    "mig.log.outcome": "결과",
    "mig.log.reads": "읽기 호출 {n}개는 생략합니다.",
    "mig.mode.fifo": "GPU 통째로 한 명씩 (FIFO)",
    "mig.mode.time_slicing": "시분할(time-slicing)",
    "mig.mode.mps": "MPS",
    "mig.mode.mig": "MIG",
    "mig.modes.col": "항목",
    "mig.modes.partition": "나누는 방식",
    "mig.modes.partition.time_slicing": "나누지 않음: 번갈아 실행",
    "mig.modes.partition.mps": "논리적 (소프트웨어)",
    "mig.modes.partition.mig": "물리적 (하드웨어)",
    "mig.modes.max": "최대 나눔 수",
    "mig.modes.max.time_slicing": "제한 없음 (설정한 복제 수)",
    "mig.modes.max.mps": "클라이언트 48개",
    "mig.modes.max.mig": "GPU 인스턴스 7개",
    "mig.modes.compute": "연산(SM) 격리",
    "mig.modes.compute.time_slicing": "없음 (시간을 나눔)",
    "mig.modes.compute.mps": "비율로 제한 가능 (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)",
    "mig.modes.compute.mig": "있음 (전용 SM)",
    "mig.modes.memory": "메모리 한도",
    "mig.modes.memory.time_slicing": "없음",
    "mig.modes.memory.mps": "선택 (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT)",
    "mig.modes.memory.mig": "있음 (전용 메모리)",
    "mig.modes.bandwidth": "메모리 대역폭 QoS",
    "mig.modes.bandwidth.time_slicing": "없음",
    "mig.modes.bandwidth.mps": "없음",
    "mig.modes.bandwidth.mig": "있음 (전용 L2·메모리 컨트롤러)",
    "mig.modes.faults": "오류 격리",
    "mig.modes.faults.time_slicing": "없음",
    "mig.modes.faults.mps": "없음: 치명적 오류 하나가 MPS 서버와 모든 클라이언트를 멈출 수 있음",
    "mig.modes.faults.mig": "있음 (오류가 인스턴스 안에 머묾)",
    "mig.modes.reconfigure": "다시 나누기",
    "mig.modes.reconfigure.time_slicing": "언제나 (설정만 바꿈)",
    "mig.modes.reconfigure.mps": "프로세스를 시작할 때",
    "mig.modes.reconfigure.mig": "GPU가 비어 있을 때만",
    "mig.modes.fits": "어울리는 경우",
    "mig.modes.fits.time_slicing": "가끔 쓰는 대화형 작업, 격리가 필요 없을 때",
    "mig.modes.fits.mps": "서로 믿는 작은 프로세스 여럿 (한 팀의 추론 서버)",
    "mig.modes.fits.mig": "여러 사용자의 작은 잡을 안전하게 (수업, 공용 서버)",
    "mig.wl.n_students": "학생 수",
    "mig.wl.people": "명",
    "mig.wl.memory": "잡 하나의 메모리",
    "mig.wl.duration": "GPU 한 장을 혼자 쓸 때 실행 시간",
    "mig.wl.slices": "잡 하나가 쓸 수 있는 최대 연산 슬라이스",
    "mig.wl.slices_unit": "슬라이스",
    "mig.wl.mode": "방식",
    "mig.wl.makespan": "모두 끝나는 시간(makespan)",
    "mig.wl.jct": "평균 완료 시간(JCT)",
    "mig.wl.wait": "평균 대기",
    "mig.wl.allocation": "할당률(allocation)",
    "mig.wl.useful": "실제 일한 비율",
    "mig.wl.oom": "못 돈 잡(OOM)",
    "mig.wl.interfering": "서로 간섭한 잡",
    "mig.wl.layout": "MIG 배치 ({model}): {layout} — 위 보드를 바꾸면 따라 바뀝니다.",
    "mig.wl.note_oom": "{mode}: 잡 {n}개가 메모리가 모자라 돌지 못했습니다.",
    "mig.wl.note_no_slot": "{mode}: 잡 {n}개가 들어갈 만큼 큰 MIG 장치가 없습니다 (보드에 더 큰 GPU 인스턴스를 놓으세요).",
    "mig.wl.chart_title": "방식별 완료 시간",
    "mig.wl.hours": "시간 (h)",
    "mig.wl.max_slices.at_most": "연산 슬라이스는 이 GPU에 있는 {limit}개까지입니다 (입력: {value}).",
    "mig.wl.max_slices.integer": "1 이상의 정수여야 합니다 (입력: {value}).",
    "mig.wl.n_students.at_most": "한 번에 {limit}명까지 시뮬레이션합니다 (입력: {value}).",
    "mig.count.model": "GPU 모델",
    "mig.count.units": "메모리 유닛",
    "mig.count.slices": "연산 슬라이스",
    "mig.count.profiles": "프로필 수",
    "mig.count.valid": "가능한 배치 수",
    "mig.count.maximal": "더 넣을 수 없는 배치 수",
    "mig.ex1.q": "H100-80GB에 3g.40gb 하나를 드라이버에게 맡겨 만들었습니다. 1g.10gb는 최대 몇 개 더 만들 수 있습니까?",
    "mig.ex1.hint": "3g.40gb는 메모리 유닛 4개와 연산 슬라이스 3개를 씁니다. 남은 것을 세어 보세요.",
    "mig.ex1.explain": "3g.40gb가 유닛 4–7을 쓰므로 1g.10gb는 유닛 0–3에 4개. 연산 슬라이스도 7 − 3 = 4개가 남습니다.",
    "mig.ex2.q": "학생 일곱 명이 각각 1g.10gb를, 프로젝트 하나가 3g.40gb를 원합니다. H100-80GB가 최소 몇 장 필요합니까?",
    "mig.ex2.hint": "연산 슬라이스를 세어 보세요: 7 × 1 + 3.",
    "mig.ex2.explain": "연산 슬라이스가 10개 필요한데 한 장에는 7개뿐이므로 2장. 한 장에 3g.40gb + 1g.10gb 4개, 다른 한 장에 1g.10gb 3개.",
    "mig.ex3.q": "H100-80GB를 1g.10gb 일곱 개로 나누면 메모리 유닛 하나가 남습니다. 쓸 수 없게 된 메모리는 전체의 몇 %입니까?",
    "mig.ex3.hint": "메모리 유닛은 8개이고, 1g 프로필은 유닛 7에서 시작할 수 없습니다.",
    "mig.ex3.explain": "유닛 8개 중 1개 = 12.5 %. 이것이 단편화(fragmentation)입니다.",
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
