"""Classroom serving (labkit.serve): gallery, error pages, kernel guards.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
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
    "hub.login.title": "수업 허브(class hub) 로그인",
    "hub.login.intro": "선생님께 받은 사용자 이름(username)을 입력하십시오.",
    "hub.login.first_use": "처음 로그인할 때는 비밀번호 칸에 선생님께 받은 쪽지의 첫 로그인 코드를 입력하십시오. 다음 화면에서 앞으로 쓸 비밀번호({n}자 이상)를 정합니다. 잊으면 선생님께 새 코드를 부탁하십시오.",
    "hub.login.username": "사용자 이름",
    "hub.login.password": "비밀번호",
    "hub.login.submit": "로그인",
    "hub.login.insecure": "주의: 암호화되지 않은 연결(HTTP)입니다. 학교 네트워크 밖에서는 쓰지 마십시오.",
    "hub.login.not_on_roster": "수업 명단(roster)에 없는 사용자 이름입니다. 선생님께 확인하십시오.",
    "hub.login.wrong": "사용자 이름이나 비밀번호가 맞지 않습니다.",
    "hub.error.title": "요청을 처리하지 못했습니다 (HTTP {status})",
    "hub.error.403": "이 페이지를 열 권한이 없습니다. 학생은 자기 서버만 열 수 있습니다.",
    "hub.error.404": "없는 페이지입니다. 주소를 확인하십시오.",
    "hub.error.429": "로그인 시도가 너무 많습니다. 1분 뒤 다시 시도하십시오.",
    "hub.error.other": "잠시 뒤 다시 시도하고, 계속되면 선생님께 알려 주십시오.",
}
