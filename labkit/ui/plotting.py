"""One-pass plotly figures for the lesson apps (fast enough to redraw on every control step).

:func:`labkit.ui.components.styled_figure` builds a figure and then updates its layout and adds
traces call by call; plotly validates on every call, and a chart of 5 traces takes ~45 ms that
way against ~9 ms when the traces and the layout go into one ``go.Figure(data, layout)`` call
(measured on the course machine: ``benchmarks/bench_opex.py``). :func:`figure` is that one
call, with the same defaults as ``styled_figure`` (Korean-capable fonts, margins, height, an
empty template that :class:`~labkit.ui.components.FigureOutput` fills with the theme's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from labkit.ui.components import FONT_FAMILY

__all__ = ["figure"]

#: The layout every lesson chart starts from (as ``styled_figure``).
DEFAULT_LAYOUT: dict[str, Any] = {
    "font": {"family": FONT_FAMILY, "size": 13},
    "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
    "height": 360,
}


def figure(traces: Sequence[Mapping[str, Any]], **layout: Any) -> go.Figure:
    """Return a figure of ``traces`` (plotly trace dicts) with ``layout``, validated once.

    Parameters
    ----------
    traces : sequence of mapping
        Trace dicts with their ``type`` (``{"type": "bar", "x": ..., "y": ...}``).
    **layout
        Layout properties as nested dicts (``yaxis={"title": {"text": ...}}``; plotly's
        ``yaxis_title=`` shorthand is not expanded here). A ``font`` or ``margin`` dict is merged
        into the defaults; ``title`` may be a plain string.
    """
    merged: dict[str, Any] = {"template": {}}
    for key, value in DEFAULT_LAYOUT.items():
        given = layout.get(key)
        merged[key] = {**value, **given} if isinstance(given, Mapping) else value
    for key, value in layout.items():
        if key not in ("font", "margin") or not isinstance(value, Mapping):
            merged[key] = value
    if isinstance(merged.get("title"), str):
        merged["title"] = {"text": merged["title"]}
    return go.Figure(data=[dict(t) for t in traces], layout=merged)
