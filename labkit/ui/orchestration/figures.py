"""Lesson 08's figures: Gantt chart, queue length, waits, demand against installed GPUs."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from labkit import scheduling as model
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui import hover, plotting
from labkit.ui.components import styled_figure
from labkit.ui.orchestration.common import KIND_COLORS, _clock, _job, _kind, _tenant

# --- figures ------------------------------------------------------------------------------------


def _lanes(rows: pd.DataFrame, memory_units: int) -> list[tuple[float, float]]:
    """Return (low, height) within its GPU row, in [0, 1], for every row of ``gpu_schedule``.

    MIG instances sit at their memory slices; shared-GPU jobs are stacked first-fit among the
    shares live on that GPU (display only: time slicing has no position on the GPU).
    """
    share = rows["share"].tolist()
    gpu = rows["gpu"].tolist()
    start = rows["start_h"].tolist()
    end = rows["end_h"].tolist()
    s_start = rows["slice_start"].tolist()
    s_size = rows["slice_size"].tolist()
    out: list[tuple[float, float]] = [(0.0, 1.0)] * len(share)
    active: dict[int, list[tuple[float, float, float]]] = {}
    for k in sorted(range(len(share)), key=lambda k: (start[k], end[k], k)):
        if s_size[k] > 0:
            out[k] = (s_start[k] / memory_units, s_size[k] / memory_units)
            continue
        if share[k] >= 1 - 1e-9:
            continue
        live = [a for a in active.get(gpu[k], []) if a[0] > start[k] + 1e-9]
        low = 0.0
        for cand in sorted([0.0] + [a[2] for a in live]):
            if cand + share[k] <= 1 + 1e-9 and all(
                    cand + share[k] <= a[1] + 1e-9 or cand >= a[2] - 1e-9 for a in live):
                low = cand
                break
        live.append((end[k], low, low + share[k]))
        active[gpu[k]] = live
        out[k] = (low, share[k])
    return out


#: Gantt row height per GPU and the size of the job names in the bars (hidden below the
#: minimum rather than shrunk). [px]
ROW_PX, LABEL_PX, LABEL_MIN_PX = 26, 12, 10


def gantt_figure(result: model.SimulationResult, title: str, *, day_h: float | None = None,
                 height: int | None = None, until_h: float | None = None) -> go.Figure:
    """Return a Gantt chart: one row per GPU, one bar per job run on it, coloured by kind.

    Shared-GPU jobs and MIG instances take part of their GPU's row (MIG by memory slices).
    ``until_h`` ends the time axis (default: the last run).
    """
    per_gpu = result.gpu_schedule()
    cluster = result.cluster
    gpn = cluster.gpus_per_node
    mem = cluster.mig.memory_units if cluster.mig else 8
    lanes = _lanes(per_gpu, mem)
    per_gpu = per_gpu.assign(low=[a for a, _ in lanes], size=[b for _, b in lanes])
    traces = []
    for kind in model.KINDS:
        sel = per_gpu[per_gpu["kind"] == kind]
        if sel.empty:
            continue
        center = sel["gpu"] - 0.45 + 0.9 * (sel["low"] + sel["size"] / 2)
        text = [f"{_job(job)} · {_kind(kind)}<br>{_clock(s)}–{_clock(e)}" + (" ✂" if p else "")
                for job, s, e, p in zip(sel["job"], sel["start_h"], sel["end_h"],
                                        sel["preempted"], strict=True)]
        traces.append({
            "type": "bar", "orientation": "h", "y": center.tolist(),
            "x": (sel["end_h"] - sel["start_h"]).tolist(), "base": sel["start_h"].tolist(),
            "width": (0.9 * sel["size"]).tolist(), "name": _kind(kind), "hovertext": text,
            "hoverinfo": "text", "text": [_kind(kind).split("(")[0]] * len(sel),
            "textposition": "inside", "insidetextanchor": "middle",
            "textfont": {"size": LABEL_PX, "color": "white"}, "cliponaxis": True,
            "marker": {"color": KIND_COLORS[kind], "line": {"color": "white", "width": 0.5}}})
    ticks = list(range(cluster.installed_gpus))
    return plotting.figure(
        traces, title=title, barmode="overlay", bargap=0,
        height=height or max(320, 150 + ROW_PX * cluster.installed_gpus),
        legend={"orientation": "h", "y": -0.2, "yanchor": "top"},
        margin={"l": 110, "r": 20, "t": 50, "b": 100},
        # a job's name inside its bar at a readable size, or not at all (plotly otherwise
        # shrinks it to fit a thin MIG slice: 6 px text)
        uniformtext={"minsize": LABEL_MIN_PX, "mode": "hide"},
        xaxis={"title": {"text": t("orch.axis.time")},
               **({"range": [0, until_h]} if until_h is not None else {})},
        yaxis={"tickvals": ticks, "autorange": "reversed",
               "ticktext": [t("orch.axis.gpu", node=g // gpn + 1, gpu=g % gpn) for g in ticks]},
        shapes=_day_end(day_h))


def _day_end(day_h: float | None) -> list[dict[str, Any]]:
    """The dashed line where the day ends (a layout shape: ``add_vline`` costs ~10 ms)."""
    if day_h is None:
        return []
    return [{"type": "line", "x0": day_h, "x1": day_h, "xref": "x", "y0": 0, "y1": 1,
             "yref": "y domain", "line": {"dash": "dash", "color": "#555"}}]


def _at_clock(name: str, label: str | None = None, values: Any = None) -> str:
    """A hover template: the series' name, the clock time (customdata) and the value."""
    spec = hover.d3_format(list(values)) if values is not None else ",.0f"
    head = f"<b>{name}</b><br>" if label else ""
    return f"{head}%{{customdata}} · {label or name}: %{{y:{spec}}}<extra></extra>"


def queue_figure(result: model.SimulationResult, *, day_h: float | None = None) -> go.Figure:
    """Return the queue length and the GPUs held over time (step lines)."""
    tl = result.timeline
    fig = styled_figure(title=t("orch.queue.title"), xaxis_title=t("orch.axis.time"),
                        yaxis_title=t("orch.queue.queued"), height=300,
                        yaxis2={"title": t("orch.queue.held"), "overlaying": "y",
                                "side": "right", "showgrid": False, "tickmode": "linear",
                                "tick0": 0, "dtick": max(1, result.installed_gpus // 4),
                                "range": [0, result.installed_gpus * 1.1]},
                        legend={"orientation": "h", "y": -0.3},
                        margin={"l": 60, "r": 70, "t": 50, "b": 50})
    times = [_clock(h) for h in tl["t_h"]]  # 11:59, not 11.98333 (issue 25)
    fig.add_trace(go.Scatter(x=tl["t_h"], y=tl["queued"], mode="lines", line_shape="hv",
                             name=t("orch.queue.queued"), line={"color": "#d1495b"},
                             customdata=times, hovertemplate=_at_clock(t("orch.queue.queued"))))
    fig.add_trace(go.Scatter(x=tl["t_h"], y=tl["gpus_held"], mode="lines", line_shape="hv",
                             name=t("orch.queue.held"), yaxis="y2", line={"color": "#3b6fb6"},
                             customdata=times, hovertemplate=_at_clock(t("orch.queue.held"))))
    fig.add_hline(y=result.installed_gpus, yref="y2", line={"dash": "dot", "color": "#3b6fb6"},
                  annotation_text=t("orch.queue.installed"), annotation_position="top left")
    if day_h is not None:
        fig.add_vline(x=day_h, line={"dash": "dash", "color": "#555"})
    return fig


def waits_figure(result: model.SimulationResult, by: str = "kind") -> go.Figure:
    """Return the mean queue delay and the mean total delay per workload kind (or tenant)."""
    w = result.waits(by)
    labels = [_kind(k) if by == "kind" else _tenant(k) for k in w.index]
    return plotting.figure(
        [{"type": "bar", "orientation": "h", "y": labels, "x": w["mean_wait_h"].tolist(),
          "name": t("orch.waits.mean"), "marker": {"color": "#3b6fb6"},
          "text": [fmt.hours(x, 1) for x in w["mean_wait_h"]], "textposition": "outside"},
         {"type": "bar", "orientation": "h", "y": labels, "x": w["mean_delay_h"].tolist(),
          "name": t("orch.waits.delay"), "marker": {"color": "#d1495b"}}],
        title=t(f"orch.waits.title_{by}"), height=max(260, 60 + 34 * len(w)),
        barmode="group", legend={"orientation": "h", "y": -0.25}, margin={"l": 150},
        xaxis={"title": {"text": t("orch.waits.axis")}}, yaxis={"autorange": "reversed"})


def demand_figure(curve: pd.DataFrame, installed_gpus: float) -> go.Figure:
    """Return the demand curve stacked by kind, with the installed capacity as a line."""
    fig = styled_figure(title=t("orch.demand.title"), xaxis_title=t("orch.axis.time"),
                        yaxis_title=t("orch.demand.axis"), height=360,
                        legend={"orientation": "h", "y": -0.25})
    times = [_clock(h) for h in curve.index]
    for kind in curve.columns:
        fig.add_trace(go.Scatter(x=curve.index, y=curve[kind], name=_kind(kind),
                                 customdata=times, hovertemplate=_at_clock(
                                     _kind(kind), t("orch.demand.axis"), curve[kind]),
                                 stackgroup="d", line={"width": 0, "shape": "hv"},
                                 fillcolor=KIND_COLORS[kind], mode="lines"))
    fig.add_hline(y=installed_gpus, line={"color": "#222", "dash": "dash"},
                  annotation_text=t("orch.demand.installed", gpus=fmt.count(installed_gpus)),
                  annotation_position="top left")
    return fig
