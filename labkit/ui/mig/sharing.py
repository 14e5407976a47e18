"""Lesson 02's sharing modes: MIG vs MPS vs time-slicing, the class's workload under each,
and the tables nbval checks.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from labkit import mig, validate
from labkit import sharing as share
from labkit.i18n import t
from labkit.mig import Layout
from labkit.ui import format as fmt
from labkit.ui.components import (
    FigureOutput,
    LiveApp,
    number_field,
    styled_figure,
)
from labkit.ui.exercises import Exercise, exercise_set
from labkit.ui.mig.board import _TABLE_CSS, CHALLENGE, DEFAULT_MODEL, BoardApp

# --- sharing modes ------------------------------------------------------------------------------

_MODE_KEYS = ("time_slicing", "mps", "mig")
_ROW_KEYS = ("partition", "max", "compute", "memory", "bandwidth", "faults", "reconfigure",
             "fits")


def sharing_modes() -> fmt.Table:
    """Return MIG vs MPS vs time-slicing: partitioning, isolation, QoS, reconfiguration.

    From the CUDA concurrency comparison of NVIDIA's MIG user guide (MPS vs MIG), the MPS
    documentation (optional limits, a fatal fault reaches every client) and the GPU Operator's
    time-slicing notes (no memory or fault isolation).

    Used in: notebooks/02_mig.ipynb
    """
    rows = [[t(f"mig.modes.{row}.{mode}") for mode in _MODE_KEYS] for row in _ROW_KEYS]
    index = pd.Index([t(f"mig.modes.{row}") for row in _ROW_KEYS], name=t("mig.modes.col"))
    return fmt.people_table(pd.DataFrame(rows, index=index,
                                     columns=[t(f"mig.mode.{m}") for m in _MODE_KEYS]))


@dataclass(frozen=True)
class WorkloadView:
    """What the workload app shows: the results per mode and the MIG layout used."""

    results: dict[str, share.ModeResult]
    layout: Layout


def _hours(h: float) -> str:
    """Hours as people read them: 7 h, 1.5 h, 0.14 h (two decimals at most, no "7.00")."""
    return f"{fmt.number(round(h, 2))} h" if math.isfinite(h) else "n/a"


def _workload_table(results: Mapping[str, share.ModeResult]) -> pd.DataFrame:
    rows = []
    for mode, r in results.items():
        finished = all(run.outcome == "done" for run in r.runs)

        def hours(h: float, finished: bool = finished) -> str:
            return _hours(h) if finished else t("mig.wl.no_time")

        rows.append({
            t("mig.wl.mode"): t(f"mig.mode.{mode}"),
            t("mig.wl.makespan"): hours(r.makespan_h),
            t("mig.wl.jct"): hours(r.mean_jct_h),
            t("mig.wl.wait"): hours(r.mean_wait_h),
            t("mig.wl.allocation"): fmt.pct(r.allocation_frac),
            t("mig.wl.useful"): fmt.pct(r.useful_frac),
            t("mig.wl.oom"): fmt.count(r.oom_jobs),
            t("mig.wl.interfering"): fmt.count(r.interfering_jobs),
        })
    return pd.DataFrame(rows).set_index(t("mig.wl.mode"))


def _table_html(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [frame.index.name, *frame.columns])
    rows = "".join(
        f"<tr><th>{html.escape(str(i))}</th>"
        + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for i, row in zip(frame.index, frame.to_numpy().tolist(), strict=True))
    return (f'{_TABLE_CSS}<table class="lk-table lk-mig-table" style="font-size:13px">'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")


_OUTCOMES = (("done", "#2e7d32"), ("oom", "#b00020"), ("no_slot", "#adb5bd"))


def outcome_figure(results: Mapping[str, share.ModeResult],
                   fig: go.Figure | None = None) -> go.Figure:
    """Return, per sharing mode, how many jobs finished, were OOM-killed or never started.

    A stacked horizontal bar per mode (jobs); beside it the time until all jobs finished, for
    the modes where every job did. A mode where a job failed gets no time: its finished jobs'
    makespan would look like a win (issue 17: MIG at "0.00 h" when nothing ran). Pass the
    ``fig`` this returned before to update it in place (building one costs ~25 ms of plotly
    validation; an update ~5 ms: a board click redraws it).
    """
    modes = [t(f"mig.mode.{m}") for m in results]
    if fig is None:
        fig = styled_figure(title={"text": t("mig.wl.chart_title"), "y": 0.97, "yanchor": "top"},
                            xaxis_title=t("mig.wl.jobs_axis"), barmode="stack", height=340,
                            legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
                            margin={"l": 150, "r": 230, "t": 100, "b": 50})
        fig.update_yaxes(autorange="reversed")
        for outcome, color in _OUTCOMES:
            fig.add_trace(go.Bar(
                orientation="h", name=t(f"mig.wl.outcome.{outcome}"), marker={"color": color},
                textposition="inside", insidetextanchor="middle",
                hovertemplate="%{y}: %{x:,.0f}" + t("mig.wl.jobs_unit")
                + "<extra>%{fullData.name}</extra>"))
    notes = []
    for mode, r in zip(modes, results.values(), strict=True):
        done = sum(1 for run in r.runs if run.outcome == "done")
        every = done == len(r.runs)
        notes.append({"x": 1.01, "xref": "paper", "y": mode, "yref": "y", "showarrow": False,
                      "xanchor": "left", "font": {"color": "#222" if every else "#b00020"},
                      "text": t("mig.wl.all_done", h=_hours(r.makespan_h)) if every
                      else t("mig.wl.not_all_done", done=done, n=len(r.runs))})
    n_max = max((len(r.runs) for r in results.values()), default=1)
    with fig.batch_update():
        for trace, (outcome, _color) in zip(fig.data, _OUTCOMES, strict=True):
            counts = [sum(1 for run in r.runs if run.outcome == outcome)
                      for r in results.values()]
            trace.x, trace.y = counts, modes
            trace.text = [str(c) if c else "" for c in counts]
        fig.layout.annotations = notes
        fig.layout.xaxis.range = [0, n_max]
        fig.layout.xaxis.dtick = 1 if n_max <= 12 else None
    return fig


class WorkloadApp(LiveApp[WorkloadView]):
    """A class's jobs on one GPU under four sharing modes (see :func:`workload_app`)."""

    def __init__(self, board: BoardApp | None) -> None:
        self.board = board
        self._own = Layout.from_profiles(DEFAULT_MODEL, ["1g.10gb"] * 7)
        fields = [
            number_field("n_students", t("mig.wl.n_students"), 7, unit=t("mig.wl.people")),
            number_field("memory_gb", t("mig.wl.memory"), 8, unit="GB", step=0.5),
            number_field("duration_h", t("mig.wl.duration"), 1, unit="h", step=0.25),
            number_field("max_slices", t("mig.wl.slices"), 1, unit=t("mig.wl.slices_unit")),
        ]
        super().__init__("workload", fields, error_prefix="mig.wl",
                         field_map={"memory_mib": "memory_gb", "max_share": "max_slices"})
        self.layout_line = widgets.HTML()
        self.layout_line.add_class("lk-workload-layout")
        self.table = widgets.HTML()
        self.table.add_class("lk-workload-table")
        self.notes = widgets.HTML()
        self.notes.add_class("lk-workload-notes")
        self.chart = FigureOutput("lk-workload-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.layout_line,
                         self.table, self.notes, self.chart]
        self._shown: tuple[Any, ...] | None = None
        self._figure: go.Figure | None = None
        if board is not None:
            board.on_change.append(self._board_changed)
        self.update()

    def _board_changed(self, layout: Layout) -> None:
        if layout.key() != self._shown:  # after the click's own board update (components)
            self.schedule()

    @property
    def mig_layout(self) -> Layout:
        """The MIG layout compared: the board's, or 7 x 1g.10gb on an H100 without a board."""
        return self.board.mig_layout if self.board is not None else self._own

    def compute(self, values: dict[str, Any]) -> WorkloadView:
        lay = self.mig_layout.copy()
        slices = lay.spec.compute_slices
        n = values["max_slices"]
        validate.integer("max_slices", n, minimum=1)
        validate.at_most("max_slices", n, slices, "compute slices")
        gb = validate.non_negative("memory_mib", values["memory_gb"])
        jobs = share.class_jobs(values["n_students"], gb * 1e9 / 2**20, values["duration_h"],
                                n / slices)
        results = share.compare(jobs, gpu_memory_mib=lay.model.memory_total_mib,
                                slots=share.mig_slots(lay))
        return WorkloadView(results, lay)

    def render(self, result: WorkloadView) -> None:
        lay = result.layout
        self._shown = lay.key()
        parts = ", ".join(f"{gi.profile.name}@{gi.start}" for gi in lay.sorted_instances())
        self.layout_line.value = t("mig.wl.layout", model=lay.model.short_name,
                                   layout=parts or t("mig.board.empty"))
        self.table.value = _table_html(_workload_table(result.results))
        notes = []
        for mode, r in result.results.items():
            oom = sum(1 for run in r.runs if run.outcome == "oom")
            no_slot = sum(1 for run in r.runs if run.outcome == "no_slot")
            if oom:
                notes.append(t("mig.wl.note_oom", mode=t(f"mig.mode.{mode}"), n=oom))
            if no_slot:
                notes.append(t("mig.wl.note_no_slot", mode=t(f"mig.mode.{mode}"), n=no_slot))
        self.notes.value = "<br>".join(html.escape(n) for n in notes)
        self._figure = outcome_figure(result.results, self._figure)
        self.chart.show(self._figure)


def workload_app(board: BoardApp | None = None) -> WorkloadApp:
    """Return the class-workload comparison, using ``board``'s layout for MIG.

    Used in: notebooks/02_mig.ipynb
    """
    return WorkloadApp(board)


# --- tables for nbval ---------------------------------------------------------------------------


def case1_numbers() -> fmt.Table:
    """Return the seven-students case (one A100-80GB) under every sharing mode.

    Seven 1-hour jobs of 8 GiB that use at most one compute slice: whole-GPU FIFO takes 7 h,
    seven 1g.10gb slices 1 h (course scheduling check case 1; NVIDIA MIG user guide profiles).

    Used in: notebooks/02_mig.ipynb
    """
    seven = Layout.from_profiles("A100-80GB", ["1g.10gb"] * 7)
    jobs = share.class_jobs(7, 8 * 1024, 1.0, 1 / 7)
    results = share.compare(jobs, gpu_memory_mib=seven.model.memory_total_mib,
                            slots=share.mig_slots(seven))
    return fmt.people_table(_workload_table(results))


def layout_counts(models: Sequence[str] = ("H100-80GB", "A30", "RTX-PRO-6000")) -> fmt.Table:
    """Return, per board, its memory units, compute slices, valid and maximal layouts.

    Used in: notebooks/02_mig.ipynb
    """
    rows = []
    for m in models:
        spec = Layout(m).spec
        valid, maximal = mig.count_layouts(m)
        rows.append({t("mig.count.model"): m, t("mig.count.units"): spec.memory_units,
                     t("mig.count.slices"): spec.compute_slices,
                     t("mig.count.profiles"): len(spec.profiles),
                     t("mig.count.valid"): valid, t("mig.count.maximal"): maximal})
    return fmt.people_table(pd.DataFrame(rows).set_index(t("mig.count.model")))


def exercises() -> widgets.VBox:
    """Return the lesson's exercises; answers come from :mod:`labkit.mig`."""
    with_three = Layout(DEFAULT_MODEL)
    with_three.place("3g.40gb")
    seven = Layout(DEFAULT_MODEL, [("1g.10gb", None)] * 7)
    names = [n for n, k in CHALLENGE.items() for _ in range(k)]
    return exercise_set([
        Exercise("mig.ex1", with_three.free_capacity()["1g.10gb"][0], 0, "개"),
        Exercise("mig.ex2", len(mig.pack_profiles(DEFAULT_MODEL, names)), 0, "장"),
        Exercise("mig.ex3", seven.fragmentation().stranded_frac * 100, 0.051, "%"),
    ])
