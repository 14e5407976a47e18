"""A fills its disk and /tmp, A looks at /proc, a second hub starts beside the class (issue 13).

Against the real running class hub (tests/hub/conftest.py), from student A's own kernel: A may
run any code, and still must not stop B or the hub, nor see their processes. Needs root.
"""

from __future__ import annotations

import json
import os
import pwd
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from labkit.hub import disk, isolation
from labkit.hub.roster import system_username
from labkit.hub.state import HubState
from labkit.serve.processes import stop_process, wait_until_answers
from tests.hub import hubclient
from tests.hub.conftest import (
    DISK_MIB,
    PASSWORDS,
    ROOT_REASON,
    STUDENT_A,
    STUDENT_B,
    TEACHER,
    THROTLED,
    TMP_MIB,
    Hub,
    _free_port,
)
from tests.hub.hubclient import HubKernelClient, Student
from tests.hub.test_hub_security import servers  # noqa: F401  (the module-scoped fixture)

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]

FILL = r"""
import errno, json, os
def fill(path, cap_mib):
    n = 0
    try:
        with open(path, "wb") as out:
            while n < cap_mib:
                out.write(b"x" * 2**20)
                out.flush()
                os.fsync(out.fileno())
                n += 1
        return ["NO-LIMIT", n]
    except OSError as err:
        return [errno.errorcode.get(err.errno, str(err.errno)), n]
print("FILL" + json.dumps({key: fill(path, CAP) for key, path in PATHS.items()}))
"""

UNFILL = r"""
import os
for path in PATHS.values():
    try:
        os.remove(path)
    except OSError:
        pass
print("UNFILLED")
"""


def _run_in(client: HubKernelClient, code: str, marker: str, **names: Any) -> Any:
    prelude = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    out = hubclient.execute(client, prelude + code, timeout=300)
    line = next((x for x in out["stdout"].splitlines() if x.startswith(marker)), None)
    assert line is not None, out
    return json.loads(line[len(marker):]) if line[len(marker):] else None


@pytest.fixture
def kernel_a(servers: dict[str, Any]) -> Iterator[HubKernelClient]:  # noqa: F811
    """A fresh JupyterLab kernel on A's server."""
    client = HubKernelClient(servers["a"], hubclient.start_kernel(servers["a"]), timeout=300)
    yield client
    client.close()


def test_a_full_disk_and_tmp_stop_only_a(hub: Hub, servers: dict[str, Any],  # noqa: F811
                                         kernel_a: HubKernelClient) -> None:
    """A writes until ENOSPC in its home, /tmp, /var/tmp and /dev/shm; B still saves a notebook,
    the hub still answers and logs the teacher in (a database write)."""
    if not disk.probe().works:
        pytest.skip(f"no per-student disk on this machine: {disk.probe().reason}")
    if isolation.probe(TMP_MIB).plan is None:
        pytest.skip(f"no private /tmp on this machine: {isolation.probe(TMP_MIB).reason}")
    b: Student = servers["b"]
    tag = uuid.uuid4().hex[:8]
    home_a = pwd.getpwnam(system_username(STUDENT_A)).pw_dir
    paths = {"home": f"{home_a}/fill-{tag}.bin", "tmp": f"/tmp/lkfill-{tag}",
             "var_tmp": f"/var/tmp/lkfill-{tag}", "dev_shm": f"/dev/shm/lkfill-{tag}"}
    state_free = os.statvfs(hub.state_dir)
    try:
        filled = _run_in(kernel_a, FILL, "FILL", PATHS=paths, CAP=4 * DISK_MIB)
        # every one stopped with ENOSPC within its bound, never at the safety cap
        bounds = {"home": DISK_MIB, "tmp": TMP_MIB, "var_tmp": TMP_MIB,
                  "dev_shm": max(1, TMP_MIB // 4)}
        for key, (error, mib) in filled.items():
            assert error == "ENOSPC", (key, filled)
            assert bounds[key] // 2 <= mib <= bounds[key], (key, filled)
        for key in ("tmp", "var_tmp", "dev_shm"):  # A's private tmpfs, not the machine's
            assert not Path(paths[key]).exists(), (key, "A's file is in the machine's", key)
        # while A's disk and /tmp are full: B saves a notebook in its own server
        notebook: dict[str, Any] = {"cells": [], "metadata": {}, "nbformat": 4,
                                    "nbformat_minor": 5}
        saved = b.session.put(f"{b.server_url}api/contents/saved-{tag}.ipynb",
                              headers=hubclient.auth_headers(b), timeout=60,
                              json={"type": "notebook", "format": "json", "content": notebook})
        assert saved.status_code in (200, 201), saved.text[-500:]
        home_b = pwd.getpwnam(system_username(STUDENT_B)).pw_dir
        assert Path(home_b, "labkit", f"saved-{tag}.ipynb").stat().st_size > 0
        # the Hub answers its API and writes its database (a login updates the user's row)
        assert b.api("GET", f"users/{b.name}").status_code == 200
        _, reply = hubclient.login(hub.base, TEACHER, PASSWORDS[TEACHER])
        assert hubclient.logged_in(reply), reply.status_code
        # and the hub's own disk did not take A's bytes (slack: other writers on the machine)
        after = os.statvfs(hub.state_dir)
        lost_mib = (state_free.f_bavail - after.f_bavail) * after.f_frsize / 2**20
        assert lost_mib < (DISK_MIB + 2 * TMP_MIB), lost_mib
    finally:
        _run_in(kernel_a, UNFILL, "UNFILLED", PATHS=paths)


PROC_PROBE = r"""
import errno, json, os
listed = [int(p) for p in os.listdir("/proc") if p.isdigit()]
owners = set()
for pid in listed:
    try:
        owners.add(os.stat(f"/proc/{pid}").st_uid)
    except OSError:
        pass
reads = {}
for name, pid in TARGETS.items():
    for part in ("cmdline", "environ", "status"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as f:
                f.read()
            reads[f"{name}/{part}"] = "READ"
        except OSError as err:
            reads[f"{name}/{part}"] = errno.errorcode.get(err.errno, str(err.errno))
mounts = open("/proc/self/mountinfo").read()
print("PROC" + json.dumps({"listed": listed, "owners": sorted(owners), "reads": reads,
                            "hidepid": "hidepid=" in mounts}))
"""


def _pids_of(uid: int, needle: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["uids", "cmdline"])
            if p.info["uids"] and p.info["uids"].real == uid
            and needle in " ".join(p.info["cmdline"] or [])]


def test_a_cannot_see_other_users_processes(hub: Hub, servers: dict[str, Any],  # noqa: F811
                                            kernel_a: HubKernelClient) -> None:
    """From A's kernel, B's server and kernels, the Hub and the proxy are not listed in /proc
    and their cmdline/environ cannot be read."""
    found = isolation.probe(TMP_MIB)
    if found.plan is None or not found.plan.hidepid:
        pytest.skip(f"no hidepid /proc on this machine: {found.reason}")
    uid_a = pwd.getpwnam(system_username(STUDENT_A)).pw_uid
    uid_b = pwd.getpwnam(system_username(STUDENT_B)).pw_uid
    kernel_b = HubKernelClient(servers["b"], hubclient.start_kernel(servers["b"]))
    try:
        hubclient.execute(kernel_b, "1")
        b_server = _pids_of(uid_b, "jupyterhub-singleuser")
        b_kernels = _pids_of(uid_b, "labkit.hub.kernel")  # the students' kernelspec
        proxy = _pids_of(0, "configurable-http-proxy")
        assert b_server and b_kernels and proxy
        targets = {"hub": hub.proc.pid, "b_server": b_server[0], "b_kernel": b_kernels[0],
                   "proxy": proxy[0]}
        seen = _run_in(kernel_a, PROC_PROBE, "PROC", TARGETS=targets)
    finally:
        kernel_b.close()
    assert seen["hidepid"], seen
    assert seen["owners"] == [uid_a], seen  # only A's own processes are listed
    assert not set(targets.values()) & set(seen["listed"]), seen
    assert set(seen["reads"].values()) == {"ENOENT"}, seen["reads"]


CGROUP_PROBE = r"""
import json, os
seen, groups = set(), []
for top, dirs, names in os.walk("/sys/fs/cgroup"):
    groups += [os.path.join(top, d) for d in dirs]
    for name in ("cgroup.procs", "tasks"):
        if name in names:
            try:
                with open(os.path.join(top, name)) as f:
                    seen.update(int(x) for x in f.read().split())
            except OSError:
                pass
print("CGROUP" + json.dumps({"seen": sorted(seen), "groups": groups, "me": os.getpid()}))
"""


def test_a_cannot_see_classmates_cgroups(hub: Hub, servers: dict[str, Any],  # noqa: F811
                                         kernel_a: HubKernelClient) -> None:
    """From A's kernel, /sys/fs/cgroup lists A's own cgroup only: not B's per-student cgroup,
    nor B's server and kernel pids (cgroup v1: ``cgroup.procs`` and ``tasks``)."""
    found = isolation.probe(TMP_MIB)
    if found.plan is None or not found.plan.hide_cgroups:
        pytest.skip(f"cgroups cannot be hidden on this machine: {found.reason}")
    uid_b = pwd.getpwnam(system_username(STUDENT_B)).pw_uid
    kernel_b = HubKernelClient(servers["b"], hubclient.start_kernel(servers["b"]))
    try:
        hubclient.execute(kernel_b, "1")
        b_pids = set(_pids_of(uid_b, "jupyterhub-singleuser")
                     + _pids_of(uid_b, "labkit.hub.kernel"))
        assert b_pids
        seen = _run_in(kernel_a, CGROUP_PROBE, "CGROUP")
    finally:
        kernel_b.close()
    assert not b_pids & set(seen["seen"]), seen
    assert hub.proc.pid not in seen["seen"], seen
    assert not [g for g in seen["groups"] if system_username(STUDENT_B) in g], seen["groups"]


def _hold(port: int) -> socket.socket | None:
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen()
    except OSError:
        sock.close()
        return None
    return sock


def test_a_second_hub_starts_beside_the_class(hub: Hub, servers: dict[str, Any],  # noqa: F811
                                              tmp_path: Path) -> None:
    """A second hub (another state directory, another PORT) starts while the class runs, even
    with 8001 and 8081 taken, and both answer."""
    held = [s for s in (_hold(8001), _hold(8081)) if s is not None]
    roster = tmp_path / "second.csv"
    # another class: its own student (an account serves one hub; a start of a hub ends what its
    # accounts' processes left from an earlier run, labkit.hub.lifetime)
    roster.write_text(f"username,display_name\n{THROTLED},김민지\n", encoding="utf-8")
    state_dir = tmp_path / "state"
    port = _free_port()
    from labkit.hub.state import HubSettings

    HubState(state_dir).save_settings(HubSettings(teacher=TEACHER, port=port))
    HubState(state_dir).accounts.set_password(TEACHER, PASSWORDS[TEACHER])  # never first use
    with open(tmp_path / "hub2.log", "wb") as log:
        second = subprocess.Popen(
            [sys.executable, "-m", "labkit.hub", "--state-dir", str(state_dir), "serve",
             "--roster", str(roster), "--teacher", TEACHER], stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "LABKIT_GPU": "sim:H100-80GB"})
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/hub/health", second, timeout_s=180,
                           what="the second hub", log_path=tmp_path / "hub2.log",
                           ok_status=200, interval_s=0.5)
        first_ports, second_ports = HubState(hub.state_dir).ports(), HubState(state_dir).ports()
        assert second_ports["public"] == port
        ours = {second_ports[k] for k in ("hub", "proxy_api", "classpage")}
        theirs = {first_ports[k] for k in ("public", "hub", "proxy_api", "classpage")}
        assert not ours & theirs and len(ours) == 3, (first_ports, second_ports)
        if held:
            assert not ours & {8001, 8081}
        assert requests.get(hub.base + "hub/health", timeout=10).status_code == 200
        b: Student = servers["b"]
        assert b.api("GET", f"users/{b.name}").status_code == 200
        assert hub.proxy_routes()  # the class's proxy still routes
    finally:
        for sock in held:
            sock.close()
        stop_process(second, timeout_s=60)


def test_status_says_which_disk_tmp_and_proc_isolation_apply(hub: Hub) -> None:
    out = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir", str(hub.state_dir),
                          "status", "--json"], capture_output=True, text=True, check=True)
    facts = json.loads(out.stdout)["isolation"]
    assert set(facts) == {"disk", "namespace"}
    if disk.probe().works:
        assert facts["disk"]["image_per_student"] and facts["disk"]["size_mib"] == DISK_MIB
    else:
        assert facts["disk"]["reason"] == disk.probe().reason
    found = isolation.probe(TMP_MIB)
    ns = facts["namespace"]
    assert ns["private_namespace"] is (found.plan is not None), ns
    if found.plan is not None:
        assert ns["tmp_mib"] == TMP_MIB and ns["hidepid"] == found.plan.hidepid, ns
        assert ns["cgroups_hidden"] is found.plan.hide_cgroups, ns
    text = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                           str(hub.state_dir), "status"], capture_output=True, text=True,
                          check=True).stdout
    assert "학생 디스크(disk):" in text and "학생 임시 폴더(/tmp):" in text, text
    assert "컨트롤 그룹(cgroup" in text, text
    assert json.loads(out.stdout)["ports"]["proxy_api"] == int(hub.proxy_api.rsplit(":", 1)[1])


FLOOD = r"""
import json, os, sys, time
t0 = time.perf_counter()
# the kernel inherits the server's stdout (the pipe the hub relays into its log); ipykernel
# points fd 1 elsewhere and keeps the original here
fd = getattr(sys.stdout, "_original_stdstream_copy", None) or 1
for _ in range(MIB):
    os.write(fd, b"x" * 2**20)
print("FLOOD" + json.dumps(time.perf_counter() - t0))
"""


def test_a_flooding_its_server_output_cannot_fill_the_hubs_log(
        hub: Hub, servers: dict[str, Any], kernel_a: HubKernelClient) -> None:  # noqa: F811
    """A writes 64 MiB into its server's stdout; the hub's log grows by at most the relay's
    burst and rate, the write is drained (never blocks A), and the hub answers."""
    from labkit.hub.serverlog import BURST_BYTES, RATE_BPS

    before = hub.log_path.stat().st_size
    seconds = _run_in(kernel_a, FLOOD, "FLOOD", MIB=64)
    grown = hub.log_path.stat().st_size - before
    assert grown <= BURST_BYTES + (seconds + 5) * RATE_BPS + 2**20, (grown, seconds)
    b: Student = servers["b"]
    assert b.api("GET", f"users/{b.name}").status_code == 200
