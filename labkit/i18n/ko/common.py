"""Course-wide strings: buttons, exercise feedback, the lab-GPU banner.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- common -------------------------------------------------------------------------------
    "common.reset": "초기값으로",
    "common.check": "확인",
    "common.answer_placeholder": "답을 입력하세요",
    "common.correct": "정답입니다. {explanation}",
    "common.incorrect": "다시 생각해 보세요. {hint}",
    "common.kept_last": "마지막으로 올바른 결과를 그대로 보여 줍니다.",
    "common.exercise": "문제 {n}",
    "common.table.item": "항목",
    "common.slider_max": "최대 {max}",
    # --- plotly.js's mode bar and notices (labkit.ui.plotly_locale) ----------------------------
    "plot.download_png": "그림(PNG)으로 내려받기",
    "plot.download": "그림 내려받기",
    "plot.download_json": "데이터(JSON)로 내려받기",
    "plot.zoom": "확대할 영역 고르기",
    "plot.pan": "끌어서 옮기기",
    "plot.box_select": "사각형으로 고르기",
    "plot.lasso_select": "올가미로 고르기",
    "plot.zoom_in": "확대",
    "plot.zoom_out": "축소",
    "plot.autoscale": "전체 보기",
    "plot.reset_axes": "축을 처음대로",
    "plot.reset": "처음대로",
    "plot.reset_view": "보기를 처음대로",
    "plot.share": "차트 공유",
    "plot.spikelines": "기준선 켜기/끄기",
    "plot.hover_closest": "가장 가까운 값 보기",
    "plot.hover_compare": "같은 위치의 값 비교",
    "plot.hover_toggle": "가장 가까운 값 보기 켜기/끄기",
    "plot.double_click": "두 번 누르면 원래 크기로 돌아갑니다",
    "plot.snapshot_wait": "그림을 만드는 중입니다. 몇 초 걸릴 수 있습니다.",
    "plot.snapshot_done": "그림을 만들었습니다.",
    "plot.snapshot_failed": "그림을 내려받지 못했습니다.",
    "common.table.yes": "예",
    "common.table.no": "아니요",
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
    "common.banner.reason.SharedLabUnavailable": "함께 쓰는 시뮬레이션 실습실(shared lab) 폴더를 쓸 수 없어 이 커널만의 시뮬레이션 GPU를 씁니다 ({reason})",
    "common.banner.reason.other": "NVML 오류 ({reason})",
}
