"""The class hub's per-student isolation pieces, without a hub (issue 13).

``labkit.hub.isolation`` (a private mount namespace: /tmp tmpfs, /proc hidepid) and
``labkit.hub.disk`` (a loop-mounted home image) are tried for real as root, in a child process
that becomes ``nobody``; the live hub tests (tests/hub/test_hub_isolation.py) attack them from a
student's kernel. Ports: ``labkit.hub.config.free_loopback_ports``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path
from time import monotonic as time_monotonic
from typing import Any

import pytest

from labkit.hub import disk, isolation
from labkit.hub.config import free_loopback_ports
from labkit.hub.roster import Student
from labkit.hub.state import HubSettings, HubState
from labkit.hub.statuslines import isolation_facts, isolation_lines

ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="mount namespaces and loop mounts need root")
NOBODY = 65534
#: A Python every account may run (the venv's may sit under root's 0700 home).
SYSTEM_PYTHON = "/usr/bin/python3"

CHILD = r"""
import errno, json, os
result = {"uid": os.getuid()}
pids = [p for p in os.listdir("/proc") if p.isdigit()]
owners = set()
for pid in pids:
    try:
        owners.add(os.stat(f"/proc/{pid}").st_uid)
    except FileNotFoundError:
        pass
result["proc_owners"] = sorted(owners)
try:
    open(f"/proc/{PARENT}/cmdline", "rb").read()
    result["parent_cmdline"] = "READ"
except OSError as err:
    result["parent_cmdline"] = errno.errorcode[err.errno]
written = 0
try:
    with open("/tmp/fill", "wb") as out:
        while True:
            out.write(b"x" * 2**20)
            out.flush()
            written += 1
except OSError as err:
    result["tmp_error"] = errno.errorcode[err.errno]
result["tmp_written_mib"] = written
result["tmp_dev"] = os.stat("/tmp").st_dev
print(json.dumps(result))
"""


def _as_nobody(plan: isolation.NamespacePlan) -> dict[str, Any]:
    def preexec() -> None:
        isolation.enter(plan)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON} for an unprivileged child")
    code = CHILD.replace("PARENT", str(os.getpid()))
    done = subprocess.run([SYSTEM_PYTHON, "-c", code], preexec_fn=preexec, cwd="/",
                          capture_output=True, text=True, timeout=60, check=True)
    return dict(json.loads(done.stdout))


@ROOT
def test_private_namespace_hides_other_users_and_bounds_tmp() -> None:
    found = isolation.probe(4)
    if found.plan is None:
        pytest.skip(f"this machine refuses a private mount namespace: {found.reason}")
    result = _as_nobody(isolation.NamespacePlan(tmp_mib=4, hidepid=found.plan.hidepid))
    assert result["uid"] == NOBODY
    if found.plan.hidepid:
        assert result["proc_owners"] == [NOBODY], result  # root's processes not even listed
        assert result["parent_cmdline"] == "ENOENT", result
    assert result["tmp_error"] == "ENOSPC" and 3 <= int(result["tmp_written_mib"]) <= 4, result
    assert result["tmp_dev"] != os.stat("/tmp").st_dev  # not the machine's /tmp
    assert not Path("/tmp/fill").exists() or Path("/tmp/fill").stat().st_uid != NOBODY


CGROUP_CHILD = r"""
import errno, json, os
seen, files = set(), 0
for top, _dirs, names in os.walk("/sys/fs/cgroup"):
    for name in ("cgroup.procs", "tasks"):
        if name in names:
            files += 1
            try:
                with open(os.path.join(top, name)) as f:
                    seen.update(int(x) for x in f.read().split())
            except OSError:
                pass
result = {"pid": os.getpid(), "seen": sorted(seen), "files": files}
try:
    with open(OTHER) as f:
        f.read()
    result["other"] = "READ"
except OSError as err:
    result["other"] = errno.errorcode[err.errno]
result["classmates"] = sorted(os.listdir(OTHER_PARENT))
try:
    with open(OWN_MEMORY) as f:
        result["own_memory"] = int(f.read())
except OSError as err:
    result["own_memory"] = errno.errorcode[err.errno]
print(json.dumps(result))
"""


@ROOT
def test_a_student_sees_only_their_own_cgroup_not_a_classmates_pids() -> None:
    """Issue 13: from A's server, B's per-student cgroup (and so B's pids) is not listed or
    readable under /sys/fs/cgroup; A still reads its own memory use. Composed as the spawner
    composes it: join the cgroups, enter the namespace, become the student."""
    from labkit.hub.limits import GROUP, Limits, StudentCgroup, detect_mechanism, rlimit_preexec

    mechanism = detect_mechanism()
    if not mechanism.startswith("cgroup"):
        pytest.skip(f"no writable cgroups here ({mechanism})")
    found = isolation.probe(4)
    if found.plan is None or not found.plan.hide_cgroups:
        pytest.skip(f"this machine refuses hiding the cgroups: {found.reason}")
    tag = f"labkit-test-{os.getpid()}"
    a, b = (StudentCgroup(f"{tag}-{x}", Limits(512, 1.0, 64), mechanism) for x in "ab")
    for group in (a, b):
        group.create()
    classmate = subprocess.Popen(["sleep", "60"], preexec_fn=rlimit_preexec(
        b.limits, mechanism, b.procs_files()))
    try:
        assert str(classmate.pid) in Path(b.procs_files()[0]).read_text().split()  # listed
        plan = isolation.NamespacePlan(tmp_mib=4, hidepid=found.plan.hidepid)
        join = rlimit_preexec(a.limits, mechanism, a.procs_files())

        def preexec() -> None:
            join()
            isolation.enter(plan)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)

        usage = "memory.current" if mechanism == "cgroup-v2" else "memory.usage_in_bytes"
        code = (CGROUP_CHILD.replace("OTHER_PARENT", repr(str(b.dirs()[0].parent)))
                .replace("OTHER", repr(b.procs_files()[0]))
                .replace("OWN_MEMORY", repr(str(a.dirs()[0] / usage))))
        done = subprocess.run([SYSTEM_PYTHON, "-c", code], preexec_fn=preexec, cwd="/",
                              capture_output=True, text=True, timeout=60, check=True)
        seen = json.loads(done.stdout)
    finally:
        classmate.kill()
        classmate.wait()
        for group in (a, b):
            group.remove()
    assert classmate.pid not in seen["seen"], seen
    assert seen["pid"] in seen["seen"], seen  # its own cgroup is bound back: its pids listed
    assert set(seen["seen"]) == {seen["pid"]}, seen  # nobody else's, not the hub's either
    assert seen["other"] == "ENOENT", seen
    assert seen["classmates"] == [a.dirs()[0].name], seen  # labkit-hub/ lists A alone
    assert isinstance(seen["own_memory"], int) and seen["own_memory"] > 0, seen
    assert GROUP in str(a.dirs()[0])


V1_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 /docker/abc /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate
"""


@pytest.mark.parametrize(("proc_cgroup", "mountinfo", "expected"), [
    # cgroup v1 (this machine's kind): the student's own memory, cpu and pids cgroups; the
    # systemd hierarchy puts the student in the hub's service with classmates: left out
    ("5:pids:/docker/abc/labkit-hub/jupyter-a\n4:memory:/labkit-hub/jupyter-a\n"
     "2:cpu,cpuacct:/labkit-hub/jupyter-a\n1:name=systemd:/system.slice/labkit.service\n0::/\n",
     V1_MOUNTINFO,
     [("/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu,cpuacct/labkit-hub/jupyter-a"),
      ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/labkit-hub/jupyter-a"),
      ("/sys/fs/cgroup/pids", "/sys/fs/cgroup/pids/labkit-hub/jupyter-a")]),
    # not in a per-student cgroup (the hub itself, the probe): nothing to bind back
    ("4:memory:/process_api/cd18\n2:cpu,cpuacct:/\n0::/\n", V1_MOUNTINFO, []),
    # a pids path outside the mount's root (another container's view): left out
    ("5:pids:/other/labkit-hub/jupyter-a\n", V1_MOUNTINFO, []),
    # cgroup v2: the unified hierarchy only
    ("0::/labkit-hub/jupyter-a\n",
     "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
     [("/sys/fs/cgroup", "/sys/fs/cgroup/labkit-hub/jupyter-a")]),
])
def test_own_cgroups_finds_only_the_students_own_directories(
        proc_cgroup: str, mountinfo: str, expected: list[tuple[str, str]]) -> None:
    assert isolation.own_cgroups(proc_cgroup, mountinfo) == expected


def test_describe_gives_facts_and_status_renders_them_in_korean() -> None:
    """Facts for ``--json``; the teacher's lines Korean, the kernel's English only in brackets."""
    full = isolation.describe(isolation.Probe(isolation.NamespacePlan(64), ""))
    assert full == isolation.IsolationFacts(True, 64, 16, "hidepid=invisible", True, "", "")
    none = isolation.describe(isolation.Probe(None, "unshare(CLONE_NEWNS): Operation not "
                                                    "permitted", "refused"))
    assert (none.private_namespace, none.tmp_mib, none.why) == (False, 0, "refused")
    partial = isolation.describe(isolation.Probe(
        isolation.NamespacePlan(64, "", hide_cgroups=False), "no proc", "refused"))
    image = disk.describe(disk.DiskProbe(True, ""), 99)
    assert image == disk.DiskFacts(True, 99, disk.RESERVE_MIB, "", "")
    shared = disk.describe(disk.DiskProbe(False, "no /dev/loop-control", "no_loop"), 99)
    assert (shared.image_per_student, shared.size_mib, shared.why) == (False, 0, "no_loop")

    lines = isolation_lines(isolation_facts(image, full))
    assert lines == [
        "학생 디스크(disk): 학생마다 99 MiB짜리 ext4 이미지(image)를 홈(home)에 루프 마운트(loop "
        f"mount)합니다 (처음에 모두 할당하고, 허브(hub)용으로 {disk.RESERVE_MIB} MiB를 남겨 "
        "둡니다).",
        "학생 임시 폴더(/tmp): 학생 서버마다 자기만의 임시 파일 시스템(tmpfs)을 씁니다 (`/tmp`, "
        "`/var/tmp` 64 MiB, `/dev/shm`, `/run/lock` 16 MiB).",
        "다른 사용자의 프로세스(/proc): 학생 서버마다 `hidepid=invisible`로 마운트해 다른 사용자의 "
        "프로세스가 보이지 않습니다.",
        "다른 학생의 컨트롤 그룹(cgroup, `/sys/fs/cgroup`): 보이지 않습니다. 학생 서버에는 자기 "
        "컨트롤 그룹만 보입니다.",
    ]
    refused = isolation_lines(isolation_facts(shared, none))
    assert "루프 장치(loop device)가 없습니다(no /dev/loop-control)" in refused[0]
    assert all("커널(kernel)이 거부했습니다(unshare(CLONE_NEWNS): Operation not permitted)"
               in line for line in refused[1:]), refused
    assert "모든 학생이 같은 폴더" in refused[1] and "모두 보입니다" in refused[2]
    weak = isolation_lines(isolation_facts(image, partial))
    assert "모두 보입니다 — 커널(kernel)이 거부했습니다(no proc)." in weak[2]
    assert "보입니다(누가 어떤 프로세스를" in weak[3]
    for line in [*lines, *refused, *weak]:  # English only inside brackets or backticks
        bare = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)|`[^`]*`", "", line)
        assert not re.search(r"[A-Za-z]{3,}", bare.replace("MiB", "").replace("ext4", "")), line


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"tmp_mib": 0}, "tmp_mib must be >= 1"),
    ({"hidepid": "hidepid=1"}, "hidepid must be one of"),
])
def test_namespace_plan_rejects_bad_input(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        isolation.NamespacePlan(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"disk_limit_mib": 8}, "disk_limit_mib must be >= 16"),
    ({"tmp_limit_mib": 0}, "tmp_limit_mib must be > 0"),
])
def test_settings_reject_bad_disk_and_tmp(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        HubSettings(**kwargs).validate()  # type: ignore[arg-type]


def test_student_disk_rejects_a_tiny_image(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=">= 16 MiB"):
        disk.StudentDisk("jupyter-x", 4, tmp_path)


@ROOT
def test_home_image_is_bounded_owned_and_private(tmp_path: Path) -> None:
    if not disk.probe().works:
        pytest.skip(f"no loop mounts here: {disk.probe().reason}")
    from labkit.hub import accounts

    name = "lkunit-disk"
    accounts.remove_system_user(name)
    entry = accounts.ensure_system_user(name)
    (Path(entry.pw_dir) / "before.txt").write_text("kept")  # what the home held is copied in
    home_disk = disk.StudentDisk(entry.pw_name, 16, tmp_path / "homes")
    try:
        home = home_disk.ensure()
        assert home_disk.mounted() and home_disk.ensure() == home  # idempotent
        info = home.stat()
        assert (info.st_uid, oct(info.st_mode & 0o777)) == (entry.pw_uid, "0o700")
        assert (home / "before.txt").read_text() == "kept"
        assert not (home / "lost+found").exists()
        assert os.stat(home_disk.image).st_blocks * 512 >= 16 * 2**20  # allocated in full
        assert os.statvfs(home).f_blocks * os.statvfs(home).f_frsize <= 16 * 2**20
        code = ("import errno\nn = 0\ntry:\n    f = open('big', 'wb')\n    while True:\n"
                "        f.write(b'x' * 2**20); f.flush(); n += 1\n"
                "except OSError as e:\n    print(errno.errorcode[e.errno], n)\n")
        done = subprocess.run([SYSTEM_PYTHON, "-c", code], cwd=home, capture_output=True,
                              text=True, timeout=60, user=entry.pw_uid, group=entry.pw_gid,
                              extra_groups=[], check=True)
        error, mib = done.stdout.split()
        assert error == "ENOSPC" and 8 <= int(mib) <= 16, done.stdout
    finally:
        accounts.remove_system_user(name)
    assert not home_disk.mounted() and not os.path.ismount(home)


@ROOT
def test_a_new_image_keeps_the_hubs_reserve(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    free_mib = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize // 2**20
    monkeypatch.setattr(disk, "RESERVE_MIB", free_mib)  # any image would eat into the reserve
    from labkit.hub import accounts

    name = "lkunit-full"
    entry = accounts.ensure_system_user(name)
    try:
        with pytest.raises(disk.DiskFullError, match="must stay free for the hub") as err:
            disk.StudentDisk(entry.pw_name, 16, tmp_path / "homes").ensure()
        assert "홈(home) 공간 16 MiB를 만들 자리가 없습니다" in err.value.jupyterhub_message
        assert not list((tmp_path / "homes").glob("*.img"))
    finally:
        accounts.remove_system_user(name)


def test_free_loopback_ports_are_distinct_and_bindable() -> None:
    ports = free_loopback_ports(3) + free_loopback_ports(3)
    assert len(set(ports)) == 6
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
    with pytest.raises(ValueError, match="count must be >= 1"):
        free_loopback_ports(0)


def test_config_chooses_free_ports_and_records_them(tmp_path: Path) -> None:
    from traitlets.config import Config

    from labkit.hub.config import configure

    held = []
    for fixed in (8001, 8081):  # the old fixed ports: taken by another hub
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", fixed))
            s.listen()
            held.append(s)
        except OSError:
            s.close()
    try:
        state = HubState(tmp_path / "state")
        state.save_roster([Student("minji")])
        state.save_settings(HubSettings(teacher="kim", port=8000))
        c1, c2 = Config(), Config()
        configure(c1, state)
        first = state.ports()
        configure(c2, state)
        second = state.ports()
    finally:
        for s in held:
            s.close()
    assert c1.JupyterHub.hub_bind_url == f"http://127.0.0.1:{first['hub']}"
    assert c1.ConfigurableHTTPProxy.api_url == f"http://127.0.0.1:{first['proxy_api']}"
    assert first["public"] == second["public"] == 8000
    ports = {first["hub"], first["proxy_api"], first["classpage"], second["hub"],
             second["proxy_api"], second["classpage"]}
    assert len(ports) == 6 and not ports & {8000, 8001, 8081}
    assert c1.LabkitSpawner.images_dir == str(state.images_dir)
    assert c1.LabkitSpawner.tmp_limit_mib == 256


def test_shared_sim_lab_keeps_the_workloads_of_processes_hidepid_hides(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a hidepid /proc a classmate's process has no /proc entry but still exists: the
    shared simulated lab must not reap its workload (labkit.gpu.sim.shared)."""
    from labkit.gpu.sim import shared

    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(shared, "_proc_start", lambda pid: None)  # what hidepid shows
    assert shared._alive(os.getpid(), 12345) is True
    assert shared._alive(gone.pid, 12345) is False


def test_without_loop_devices_or_namespaces_the_hub_says_so(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """Where the machine refuses (here: switched off), the spawner gets no image and no
    namespace, and ``status`` says what did not apply and why."""
    from traitlets.config import Config

    from labkit.hub.__main__ import isolation_status
    from labkit.hub.config import configure

    monkeypatch.setenv("LABKIT_HUB_DISK", "off")
    monkeypatch.setenv("LABKIT_HUB_NAMESPACE", "off")
    disk.probe.cache_clear()
    isolation.probe.cache_clear()
    try:
        state = HubState(tmp_path / "state")
        state.save_roster([Student("minji")])
        state.save_settings(HubSettings(teacher="kim"))
        c = Config()
        configure(c, state)
        assert c.LabkitSpawner.disk_limit_mib == 0 and c.LabkitSpawner.private_namespace is False
        lines = isolation_status(state.settings())
    finally:
        disk.probe.cache_clear()
        isolation.probe.cache_clear()
    assert lines["disk"]["image_per_student"] is False and lines["disk"]["why"] == "off"
    assert "LABKIT_HUB_DISK" in lines["disk"]["reason"]
    assert lines["namespace"]["private_namespace"] is False
    assert lines["namespace"]["why"] == "off" and lines["namespace"]["cgroups_hidden"] is False
    text = isolation_lines(lines)
    assert text[0].endswith("꺼 두었습니다(switched off ($LABKIT_HUB_DISK=off)).")
    assert "모든 학생이 같은 폴더" in text[1] and "LABKIT_HUB_NAMESPACE" in text[1]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_output_relay_passes_a_burst_then_the_rate_and_counts_the_rest() -> None:
    import io

    from labkit.hub.serverlog import NOTE_EVERY_S, OutputRelay

    clock, sink = _Clock(), io.BytesIO()
    relay = OutputRelay("jupyter-a", -1, sink, rate_bps=1000, burst_bytes=4000, clock=clock)
    for _ in range(10):  # 10 x 1000 bytes at once: the burst (4) passes, 6 are dropped
        relay.feed(b"x" * 1000)
    assert relay.passed_total == 4000 and relay.dropped_total == 6000
    clock.now = 2.0  # 2 s refill 2000 bytes
    relay.feed(b"y" * 1500)
    assert relay.passed_total == 5500 and b"dropped" not in sink.getvalue()
    clock.now = NOTE_EVERY_S + 1
    relay.feed(b"z" * 10)
    assert b"[labkit hub] jupyter-a: 6000 bytes of server output dropped" in sink.getvalue()
    assert sink.getvalue().count(b"x") == 4000
    with pytest.raises(ValueError, match="must be > 0"):
        OutputRelay("a", -1, sink, rate_bps=0)


def test_output_relay_drains_a_flood_without_blocking_the_writer() -> None:
    import io
    import threading

    from labkit.hub.serverlog import OutputRelay

    read, write = os.pipe()
    sink = io.BytesIO()
    relay = OutputRelay("jupyter-a", read, sink, rate_bps=64 * 1024, burst_bytes=256 * 1024)
    thread = relay.start()
    flood = b"x" * 2**20

    def writer() -> None:
        with os.fdopen(write, "wb") as out:
            for _ in range(64):  # 64 MiB: far over the pipe's 64 KiB buffer
                out.write(flood)

    t0 = time_monotonic()
    w = threading.Thread(target=writer)
    w.start()
    w.join(timeout=60)
    assert not w.is_alive(), "the writer blocked: the relay stopped draining"
    thread.join(timeout=10)
    elapsed = time_monotonic() - t0
    assert relay.passed_total + relay.dropped_total == 64 * 2**20
    assert relay.passed_total <= 256 * 1024 + elapsed * 64 * 1024 + 64 * 1024
    assert b"bytes of server output dropped" in sink.getvalue()  # the final note
