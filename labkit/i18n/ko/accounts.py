"""The class hub's accounts (labkit.hub.auth, passwords, slips, roster): first-login codes,
passwords set in the terminal, the slips, the roster's errors, ending a user's sessions.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- the first login (labkit/hub/templates/first_login.html) ------------------------------
    "hub.first_login.title": "처음 로그인: 비밀번호 정하기",
    "hub.first_login.intro": "{name} 학생, 첫 로그인 코드가 맞습니다. 앞으로 쓸 비밀번호(password)를 정하십시오 ({n}자 이상). 이 비밀번호는 선생님도 모릅니다. 잊으면 선생님께 새 첫 로그인 코드를 부탁하십시오.",
    "hub.first_login.new": "새 비밀번호",
    "hub.first_login.again": "새 비밀번호 한 번 더",
    "hub.first_login.submit": "비밀번호 정하고 들어가기",
    "hub.first_login.short": "비밀번호가 너무 짧습니다. {n}자 이상으로 정하십시오.",
    "hub.first_login.long": "비밀번호가 너무 깁니다. {max}바이트(한글은 약 24자) 이하로 정하십시오.",
    "hub.first_login.mismatch": "두 번 입력한 비밀번호가 다릅니다. 다시 입력하십시오.",
    # --- the teacher's commands: codes, slips, passwords -------------------------------------
    "hub.cli.help.csv": "`codes`: CSV로 출력합니다 (엑셀용)",
    "hub.cli.help.url": "`slips`: 쪽지에 적을 허브 주소 (예: http://10.0.0.5:8000/)",
    "hub.cli.codes.header": "이름\t아이디(username)\t첫 로그인 코드(first-login code)",
    "hub.cli.codes.none": "나눠 줄 첫 로그인 코드가 없습니다: 모든 학생이 비밀번호를 정했습니다. 비밀번호를 잊은 학생은 `roster reset 아이디`로 새 코드를 받습니다.",
    "hub.cli.codes.given": "학생 {n}명에게 첫 로그인 코드를 새로 만들었습니다. `python -m labkit.hub roster slips 쪽지.html`로 쪽지를 인쇄하거나 `roster codes`로 보십시오.",
    "hub.cli.slips.written": "{path}에 학생 {n}명의 로그인 쪽지를 썼습니다. 브라우저로 열어 A4로 인쇄하고, 잘라서 한 명에게 한 장씩 나눠 주십시오.",
    "hub.cli.password.prompt": "{name}의 새 비밀번호({n}자 이상): ",
    "hub.cli.password.again": "한 번 더: ",
    "hub.cli.password.done": "{name}: 비밀번호(password)를 정했습니다.",
    "hub.cli.password.rejected": "{name}: 비밀번호를 정하지 않았습니다: {reason}",
    "hub.cli.password.short": "{n}자 이상이어야 합니다",
    "hub.cli.password.long": "{max}바이트 이하여야 합니다",
    "hub.cli.password.mismatch": "두 번 입력한 비밀번호가 다릅니다",
    "hub.cli.password.empty": "표준 입력(standard input)에 비밀번호가 없습니다",
    "hub.cli.serve.teacher_password": "교사(teacher) {name}의 비밀번호가 아직 없습니다. 로그인을 받기 전에 여기서 정합니다 (허브는 처음 로그인하는 사람에게 비밀번호를 정하게 하지 않습니다).",
    "hub.cli.serve.no_teacher_password": "교사(teacher) {name}의 비밀번호가 없어 허브를 시작하지 않았습니다. 터미널에서 `make hub`를 다시 실행해 비밀번호를 입력하거나, `python -m labkit.hub roster set-password {name}`에 표준 입력(standard input)으로 주십시오.",
    "hub.cli.reset.new_code": "{name}: 비밀번호(password)를 지우고 새 첫 로그인 코드 {code:을/를} 만들었습니다. 이 학생의 로그인과 토큰(token)은 모두 끝났습니다. `roster slips`로 새 쪽지를 인쇄해 주십시오.",
    "hub.cli.reset.teacher": "{name:은/는} 교사(teacher) 계정이라 첫 로그인 코드를 만들지 않습니다. `python -m labkit.hub roster set-password {name}`로 비밀번호를 바꾸십시오.",
    "hub.cli.sessions.ended": "{name}: 로그인(session)과 토큰(token)을 모두 끝냈습니다.",
    "hub.cli.sessions.failed": "{name}: 실행 중인 허브(hub)에서 로그인을 끝내지 못했습니다 ({reason}). 허브를 다시 시작하면 끝납니다.",
    "hub.cli.roster.dropped": "새 명단에 없는 학생 {n}명({names})은 이제 로그인할 수 없고, 로그인과 토큰(token), 켜져 있던 서버도 끝났습니다(파일은 남습니다). 계정과 파일까지 지우려면 `python -m labkit.hub roster remove 아이디 --yes`를 실행하십시오.",
    # --- the spawner's roster check (labkit.hub.spawner.LabkitSpawner.check_on_roster) --------
    "hub.spawn.not_on_roster": "{name:은/는} 수업 명단(roster)에 없어 서버를 시작하지 않습니다. 선생님께 확인하십시오.",
    # --- the slips page (labkit.hub.slips) ---------------------------------------------------
    "hub.slips.title": "수업 허브 로그인 쪽지",
    "hub.slips.name": "이름",
    "hub.slips.username": "아이디",
    "hub.slips.code": "첫 로그인 코드",
    "hub.slips.where": "접속 주소",
    "hub.slips.how": "로그인 화면의 ‘사용자 이름’에 아이디를, ‘비밀번호’에 첫 로그인 코드를 입력하십시오. 다음 화면에서 자기 비밀번호를 정합니다. 코드는 한 번만 쓸 수 있으니 다른 사람에게 보여 주지 마십시오.",
    # --- the roster's errors (labkit.hub.roster.problem_text) --------------------------------
    "hub.roster.file.lines": "명단(roster) {path}에 잘못된 줄이 {n}개 있어 가져오지 않았습니다. 모두 고친 뒤 다시 가져오십시오:",
    "hub.roster.line": "{line}번째 줄:",
    "hub.roster.file.encoding": "명단(roster) {path:을/를} 읽지 못했습니다: UTF-8도 CP949도 아닌 파일입니다. 엑셀에서 'CSV UTF-8'로 다시 저장하십시오.",
    "hub.roster.file.unreadable": "명단(roster) {path:을/를} 열지 못했습니다. 파일 이름과 위치를 확인하십시오.",
    "hub.roster.file.too_big": "명단(roster) {path:이/가} 너무 큽니다 (1 MB 이하여야 합니다).",
    "hub.roster.file.no_header": "명단(roster) {path:이/가} 비어 있습니다. 첫 줄은 `username,display_name`이어야 합니다.",
    "hub.roster.file.no_one": "명단(roster) {path}에 학생이 한 명도 없습니다.",
    "hub.roster.error.header": "첫 줄(머리글)은 `username,display_name`이어야 합니다 (지금: {value}).",
    "hub.roster.error.fields": "칸이 2개(`username,display_name`)여야 하는데 {value}개입니다.",
    "hub.roster.error.empty": "아이디(username)가 비어 있습니다.",
    "hub.roster.error.pattern": "아이디 {name:은/는} 쓸 수 없습니다: 영어 소문자로 시작하고, 영어 소문자·숫자·_·-만, {max}자 이하로 쓰십시오.",
    "hub.roster.error.reserved": "아이디 {name:은/는} 시스템이 쓰는 이름이라 쓸 수 없습니다. 다른 아이디를 정하십시오.",
    "hub.roster.error.system": "아이디 {name:은/는} 이 서버에 이미 있는 시스템 계정(system account)의 이름이라 쓸 수 없습니다. 다른 아이디를 정하십시오.",
    "hub.roster.error.repeat": "아이디 {name:이/가} {first}번째 줄과 겹칩니다.",
    "hub.roster.error.display": "{name}의 표시 이름(display name)은 인쇄할 수 있는 글자 64자 이하여야 합니다.",
    "hub.roster.error.too_many": "명단에는 {value}명까지 넣을 수 있습니다.",
}
