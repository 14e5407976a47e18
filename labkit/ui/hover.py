"""Hover labels in people's numbers and Korean, for every trace of every lesson chart.

plotly's default hover is an ``(x, y)`` pair of raw values (``(92.5, 361.189)``, a clock time
as ``(11.98333, 45)``, a waterfall's "Initial"): issue 25's trial read them all. :func:`fill`
gives each trace of a figure that has no hover template of its own one built from what the
chart already says in Korean: the trace's name, the axis titles (their unit, in parentheses
or after a comma, moves after the number) and a number format of the course's
(:mod:`labkit.ui.format`): at most 4 significant digits, a whole number without decimals, and
from 1,000만 on the value in 만/억 (``customdata`` written by :func:`labkit.ui.format.krw` or
:func:`labkit.ui.format.large`), never plotly's SI (``40M``) or scientific notation.

A chart whose numbers need more than that (a clock time, a change in won) sets its own
``hovertemplate``; :func:`fill` leaves such traces as they are.
:class:`~labkit.ui.components.FigureOutput` calls :func:`fill` on every figure it shows.

Used in: notebooks/01-09 (every chart, through FigureOutput)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from labkit.ui import format as fmt

__all__ = ["DIGITS_MAX", "axis_label", "d3_format", "fill", "template"]

#: From here a hover value is written in 만/억 (customdata), not as d3 digits: a person reads
#: 1,000만 as a unit, not 10,000,000 (the axes' rule, labkit.ui.plotting.won_axis).
DIGITS_MAX = 1e7
#: A unit in an axis title: "(h)", "(만 원)", ", 분", "%" ("시간 (h)", "체크포인트 간격, 분").
_UNIT = re.compile(r"^(?P<label>.*?)\s*(?:\((?P<paren>[^()]*)\)|,\s*(?P<comma>[^,()]+))$")
#: The units the course's axes are drawn in, optionally after 만/억 and per something
#: ("원", "만 원/년", "원 / GPU-시간", "kW", "%", "억 토큰").
_UNIT_WORD = re.compile(r"^(?:[만억]\s*)?(?:원|W|kW|kWh|MWh|MHz|GHz|h|s|분|초|시간|일|년|%|"
                        r"토큰|개|장|대|명|배|GB|GiB|MiB)(?:\s*/\s*\S+)?$")
#: A note on how an axis is drawn, not part of what its numbers are ("(로그 눈금)").
_DRAWN = re.compile(r"\s*\([^()]*눈금\)\s*")


def axis_label(title: str | None) -> tuple[str, str]:
    """Split an axis title into (label, unit): ``"시간 (h)"`` -> ``("시간", "h")``,
    ``"체크포인트 간격, 분"`` -> ``("체크포인트 간격", "분")``; a title that is only a unit
    (``"kW"``, ``"원 / 년"``) -> ``("", "kW")``; a note on the scale is dropped
    (``"GPU 수 (로그 눈금)"`` -> ``("GPU 수", "")``); none -> ``("", "")``."""
    title = _DRAWN.sub(" ", re.sub(r"<[^>]+>", " ", title or "")).strip()
    if _UNIT_WORD.match(title):
        return "", title
    m = _UNIT.match(title)
    if m and m["label"]:
        unit = (m["paren"] if m["paren"] is not None else m["comma"] or "").strip()
        if _UNIT_WORD.match(unit):
            return m["label"].strip(), unit
    return title, ""


def d3_format(values: Sequence[float]) -> str:
    """The d3 number format that writes ``values`` as :func:`labkit.ui.format.number` does:
    comma groups, at most 4 significant digits (never fewer than the whole part, at most 3
    decimals), trailing zeros dropped (``~``): 361.189 -> '361.2', 45.0 -> '45'."""
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    top = max(finite, default=0.0)
    if top == 0 or all(float(v).is_integer() for v in finite):
        return ",.0f"
    magnitude = math.floor(math.log10(top)) + 1
    return f",.{min(3, max(0, fmt.PEOPLE_DIGITS - magnitude))}~f"


def _numbers(values: Any) -> list[float] | None:
    """The values as floats, or None when they are categories (text)."""
    if values is None:
        return None
    out = []
    for v in values:
        if isinstance(v, str):
            return None
        if v is None:
            continue
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            return None
    return out


def _scaled(unit: str) -> tuple[float, str]:
    """An axis unit led by 만/억 as (factor, plain unit): "만 원" -> (1e4, "원")."""
    unit = unit.strip()
    if unit[:1] in ("만", "억") and len(unit) > 1:
        return (1e4 if unit[0] == "만" else 1e8), unit[1:].strip()
    return 1.0, unit


def _with_unit(number: str, unit: str) -> str:
    """A number and its unit as :func:`labkit.ui.format.quantity` joins them: a Hangul unit
    right after the digits ('45장', '1,234만 원'), any other after a space ('45 h', '12 %')."""
    if not unit:
        return number
    return f"{number}{unit}" if "가" <= unit[0] <= "힣" else f"{number} {unit}"


def _value(attr: str, unit: str, values: list[float]) -> tuple[str, list[str] | None]:
    """(template text, customdata column or None) writing ``values`` (axis ``attr``)."""
    factor, plain = _scaled(unit)
    top = max((abs(v) for v in values if math.isfinite(v)), default=0.0) * factor
    if top >= DIGITS_MAX:  # 1,000만 and more: in 만/억, written here
        if plain.startswith("원"):
            column = [fmt.krw(v * factor) + plain.removeprefix("원") for v in values]
        else:
            column = [fmt.quantity(v * factor, plain) for v in values]
        return "%{customdata[I]}", column
    return _with_unit(f"%{{{attr}:{d3_format(values)}}}", unit), None


def template(fig: go.Figure, trace: Any) -> tuple[str, list[list[str]] | None]:
    """The hover template (and customdata) :func:`fill` gives ``trace`` of ``fig``."""
    parts: list[str] = []
    columns: list[list[str]] = []
    horizontal = getattr(trace, "orientation", None) == "h"
    for attr in ("y", "x") if horizontal else ("x", "y"):
        ref = getattr(trace, f"{attr}axis", None) or attr
        label, unit = axis_label(fig.layout[f"{attr}axis{ref[1:]}"].title.text)
        values = getattr(trace, attr, None)
        numbers = _numbers(values)
        if trace.type == "histogram":
            binned = attr == ("y" if horizontal else "x")
            text = f"%{{{attr}}}" if binned else f"%{{{attr}:,.0f}}"
        elif numbers:
            text, column = _value(attr, unit, numbers)
            if column is not None:
                text = text.replace("[I]", f"[{len(columns)}]")
                columns.append(column)
        elif values is not None:
            text, label = f"%{{{attr}}}", ""  # a category: its own Korean label
        else:
            continue
        parts.append(f"{label}: {text}" if label else text)
    head = f"<b>{trace.name}</b><br>" if trace.name else ""
    custom = [list(row) for row in zip(*columns, strict=True)] if columns else None
    return head + "<br>".join(parts) + "<extra></extra>", custom


def fill(fig: go.Figure) -> go.Figure:
    """Give every hoverable trace of ``fig`` without a hover template one in people's numbers
    (see the module docstring); a trace with ``hovertext`` shown as text keeps its text.

    Returns the same figure (changed in place).
    """
    for trace in fig.data:
        if getattr(trace, "hoverinfo", None) in ("skip", "none"):
            continue
        if getattr(trace, "hovertemplate", None):
            continue
        if getattr(trace, "hovertext", None) is not None and trace.hoverinfo == "text":
            trace.hovertemplate = "%{hovertext}<extra></extra>"
            continue
        text, custom = template(fig, trace)
        if trace.type == "histogram":  # a bin's range, in the bins' decimals
            axis = "y" if getattr(trace, "orientation", None) == "h" else "x"
            trace[f"{axis}hoverformat"] = d3_format(_numbers(trace[axis]) or [])
        if custom is not None:
            trace.customdata = custom
        trace.hovertemplate = text
    return fig
