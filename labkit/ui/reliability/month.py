"""Lesson 04's month: the worksheet's month by Monte Carlo, and a job's event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from labkit import eventlog, validate
from labkit import reliability as model
from labkit.data import reliability as data
from labkit.goodput import Worksheet
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import (
    Field,
    FigureOutput,
    LiveApp,
    number_field,
    slider_field,
    styled_figure,
)
from labkit.ui.goodput import waterfall_figure
from labkit.ui.reliability.base import _COLORS, _MAX_GPUS, UI_MAX_TRIALS, _bounded


# -- 4. the month ---------------------------------------------------------------------------
@dataclass(frozen=True)
class MonthView:
    """A Monte Carlo run, its exact expectation, and the sampled month."""

    frame: pd.DataFrame
    expected: Worksheet
    sample: int
    sampled: Worksheet
    hours: float


class MonthApp(LiveApp[MonthView]):
    """Monte Carlo of the worksheet's month (see :func:`month_app`)."""

    def __init__(self, defaults: data.MonthModel, reference: float) -> None:
        self.defaults = defaults
        self.reference = reference
        self.seed = defaults.seed
        self._cache: tuple[tuple[Any, ...], pd.DataFrame] | None = None
        fields = [
            slider_field("trials", t("reliability.month.trials"), defaults.trials, min=1000,
                         max=UI_MAX_TRIALS, step=1000, readout_format=".0f"),
            slider_field("interval_min", t("reliability.interval.interval"),
                         defaults.checkpoint_interval_h * 60, min=1, max=240, step=1, unit="분",
                         readout_format=".0f"),
            slider_field("write_s", t("reliability.ettr.write"),
                         round(defaults.checkpoint_write_h * 3600), min=0, max=600, step=5,
                         unit="초", readout_format=".0f"),
            slider_field("restart_min", t("reliability.interval.restart"),
                         round(defaults.restart_h * 60), min=0, max=120, step=1, unit="분",
                         readout_format=".0f"),
            number_field("n_gpus", t("reliability.ettr.n_gpus"), defaults.n_gpus, unit="장",
                         step=1024),
            slider_field("sample", t("reliability.month.sample"), 0, min=0, max=999, step=1,
                         readout_format=".0f"),
        ]
        super().__init__("month", fields, error_prefix="reliability.month",
                         field_map={"checkpoint_interval_h": "interval_min",
                                    "checkpoint_write_h": "write_s", "restart_h": "restart_min",
                                    "trial": "sample"})
        self.progress = widgets.IntProgress(value=0, min=0, max=defaults.trials,
                                            layout=widgets.Layout(width="420px"))
        self.progress.add_class("lk-month-progress")
        redraw = widgets.Button(description=t("reliability.month.redraw"))
        redraw.add_class("lk-month-redraw")
        redraw.on_click(self._redraw)
        self.summary = widgets.HTML()
        self.summary.add_class("lk-month-summary")
        self.histogram = FigureOutput("lk-month-histogram")
        self.waterfall = FigureOutput("lk-month-waterfall")
        self.children = [*(f.box for f in self.fields.values()),
                         widgets.HBox([redraw, self.progress]), self.status, self.summary,
                         self.histogram, self.waterfall]
        self.update()

    def _redraw(self, *_: Any) -> None:
        self.seed += 1
        self.update()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.max = total
        self.progress.value = done

    def compute(self, values: dict[str, Any]) -> MonthView:
        trials = validate.integer("trials", _bounded("trials", values["trials"], UI_MAX_TRIALS),
                                  minimum=1)
        # the model takes any GPU count; bound it here so 1e308 is refused under this control,
        # not as a checkpoint write longer than a vanishing job MTBF
        n_gpus = validate.integer("n_gpus", _bounded("n_gpus", values["n_gpus"], _MAX_GPUS),
                                  minimum=1)
        kwargs = {**self.defaults.kwargs(), "n_gpus": n_gpus,
                  "checkpoint_interval_h": values["interval_min"] / 60,
                  "checkpoint_write_h": values["write_s"] / 3600,
                  "restart_h": values["restart_min"] / 60}
        expected = model.expected_month(**kwargs)  # validates every input first
        key = (*kwargs.values(), trials, self.seed)
        if self._cache is not None and self._cache[0] == key:
            frame = self._cache[1]
        else:
            frame = model.simulate_month(**kwargs, trials=trials, seed=self.seed,
                                         progress=self._on_progress)
            self._cache = (key, frame)
        sample = validate.integer("trial", values["sample"], minimum=0)
        sampled = model.month_worksheet(frame, sample, self.defaults.hours)
        return MonthView(frame, expected, sample, sampled, self.defaults.hours)

    def render(self, result: MonthView) -> None:
        goodput = result.frame["goodput"]
        mean, sd = float(goodput.mean()), float(goodput.std())
        below = float((goodput < self.reference).mean())
        fig = styled_figure(title=t("reliability.month.hist_title", n=fmt.count(len(goodput))),
                            xaxis_title=t("reliability.month.x"),
                            yaxis_title=t("reliability.month.y"), height=380, showlegend=False,
                            bargap=0.02)
        fig.add_trace(go.Histogram(x=100 * goodput, nbinsx=60, marker={"color": "#3b6fb6"},
                                   name=t("reliability.month.y")))
        fig.add_vline(x=100 * self.reference, line={"color": _COLORS["chosen"], "width": 3},
                      annotation_text=t("reliability.month.reference",
                                        pct=fmt.pct(self.reference)),
                      annotation_position="top left")
        fig.add_vline(x=100 * result.expected.goodput,
                      line={"color": _COLORS["exact"], "dash": "dash", "width": 2},
                      annotation_text=t("reliability.month.expected",
                                        pct=fmt.pct(result.expected.goodput, 2)),
                      annotation_position="top right", annotation_yshift=-22)
        self.histogram.show(fig)
        water = waterfall_figure(result.sampled)
        row = result.frame.loc[result.sample]
        water.update_layout(title=t("reliability.month.sample_title", k=result.sample,
                                    pct=fmt.pct(float(row["goodput"])),
                                    n=int(row["interruptions"])),
                            height=440, margin={"b": 120})
        self.waterfall.show(water)
        self.summary.value = "<br>".join([
            "<b>" + t("reliability.month.result", mean=fmt.pct(mean, 2), sd=fmt.pct(sd, 2),
                      expected=fmt.pct(result.expected.goodput, 2)) + "</b>",
            t("reliability.month.below", pct=fmt.pct(below), ref=fmt.pct(self.reference)),
            t("reliability.month.interruptions",
              mean=fmt.count(float(result.frame["interruptions"].mean()), 1),
              low=int(result.frame["interruptions"].min()),
              high=int(result.frame["interruptions"].max())),
        ])


def month_app() -> MonthApp:
    """Return the Monte Carlo app for the worksheet's month (``data/reliability/month_model``)."""
    from labkit.data.goodput import load_worksheet_seed

    return MonthApp(data.load_month_model(), load_worksheet_seed().worksheet.goodput)


def month_numbers() -> fmt.Table:
    """Return the month model's exact expected ledger next to the course worksheet [h]."""
    from labkit.data.goodput import load_worksheet_seed

    seed = load_worksheet_seed().worksheet
    expected = model.expected_month(**data.load_month_model().kwargs())
    rows = [(t(f"goodput.loss.{name}"), f"{seed.losses[name]:g} h",
             f"{expected.losses[name]:.2f} h") for name in model.LEDGER_COLUMNS]
    rows.append(("Goodput", fmt.pct(seed.goodput, 2), fmt.pct(expected.goodput, 2)))
    column = t("reliability.col_item")
    return fmt.people_table(pd.DataFrame(rows, columns=[column, t("reliability.num.worksheet"),
                                                    t("reliability.num.model")]))


# -- 5. event log ---------------------------------------------------------------------------
@dataclass(frozen=True)
class LogView:
    """An event log and its breakdown."""

    log: list[dict[str, Any]]
    result: eventlog.LogGoodput


class EventLogApp(LiveApp[LogView]):
    """Goodput and badput from an event log (see :func:`eventlog_app`)."""

    def __init__(self) -> None:
        fields = [
            slider_field("restart_s", t("reliability.log.restart"), 30, min=25, max=120, step=1,
                         unit="초", readout_format=".0f"),
            Field("resume_step", t("reliability.log.resume"),
                  widgets.IntSlider(value=2, min=0, max=4, continuous_update=False,
                                    layout=widgets.Layout(width="420px"))),
        ]
        super().__init__("eventlog", fields, error_prefix="reliability.log")
        self.summary = widgets.HTML()
        self.summary.add_class("lk-eventlog-summary")
        self.chart = FigureOutput("lk-eventlog-chart")
        self.log_view = widgets.HTML()
        self.log_view.add_class("lk-eventlog-log")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.summary,
                         self.chart, self.log_view]
        self.update()

    def compute(self, values: dict[str, Any]) -> LogView:
        restart = _bounded("restart_s", values["restart_s"], 1e6)
        log = eventlog.disrupted_run_log(restart_s=restart, resume_step=values["resume_step"])
        return LogView(log, eventlog.job_goodput(log))

    def render(self, view: LogView) -> None:
        result = view.result
        table = result.table()
        table = table[table["seconds"] > 0]
        fig = styled_figure(title=t("reliability.log.title", total=f"{result.total_s:g}"),
                            xaxis_title=t("reliability.log.x"), height=340, barmode="stack")
        # the legend stays at the right, clear of the axis title (issue 17: it sat on it)
        fig.update_yaxes(showticklabels=False)
        palette = ["#2e7d32", "#8d6e63", "#a1887f", "#e09f3e", "#f2c14e", "#5c6bc0", "#7986cb",
                   "#d1495b", "#9c27b0", "#26a69a", "#9e9e9e"]
        colors = dict(zip([b.value for b in eventlog.Bucket], palette, strict=True))
        for row in table.itertuples():
            fig.add_trace(go.Bar(y=[t("reliability.log.job")], x=[row.seconds], orientation="h",
                                 name=t(f"reliability.bucket.{row.bucket}"),
                                 marker={"color": colors[row.bucket]},
                                 text=[f"{row.seconds:g}s"], textposition="inside"))
        fig.update_yaxes(showticklabels=False)
        self.chart.show(fig)
        self.summary.value = "<b>" + t(
            "reliability.log.result", pct=fmt.pct(result.goodput, 1),
            n=result.disruptions, step=result.last_productive_step) + "</b>"
        # the log as the goodput package writes it: code, not prose (field names stay)
        events = "".join(f"<tr><td><code>{_event_text(e)}</code></td></tr>" for e in view.log)
        self.log_view.value = (f"<details><summary>{t('reliability.log.show')}</summary>"
                               f"<table style='font-family:monospace'>{events}</table></details>")


def _event_text(record: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in record.items())


def eventlog_app() -> EventLogApp:
    """Return the event-log app (the library's "wasted progress and disruptions" test log)."""
    return EventLogApp()


def eventlog_numbers() -> fmt.Table:
    """Return check case 11B's breakdown: seconds and % of the 49-s job per bucket."""
    table = eventlog.job_goodput(eventlog.disrupted_run_log()).table()
    return fmt.people_table(pd.DataFrame({
        t("reliability.col_item"): [t(f"reliability.bucket.{b}") for b in table["bucket"]],
        t("reliability.num.seconds"): table["seconds"].map(lambda v: f"{v:g}"),
        t("reliability.num.share_pct"): (100 * table["fraction"]).map(fmt.number),
    }))


