"""The class hub (labkit.hub): GPU share, MIG plan, k8s values, the class page.

Part of the Korean catalog (see :mod:`labkit.i18n.ko` for the register and key rules).
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # --- class hub: GPU share (labkit.hub.gpushare, the lesson banner) -------------------------
    "hub.share.kind.mig": "MIG 장치(MIG device)",
    "hub.share.kind.whole": "GPU 한 장 전체(whole GPU)",
    "hub.share.kind.shared": "함께 쓰는 GPU(time-slicing)",
    "hub.share.no_slice": "남은 GPU 몫이 없습니다: 이 서버의 {kind} {count}개를 명단(roster)에서 앞선 학생들이 모두 받았습니다(명단 {position}번째). 선생님께 알려 주세요. 선생님은 MIG 배치를 바꾸거나(python -m labkit.hub plan) GPU 정책을 'shared'로 바꿀 수 있습니다.",
    "hub.share.no_gpu": "이 서버에는 나눠 줄 {kind:이/가} 없습니다. 선생님께 알려 주세요(GPU 정책을 'auto'나 'shared'로 바꾸거나 운영자에게 MIG 설정을 요청하세요).",
    "hub.share.nvml": "실습 GPU를 읽을 수 없어 GPU 몫을 정하지 못했습니다: {reason}. 선생님께 알려 주세요.",
    "common.banner.share.mig": "내 GPU 몫: GPU {gpu}의 MIG 장치 {mig_index} ({profile}, {uuid}) — 나만 쓰는 조각입니다.",
    "common.banner.share.whole": "내 GPU 몫: GPU {gpu} 한 장 전체 ({uuid}).",
    "common.banner.share.shared": "내 GPU 몫: {unit}, 학생 {sharers}명이 번갈아 씁니다(시분할, time-slicing) — 메모리는 나눠지지 않습니다.",
    "common.banner.share.unit_gpu": "GPU {gpu}",
    "common.banner.share.unit_mig": "GPU {gpu}의 MIG 장치 {mig_index} ({profile})",
    # --- class hub: the class's MIG plan (python -m labkit.hub plan) ---------------------------
    "hub.plan.title": "수업 MIG 배치(class MIG layout): 학생 {students}명, {model}",
    "hub.plan.layout": "  GPU {gpus}장 × {profile} {per_gpu}개 = MIG 장치(MIG device) {devices}개 (학생 1명당 1개, 남는 장치 {spare}개)",
    "hub.plan.per_student": "  학생 1명의 몫: GPU 메모리 {memory} GiB, 연산 슬라이스(compute slice) {compute}/{slices}, SM {sms}개",
    "hub.plan.label": "  mig-parted 설정 이름(config label): {label}",
    "hub.plan.never": "  허브(hub)는 MIG를 바꾸지 않습니다: 운영자(operator)가 GPU 프로세스가 없을 때 적용합니다.",
    "hub.plan.wrote": "작성함(wrote): {path}",
    "hub.plan.apply": "적용(apply): sudo nvidia-mig-parted apply -f {path} -c {label}",
    "hub.plan.error": "계획을 세울 수 없습니다(cannot plan): {message}",
    "hub.plan.check.mig_off": "GPU {gpu}: MIG가 꺼져 있습니다(MIG mode disabled).",
    "hub.plan.check.devices": "GPU {gpu}: {profile} MIG 장치 {found}개, 다른 프로필 {other}개 (계획: {profile} {planned}개).",
    "hub.plan.check.gpus": "GPU가 {found}장뿐입니다 (계획: {planned}장).",
    "hub.plan.check.ok": "실습 GPU({name})의 MIG 장치가 계획과 같습니다.",
    "hub.plan.check.differs": "실습 GPU가 계획과 {count}곳 다릅니다: 운영자가 mig-parted 설정을 적용해야 합니다.",
    # --- class hub: Kubernetes values (python -m labkit.hub k8s) --------------------------------
    "hub.k8s.profile": "labkit 실습 서버 (GPU 몫: {share})",
    "hub.k8s.profile.mig": "학생마다 MIG 장치(MIG device) 하나: 메모리와 연산이 다른 학생과 분리됩니다.",
    "hub.k8s.profile.whole": "학생마다 GPU 한 장 전체(whole GPU).",
    "hub.k8s.profile.shared": "여러 학생이 GPU를 번갈아 씁니다(시분할, time-slicing): 메모리는 나눠지지 않습니다.",
    "hub.k8s.error": "values.yaml을 만들 수 없습니다(cannot render): {message}",
    # --- class hub: the teacher's class page (labkit.hub.classpage) -----------------------------
    "hub.class.title": "우리 반 실습 현황",
    "hub.class.summary": "접속 중 {online}명 / 전체 {total}명 (30초마다 새로 고칩니다)",
    "hub.class.col.student": "학생",
    "hub.class.col.state": "상태",
    "hub.class.col.share": "GPU 몫",
    "hub.class.col.memory": "메모리(memory) 사용",
    "hub.class.col.activity": "마지막 활동",
    "hub.class.col.results": "문제 결과",
    "hub.class.col.server": "서버",
    "hub.class.state.online": "접속 중",
    "hub.class.state.starting": "서버 시작 중",
    "hub.class.state.stopping": "서버 중지 중",
    "hub.class.state.offline": "서버 꺼짐",
    "hub.class.state.never": "아직 로그인 안 함",
    "hub.class.results": "{solved}/{tried} 정답",
    "hub.class.no_report": "— (학생 서버가 켜져 있을 때 읽습니다)",
    "hub.class.stop": "서버 중지",
    "hub.class.stopped": "{username} 학생의 서버를 중지했습니다. 학생이 다시 로그인하면 파일은 그대로 있습니다.",
    "hub.class.never_active": "기록 없음",
    "hub.class.ago_s": "{n}초 전",
    "hub.class.ago_min": "{n}분 전",
    "hub.class.ago_h": "{n}시간 전",
    "hub.class.ago_d": "{n}일 전",
    "hub.class.report_http": "학생 서버가 진도 요청에 HTTP {code}로 답했습니다",
    "hub.class.report_failed": "학생 서버에서 진도를 읽지 못했습니다 ({reason})",
    "hub.class.hub_unreachable": "허브(hub) API에서 학생 목록을 읽지 못했습니다: {reason}. 잠시 뒤 새로 고침하십시오.",
}
