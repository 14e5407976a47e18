"""The students' kernel (labkit.hub.kernel): no loopback TCP port, forked output still arrives.

A real ipykernel started from labkit's kernelspec with the hub's IPC transport: every channel
and the fork pipe are Unix sockets in the runtime folder, nothing listens on TCP (another
account could connect to it: issue 23, attack 4), and a forked child's print still reaches
IOPub through the pipe.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import psutil
import pytest

from labkit.hub import kernel

KERNELSPEC = Path(kernel.__file__).parent / "jupyter" / "kernels" / "python3" / "kernel.json"


def test_kernelspec_starts_labkits_kernel_without_the_debugger() -> None:
    spec = json.loads(KERNELSPEC.read_text())
    assert spec["argv"][:3] == ["python", "-m", "labkit.hub.kernel"]
    assert spec["metadata"]["debugger"] is False


def test_kernel_listens_on_no_tcp_port_and_relays_forked_output(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    from jupyter_client import KernelManager

    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    km = KernelManager(transport="ipc", connection_file=str(runtime / "kernel-t.json"))
    km.kernel_spec.argv = [sys.executable, "-m", "labkit.hub.kernel", "-f", "{connection_file}"]
    km.start_kernel(env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)})
    client = km.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=120)
        info = client.kernel_info(reply=True, timeout=60)
        assert "debugger" not in info["content"]["supported_features"], info["content"]
        proc = psutil.Process(km.provisioner.process.pid)  # type: ignore[union-attr]
        assert proc.net_connections(kind="inet") == []
        assert any(p.name.startswith("pipe-") for p in runtime.iterdir())
        out: list[str] = []
        code = ("import os, sys\npid = os.fork()\n"
                "if pid == 0:\n    print('from the child', flush=True)\n    os._exit(0)\n"
                "os.waitpid(pid, 0)\nimport time; time.sleep(1)\nprint('parent done')")
        reply = client.execute_interactive(
            code, timeout=120, output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert reply["content"]["status"] == "ok"
        assert "from the child" in "".join(out) and "parent done" in "".join(out), out
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
