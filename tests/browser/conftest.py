"""Browser tests: a voila server started like ``make present`` and Debian's chromium.

The browser is ``/usr/bin/chromium`` (or ``$LABKIT_CHROMIUM``), driven by Playwright; no browser
is downloaded. Screenshots go to ``test-artifacts/`` (or ``$LABKIT_ARTIFACTS``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labkit.serve import CONFIG_DIR, voila_command
from labkit.serve.processes import ServerDidNotStart, stop_process, wait_until_answers

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("LABKIT_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("LABKIT_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))
# Flags from the stack notes: this machine's closed network refuses chromium's background calls.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage",
         # An offline classroom: every host but this machine fails to resolve at once. (Not a
         # Playwright route: intercepting requests stalls voila's streamed page.)
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
RENDER_TIMEOUT_MS = 120_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_server(argv: list[str], *, cwd: Path, env: dict[str, str], log_path: Path,
                   ready_url: str, what: str, timeout_s: float) -> Iterator[None]:
    """Start ``argv``, wait until ``ready_url`` answers, and stop it afterwards (kill at 15 s).

    Fails the test with the end of the server's log when it exits or does not answer in time.
    """
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        try:
            wait_until_answers(ready_url, proc, timeout_s=timeout_s, what=what,
                               log_path=log_path, ok_status=200)
        except ServerDidNotStart as err:
            pytest.fail(str(err))
        yield
    finally:
        stop_process(proc, timeout_s=15)


@contextlib.contextmanager
def running_lab(root: Path, token: str) -> Iterator[str]:
    """JupyterLab with `make lab`'s options over ``root`` on loopback; yield its base URL.

    Its runtime files and log go beside ``root`` (``root.parent``)."""
    port = _free_port()
    argv = [str(Path(sys.executable).with_name("jupyter")), "lab",
            "--config=labkit/serve/config/jupyter_server_config.py",
            f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.open_browser=False",
            f"--IdentityProvider.token={token}"]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root.parent / "runtime")}
    url = f"http://127.0.0.1:{port}/"
    with running_server(argv, cwd=ROOT, env=env, log_path=root.parent / "lab.log",
                        ready_url=f"{url}api/status?token={token}", what="jupyter lab",
                        timeout_s=90):
        yield url


@pytest.fixture(scope="session")
def voila_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start voila over notebooks/ as ``make present`` does; yield its base URL."""
    port = _free_port()
    argv = voila_command(port=port)
    log_path = tmp_path_factory.mktemp("voila") / "voila.log"
    env = {**os.environ, "LABKIT_GPU": os.environ.get("LABKIT_GPU", "sim:H100-80GB")}
    url = f"http://127.0.0.1:{port}/"
    with running_server(argv, cwd=CONFIG_DIR, env=env, log_path=log_path,
                        ready_url=url + "voila/api/contents", what="voila", timeout_s=60):
        yield url


def open_lesson(page: Any, base_url: str, notebook: str, *charts: str,
                confirm: bool = True) -> None:
    """Load a lesson as a voila app and wait until its first plot is drawn.

    ``charts``: CSS classes (no dot) of the plots to wait for besides the first one drawn.
    ``confirm``: confirm the predictions that hide their app first (a test of the prediction
    box itself passes False and confirms it).
    """
    # "commit", not "load": voila streams the page while the kernel runs the notebook.
    page.goto(f"{base_url}voila/render/{notebook}", wait_until="commit",
              timeout=RENDER_TIMEOUT_MS)
    page.wait_for_selector(".lk-banner", timeout=RENDER_TIMEOUT_MS)
    # attached, not visible: the first plot may sit in an app hidden until its prediction
    # is confirmed (issue 25), which confirm_revealing_predictions then does
    page.wait_for_selector(".js-plotly-plot .main-svg", state="attached",
                           timeout=RENDER_TIMEOUT_MS)
    if confirm:
        confirm_revealing_predictions(page)
    for css in charts:
        page.wait_for_selector(f".{css} .js-plotly-plot .main-svg")


def confirm_revealing_predictions(page: Any, guess: str = "1") -> None:
    """Confirm each prediction that hides its app until confirmed (``.lk-predict-reveals``,
    issue 25), as a student does first: type ``guess``, press 예측 확정, wait for the app."""
    # a confirmed prediction's app redraws its charts (labkit.ui.components.reveal): for a
    # moment their Output areas hold no plot, so wait until as many plots are back as before
    plots = page.evaluate("() => document.querySelectorAll('.js-plotly-plot').length")
    for box in page.locator(".lk-predict-reveals").all():
        if box.locator("input[type=radio]").count():  # a choice (09): its first option
            box.locator("input[type=radio]").first.check()
        else:
            box.locator("input").first.fill(guess)
        label = box.locator("button").first.inner_text()
        box.locator("button").first.click()
        # the lock's new label is the last of confirm's messages (labkit.ui.predict.commit:
        # disabled, then reveal's redraws and the callbacks, then the label), so once it shows,
        # every revealed Output has been cleared and given its figure again
        page.wait_for_function(
            "([el, label]) => { const b = el.querySelector('button');"
            " return b.disabled && b.innerText.trim() !== label.trim(); }",
            arg=[box.element_handle(), label])
    if page.locator(".lk-predict-reveals").count():
        # every chart shown is drawn at its height: one drawn while hidden came out 0 px tall
        # once shown (the new teacher's trial, 1280 x 900), its SVG still "visible"
        page.wait_for_function(
            "(n) => { const all = [...document.querySelectorAll('.js-plotly-plot')];"
            " return all.length >= n && all.every((g) =>"
            " g.offsetParent === null || getComputedStyle(g).visibility === 'hidden'"
            " || g.getBoundingClientRect().height > 0); }", arg=plots)


def wait_for_text(page: Any, css: str, text: str) -> None:
    """Wait until the (first) element ``.css`` shows ``text`` in its inner text."""
    page.wait_for_function(
        "([css, text]) => document.querySelector('.' + css)?.innerText.includes(text)",
        arg=[css, text])


def enter_value(page: Any, css: str, value: str) -> Any:
    """Type ``value`` into the text box of the control ``.css``, press Enter; return the box."""
    box = page.locator(f".{css} input")
    box.fill(value)
    box.press("Enter")
    return box


def plot_json(page: object, css: str) -> str | None:
    """Return ``JSON.stringify`` of the data of the (last) plot inside the element ``.css``."""
    return page.evaluate(  # type: ignore[attr-defined]
        "(css) => { const all = document.querySelectorAll('.' + css + ' .js-plotly-plot');"
        " const g = all[all.length - 1]; return g && g.data ? JSON.stringify(g.data) : null; }",
        css)


def wait_for_plot_change(page: object, css: str, before: str | None) -> str:
    """Wait until a plot inside ``.css`` holds data other than ``before``; return its JSON.

    Looks at every plot under ``.css``: while an Output area swaps figures, the old plot element
    can linger next to the new one for a moment.
    """
    handle = page.wait_for_function(  # type: ignore[attr-defined]
        "([css, b]) => { for (const g of document.querySelectorAll('.' + css + ' .js-plotly-plot'))"
        " { const j = g.data ? JSON.stringify(g.data) : null; if (j && j !== b) return j; }"
        " return null; }", arg=[css, before])
    return str(handle.json_value())


def screenshot(page: object, name: str) -> Path:
    """Save a screenshot of the whole lesson as a test artifact; return its path.

    Voila's lab template scrolls inside an inner element, so the viewport is first stretched to
    the tallest scroll height (capped at 16,000 px).
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    height = page.evaluate(  # type: ignore[attr-defined]
        "() => Math.max(...[...document.querySelectorAll('body, body *')]"
        ".map(e => e.scrollHeight))")
    size = page.viewport_size  # type: ignore[attr-defined]
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 16_000)})  # type: ignore[attr-defined]
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    page.set_viewport_size(size)  # type: ignore[attr-defined]
    return path


def assert_no_traceback(page: object) -> None:
    """Fail if the page shows Python error text (or the Korean notes that replace it in voila)."""
    from labkit.i18n import t

    text = page.inner_text("body")  # type: ignore[attr-defined]
    markers = ("Traceback", "There was an error when executing cell", "Error displaying widget",
               t("serve.kernel_error"), t("serve.cell_error"))
    for marker in markers:
        assert marker not in text, f"page shows {marker!r}"
