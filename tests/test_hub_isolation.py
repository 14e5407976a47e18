"""The class hub's per-student isolation pieces, without a hub (issue 13).

``labkit.hub.isolation`` (a private mount namespace: /tmp tmpfs, /proc hidepid) and
``labkit.hub.disk`` (a loop-mounted home image) are tried for real as root, in a child process
that becomes ``nobody``; the live hub tests (tests/hub/test_hub_isolation.py) attack them from a
student's kernel. Ports: ``labkit.hub.config.free_loopback_ports``.
"""

from __future__ import annotations

import json
import os
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


def test_describe_says_what_applies_and_why_not() -> None:
    full = isolation.describe(isolation.Probe(isolation.NamespacePlan(64), ""))
    assert "64 MiB" in full["tmp"] and "hidepid=invisible" in full["proc"]
    none = isolation.describe(isolation.Probe(None, "unshare(CLONE_NEWNS): Operation not "
                                                    "permitted"))
    assert "shared /tmp" in none["tmp"] and "Operation not permitted" in none["proc"]
    assert "Operation not permitted" in none["tmp"]
    partial = isolation.describe(isolation.Probe(isolation.NamespacePlan(64, ""), "no proc"))
    assert "every user's processes" in partial["proc"] and "no proc" in partial["proc"]
    assert "homes on the shared disk" in disk.describe(disk.DiskProbe(False, "no loop"), 99)
    assert "99 MiB" in disk.describe(disk.DiskProbe(True, ""), 99)


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
    assert "homes on the shared disk" in lines["disk"] and "LABKIT_HUB_DISK" in lines["disk"]
    assert "shared /tmp" in lines["tmp"] and "every user's processes" in lines["proc"]


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
