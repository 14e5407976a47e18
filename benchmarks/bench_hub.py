"""A class logs in to the class hub at once: login -> lesson 03's first chart, per student.

Starts the real hub as ``make hub`` does (``python -m labkit.hub serve``; root: it creates
``jupyter-lkbench-NN`` accounts, removed at the end) with a roster of ``--students`` (default
30). Every scripted student, released together: submits the Korean login form (its password
set beforehand, as the teacher's ``roster set-password`` does), starts their server through
the Hub API and waits on its progress event stream
(as the spawn-pending page does in a browser), GETs lesson 03 as a voila app from their
own server, connects the kernel websocket and fetches every widget's state (what the page needs
before a browser draws the first chart; as ``bench_classroom.py`` measures voila). Meanwhile a
poller times the Hub API (``GET /hub/api/users/<teacher>``, the teacher's token) every 0.5 s.

Reported per class size (one fresh hub each, ``--students 30 40`` by default): p50/p95/max of
login -> lesson 03's first chart (server side), how many made it, memory per student (all
processes of the student's account, server + kernels, mean and max: RSS, which counts shared
library pages once per process, and PSS, which shares them out, so a class's PSS adds up to the
memory it takes; USS too), CPU seconds per student (the server as it first answers, server +
kernel at the first chart, and the hub's own processes during the storm divided by the class:
hub, proxy, services, the spawner's helpers), each spawn step's time from the hub's log
(``labkit: spawn phases``), the Hub API p50/p95 during the storm, and whether each goal of issue
13 was met: all within 90 s, p95 < 60 s, < 350 MB per student (checked on RSS, as the first
baselines were, and on PSS). Full-size runs need a quiet machine (2 cores / 24 GB is the
target). ``--save-as NAME`` writes ``benchmarks/results/NAME.json`` instead of ``bench_hub``.

``--attacks``: two students instead of a class. While student A runs each runaway attack of
the hub security tests (memory bomb, fork bomb, CPU spin, the 72-byte binary frame;
``tests/hub/attacks.py``), student B moves lesson 03's main control in its voila app (widget
``comm_msg`` -> the chart's update back, through the kernel websocket) and reads the Hub API:
medians idle and during each attack, and their ratio (issue 13: within 2x of idle). Saved as
``benchmarks/results/bench_hub_attacks.json``.

``--warm``: 수업 준비 (issue 24). Two fresh hubs of ``--students`` (default 30) each: the class
logs in cold (as above), then on the second hub the teacher first runs ``python -m labkit.hub
warm --lesson 03 --page app`` (:mod:`labkit.hub.warm`: every server started, paced, each with
lesson 03's app rendered for its student; ``--page lab``: a JupyterLab session of it instead) and
the class logs in after every server has prepared its page (the hub's log says so). Reported side
by side: login -> lesson 03's first chart p50/p95 warmed and unwarmed, the warm-up's own duration
(the command; and until the last page is ready), and the memory of each warmed idle server
(server + its one kernel; RSS and PSS) before anyone logs in; goals: warmed p95 < 15 s, < 350 MB
per warmed idle server. Saved as ``benchmarks/results/bench_hub_warm.json``.

Run: ``sudo .venv/bin/python benchmarks/bench_hub.py [--students 30 40] [--lesson NB]``
(``--lesson`` default ``03_goodput.ipynb``)
or ``sudo .venv/bin/python benchmarks/bench_hub.py --attacks``
or ``sudo .venv/bin/python benchmarks/bench_hub.py --warm [--students 30] [--page app|lab]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests

from benchmarks.harness import percentiles, save
from labkit.hub.accounts import remove_system_user
from labkit.hub.roster import system_username
from labkit.hub.spawner import kill_user_processes
from labkit.hub.state import HubSettings, HubState
from labkit.serve.processes import ServerDidNotStart, stop_process, wait_until_answers
from tests.browser.voila_client import request_states
from tests.hub import hubclient
from tests.hub.conftest import _free_port

TEACHER = "lkbench-t"
TIMEOUT_S = 600
#: An idle latency under this counts as this in the 2x goal (as tests/hub/test_hub_security.py).
FLOOR_S = 0.25


def start_like_a_browser(student: hubclient.Student, timeout: float = TIMEOUT_S) -> None:
    """Start the student's server and wait as JupyterHub's spawn page does in a browser.

    ``POST /hub/api/users/<name>/server`` (again while the Hub answers 429, its concurrent spawn
    limit), then one ``GET .../server/progress`` event stream until an event says ``ready``
    (the spawn-pending page's EventSource), instead of polling the user model.

    Raises
    ------
    TimeoutError
        If the server is not ready in ``timeout``.
    """
    deadline = time.perf_counter() + timeout
    if not student.token:
        reply = student.api("POST", f"users/{student.name}/tokens",
                            json={"note": "bench", "expires_in": 3600})
        reply.raise_for_status()
        student.token = reply.json()["token"]
    while True:
        reply = student.api("POST", f"users/{student.name}/server", timeout=timeout)
        if reply.status_code != 429 or time.perf_counter() > deadline:
            break
        time.sleep(2)
    if reply.status_code not in (201, 202, 400):  # 400: already running
        reply.raise_for_status()
    if reply.status_code == 201:  # started within the request: ready already
        return
    with student.api("GET", f"users/{student.name}/server/progress", stream=True,
                     timeout=timeout) as events:
        events.raise_for_status()
        for raw in events.iter_lines():
            line = raw.decode("utf-8", errors="replace")
            if line.startswith("data:") and json.loads(line[5:]).get("ready"):
                return
            if time.perf_counter() > deadline:
                break
    raise TimeoutError(f"{student.name}'s server not ready in {timeout} s")


def _student(base: str, name: str, lesson: str, go: threading.Event) -> dict[str, Any]:
    go.wait()
    t0 = time.perf_counter()
    try:
        student, reply = hubclient.login(base, name, f"{name}-pass", timeout=TIMEOUT_S)
        if not hubclient.logged_in(reply):
            raise RuntimeError(f"login refused ({reply.status_code})")
        login_s = time.perf_counter() - t0
        start_like_a_browser(student)
        ready_s = time.perf_counter() - t0
        server_cpu_s = account_usage(name)["cpu_s"]  # the server alone, as it first answers
        page = hubclient.fetch_voila(student, lesson, timeout=TIMEOUT_S)
        client = hubclient.HubKernelClient(student, page.kernel_id, timeout=TIMEOUT_S)
        states = request_states(client)
        first_chart_s = time.perf_counter() - t0
        cpu_s = account_usage(name)["cpu_s"]  # server + kernel, up to the first chart
        client.close()
        return {"login_s": login_s, "ready_s": ready_s, "first_chart_s": first_chart_s,
                "widgets": len(states), "cpu_s": cpu_s, "server_cpu_s": server_cpu_s}
    except Exception as err:  # a failed student is a result, not a crash of the benchmark
        return {"error": f"{type(err).__name__}: {err}"[:300]}


def _smaps_rollup(pid: int) -> dict[str, int]:
    """``/proc/<pid>/smaps_rollup``'s kB fields (proc(5); Linux >= 4.14), {} if unreadable."""
    fields: dict[str, int] = {}
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return fields
    for line in text.splitlines()[1:]:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[key] = int(parts[0])
    return fields


def account_usage(name: str) -> dict[str, float]:
    """Memory and CPU of every process of the student's account (server + kernels).

    ``rss_mib`` counts each process's resident pages in full (shared libraries once per process,
    so a class double-counts them); ``pss_mib`` divides every shared page by the processes that
    map it (the machine's memory per student: a class's PSS adds up to what it uses);
    ``uss_mib`` is the pages no other process maps (what stopping the student frees).
    ``cpu_s``: user + system seconds those processes have used so far.
    """
    import psutil

    uid = __import__("pwd").getpwnam(system_username(name)).pw_uid
    rss = pss = uss = 0
    cpu = 0.0
    for proc in psutil.process_iter(["uids", "memory_info", "cpu_times"]):
        if not (proc.info["uids"] and proc.info["uids"].real == uid and proc.info["memory_info"]):
            continue
        rss += proc.info["memory_info"].rss
        rollup = _smaps_rollup(proc.pid)
        pss += rollup.get("Pss", 0) * 1024
        uss += (rollup.get("Private_Clean", 0) + rollup.get("Private_Dirty", 0)) * 1024
        times = proc.info["cpu_times"]
        if times is not None:
            cpu += times.user + times.system
    return {"rss_mib": rss / 2**20, "pss_mib": pss / 2**20, "uss_mib": uss / 2**20,
            "cpu_s": cpu}


def _role(proc: Any) -> str:
    """Name a root process under the hub: proxy, idle-culler, classpage (its command line)."""
    line = " ".join(proc.cmdline())
    for role, mark in (("proxy", "configurable-http-proxy"), ("idle-culler", "idle_culler"),
                       ("classpage", "classpage")):
        if mark in line:
            return role
    return proc.name()


def hub_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds so far of the hub, of every root-owned process under it (proxy, services),
    and of the children it reaped (``spawn_helpers``: the spawner's probes, curriculum merges,
    mkfs and mount, run as the student or as root, that exited)."""
    import psutil

    try:
        hub = psutil.Process(pid)
        times = hub.cpu_times()
        found = {"hub": times.user + times.system,
                 "spawn_helpers": times.children_user + times.children_system}
        children = [p for p in hub.children(recursive=True) if p.uids().real == 0]
    except psutil.Error:
        return {}
    for proc in children:
        try:
            times, role = proc.cpu_times(), _role(proc)
        except psutil.Error:
            continue
        found[role] = found.get(role, 0.0) + times.user + times.system
    return found


_PHASES = re.compile(r"labkit: spawn phases of (\S+): (.*)$")
_STARTED = re.compile(r"User (\S+) took ([0-9.]+) seconds to start")


def spawn_phases(log: str) -> dict[str, dict[str, float]]:
    """Percentiles of each spawn step, from the hub's log (:class:`labkit.hub.spawner` writes
    ``labkit: spawn phases of jupyter-x: account 0.01 s, ...``; JupyterHub ``User x took N
    seconds to start``, the whole spawn up to the server's first answer). [ms]"""
    steps: dict[str, list[float]] = {}
    for line in log.splitlines():
        if found := _PHASES.search(line):
            for part in found.group(2).split(", "):  # "account 0.01 s"
                step, seconds, _unit = part.rsplit(" ", 2)
                steps.setdefault(step, []).append(float(seconds) * 1000)
        elif found := _STARTED.search(line):
            steps.setdefault("hub_spawn_total", []).append(float(found.group(2)) * 1000)
    return {step: percentiles(ms) for step, ms in steps.items()}


#: Issue 13's goals for a class storm: everyone within 90 s, p95 < 60 s, < 350 MB per student.
GOAL_ALL_S, GOAL_P95_S, GOAL_MEMORY_MIB = 90.0, 60.0, 350.0 * 1e6 / 2**20


@dataclass(frozen=True)
class RunningHub:
    """A started class hub: its public URL, its process and its log file."""

    base: str
    pid: int
    log: Path
    state: Path


@contextmanager
def running_hub(names: list[str], **settings: Any) -> Iterator[RunningHub]:
    """Start the class hub for ``names`` (teacher :data:`TEACHER`); yield it.

    At the end the hub is stopped and the accounts and their processes removed.
    """
    work = Path(tempfile.mkdtemp(prefix="labkit-bench-hub-"))
    roster = work / "class.csv"
    roster.write_text("username,display_name\n" + "".join(f"{n},학생{n[-2:]}\n" for n in names),
                      encoding="utf-8")
    port = _free_port()
    HubState(work / "state").save_settings(HubSettings(teacher=TEACHER, port=port, **settings))
    accounts = HubState(work / "state").accounts  # as `roster set-password` sets them
    for name in [*names, TEACHER]:
        accounts.set_password(name, f"{name}-pass")
    log = open(work / "hub.log", "wb")
    hub = subprocess.Popen([sys.executable, "-m", "labkit.hub", "--state-dir",
                            str(work / "state"), "serve", "--roster", str(roster),
                            "--teacher", TEACHER], stdin=subprocess.DEVNULL, stdout=log,
                           stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        try:
            wait_until_answers(base + "hub/health", hub, timeout_s=900, what="the hub",
                               ok_status=200, interval_s=0.5)
        except ServerDidNotStart as err:
            raise SystemExit(f"{err}; see {work / 'hub.log'}") from None
        yield RunningHub(base, hub.pid, work / "hub.log", work / "state")
    finally:
        stop_process(hub, timeout_s=120)
        log.close()
        for name in [*names, TEACHER]:
            kill_user_processes(system_username(name))
            remove_system_user(name)  # unmounts the home image first
        shutil.rmtree(work / "state", ignore_errors=True)  # with the home images; the log stays


def _mean_max(values: list[float]) -> dict[str, float] | None:
    return {"mean": round(sum(values) / len(values), 1),
            "max": round(max(values), 1)} if values else None


def summarize(students: int, rows: list[dict[str, Any]], storm_s: float,
              usage: list[dict[str, float]], api_ms: list[float],
              hub_cpu: dict[str, float] | None = None) -> dict[str, Any]:
    """Return one storm's figures and whether each of issue 13's goals was met.

    ``usage``: :func:`account_usage` of each student after the storm; ``hub_cpu``: the hub's
    CPU seconds during the storm by process (:func:`hub_cpu_s`). The memory goal is checked on
    RSS (what the first baselines reported, the stricter figure) and on PSS (the machine's
    memory per student); both are reported.
    """
    ok = [r for r in rows if "error" not in r]
    chart = percentiles([r["first_chart_s"] * 1000 for r in ok]) if ok else {}
    rss = [u["rss_mib"] for u in usage]
    pss = [u["pss_mib"] for u in usage]
    result: dict[str, Any] = {
        "students": students, "reached_first_chart": len(ok), "storm_s": round(storm_s, 1),
        "login_to_first_chart": chart or None,
        "login_to_server_ready": percentiles([r["ready_s"] * 1000 for r in ok]) if ok else None,
        "memory_per_student_mib": _mean_max(rss),
        "memory_per_student_pss_mib": _mean_max(pss),
        "memory_per_student_uss_mib": _mean_max([u["uss_mib"] for u in usage]),
        "cpu_per_student_s": {
            "server_at_ready": _mean_max([r["server_cpu_s"] for r in ok
                                          if "server_cpu_s" in r]),
            "server_kernel_at_first_chart": _mean_max([r["cpu_s"] for r in ok if "cpu_s" in r]),
            "hub_and_proxy": round(sum((hub_cpu or {}).values()) / students, 2),
            "hub_by_process": {k: round(v / students, 2) for k, v in (hub_cpu or {}).items()},
        },
        "hub_api_during_storm": percentiles(api_ms) if api_ms else None,
        "errors": [r["error"] for r in rows if "error" in r][:10],
    }
    result["goals"] = {
        "all_within_90_s": bool(chart) and len(ok) == students
        and chart["max_ms"] <= GOAL_ALL_S * 1000,
        "p95_under_60_s": bool(chart) and chart["p95_ms"] < GOAL_P95_S * 1000,
        "memory_under_350_mb": bool(rss) and max(rss) < GOAL_MEMORY_MIB,
        "memory_under_350_mb_pss": bool(pss) and max(pss) < GOAL_MEMORY_MIB,
    }
    return result


def storm(names: list[str], lesson: str) -> dict[str, Any]:
    """The class logs in at once (see the module docstring); return the figures."""
    # 256 MiB homes: a 30-student class of default 2 GiB images would allocate 60 GiB here
    with running_hub(names, disk_limit_mib=256) as hub:
        return storm_on(hub, names, lesson)


def storm_on(hub: RunningHub, names: list[str], lesson: str) -> dict[str, Any]:
    """The class logs in at once on a running hub; return the figures."""
    base = hub.base
    teacher, login = hubclient.login(base, TEACHER, f"{TEACHER}-pass")
    if not hubclient.logged_in(login):
        raise RuntimeError(f"the teacher's login: HTTP {login.status_code}")
    # the _xsrf cookie of the login page belongs to the session before the login (JupyterHub
    # binds it to the session): a hub page after the login gives the one the API checks
    teacher.session.get(f"{base}hub/token", timeout=60).raise_for_status()
    reply = teacher.api("POST", f"users/{TEACHER}/tokens", json={"note": "bench"})
    if reply.status_code != 201:
        raise RuntimeError(f"the teacher's token: HTTP {reply.status_code} {reply.text[:300]}")
    teacher.token = reply.json()["token"]
    api_ms: list[float] = []
    stop = threading.Event()

    def poll_api() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                teacher.api("GET", f"users/{TEACHER}", timeout=60)
                api_ms.append((time.perf_counter() - t0) * 1000)
            except requests.RequestException:
                api_ms.append(60_000.0)
            stop.wait(0.5)

    go = threading.Event()
    poller = threading.Thread(target=poll_api, daemon=True)
    poller.start()
    cpu_before = hub_cpu_s(hub.pid)
    with ThreadPoolExecutor(len(names)) as pool:
        futures = [pool.submit(_student, base, n, lesson, go) for n in names]
        t_start = time.perf_counter()
        go.set()
        rows = [f.result() for f in futures]
    storm_s = time.perf_counter() - t_start
    cpu_after = hub_cpu_s(hub.pid)
    hub_cpu = {k: v - cpu_before.get(k, 0.0) for k, v in cpu_after.items()}
    stop.set()
    poller.join()
    usage = [account_usage(n) for n in names]
    phases = spawn_phases(hub.log.read_text(errors="replace"))
    result = summarize(len(names), rows, storm_s, usage, api_ms, hub_cpu)
    result["spawn_phases"] = phases
    return result


#: Issue 24's goals for a warmed class: p95 login -> first chart < 15 s, < 350 MB per server.
GOAL_WARM_P95_S = 15.0


#: What each server logs when its page is ready (labkit.hub.voila_pool, labkit.hub.preheat).
READY_LINES = {"app": "labkit: rendered {lesson}'s app before the bell in",
               "lab": "labkit: preheated {lesson} (kernel"}


def warm_figures(names: list[str], lesson: str, page: str = "app") -> dict[str, Any]:
    """Unwarmed storm on one fresh hub, then warm-up + storm on another (module docstring)."""
    cold = storm(names, lesson)
    with running_hub(names, disk_limit_mib=256) as hub:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "labkit.hub", "--state-dir",
                               str(hub.state), "warm", "--lesson", lesson[:2], "--page", page],
                              capture_output=True, text=True, timeout=3600, check=False)
        warm_s = time.perf_counter() - t0
        ready_line = READY_LINES[page].format(lesson=lesson)
        deadline = time.monotonic() + 900
        while (hub.log.read_text(errors="replace").count(ready_line) < len(names)
               and time.monotonic() < deadline):
            time.sleep(1)
        prepared = hub.log.read_text(errors="replace").count(ready_line)
        ready_s = time.perf_counter() - t0
        time.sleep(5)  # the kernels settle (their imports' garbage collected)
        idle = [account_usage(n) for n in names]
        warmed = storm_on(hub, names, lesson)
    chart = warmed["login_to_first_chart"] or {}
    rss = [u["rss_mib"] for u in idle]
    pss = [u["pss_mib"] for u in idle]
    return {
        "students": len(names), "lesson": lesson, "page": page,
        "warm_up_s": round(warm_s, 1), "warm_up_exit": done.returncode,
        "warm_up_until_pages_ready_s": round(ready_s, 1), "pages_ready": prepared,
        "warm_up_output": done.stdout.strip().splitlines()[-6:],
        "warmed_idle_server_mib": _mean_max(rss), "warmed_idle_server_pss_mib": _mean_max(pss),
        "warmed": warmed, "unwarmed": cold,
        "goals": {"warmed_p95_under_15_s": bool(chart)
                  and chart["p95_ms"] < GOAL_WARM_P95_S * 1000,
                  "warmed_idle_under_350_mb": bool(rss) and max(rss) < GOAL_MEMORY_MIB,
                  "warmed_idle_under_350_mb_pss": bool(pss) and max(pss) < GOAL_MEMORY_MIB},
        "machine": {"cpus": os.cpu_count()},
    }


def attack_figures(rounds: int = 1) -> dict[str, Any]:
    """B's control -> chart and the Hub API, idle and during each of A's attacks (medians)."""
    from tests.hub import attacks

    names = ["lkbench-a", "lkbench-b"]
    with running_hub(names, mem_limit_mib=1536, nproc_limit=256) as hub:
        base = hub.base
        a, b = (hubclient.login(base, n, f"{n}-pass")[0] for n in names)
        for s in (a, b):
            hubclient.start_server(s)
        control = attacks.ChartControl.open(b)
        control.move()  # the first move draws once; measure the next ones
        rows = []
        try:
            for _ in range(rounds):
                for attack in attacks.ATTACKS:
                    got = attacks.during_attack(a, control, attack)
                    rows.append({
                        "attack": attack,
                        **{f"{k}_idle_ms": round(got["idle"][k] * 1000, 1) for k in got["idle"]},
                        **{f"{k}_during_ms": round(got["during"][k] * 1000, 1)
                           for k in got["during"]},
                        **{f"{k}_ratio": round(got["during"][k] / got["idle"][k], 2)
                           for k in got["idle"]},
                        "within_goal": all(got["during"][k] <= 2 * max(got["idle"][k], FLOOR_S)
                                           for k in got["idle"]),
                        "a_server_back": got["a_server_status"] == 200})
        finally:
            control.close()
    return {"attacks": rows, "goal": "during <= 2 x idle (idle under 250 ms counts as 250 ms)",
            "machine": {"cpus": os.cpu_count()}}


def main(argv: list[str] | None = None) -> None:
    """Run one storm per ``--students`` size (or ``--attacks``); save ``benchmarks/results/``."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, nargs="+", default=[30, 40],
                        help="class sizes, one storm each (default: 30 40)")
    parser.add_argument("--lesson", default="03_goodput.ipynb")
    parser.add_argument("--attacks", action="store_true",
                        help="B's control -> chart during A's attacks (two students)")
    parser.add_argument("--rounds", type=int, default=1, help="--attacks: rounds of all attacks")
    parser.add_argument("--warm", action="store_true",
                        help="warmed (python -m labkit.hub warm) vs unwarmed, one size")
    parser.add_argument("--page", default="app", choices=sorted(READY_LINES),
                        help="--warm: the page each server prepares (default: app)")
    parser.add_argument("--save-as", default="bench_hub",
                        help="results file name under benchmarks/results/ (default: bench_hub)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench_hub: skipped, needs root (it creates the students' system accounts)")
        return
    if args.attacks:
        save("bench_hub_attacks", attack_figures(args.rounds))
        return
    if any(not 1 <= n <= 99 for n in args.students):
        parser.error("--students: 1 .. 99 per class (lkbench-NN accounts)")
    if args.warm:
        n = args.students[0] if args.students != [30, 40] else 30
        result = warm_figures([f"lkbench-{i:02d}" for i in range(n)], args.lesson, args.page)
        save("bench_hub_warm" if args.save_as == "bench_hub" else args.save_as, result)
        for label in ("unwarmed", "warmed"):
            chart = result[label]["login_to_first_chart"] or {}
            print(f"{n} students {label}: {result[label]['reached_first_chart']} reached the "
                  f"first chart; login -> first chart p50 {chart.get('p50_ms', 0) / 1000:.1f} s,"
                  f" p95 {chart.get('p95_ms', 0) / 1000:.1f} s")
        idle = result["warmed_idle_server_mib"] or {}
        pss = result["warmed_idle_server_pss_mib"] or {}
        print(f"warm-up {result['warm_up_s']:.0f} s (exit {result['warm_up_exit']}), "
              f"{result['pages_ready']} pages ready after "
              f"{result['warm_up_until_pages_ready_s']:.0f} s; warmed idle "
              f"server RSS mean {idle.get('mean', 0):.0f} MiB, max {idle.get('max', 0):.0f} MiB,"
              f" PSS mean {pss.get('mean', 0):.0f} MiB; goals {result['goals']}")
        return
    runs = [storm([f"lkbench-{i:02d}" for i in range(n)], args.lesson) for n in args.students]
    save(args.save_as, {"lesson": args.lesson, "runs": runs, "machine": {"cpus": os.cpu_count()}})
    for run in runs:
        chart = run["login_to_first_chart"] or {}
        api = run["hub_api_during_storm"] or {}
        memory = run["memory_per_student_mib"] or {}
        pss = run["memory_per_student_pss_mib"] or {}
        cpu = run["cpu_per_student_s"]
        print(f"{run['students']} students: {run['reached_first_chart']} reached the first chart;"
              f" login -> first chart p50 {chart.get('p50_ms', 0) / 1000:.1f} s, p95 "
              f"{chart.get('p95_ms', 0) / 1000:.1f} s; memory/student RSS mean "
              f"{memory.get('mean', 0):.0f} MiB, max {memory.get('max', 0):.0f} MiB, PSS mean "
              f"{pss.get('mean', 0):.0f} MiB; CPU/student server+kernel "
              f"{(cpu['server_kernel_at_first_chart'] or {}).get('mean', 0):.1f} s, hub "
              f"{cpu['hub_and_proxy']:.1f} s; hub API p95 {api.get('p95_ms', 0):.0f} ms; "
              f"goals {run['goals']}")


if __name__ == "__main__":
    main()
