"""Lesson 01's live source: read a school's Prometheus into the replay (``prometheus_panel``).

The panel asks for the Prometheus server's address, a time window (5 min .. 24 h ending now, or
at a time typed in ISO 8601, local time), a step and an optional bearer token; **읽기** runs
:func:`labkit.data.prometheus.read_prometheus` and hands the result to lesson 01's replay app
(:func:`labkit.ui.observe.current_replay`, the one the lesson built above; the panel builds its
own when there is none), which then scrubs through it with the same panels and charts as an
uploaded log. Every failure (bad address, an exporter's address, unreachable, 401, no DCGM
series, too many points, an end in the future) is a Korean headline and a Korean detail line
(``observe.live.why.<detail>``, echoing what was typed) on the panel; the replay keeps its last
good log.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import ipywidgets as widgets

from labkit.data.prometheus import PrometheusError, read_prometheus, to_unix_s
from labkit.i18n import t
from labkit.observe import LogImport
from labkit.ui import format as fmt
from labkit.ui.components import guard
from labkit.ui.observe import ReplayApp, current_replay

__all__ = ["DEFAULT_URL", "STEPS", "WINDOWS", "PrometheusPanel", "auto_step", "prometheus_panel"]

#: Where a Prometheus listens by default (``--web.listen-address=0.0.0.0:9090``).
DEFAULT_URL = "http://127.0.0.1:9090"
#: Windows offered: (catalog key suffix, seconds).
WINDOWS: tuple[tuple[str, float], ...] = (("5m", 300.0), ("15m", 900.0), ("1h", 3600.0),
                                          ("6h", 21600.0), ("24h", 86400.0))
#: Steps offered (Prometheus durations); 15 s is a common scrape interval. "auto" picks the
#: smallest at or above 15 s that keeps a window to AUTO_MAX_POINTS per series.
STEPS: tuple[str, ...] = ("auto", "1s", "5s", "15s", "1m", "5m")
_STEP_S = {"1s": 1.0, "5s": 5.0, "15s": 15.0, "1m": 60.0, "5m": 300.0}
#: Points per series "auto" aims at: a day at 1 min (the replay indexes every reading, so a
#: day at 15 s of 8 GPUs, ~0.9 million readings, takes many seconds to open).
AUTO_MAX_POINTS = 1500
#: A classroom page waits at most this long for the server. [s]
TIMEOUT_S = 15.0
#: Longest URL or token accepted from the page (a browser can send anything). [characters]
MAX_FIELD_CHARS = 2000

#: How far past the page's clock a typed end may be before it counts as the future (clocks of
#: the student's browser and the server differ by a little). [s]
FUTURE_SLACK_S = 60.0

Reader = Callable[..., LogImport]


def _local(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s).strftime("%Y-%m-%d %H:%M:%S")


def _css(widget: widgets.Widget, *classes: str) -> widgets.Widget:
    for c in classes:
        widget.add_class(c)
    return widget


class PrometheusPanel(widgets.VBox):
    """The Prometheus source panel (see :func:`prometheus_panel`).

    Parameters
    ----------
    replay : ReplayApp, optional
        Where a read log goes (default: the lesson's :func:`current_replay` at click time).
    url : str, default DEFAULT_URL
    reader : callable, default read_prometheus
        ``reader(url, start, end, step, token=..., timeout_s=...)``.
    clock : callable, default time.time
        Unix seconds (the window ends now).
    """

    def __init__(self, replay: ReplayApp | None = None, *, url: str = DEFAULT_URL,
                 reader: Reader = read_prometheus, clock: Callable[[], float] = time.time
                 ) -> None:
        super().__init__()
        self.add_class("lk-live")
        self._replay = replay
        self._reader, self._clock = reader, clock
        wide = widgets.Layout(width="420px")
        style = {"description_width": "initial"}
        self.url = _css(widgets.Text(value=url, description=t("observe.live.url_label"),
                                     layout=wide, style=style), "lk-live-url")
        self.window = _css(widgets.Dropdown(
            options=[(t(f"observe.live.window.{k}"), s) for k, s in WINDOWS], value=900.0,
            description=t("observe.live.window_label"), style=style), "lk-live-window")
        self.step = _css(widgets.Dropdown(
            options=[(t("observe.live.step_auto") if k == "auto" else k, k) for k in STEPS],
            value="auto",
                                          description=t("observe.live.step_label"),
                                          style=style), "lk-live-step")
        self.end = _css(widgets.Text(value="", placeholder=t("observe.live.end_placeholder"),
                                     description=t("observe.live.end_label"), style=style),
                        "lk-live-end")
        self.token = _css(widgets.Password(value="", description=t("observe.live.token_label"),
                                           layout=wide, style=style), "lk-live-token")
        self.read = _css(widgets.Button(description=t("observe.live.read"), icon="download",
                                        button_style="primary"), "lk-live-read")
        self.status = _css(widgets.HTML(""), "lk-live-status")
        self.error = _css(widgets.HTML(""), "lk-live-error")
        self.log_import: LogImport | None = None
        self.children = [widgets.HTML(t("observe.live.title")),
                         widgets.HBox([self.url, self.token]),
                         widgets.HBox([self.window, guard(self.window, "live-window"), self.end,
                                       self.step, guard(self.step, "live-step"), self.read],
                                      layout=widgets.Layout(flex_flow="row wrap",
                                                            align_items="center")),
                         self.error, self.status]
        self.read.on_click(self._on_read)

    @property
    def replay(self) -> ReplayApp:
        """The replay app fed by this panel (built and shown here when the lesson has none)."""
        if self._replay is None:
            self._replay = current_replay()
        if self._replay is None:
            self._replay = ReplayApp()
            self.children = [*self.children, self._replay]
        return self._replay

    def _show_error(self, err: ValueError) -> None:
        if isinstance(err, PrometheusError):
            text = t(f"observe.live.error.{err.kind}")
            params = dict(err.params)
            if "value" in params:  # what the student typed, quoted (the particle follows it)
                params["value"] = f"'{params['value']}'"
            detail = t(f"observe.live.why.{err.detail}", **params)
        else:  # the replay refused the log (labkit.ui.observe words its own errors)
            text = t("observe.live.error.query_failed")
            detail = t("observe.live.why.other", message=str(err)[:300])
        self.error.value = (f'<span style="color:#b00020">⚠ {html.escape(text)}</span>'
                            f'<br><small>{html.escape(detail[:600])}</small>')
        self.status.value = ""

    def _on_read(self, _button: Any = None) -> None:
        self.load()

    def load(self) -> LogImport | None:
        """Read the window from the server and feed the replay; return the log (None on error).

        Errors show on the panel in Korean; the replay keeps its last good log.
        """
        url = str(self.url.value).strip()[:MAX_FIELD_CHARS]
        token = str(self.token.value).strip()[:MAX_FIELD_CHARS] or None
        window = self.window.value if self.window.value in dict(WINDOWS).values() else 900.0
        step = self.step.value if self.step.value in STEPS else "auto"
        if step == "auto":
            step = auto_step(float(window))
        self.status.value = t("observe.live.reading")
        end_text = str(self.end.value).strip()[:100]
        try:
            now = self._clock()
            end = to_unix_s(end_text, "end") if end_text else now
            if end > now + FUTURE_SLACK_S:
                raise PrometheusError(
                    "future_end", f"end {end_text!r} is in the future", detail="future_end",
                    end=_local(end), now=_local(now))
            log = self._reader(url, end - float(window), end, step, token=token,
                               timeout_s=TIMEOUT_S)
            self.replay.load(log)
        except ValueError as err:
            self._show_error(err)
            return None
        self.log_import = log
        self.error.value = ""
        lines = [t("observe.live.ok", url=html.escape(log.source), gpus=len(log.devices),
                   points=fmt.count(len(log.frame)),
                   start=log.start.strftime("%Y-%m-%d %H:%M:%S") if log.start else "-",
                   duration=f"{float(log.frame['timestamp_s'].max()):.0f}")]
        mig = log.metadata.get("mig_devices")
        if mig:
            lines.append(t("observe.live.mig_devices", n=mig))
        self.status.value = "<br>".join(lines)
        return log


def auto_step(window_s: float) -> str:
    """Return the step "auto" uses for a window: the smallest of 15 s, 1 m, 5 m that keeps
    the window to :data:`AUTO_MAX_POINTS` per series (5 m beyond)."""
    for step in ("15s", "1m", "5m"):
        if window_s / _STEP_S[step] <= AUTO_MAX_POINTS:
            return step
    return "5m"


def prometheus_panel(url: str = DEFAULT_URL) -> PrometheusPanel:
    """Return the panel that reads a Prometheus server into lesson 01's replay.

    Used in: notebooks/01_observe.ipynb
    """
    return PrometheusPanel(url=url)
