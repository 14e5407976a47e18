"""The two charts of lesson 01 (activity over time; power vs limit and the SM clock).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labkit.i18n import KO, t
from labkit.ui.components import styled_figure
from labkit.ui.observe.common import ACTIVITY_LINES

__all__ = ["activity_figure", "power_figure", "with_gaps"]

_LEGEND_BELOW: dict[str, Any] = {
    "legend": {"orientation": "h", "y": -0.42, "x": 0},
    "margin": {"l": 60, "r": 70, "t": 50, "b": 110},
}


def with_gaps(frame: pd.DataFrame, max_gap_s: float) -> pd.DataFrame:
    """Return ``frame`` (index: time) with readings carried forward between samples of slower
    metrics, and a blank row wherever samples are more than ``max_gap_s`` apart (sampling was
    stopped), so a chart line breaks there instead of drawing a ramp across the gap."""
    if frame.empty:
        return frame
    frame = frame.sort_index().ffill()
    t = frame.index.to_numpy(dtype=float)
    gaps = np.nonzero(np.diff(t) > max_gap_s)[0]
    if len(gaps) == 0:
        return frame
    blank = pd.DataFrame(np.nan, columns=frame.columns,
                         index=pd.Index(t[gaps] + max_gap_s / 2, name=frame.index.name))
    return pd.concat([frame, blank]).sort_index()


def _plain(values: np.ndarray, digits: int = 4) -> list[float | None]:
    """Return a JSON-plain list (NaN -> None): small, and readable from the page's plot data."""
    return [None if not math.isfinite(v) else round(float(v), digits) for v in values]


def activity_figure(frame: pd.DataFrame, *, title: str, marker_t: float | None = None,
                    x_range: tuple[float, float] | None = None,
                    segments: Sequence[tuple[str, float, float]] = ()) -> go.Figure:
    """Return util.gpu next to SM activity, occupancy, tensor and DRAM activity over time.

    Parameters
    ----------
    frame : pandas.DataFrame
        Index ``timestamp_s``, columns among the activity metrics (fractions 0-1).
    segments : sequence of (str, float, float), optional
        Named stretches of a trace (``labkit.data.observe.trace_segments``: scenario, start,
        end [s]); each is shaded and labelled with its Korean scenario name.
    """
    fig = styled_figure(title=title, height=330, yaxis_title="%",
                        xaxis_title=t("observe.chart.time_axis"), **_LEGEND_BELOW)
    x = _plain(frame.index.to_numpy(dtype=float))
    lines = ACTIVITY_LINES
    if "gpu_util_frac" not in frame.columns and "gr_engine_active_frac" in frame.columns:
        # a MIG device: NVML has no util.gpu for it, DCGM's GR_ENGINE_ACTIVE stands in
        lines = (("gr_engine_active_frac", "#d1495b"), *lines)
    for key, color in lines:
        if key not in frame.columns:
            continue
        y = _plain(frame[key].to_numpy(dtype=float) * 100)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=t(f"observe.metric.{key}"),
                                 line={"color": color, "width": 3 if key == "gpu_util_frac"
                                       else 2}, connectgaps=False))
    fig.update_yaxes(range=[-2, 105])
    _label_segments(fig, segments)
    if x_range is not None:
        fig.update_xaxes(range=list(x_range))
    if marker_t is not None:
        fig.add_vline(x=marker_t, line={"color": "#444", "dash": "dot"})
    return fig


#: Alternating shades of the segment bands (light, so the lines stay readable).
_SEGMENT_SHADES = ("#eef2f8", "#f8f4ec")


def _label_segments(fig: go.Figure, segments: Sequence[tuple[str, float, float]]) -> None:
    """Shade each named stretch and write its Korean scenario name at the top."""
    for k, (name, start, end) in enumerate(segments):
        key = f"observe.scenario_short.{name}"
        label = t(key) if key in KO else name
        fig.add_vrect(x0=start, x1=end, fillcolor=_SEGMENT_SHADES[k % 2], opacity=0.7,
                      layer="below", line_width=0)
        fig.add_annotation(x=(start + end) / 2, y=1.0, yref="paper", yanchor="bottom",
                           text=label, showarrow=False, font={"size": 11, "color": "#444"})


def power_figure(frame: pd.DataFrame, *, title: str, marker_t: float | None = None,
                 x_range: tuple[float, float] | None = None) -> go.Figure:
    """Return power vs the enforced limit (left axis) and the SM clock (right axis) over time."""
    fig = styled_figure(title=title, height=330, yaxis_title="W",
                        xaxis_title=t("observe.chart.time_axis"),
                        yaxis2={"title": "MHz", "overlaying": "y", "side": "right",
                                "showgrid": False, "rangemode": "tozero", "tickformat": ",d"},
                        **_LEGEND_BELOW)
    x = _plain(frame.index.to_numpy(dtype=float))
    lines = (("power_usage_w", "y", "#d1495b", None), ("power_limit_w", "y", "#d1495b", "dash"),
             ("sm_clock_mhz", "y2", "#3b6fb6", None), ("max_sm_clock_mhz", "y2", "#3b6fb6",
                                                        "dash"))
    for key, axis, color, dash in lines:
        if key not in frame.columns:
            continue
        y = _plain(frame[key].to_numpy(dtype=float))
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", yaxis=axis,
                                 name=t(f"observe.metric.{key}"),
                                 line={"color": color, "dash": dash}, connectgaps=False))
    fig.update_yaxes(rangemode="tozero")
    if x_range is not None:
        fig.update_xaxes(range=list(x_range))
    if marker_t is not None:
        fig.add_vline(x=marker_t, line={"color": "#444", "dash": "dot"})
    return fig

