"""A browser's hostile widget updates through a real kernel (issue 17).

A kernel (ipykernel, started by jupyter_client as JupyterLab starts one) builds lesson 06's
claim app and lesson 01's replay as their notebooks do; the test then sends the comm
"update" messages a browser sends (``{"method": "update", "state": ...}`` on the widget's
comm), as the websocket would deliver them, and reads the widgets back from the kernel.
"""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from typing import Any

import pytest

jupyter_client = pytest.importorskip("jupyter_client")

BUILD = """
import json, labkit.gpu as gpu
gpu.connect("sim:H100-80GB")
import labkit.ui as ui
from labkit.ui.components import find_by_class
claim = ui.benchmarks.claim_app()
replay = ui.observe.replay_app()
controls = {"precision": find_by_class(claim, "lk-claim-precision_gain"),
            "preset": find_by_class(claim, "lk-claim-preset"),
            "time": find_by_class(replay, "lk-replay-time"),
            "gpu": find_by_class(replay, "lk-replay-gpu")}
first = claim.result
print(json.dumps({k: w.model_id for k, w in controls.items()}))
"""

READ = """
import asyncio, html, re
await asyncio.sleep(0.5)  # past the debounce: a recompute, had one been scheduled, has run
def _row(w, root):
    stack = [root]
    while stack:
        box = stack.pop()
        kids = list(getattr(box, "children", ()))
        if w in kids:
            return " ".join(k.value for k in kids if "lk-error" in k._dom_classes)
        stack.extend(kids)
    return ""
print(json.dumps({
    "precision": [controls["precision"].value, controls["precision"].max,
                  _row(controls["precision"], claim)],
    "preset": [controls["preset"].value, len(controls["preset"].options),
               _row(controls["preset"], claim)],
    "time": [controls["time"].value, controls["time"].max, _row(controls["time"], replay)],
    "gpu": [controls["gpu"].index, _row(controls["gpu"], replay)],
    "same_result": claim.result is first,
    "ratio": claim.result.normalization.ratio}, ensure_ascii=False))
"""


def _run(client: Any, code: str) -> str:
    out: list[str] = []

    def keep(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    reply = client.execute_interactive(code, timeout=120, output_hook=keep)
    assert reply["content"]["status"] == "ok", "".join(out)[-3000:]
    return "".join(out)


def _update(client: Any, comm_id: str, state: dict[str, Any]) -> None:
    """Send what a browser sends when its view changes a widget (ipywidgets' protocol)."""
    msg = client.session.msg("comm_msg", {"comm_id": comm_id, "data": {
        "method": "update", "state": state, "buffer_paths": []}})
    client.shell_channel.send(msg)


@pytest.fixture(scope="module")
def kernel() -> Iterator[Any]:
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_hostile_updates_through_a_kernel_are_refused_beside_each_control(kernel: Any) -> None:
    ids = json.loads(_run(kernel, BUILD).strip().splitlines()[-1])
    before = json.loads(_run(kernel, READ).strip().splitlines()[-1])
    # 06: the precision slider starts at its max; its unit line says so, no note yet
    assert before["precision"][2] == ""
    _update(kernel, ids["precision"], {"max": 100.0, "value": 50.0})  # widen, then push
    _update(kernel, ids["preset"], {"index": 99})  # an option the list does not hold
    _update(kernel, ids["time"], {"value": 1e308})
    _update(kernel, ids["gpu"], {"_options_labels": ["x", "y"], "index": 1})
    after = json.loads(_run(kernel, READ).strip().splitlines()[-1])
    assert after["precision"][:2] == [2.0, 2.0] and "이하여야" in after["precision"][2]
    assert after["preset"][:2] == before["preset"][:2]
    assert "목록에 없는 선택입니다" in after["preset"][2]
    assert after["time"][:2] == before["time"][:2] and "이하여야" in after["time"][2]
    assert after["gpu"][0] == before["gpu"][0] and "목록에 없는" in after["gpu"][1]
    assert after["same_result"] and after["ratio"] == before["ratio"]  # the last good result
    try:  # and the kernel still answers: a legal value is taken
        _update(kernel, ids["precision"], {"value": 1.5})
        moved = json.loads(_run(kernel, READ).strip().splitlines()[-1])
    except queue.Empty:  # pragma: no cover - a dead kernel fails below
        moved = {}
    assert moved["precision"][0] == 1.5 and moved["precision"][2] == ""
    assert not moved["same_result"]
