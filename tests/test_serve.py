"""labkit.serve: voila is started safely (config folder, token off localhost, DoS guard)."""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import pytest
from traitlets.config import Config

from labkit.serve import CONFIG_DIR, notebooks_dir, voila_command


def test_voila_command_local_needs_no_token() -> None:
    argv, token = voila_command("127.0.0.1", 8866)
    assert token is None
    assert not any(a.startswith("--token") for a in argv)
    assert "--Voila.ip=127.0.0.1" in argv and "--strip_sources=True" in argv
    assert str(notebooks_dir()) in argv
    assert Path(argv[0]).name == "voila", "not `python -m voila`: it would import config/voila.py"


def test_voila_command_network_host_always_gets_a_token() -> None:
    argv, token = voila_command("0.0.0.0", 8866)
    assert token and len(token) >= 20
    assert f"--token={token}" in argv
    argv, token = voila_command("0.0.0.0", 8866, token="given")
    assert token == "given" and "--token=given" in argv


@pytest.mark.parametrize("port", [0, -1, 70000])
def test_voila_command_rejects_bad_port(port: int) -> None:
    with pytest.raises(ValueError, match="port"):
        voila_command(port=port)


def test_config_dir_holds_only_labkit_config() -> None:
    assert sorted(p.name for p in CONFIG_DIR.iterdir() if p.name != "__pycache__") == ["voila.py"]


def _v1_message(header: dict) -> bytes:
    parts = [json.dumps(p).encode() for p in ("channel", header, {}, {}, {})]
    offsets, pos = [], 8 * (len(parts) + 2)
    for part in parts:
        offsets.append(pos)
        pos += len(part)
    offsets.append(pos)
    head = struct.pack("<Q", len(offsets)) + b"".join(struct.pack("<Q", o) for o in offsets)
    return head + b"".join(parts)


def test_voila_config_guards_legacy_binary_header_dos() -> None:
    import voila.tornado.kernel_websocket_handler as kwh

    original = kwh.read_header_from_binary_message
    config = Config()
    try:
        code = (CONFIG_DIR / "voila.py").read_text()
        exec(compile(code, "voila.py", "exec"), {"get_config": lambda: config})
        guarded = kwh.read_header_from_binary_message
        assert guarded is not original
        assert config.MappingKernelManager.cull_idle_timeout == 600
        # legacy framing: a 4-byte big-endian buffer count read as 8 little-endian bytes ~ 1e17
        legacy = struct.pack(">I", 2) + struct.pack(">I", 16) + b"\x00" * 64
        start = time.perf_counter()
        assert guarded(legacy) is None
        assert time.perf_counter() - start < 0.1
        assert guarded(_v1_message({"msg_type": "comm_msg"})) == {"msg_type": "comm_msg"}
    finally:
        kwh.read_header_from_binary_message = original
