"""One-pass plotly figures for the lesson apps (fast enough to redraw on every control step).

:func:`labkit.ui.components.styled_figure` builds a figure and then updates its layout and adds
traces call by call; plotly validates on every call, and a chart of 5 traces takes ~45 ms that
way against ~9 ms when the traces and the layout go into one ``go.Figure(data, layout)`` call
(measured on the course machine: ``benchmarks/bench_opex.py``). :func:`figure` is that one
call, with the same defaults as ``styled_figure`` (Korean-capable fonts, margins, height, an
empty template that :class:`~labkit.ui.components.FigureOutput` fills with the theme's).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from labkit.ui import format as fmt
from labkit.ui.components import FONT_FAMILY

__all__ = ["figure", "won_axis"]

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


#: Tick steps tried per power of ten (a "nice" axis: 1, 2, 2.5, 5 × 10^k).
_NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def won_axis(values: Iterable[float], title: str, *, signed: bool = False,
             ticks: int = 5) -> dict[str, Any]:
    """Return a plotly axis for amounts in won, its ticks written in 만/억 ("4,000만", "1.2억").

    plotly writes won as digits (−40,000,000) or SI (40M); a student reads 만 and 억
    (:func:`labkit.ui.format.krw`). The ticks are round steps (1, 2, 2.5, 5 × 10^k won) that
    span ``values`` and 0.

    Parameters
    ----------
    values : iterable of float
        The amounts the axis draws (bar ends, bases). [KRW]
    title : str
        The axis title (its unit, e.g. "원 / 년").
    signed : bool
        Write a plus sign on positive ticks (changes against a baseline).
    ticks : int
        About how many tick intervals to draw.

    Returns
    -------
    dict
        ``{"title": ..., "tickvals": [...], "ticktext": [...]}`` for ``xaxis=``/``yaxis=``.
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    low, high = min([0.0, *finite]), max([0.0, *finite])
    span = (high - low) or max(abs(high), 1.0)
    raw = span / max(ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in _NICE_STEPS if m * power >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    vals = [k * step for k in range(first, last + 1)]
    return {"title": {"text": title}, "tickvals": vals,
            "ticktext": [_won_tick(v, signed=signed) for v in vals]}


def _won_tick(amount: float, *, signed: bool) -> str:
    if abs(amount) < 0.5:
        return "0"
    text = fmt.krw(amount).removesuffix(" 원")
    if abs(amount) >= 1e8 and abs(amount) % 1e8:  # 1억 2,000만 -> 1.2억 (a tick is short)
        text = ("−" if amount < 0 else "") + f"{abs(amount) / 1e8:,.2f}".rstrip("0").rstrip(
            ".") + "억"
    return ("+" if signed and amount > 0 else "") + text
