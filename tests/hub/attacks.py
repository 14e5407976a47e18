"""A mischievous student's runaway code, and what B and the hub feel meanwhile (issue 13).

Shared by ``tests/hub/test_hub_security.py`` (asserts) and ``benchmarks/bench_hub.py
--attacks`` (figures). B's path is the one a student feels: B moves lesson 03's main control in
its voila app (a widget ``comm_msg`` through the kernel websocket, as the browser sends it) and
the waterfall chart's update comes back (:data:`labkit.serve.lessons.MAIN_INTERACTIONS`); the
Hub's path is ``GET /hub/api/users/<B>`` with B's token.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any

from labkit.serve.lessons import main_interaction
from tests.browser.voila_client import displayed_plots, find_widget, request_states
from tests.hub import hubclient
from tests.hub.hubclient import HubKernelClient, Student

LESSON = "03_goodput.ipynb"

BOMBS = {
    "memory": "x = bytearray(8 * 2**30)\n",
    "fork": ("import subprocess, sys\n"
             "subprocess.Popen([sys.executable, '-c', '''\n"
             "import os, time\n"
             "end = time.time() + 25\n"
             "while time.time() < end:\n"
             "    try:\n"
             "        os.fork()\n"
             "    except OSError:\n"
             "        pass\n"
             "''])\n"),
    "spin": ("import subprocess, sys\n"
             "for _ in range(8):\n"
             "    subprocess.Popen([sys.executable, '-c', "
             "'import time\\nend = time.time() + 25\\nwhile time.time() < end: pass'])\n"),
}
ATTACKS = ("memory", "fork", "spin", "frame")


@dataclass
class ChartControl:
    """B's lesson 03 app: the kernel websocket and the comm id of its main control."""

    student: Student
    client: HubKernelClient
    widget: str
    moves: int = 0

    @classmethod
    def open(cls, student: Student, lesson: str = LESSON) -> ChartControl:
        """Open ``lesson`` as a voila app on the student's server and find its main control."""
        page = hubclient.fetch_voila(student, lesson)
        client = HubKernelClient(student, page.kernel_id, timeout=120)
        states = request_states(client)
        return cls(student, client, find_widget(states, main_interaction(lesson).widget))

    def move(self) -> float:
        """Move the control to a new value; return seconds until the chart update came. [s]

        Raises
        ------
        AssertionError
            If the kernel's answers hold no new chart.
        """
        base = float(main_interaction(LESSON).value)
        self.moves += 1
        value = base + self.moves % 7  # a different value every move: the chart must change
        t0 = time.perf_counter()
        answers = self.client.set_state(self.widget, {"value": value}, until=displayed_plots)
        seconds = time.perf_counter() - t0
        assert displayed_plots(answers), f"moving the control to {value} changed no chart"
        return seconds

    def close(self) -> None:
        """Close the websocket."""
        self.client.close()


def latencies(control: ChartControl, samples: int = 5) -> dict[str, float]:
    """Median of B's control -> chart and of the Hub API (B's own model). [s]"""
    chart, api = [], []
    b = control.student
    for _ in range(samples):
        chart.append(control.move())
        t0 = time.perf_counter()
        assert b.api("GET", f"users/{b.name}").status_code == 200
        api.append(time.perf_counter() - t0)
    return {"chart": statistics.median(chart), "api": statistics.median(api)}


def launch(a: Student, attack: str) -> HubKernelClient:
    """Start ``attack`` from a new kernel of A's server; return its client (close it after)."""
    kernel = hubclient.start_kernel(a)
    client = HubKernelClient(a, kernel, timeout=120)
    if attack == "frame":
        frame = (2**63 - 1).to_bytes(8, "little") + bytes(64)  # 72 bytes
        client.ws.send_binary(frame)
        legacy = HubKernelClient(a, kernel, protocol="legacy")
        legacy.ws.send_binary((50_000_000).to_bytes(4, "big") + bytes(60))
    else:
        client.send("execute_request", {"code": BOMBS[attack], "silent": False,
                                        "store_history": False, "user_expressions": {},
                                        "allow_stdin": False, "stop_on_error": True})
    return client


def wait_server_answers(a: Student, timeout: float = 90) -> int:
    """Poll A's server until it answers ``/api/status``; return the last status code."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = a.session.get(f"{a.server_url}api/status",
                                   headers=hubclient.auth_headers(a), timeout=30).status_code
        except OSError:
            status = 0
        if status == 200 or time.monotonic() > deadline:
            return status
        time.sleep(1)


def during_attack(a: Student, control: ChartControl, attack: str,
                  settle_s: float = 3) -> dict[str, Any]:
    """B's latencies idle, then during ``attack`` by A; and whether A's server came back."""
    idle = latencies(control)
    client = launch(a, attack)
    try:
        time.sleep(settle_s)
        during = latencies(control)
    finally:
        client.ws.close()
    return {"attack": attack, "idle": idle, "during": during,
            "a_server_status": wait_server_answers(a)}
