"""labkit.runtime.kernel: the guards inside a lesson's kernel under voila.

The guards (an audit hook, an address-space limit) cannot be undone in a process, so each test
runs a small script in a fresh Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.runtime import kernel as runtime


def _run(script: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> dict:  # type: ignore[type-arg]
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("VOILA_", "LABKIT_SERVED_BY"))}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**base, **(env or {})}, cwd=cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


DETECT = """
import json, os
from labkit.serve import running_under_voila, forbid_under_voila
try:
    forbid_under_voila("MIG apply")
    refused = None
except PermissionError as err:
    refused = str(err)
print(json.dumps({"under": running_under_voila(), "refused": refused}))
"""


@pytest.mark.parametrize("env", [{"VOILA_PREHEAT": "False"}, {"VOILA_PREHEAT": "True"},
                                 {"VOILA_KERNEL_ID": "x"}, {"LABKIT_SERVED_BY": "voila"}])
def test_voila_kernel_is_detected_even_with_mig_apply_allowed(env: dict[str, str]) -> None:
    got = _run(DETECT, {**env, "LABKIT_ALLOW_MIG_APPLY": "1"})
    assert got["under"] is True
    assert "MIG apply is not allowed from a voila app" in got["refused"]


def test_jupyterlab_or_script_is_not_voila() -> None:
    got = _run(DETECT, {"LABKIT_ALLOW_MIG_APPLY": "1"})
    assert got == {"under": False, "refused": None}


def test_session_dir_is_private_and_reused() -> None:
    first = runtime.session_dir()
    assert first.is_dir() and first == runtime.session_dir()
    assert first.name.startswith(f"labkit-session-{os.getpid()}-")


HARDENED = """
import json, os, shutil, subprocess, tempfile
from pathlib import Path
from labkit.runtime.kernel import harden_kernel, session_dir
outside = Path(os.environ["OUTSIDE"])
results = {"hardened": harden_kernel(force=True), "again": harden_kernel()}
def attempt(name, action):
    try:
        action()
        results[name] = "allowed"
    except PermissionError:
        results[name] = "refused"
attempt("open_w", lambda: open(outside / "a.txt", "w"))
attempt("open_a", lambda: open(outside / "keep.txt", "a"))
attempt("open_relative", lambda: open("rel.txt", "x"))
attempt("os_open", lambda: os.open(str(outside / "b.txt"), os.O_WRONLY | os.O_CREAT))
attempt("remove", lambda: os.remove(outside / "keep.txt"))
attempt("rename", lambda: os.rename(outside / "keep.txt", outside / "moved.txt"))
attempt("replace_into", lambda: os.replace(session_dir() / "nothing", outside / "x"))
attempt("mkdir", lambda: os.mkdir(outside / "d"))
attempt("rmtree", lambda: shutil.rmtree(outside))
attempt("chmod", lambda: os.chmod(outside / "keep.txt", 0o777))
attempt("copy_out", lambda: shutil.copyfile(outside / "keep.txt", outside / "copy.txt"))
attempt("dotdot", lambda: open(str(session_dir()) + "/../escape.txt", "w"))
attempt("subprocess", lambda: subprocess.run(["true"]))
attempt("system", lambda: os.system("true"))
attempt("read_outside", lambda: open(outside / "keep.txt").read())
attempt("devnull", lambda: open(os.devnull, "w").write("x"))
attempt("session_write", lambda: (session_dir() / "s.txt").write_text("ok"))
attempt("session_mkdir", lambda: (session_dir() / "sub").mkdir())
attempt("tempfile", lambda: tempfile.NamedTemporaryFile("w").write("x"))
results["tempdir_in_session"] = tempfile.gettempdir() == str(session_dir())
print(json.dumps(results))
"""


def test_hardened_kernel_writes_only_in_its_session_dir(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    got = _run(HARDENED, {"OUTSIDE": str(outside)}, cwd=tmp_path)
    assert got.pop("hardened") is True and got.pop("again") is True
    assert got.pop("tempdir_in_session") is True
    allowed = {"read_outside", "devnull", "session_write", "session_mkdir", "tempfile"}
    for name, outcome in got.items():
        assert outcome == ("allowed" if name in allowed else "refused"), name
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "keep"
    assert not (tmp_path / "rel.txt").exists() and not (tmp_path / "escape.txt").exists()


MEMORY = """
import json, os
import numpy as np
from labkit.runtime.kernel import harden_kernel
harden_kernel(force=True)
try:
    big = np.ones(2 * 1024**3 // 8)  # 2 GiB
    outcome = "allocated"
except MemoryError:
    outcome = "MemoryError"
small = np.ones(1024**2 // 8)  # the kernel goes on
print(json.dumps({"outcome": outcome, "alive": float(small.sum())}))
"""


def test_hardened_kernel_memory_cap_is_a_memory_error_not_a_crash() -> None:
    got = _run(MEMORY, {"LABKIT_KERNEL_MEMORY_MIB": "1024"})
    assert got == {"outcome": "MemoryError", "alive": 131072.0}


def test_not_hardened_outside_voila() -> None:
    got = _run("import json; from labkit.runtime.kernel import harden_kernel;"
               "print(json.dumps({'h': harden_kernel()}))")
    assert got == {"h": False}


def test_ui_setup_hardens_only_under_voila_and_follows_labkit_theme() -> None:
    script = ("import json, labkit.ui as ui, labkit.ui.components as c, labkit.runtime.kernel as r;"
              "ui.setup(); print(json.dumps({'h': r._hardened, 't': c.PLOT_TEMPLATE}))")
    assert _run(script, {"LABKIT_THEME": "dark"}) == {"h": False, "t": "plotly_dark"}
    assert _run(script, {"VOILA_PREHEAT": "True"}) == {"h": True, "t": "plotly_white"}


HUB_RECORD = """
import json, os
from pathlib import Path
from labkit.runtime.kernel import harden_kernel
from labkit.data import progress
harden_kernel(force=True)
ok = progress.record_result("goodput.ex1", "86.1%", True)
try:
    open(Path.home() / "elsewhere.txt", "w").close()
    other = "allowed"
except PermissionError:
    other = "refused"
print(json.dumps({"recorded": ok, "lines": len(progress.progress_path().read_text().splitlines()),
                  "other": other}))
"""


def test_hardened_kernel_on_the_hub_records_exercises_in_the_students_own_home(
        tmp_path: Path) -> None:
    """A voila page of a hub student records checked answers (the class page reads them);
    every other write outside the session folder stays refused."""
    got = _run(HUB_RECORD, {"HOME": str(tmp_path), "JUPYTERHUB_USER": "minji"}, cwd=tmp_path)
    assert got == {"recorded": True, "lines": 1, "other": "refused"}
    assert not (tmp_path / "elsewhere.txt").exists()
