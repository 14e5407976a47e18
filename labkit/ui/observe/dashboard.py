"""The live dashboard of lesson 01 (and the scenario lab built on it).

Threads: the sampler polls NVML on its own thread (``labkit.gpu.sampler.Sampler.start``); after
each tick it hands the snapshot over and the app re-renders at most every
:data:`~labkit.ui.observe.common.RENDER_INTERVAL_S`, under one lock shared with the widget
callbacks. Widgets are only changed by setting traits (thread-safe in ipykernel); figures are
shown by setting the Output's ``outputs`` trait, never by capturing ``display()`` from a thread.
Nothing samples until a student presses start (or picks a scenario); it stops by itself after
:data:`~labkit.ui.observe.common.MAX_RUN_S`, so a forgotten tab does not poll forever, and on
kernel shutdown (daemon thread, ``atexit``).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import atexit
import html
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets

from labkit import observe as model
from labkit.gpu.sampler import GPM_MIN_INTERVAL_S, Sampler, stop_all
from labkit.i18n import error_text, t
from labkit.observe import PANELS
from labkit.ui.components import guard
from labkit.ui.observe.charts import activity_figure, power_figure, with_gaps
from labkit.ui.observe.common import (
    ACTIVITY_LINES,
    MAX_RUN_S,
    POWER_LINES,
    RATES_HZ,
    RENDER_INTERVAL_S,
    SCENARIO_RUN_S,
    SCENARIOS,
    WINDOW_S,
    LiveFigureOutput,
    css,
    download_link,
    error_html,
    no_null_tooltips,
)
from labkit.ui.observe.panels import panel_html, signals_html
from labkit.validate import InputError

__all__ = ["DashboardApp", "dashboard", "scenario_lab"]

_APPS: list[Any] = []


@atexit.register
def _stop_everything() -> None:
    stop_all()


class DashboardApp(widgets.VBox):
    """The live dashboard (see :func:`dashboard` and :func:`scenario_lab`).

    Parameters
    ----------
    nv : module or None
        The connected NVML module; None shows why there is no GPU (``reason``).
    name : str
        CSS prefix of the controls (``lk-<name>-run``, ``lk-<name>-rate``, ...).
    panels : sequence of str
        Panels shown (keys of :data:`labkit.observe.PANELS`).
    lab : object, optional
        The simulated lab (``labkit.gpu.simulator()``).
    scenarios : bool, default False
        Offer the simulated lab's workload scenarios (on a real GPU: a note that labkit never
        starts work there).
    charts : sequence of {"activity", "power"}
        The charts under the panels.
    clock, sleep : callable, optional
        The sampler's clock and the pause used to take the first GPM interval (tests pass the
        simulated lab's virtual clock and ``lab.advance``).
    """

    def __init__(self, nv: Any | None, *, name: str, panels: Sequence[str], lab: Any = None,
                 reason: str = "", rate_hz: float = 1.0,
                 charts: Sequence[str] = ("activity", "power"),
                 clock: Callable[[], float] | None = None,
                 sleep: Callable[[float], Any] = time.sleep, autostart_s: float | None = None,
                 scenarios: bool = False) -> None:
        super().__init__()
        self.app_name = name
        self.add_class(f"lk-{name}")
        self.panel_keys = tuple(panels)
        self.lab = lab
        #: Called after a scenario is switched (a prediction follows the lab: labkit.ui.predict).
        self.on_change: list[Callable[[Any], None]] = []
        self.autostart_s = autostart_s
        self._render_lock = threading.RLock()
        self._last_render = -math.inf
        self.renders = 0
        self.status = css(widgets.HTML(""), f"lk-{name}-status")
        self.cards = {p: css(widgets.HTML(""), f"lk-{name}-panel", f"lk-panel-{p}")
                      for p in self.panel_keys}
        self.signals = css(widgets.HTML(""), f"lk-{name}-signals")
        self.activity = LiveFigureOutput(f"lk-{name}-activity")
        self.power = LiveFigureOutput(f"lk-{name}-power")
        self.charts = tuple(charts)
        self.sampler: Sampler | None = None
        if nv is not None:
            self.sampler = Sampler(nv, clock=clock or time.monotonic)
            self.sampler.set_rate(rate_hz)
            if not self.sampler.devices:
                reason = self.sampler.error or "NoDevices"
                self.sampler = None
        if self.sampler is None:
            note = css(widgets.HTML(
                '<div style="padding:8px;border-left:4px solid #b00020;background:#fdecee">'
                + t("observe.no_gpu", reason=html.escape(reason or "?")) + "</div>"),
                f"lk-{name}-nogpu")
            self.children = [note]
            return
        self.children = self._build(rate_hz, scenarios)
        no_null_tooltips(self)
        # a first look, taken now: two polls one GPM interval apart, so SM activity has a value
        self.sampler.poll()
        sleep(GPM_MIN_INTERVAL_S + 0.01)
        self.sampler.poll()
        self.render(force=True)
        for old in [a for a in _APPS if a.app_name == name]:  # the cell was run again
            old.stop()
            _APPS.remove(old)
        _APPS.append(self)

    def _build(self, rate_hz: float, scenarios: bool) -> list[widgets.Widget]:
        """Create the controls and return the app's rows."""
        assert self.sampler is not None
        name, gpus = self.app_name, self.sampler.gpus
        self.gpu = css(widgets.Dropdown(
            options=[(t("observe.gpu_option", index=g, name=d.name), g)
                     for g, d in zip(gpus, self.sampler.devices, strict=True)],
            value=gpus[0], description=t("observe.gpu_label"),
            layout=widgets.Layout(width="360px")), f"lk-{name}-gpu")
        self.run = css(widgets.ToggleButton(value=False, description=t("observe.start"),
                                            button_style="success",
                                            layout=widgets.Layout(width="120px")),
                       f"lk-{name}-run")
        self.rate = css(widgets.Dropdown(
            options=[(f"{r:g} Hz", r) for r in RATES_HZ], value=rate_hz,
            description=t("observe.rate_label"), layout=widgets.Layout(width="200px")),
            f"lk-{name}-rate")
        self.export = css(widgets.Button(description=t("observe.export.button")),
                          f"lk-{name}-export")
        self.export_link = css(widgets.HTML(""), f"lk-{name}-export-link")
        self.error = css(widgets.HTML(""), "lk-error")
        self.gpu.observe(self._on_gpu, names="value")
        self.run.observe(self._on_run, names="value")
        self.rate.observe(self._on_rate, names="value")
        self.export.on_click(self._on_export)
        rows: list[widgets.Widget] = [
            widgets.HBox([self.run, self.rate, guard(self.rate, f"{name}-rate"), self.gpu,
                          guard(self.gpu, f"{name}-gpu")],
                         layout=widgets.Layout(flex_flow="row wrap", align_items="center")),
            self.status, self.error]
        rows += self._build_scenario(scenarios)
        grid = widgets.GridBox(list(self.cards.values()), layout=widgets.Layout(
            grid_template_columns="repeat(auto-fill, minmax(210px, 1fr))", grid_gap="8px"))
        rows += [self.signals, grid]
        rows += [{"activity": self.activity, "power": self.power}[c] for c in self.charts]
        rows.append(widgets.HBox([self.export, self.export_link]))
        return rows

    def _build_scenario(self, scenarios: bool) -> list[widgets.Widget]:
        """Return the scenario switcher's rows (none without ``scenarios``)."""
        assert self.sampler is not None
        name = self.app_name
        self.scenario: widgets.Dropdown | None = None
        self.reveal = css(widgets.HTML(""), f"lk-{name}-reveal")
        if not scenarios:
            return []
        if self.lab is None:
            return [css(widgets.HTML(t("observe.real_gpu_note")), f"lk-{name}-real-note")]
        self.scenario = css(widgets.Dropdown(
            options=[(t(f"observe.scenario.{s}"), s) for s in SCENARIOS],
            value=self._current_scenario(self.sampler.gpus[0]),
            description=t("observe.scenario_label"),
            layout=widgets.Layout(width="680px"), style={"description_width": "initial"}),
            f"lk-{name}-scenario")
        self.scenario.observe(self._on_scenario, names="value")
        scenario_row = widgets.HBox([self.scenario, guard(self.scenario, f"{name}-scenario")],
                                    layout=widgets.Layout(align_items="center"))
        return [widgets.VBox([scenario_row, self.reveal])]

    # -- state ----------------------------------------------------------------------------------
    @property
    def selected_gpu(self) -> int:
        """The GPU the panels show (validated: always one the sampler reads)."""
        assert self.sampler is not None
        g = self.gpu.value
        return g if g in self.sampler.gpus else self.sampler.gpus[0]

    def _current_scenario(self, gpu: int) -> str:
        running = [w.scenario.name for w in self.lab.workloads(gpu)]
        return running[-1] if running and running[-1] in SCENARIOS else "idle"

    # -- callbacks ------------------------------------------------------------------------------
    def _set_error(self, err: ValueError | None) -> None:
        if err is None:
            self.error.value = ""
            return
        self.error.value = error_html(error_text(err, prefix="observe.error"))

    def _on_gpu(self, _change: Any = None) -> None:
        if self.scenario is not None:
            self.scenario.unobserve(self._on_scenario, names="value")
            self.scenario.value = self._current_scenario(self.selected_gpu)
            self.scenario.observe(self._on_scenario, names="value")
        self.render(force=True)

    def _on_rate(self, change: Any) -> None:
        assert self.sampler is not None
        try:
            self.sampler.set_rate(change["new"])
        except ValueError as err:
            self._set_error(err)
            return
        self._set_error(None)
        self.render(force=True)

    def _on_run(self, change: Any) -> None:
        if change["new"]:
            self.start()
        else:
            self.stop()

    def start(self, max_run_s: float | None = MAX_RUN_S) -> None:
        """Start sampling on the background thread (stops by itself after ``max_run_s``)."""
        assert self.sampler is not None
        try:
            self.sampler.start(self.rate.value, max_run_s=max_run_s,
                               on_snapshot=self._on_snapshot)
        except ValueError as err:
            self._set_error(err)
            self._set_run(False)
            return
        self._set_error(None)
        self._set_run(True)
        self.render(force=True)

    def stop(self) -> None:
        """Stop sampling (waits for the thread to end)."""
        if self.sampler is not None:
            self.sampler.stop()
        self._set_run(False)
        self.render(force=True)

    def close(self) -> None:
        """Stop sampling, free NVML resources and close the widgets."""
        if self.sampler is not None:
            self.sampler.close()
        if self in _APPS:
            _APPS.remove(self)
        super().close()

    def _set_run(self, on: bool) -> None:
        self.run.unobserve(self._on_run, names="value")
        self.run.value = on
        self.run.description = t("observe.stop") if on else t("observe.start")
        self.run.tooltip = self.run.description
        self.run.button_style = "warning" if on else "success"
        self.run.observe(self._on_run, names="value")

    def _on_scenario(self, change: Any) -> None:
        name = change["new"]
        try:
            self.switch_scenario(name)
        except ValueError as err:
            self._set_error(err)

    def switch_scenario(self, name: str) -> None:
        """Run scenario ``name`` on the selected simulated GPU (stops its other workloads).

        Raises
        ------
        labkit.validate.InputError
            For a scenario not offered.
        """
        from labkit import validate

        validate.one_of("scenario", name, SCENARIOS)
        if self.lab is None:
            raise InputError("scenario", "choice", name, "no simulated GPU")
        gpu = self.selected_gpu
        with self._render_lock:
            self.lab.stop(device=gpu)
            if name != "idle":
                self.lab.start(name, gpu)
        self._set_error(None)
        self.reveal.value = self._reveal_text(name)
        if self.autostart_s and self.sampler is not None and not self.sampler.running:
            self.start(max_run_s=self.autostart_s)
        self.render(force=True)
        for hook in self.on_change:
            hook(self)

    @staticmethod
    def _reveal_text(name: str) -> str:
        panels = ", ".join(t(f"observe.panel.{p}") for p in model.SCENARIO_REVEALS.get(name, ()))
        return ('<div style="padding:6px 10px;border-left:4px solid #2e7d32;background:#eef7ef">'
                + t("observe.reveal", panels=panels, why=t(f"observe.reveal.{name}")) + "</div>")

    def _on_export(self, _button: Any = None) -> None:
        assert self.sampler is not None
        frame = self.sampler.history.frame()
        if frame.empty:
            self.export_link.value = t("observe.export.empty")
            return
        text = model.export_csv(frame, source=f"labkit dashboard, {self._gpu_words()}",
                                as_of=time.strftime("%Y-%m-%d"))
        self.export_link.value = download_link(text, "labkit_observe.csv")

    def _gpu_words(self) -> str:
        assert self.sampler is not None
        return ", ".join(f"GPU {d.index} {d.name}" for d in self.sampler.devices)

    def _on_snapshot(self, _snap: model.Snapshot) -> None:
        self.render()

    # -- drawing --------------------------------------------------------------------------------
    def render(self, force: bool = False) -> None:
        """Redraw panels, signals and charts from the history (at most every 0.5 s unless
        ``force``)."""
        if self.sampler is None:
            return
        with self._render_lock:
            now = time.monotonic()
            if not force and now - self._last_render < RENDER_INTERVAL_S:
                return
            self._last_render = now
            gpu = self.selected_gpu
            view = self.sampler.history.latest(gpu)
            for p, card in self.cards.items():
                card.value = panel_html(p, view)
            self.signals.value = signals_html(view)
            self.status.value = self._status_text()
            if self.charts:
                end = self.sampler.now()
                since = end - WINDOW_S
                act = self.sampler.history.series(gpu, [k for k, _ in ACTIVITY_LINES], since)
                pw = self.sampler.history.series(gpu, list(POWER_LINES), since)
                x_range = (max(0.0, since), max(end, WINDOW_S / 6))
                gap = max(3.0 / self.sampler.rate_hz, 1.0)
                if "activity" in self.charts:
                    self.activity.show(activity_figure(
                        with_gaps(act, gap), title=t("observe.chart.activity"), x_range=x_range))
                if "power" in self.charts:
                    self.power.show(power_figure(
                        with_gaps(pw, gap), title=t("observe.chart.power"), x_range=x_range))
            self.renders += 1

    def _status_text(self) -> str:
        assert self.sampler is not None
        s = self.sampler
        interval = (f"{s.last_interval_s:.2f} s" if s.last_interval_s is not None else "-")
        if s.running:
            head = t("observe.status_running", rate=f"{s.rate_hz:g}")
        elif s.stopped_reason == "max_run":
            head = t("observe.status_auto_stopped")
        elif s.stopped_reason == "callback_error":
            head = t("observe.status_error", error=html.escape(str(s.callback_error)))
        else:
            head = t("observe.status_stopped")
        text = (f'<span style="color:#555">{head} · '
                + t("observe.status_detail", interval=interval,
                    duration=f"{s.last_duration_s * 1000:.1f} ms", ticks=s.ticks))
        if len(s.gpus) > 1:
            healthy, total = model.healthy_gpus({g: s.history.latest(g) for g in s.gpus})
            text += " · " + t("observe.fleet", healthy=healthy, total=total)
        return text + "</span>"


def _connect() -> tuple[Any | None, Any, str]:
    """Return (NVML module or None, simulated lab or None, reason when there is no GPU)."""
    import labkit.gpu as gpu

    status = gpu.status()
    if status.kind == "none":
        return None, None, status.reason or status.reason_code or "none"
    try:
        nv = gpu.connect()
    except Exception as err:  # NVML errors (pynvml stays inside labkit.gpu) and bad specs
        return None, None, str(err)
    lab = gpu.simulator() if gpu.status().kind == "sim" else None
    return nv, lab, ""


def dashboard(*, rate_hz: float = 1.0, nv: Any = None, lab: Any = None,
              clock: Callable[[], float] | None = None,
              sleep: Callable[[float], Any] = time.sleep) -> DashboardApp:
    """Return the live dashboard of the lab GPU (stopped until the student presses start).

    Parameters
    ----------
    rate_hz : float, default 1.0
        Initial sampling rate (one of :data:`RATES_HZ`). [Hz]
    nv, lab, clock, sleep : optional
        For tests: an NVML module, the simulated lab, a clock and a pause (default: the lesson's
        lab GPU from ``labkit.gpu``, wall clock).
    """
    reason = ""
    if nv is None:
        nv, lab, reason = _connect()
    return DashboardApp(nv, name="observe", panels=tuple(PANELS), lab=lab, reason=reason,
                        rate_hz=rate_hz, clock=clock, sleep=sleep)


def scenario_lab(*, nv: Any = None, lab: Any = None, clock: Callable[[], float] | None = None,
                 sleep: Callable[[float], Any] = time.sleep) -> DashboardApp:
    """Return the scenario switcher: key panels of the simulated GPU and what reveals each job.

    Picking a scenario starts sampling (at 2 Hz, for :data:`SCENARIO_RUN_S`). On a real GPU
    it shows the panels without the switcher (labkit never starts work on a real GPU).
    """
    reason = ""
    if nv is None:
        nv, lab, reason = _connect()
    return DashboardApp(nv, name="scenario", lab=lab, reason=reason, rate_hz=2.0, scenarios=True,
                        panels=("gpu_util", "sm_active", "tensor_active", "dram_active",
                                "power", "clocks", "pcie"),
                        clock=clock, sleep=sleep, autostart_s=SCENARIO_RUN_S,
                        charts=("activity",))

