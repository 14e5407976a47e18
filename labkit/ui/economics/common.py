"""Shared pieces of lesson 05's (and 06's) apps: cached defaults, formats, sliders, figures."""

from __future__ import annotations

import decimal
import functools
import math
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from labkit.data.economics import Default, Defaults, load_defaults
from labkit.ui import format as fmt
from labkit.ui import plotting
from labkit.ui.components import Field, slider_field

EOK = 1e8          # 억: the unit of the token axis
MAN = 1e4          # 만: the unit of the money axis
COLORS = {"api": "#d1495b", "owned": "#3b6fb6", "rent": "#e0a100", "point": "#2e7d32",
          "calendar": "#7a7a7a"}
_BIG = ('<div style="font-size:1.9em;font-weight:700;line-height:1.15">{big}</div>'
        '<div style="color:#444;line-height:1.5">{detail}</div>')
TABLE_HTML = '<table style="border-collapse:collapse;line-height:1.5">'
TD_HTML = '<td style="padding:3px 14px 3px 0;vertical-align:top">'


@functools.cache
def lesson_defaults() -> Defaults:
    return load_defaults()


def _eok(tokens: float, digits: int = 1) -> str:
    """Tokens in 억 (1e8): 1.4954e10 -> '149.5억'."""
    return "n/a" if not math.isfinite(tokens) else f"{fmt.fixed(tokens / EOK, digits)}억"


def _won(amount: float) -> str:
    """KRW with comma grouping: 5473.2 -> '5,473원'."""
    return "n/a" if not math.isfinite(amount) else f"{amount:,.0f}원"


def default_slider(d: Default, key: str, label: str, *, pct: bool = False, digits: int = 2,
            unit: str = "") -> Field:
    """A slider over a default's own range (percent controls feed fractions).

    The readout shows as many decimals as the step has, at most ``digits`` (1 for percent):
    a whole-number step reads "4 년", "40 %", not "4.0 년" (issue 17's trial).
    """
    if pct:
        step = round(d.step * 100, 9)
        return slider_field(key, label, d.value * 100, min=d.low * 100, max=d.high * 100,
                            step=step, unit="%", readout_format=f".{min(1, _decimals(step))}f",
                            scale=100)
    return slider_field(key, label, d.value, min=d.low, max=d.high, step=d.step, unit=unit,
                        readout_format=f",.{min(digits, _decimals(d.step))}f")


def times(x: float) -> str:
    """How many times cheaper, as the verdicts say it: one decimal ("7.6"), two near 1 so that
    1.04 does not read "1.0배 쌉니다" (as good as equal) (issue 17's trial)."""
    return fmt.ratio(x, 2 if math.isfinite(x) and x < 1.1 else 1)


def _decimals(step: float) -> int:
    """Decimals a slider step needs: 1 -> 0, 5000 -> 0, 0.5 -> 1, 0.25 -> 2, 0.01 -> 2."""
    exponent = decimal.Decimal(repr(float(step))).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def econ_figure(traces: list[dict[str, Any]], **layout: Any) -> go.Figure:
    """A styled figure with ``traces`` (plotly trace dicts) and ``layout``, built in one pass.

    :func:`labkit.ui.plotting.figure`: plotly's per-call validation dominates a callback's time
    (``add_vline`` alone costs ~10 ms), so shapes go in ``layout``.
    """
    return plotting.figure(traces, **layout)


def field_box(fields: list[Field]) -> widgets.VBox:
    return widgets.VBox([f.box for f in fields])
