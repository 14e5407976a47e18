"""labkit.serve: voila is started safely (config folder, token off localhost, DoS guard)."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from labkit.serve import CONFIG_DIR, notebooks_dir, serve_environment, voila_command
from labkit.serve.lessons import discover
from labkit.serve.server import (
    CONTENT_SECURITY_POLICY,
    TEMPLATE_DIR,
    TEMPLATE_ROOT,
    THUMBNAILS,
    WEBSOCKET_MAX_MESSAGE_BYTES,
    CappedKernelManager,
    Limits,
    gallery_entries,
    guard_binary_header_parsing,
)


def test_voila_command_serves_localhost_only_without_token() -> None:
    argv = voila_command(8866)
    assert not any(a.startswith("--token") for a in argv)
    assert "--Voila.ip=127.0.0.1" in argv and "--strip_sources=True" in argv
    assert str(notebooks_dir()) in argv
    assert Path(argv[0]).name == "voila", "not `python -m voila`: it would import config/voila.py"


@pytest.mark.parametrize("extra", ["--Voila.ip=0.0.0.0", "--ip=0.0.0.0", "--token=x",
                                   "--Voila.token="])
def test_voila_command_refuses_a_network_interface_or_token(extra: str) -> None:
    """The shared classroom mode is gone: a class uses the class hub (issue 13)."""
    with pytest.raises(ValueError, match="make hub"):
        voila_command(8866, extra=[extra])


def test_main_has_no_host_or_token_option(capsys: pytest.CaptureFixture[str]) -> None:
    from labkit.serve import __main__ as main_module

    for args in (["--host", "0.0.0.0"], ["--token", "abc"]):
        with pytest.raises(SystemExit):
            main_module.main(args)
    assert "unrecognized arguments" in capsys.readouterr().err


@pytest.mark.parametrize("port", [0, -1, 70000])
def test_voila_command_rejects_bad_port(port: int) -> None:
    with pytest.raises(ValueError, match="port"):
        voila_command(port=port)


def test_config_dir_holds_only_labkit_config() -> None:
    assert sorted(p.name for p in CONFIG_DIR.iterdir() if p.name != "__pycache__") == [
        "jupyter_server_config.py", "voila.py"]  # make lab's pre-save hook; voila's config


def _v1_message(header: dict) -> bytes:
    parts = [json.dumps(p).encode() for p in ("channel", header, {}, {}, {})]
    offsets, pos = [], 8 * (len(parts) + 2)
    for part in parts:
        offsets.append(pos)
        pos += len(part)
    offsets.append(pos)
    head = struct.pack("<Q", len(offsets)) + b"".join(struct.pack("<Q", o) for o in offsets)
    return head + b"".join(parts)


def test_guard_rejects_legacy_binary_header_and_keeps_v1() -> None:
    import voila.tornado.kernel_websocket_handler as kwh

    original = kwh.read_header_from_binary_message
    try:
        guard_binary_header_parsing()
        guard_binary_header_parsing()  # idempotent: one wrapper
        guarded = kwh.read_header_from_binary_message
        assert guarded is not original and guarded.__closure__[0].cell_contents is original
        # legacy framing: a 4-byte big-endian buffer count read as 8 little-endian bytes ~ 1e17
        legacy = struct.pack(">I", 2) + struct.pack(">I", 16) + b"\x00" * 64
        assert int.from_bytes(legacy[:8], "little") > 10**15
        assert guarded(legacy) is None
        assert guarded(b"") is None and guarded(struct.pack("<Q", 2000) + b"\x00" * 64) is None
        assert guarded(_v1_message({"msg_type": "comm_msg"})) == {"msg_type": "comm_msg"}
    finally:
        kwh.read_header_from_binary_message = original


CONFIGURE_PROBE = """
import json, os, sys
from traitlets.config import Config
import voila.tornado.kernel_websocket_handler as kwh
from voila.tornado.handler import TornadoVoilaHandler
from voila.utils import get_data_dir
config = Config()
exec(compile(open(sys.argv[1]).read(), "voila.py", "exec"), {"get_config": lambda: config})
settings = config.Voila.tornado_settings
import resource
print(json.dumps({
    "guarded": getattr(kwh.read_header_from_binary_message, "_labkit_guard", False),
    "admission": getattr(TornadoVoilaHandler.get, "_labkit_admission", False),
    "repoll": getattr(__import__("jupyter_client.channels").channels.AsyncZMQSocketChannel.get_msg,
                      "_labkit_repoll", False),
    "cull": config.MappingKernelManager.cull_idle_timeout,
    "manager": config.VoilaConfiguration.multi_kernel_manager_class,
    "classic_tree": config.VoilaConfiguration.classic_tree,
    "fill_delay": config.VoilaKernelManager.fill_delay,
    "xsrf_off": settings["disable_check_xsrf"],
    "ws_max": settings["websocket_max_message_size"],
    "csp": settings["headers"]["Content-Security-Policy"],
    "lessons": [c["stem"] for c in settings["jinja_template_vars"]["labkit_lessons"]()],
    "served_by": os.environ["LABKIT_SERVED_BY"],
    "jupyter_path": os.environ["JUPYTER_PATH"].split(os.pathsep)[0],
    "data_dir": get_data_dir(),
    "rlimit_as": resource.getrlimit(resource.RLIMIT_AS)[0],
    "blas": os.environ["OPENBLAS_NUM_THREADS"],
}))
"""


def test_voila_config_applies_labkit_server_settings() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABKIT_")}
    env["LABKIT_SERVER_MEMORY_MIB"] = "3000"
    out = subprocess.run([sys.executable, "-c", CONFIGURE_PROBE, str(CONFIG_DIR / "voila.py")],
                         capture_output=True, text=True, env=env, check=True, timeout=120)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["guarded"] and got["admission"] and got["repoll"]
    assert got["cull"] == 600 and got["xsrf_off"] is True and got["classic_tree"] is True
    assert got["manager"] == "labkit.serve.server.CappedKernelManager"
    assert got["fill_delay"] == 20.0
    assert got["ws_max"] == WEBSOCKET_MAX_MESSAGE_BYTES
    assert got["csp"] == CONTENT_SECURITY_POLICY
    assert got["lessons"] == [lesson.stem for lesson in discover()]
    assert got["served_by"] == "voila"  # inherited by every kernel
    assert got["jupyter_path"] == str(TEMPLATE_ROOT)
    # the trap: a voila/ folder in JUPYTER_PATH would become voila's data dir and hide its themes
    assert Path(got["data_dir"]) != TEMPLATE_ROOT / "voila"
    assert (Path(got["data_dir"]) / "themes").is_dir()
    assert got["rlimit_as"] == 3000 * 2**20
    assert got["blas"] == "1"


def _run(coroutine: Any) -> Any:
    """Run a coroutine on a fresh loop in another thread (Playwright's sync API may hold one)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


# --- voila_command / serve_environment ------------------------------------------------------------


def test_voila_command_uses_labkit_template_locked_theme_and_no_preheat_by_default() -> None:
    argv = voila_command(port=8866)
    assert "--template=labkit" in argv and "--theme=light" in argv
    assert "--VoilaConfiguration.allow_theme_override=NO" in argv
    assert "--VoilaConfiguration.allow_template_override=NO" in argv
    assert "--show_tracebacks=False" in argv
    assert not any(a.startswith("--preheat_kernel") for a in argv)
    argv = voila_command(port=8866, theme="dark")
    assert "--theme=dark" in argv


def test_voila_command_extra_options_replace_labkits() -> None:
    argv = voila_command(port=8866, extra=["--MappingKernelManager.cull_idle_timeout=3",
                                              "--theme=dark"])
    assert [a for a in argv if "cull_idle_timeout" in a] == [
        "--MappingKernelManager.cull_idle_timeout=3"]
    assert "--theme=dark" in argv and "--theme=light" not in argv


def test_voila_command_preheats_only_the_named_lessons() -> None:
    argv = voila_command(port=8866, warm={"03_goodput.ipynb": 30})
    assert "--preheat_kernel=True" in argv
    pools = json.loads(next(a.split("=", 1)[1] for a in argv
                            if a.startswith("--VoilaKernelManager.kernel_pools_config=")))
    assert pools == {"default": {"pool_size": 0}, "03_goodput.ipynb": {"pool_size": 30}}
    argv = voila_command(port=8866, warm={"03_goodput.ipynb": 0})
    assert not any(a.startswith("--preheat_kernel") for a in argv)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"theme": "blue"}, "theme"), ({"warm": {"03_goodput.ipynb": -1}}, "warm")])
def test_voila_command_rejects_bad_theme_and_warm(kwargs: dict, match: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=match):
        voila_command(port=8866, **kwargs)


def test_serve_environment_carries_limits() -> None:
    assert serve_environment() == {"LABKIT_THEME": "light"}
    env = serve_environment(theme="dark", max_kernels=35, max_memory_mib=16000,
                            kernel_memory_mib=1024, server_memory_mib=0)
    assert env == {"LABKIT_THEME": "dark", "LABKIT_MAX_KERNELS": "35",
                   "LABKIT_MAX_MEMORY_MIB": "16000", "LABKIT_KERNEL_MEMORY_MIB": "1024",
                   "LABKIT_SERVER_MEMORY_MIB": "0"}
    with pytest.raises(ValueError, match="LABKIT_MAX_KERNELS"):
        serve_environment(max_kernels=-1)


def test_main_resolves_lessons_by_number_or_name() -> None:
    from labkit.serve.__main__ import resolve_lessons

    names = [lesson.name for lesson in discover()]
    first = names[0]
    assert resolve_lessons(notebooks_dir(), [first[:2]]) == [first]
    assert resolve_lessons(notebooks_dir(), [first.removesuffix(".ipynb")]) == [first]
    with pytest.raises(SystemExit, match="no lesson '99'"):
        resolve_lessons(notebooks_dir(), ["99"])


def test_main_prints_localhost_url_and_execs_voila_from_config_dir(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from labkit.serve import __main__ as main_module

    calls: list[tuple[str, list[str], str]] = []
    monkeypatch.setattr(main_module.os, "execv",
                        lambda path, argv: calls.append((path, argv, os.getcwd())))
    monkeypatch.setattr(main_module.os, "chdir", lambda path: calls.append(("chdir", [], path)))
    monkeypatch.setattr(main_module.os, "environ", dict(os.environ))
    lesson = discover()[0]
    main_module.main(["--port", "9001", "--lesson", lesson.number, "--warm", "30"])
    out = capsys.readouterr().out
    assert "http://localhost:9001/ " in out and "token" not in out
    assert f"http://localhost:9001/voila/render/{lesson.name}" in out
    assert calls[0] == ("chdir", [], CONFIG_DIR)
    argv = calls[1][1]
    assert "--Voila.ip=127.0.0.1" in argv and "--preheat_kernel=True" in argv
    assert not any(a.startswith("--token") for a in argv)
    assert main_module.os.environ["LABKIT_MAX_KERNELS"] == "40"  # 30 warm + 10 <= 40


# --- limits and the kernel cap -------------------------------------------------------------------


def test_limits_from_environ_defaults_and_errors() -> None:
    limits = Limits.from_environ({})
    assert limits.max_kernels == 40 and limits.server_memory_mib == 4096
    assert 0 < limits.max_memory_mib
    assert Limits.from_environ({"LABKIT_MAX_KERNELS": "3"}).max_kernels == 3
    with pytest.raises(ValueError, match="LABKIT_MAX_KERNELS must be an integer"):
        Limits.from_environ({"LABKIT_MAX_KERNELS": "many"})
    with pytest.raises(ValueError, match=">= 1"):
        Limits.from_environ({"LABKIT_MAX_KERNELS": "0"})
    with pytest.raises(ValueError, match=">= 0"):
        Limits.from_environ({"LABKIT_MAX_MEMORY_MIB": "-5"})


class _Task:
    def __init__(self, ready: bool) -> None:
        self.ready = ready

    def done(self) -> bool:
        return self.ready

    def cancelled(self) -> bool:
        return False

    def exception(self) -> None:
        return None


class _Manager(CappedKernelManager):
    def __init__(self, kernels: int, rss_mib: float = 100.0, **limits: int) -> None:
        super().__init__()
        self.limits = Limits(**{"max_kernels": 2, "max_memory_mib": 1000, **limits})
        self.kernels = [f"k{i}" for i in range(kernels)]
        self.rss = rss_mib

    def list_kernel_ids(self) -> list[str]:
        return list(self.kernels)

    def _rss_mib(self) -> float:
        return self.rss


def test_capped_manager_refuses_past_kernels_or_memory() -> None:
    assert _Manager(1).refusal() is None
    assert _Manager(2).refusal() == "full"
    assert _Manager(0, rss_mib=1000).refusal() == "memory"


def test_capped_manager_hands_out_a_ready_warm_kernel_at_the_cap() -> None:
    manager = _Manager(2)
    manager._pools = {"03_goodput.ipynb": [_Task(ready=True)],  # type: ignore[attr-defined]
                      "04_x.ipynb": [_Task(ready=False)]}
    assert manager.admission_refusal("03_goodput.ipynb") is None
    assert manager.admission_refusal("04_x.ipynb") == "full"
    assert manager.admission_refusal("05_y.ipynb") == "full"
    assert _Manager(0, rss_mib=5000).admission_refusal("03_goodput.ipynb") == "memory"


def test_capped_manager_page_kernel_gets_503_and_pool_kernel_waits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
    from tornado import web

    from labkit.serve import server

    started: list[dict] = []  # type: ignore[type-arg]

    async def fake_start(self: object, *args: object, **kwargs: object) -> str:
        started.append(dict(kwargs))
        return "new-kernel"

    monkeypatch.setattr(AsyncMappingKernelManager, "start_kernel", fake_start)
    monkeypatch.setattr(server, "POOL_RETRY_S", 0.01)
    manager = _Manager(2)
    with pytest.raises(web.HTTPError) as refused:
        _run(manager.start_kernel(env={"VOILA_PREHEAT": "False"}))
    assert refused.value.status_code == 503 and refused.value.log_message == "full"
    assert started == []

    async def pool_start_then_free_a_seat() -> str:
        task = asyncio.ensure_future(manager.start_kernel(env={"VOILA_PREHEAT": "True"}))
        await asyncio.sleep(0.05)
        assert not task.done() and started == []  # waiting for room, not failing
        manager.kernels.pop()
        return await task

    assert _run(pool_start_then_free_a_seat()) == "new-kernel"
    assert len(started) == 1 and manager._starting == 0


# --- the gallery ---------------------------------------------------------------------------------


def test_gallery_entries_list_lessons_with_thumbnails_and_survive_broken_headers(
        tmp_path: Path) -> None:
    import nbformat

    good = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "# 98. 좋은 수업\n\n**학습 목표**\n1. 하나\n2. 둘\n\n**소요 시간**: 20분")])
    bad = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("제목 없음")])
    nbformat.write(good, tmp_path / "98_good.ipynb")
    nbformat.write(bad, tmp_path / "99_bad.ipynb")
    (tmp_path / "notes.ipynb").write_text("{}")
    cards = gallery_entries(tmp_path)
    assert [c["stem"] for c in cards] == ["98_good", "99_bad"]
    assert cards[0]["title"] == "좋은 수업" and cards[0]["goals"] == ["하나", "둘"]
    assert cards[0]["duration"] == "20분" and cards[0]["problem"] is None
    assert cards[0]["thumbnail"] is None
    assert "99_bad.ipynb" in cards[1]["problem"]
    for lesson in discover():
        card = next(c for c in gallery_entries(notebooks_dir()) if c["stem"] == lesson.stem)
        has_png = (THUMBNAILS / f"{lesson.stem}.png").is_file()
        assert (card["thumbnail"] is not None) == has_png


def test_committed_thumbnails_are_small_and_belong_to_lessons() -> None:
    stems = {lesson.stem for lesson in discover()}
    for png in THUMBNAILS.glob("*"):
        assert png.suffix == ".png" and png.stem in stems, png.name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.stat().st_size < 80_000, f"{png.name} is not small"


def test_template_strings_come_from_the_catalog() -> None:
    from labkit.i18n import KO

    used = set()
    for path in TEMPLATE_DIR.rglob("*.htm*"):
        used |= set(re.findall(r'labkit_t\("([a-z0-9_.]*[a-z0-9_])"', path.read_text()))
    used |= set(re.findall(r't\("(serve\.[a-z0-9_.]+)"', (TEMPLATE_ROOT.parent / "server.py")
                           .read_text()))
    assert {"serve.course", "serve.busy.title", "serve.gallery.goals"} <= used
    assert used <= set(KO), used - set(KO)
    for reason in ("full", "memory"):  # built as "serve.busy." + reason in 503.html
        assert f"serve.busy.{reason}" in KO


def test_repoll_kernel_channels_waits_in_slices_and_keeps_timeouts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    from queue import Empty

    from jupyter_client.channels import AsyncZMQSocketChannel

    from labkit.serve import server

    polls: list[float | None] = []

    async def fake_get_msg(self: object, timeout: float | None = None) -> dict:  # type: ignore[type-arg]
        polls.append(timeout)
        if len(polls) < 3:  # a missed readiness edge: this poll never sees the message
            raise Empty
        return {"msg_type": "execute_reply"}

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", fake_get_msg)
    monkeypatch.setattr(server, "CHANNEL_REPOLL_S", 0.01)
    server.repoll_kernel_channels()
    server.repoll_kernel_channels()  # idempotent
    channel = object.__new__(AsyncZMQSocketChannel)
    assert _run(channel.get_msg()) == {"msg_type": "execute_reply"}
    assert polls == [0.01, 0.01, 0.01], "no timeout: re-polls instead of one endless poll"
    polls.clear()

    async def never(self: object, timeout: float | None = None) -> dict:  # type: ignore[type-arg]
        polls.append(timeout)
        await asyncio.sleep(timeout or 0)
        raise Empty

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", never)
    server.repoll_kernel_channels()
    with pytest.raises(Empty):
        _run(channel.get_msg(timeout=0.05))
    assert 2 <= len(polls) <= 10 and all(p is not None and p <= 0.01 for p in polls)
