"""Constants and small widget helpers shared by lesson 01's apps (dashboard, replay, upload).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import base64
import html
import re

import ipywidgets as widgets
from ipywidgets.widgets.widget_description import DescriptionWidget

from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput

#: Rates offered (Hz); the sampler refuses more than labkit.observe.MAX_RATE_HZ.
RATES_HZ: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0)
#: The page re-renders at most this often, whatever the sampling rate (a plot update costs
#: 40-100 ms in the browser; see README "Stack notes"). [s]
RENDER_INTERVAL_S = 0.5
#: A dashboard stops sampling by itself after this long. [s]
MAX_RUN_S = 600.0
#: The scenario lab starts sampling when a scenario is picked, for this long. [s]
SCENARIO_RUN_S = 180.0
#: Charts show this much recent history. [s]
WINDOW_S = 60.0
#: Largest CSV export offered as a download link (it travels inside the page). [bytes]
MAX_EXPORT_BYTES = 4 * 1024 * 1024
#: Most points per line in a replay chart (longer logs are thinned for drawing only).
MAX_CHART_POINTS = 2000
#: The scenarios the lab offers, in teaching order (names of labkit.gpu.sim.SCENARIOS).
SCENARIOS: tuple[str, ...] = ("idle", "training", "tiny_kernel", "collective_stall",
                              "dataloader_starved", "memory_bound", "inference_small_batch",
                              "burn_in")
ACTIVITY_LINES: tuple[tuple[str, str], ...] = (
    ("gpu_util_frac", "#d1495b"), ("sm_active_frac", "#3b6fb6"),
    ("sm_occupancy_frac", "#7aa6dc"), ("tensor_active_frac", "#2e7d32"),
    ("dram_active_frac", "#e09f3e"))
#: The power chart's lines (left axis W, right axis MHz).
POWER_LINES: tuple[str, ...] = ("power_usage_w", "power_limit_w", "sm_clock_mhz",
                                "max_sm_clock_mhz")
DEFAULT_TRACE = "sim-h100_dcgm-exporter_scenarios.prom"

# FigureOutput sets the Output widget's ``outputs`` trait (no display() capture), which is safe
# from the sampler thread; the dashboard uses it as it is.
LiveFigureOutput = FigureOutput


def css(widget: widgets.Widget, *classes: str) -> widgets.Widget:
    """Add CSS classes to ``widget`` (the browser tests find controls by them); return it."""
    for c in classes:
        widget.add_class(c)
    return widget


def no_null_tooltips(root: widgets.Widget) -> widgets.Widget:
    """Give every description-bearing widget under ``root`` a tooltip (its description, or "").

    ipywidgets 8.1 writes ``title="null"`` on a widget's description label (and on a toggle
    button) whose ``tooltip`` is None (``@jupyter-widgets/controls``:
    ``this.label.title = this.model.get('tooltip')``), which the browser shows on hover.
    Returns ``root``.
    """
    stack = [root]
    while stack:
        w = stack.pop()
        stack.extend(getattr(w, "children", ()))
        if isinstance(w, DescriptionWidget) and w.tooltip is None:
            w.tooltip = str(w.description or "")
    return root


#: A command or field name the catalog marks as code (between backticks), shown as ``<code>``.
_CODE = re.compile(r"`([^`\n]+)`")


def error_html(message: str) -> str:
    """Return a Korean error line (escaped) in the panels' red; `code` spans as ``<code>``."""
    text = _CODE.sub(r"<code>\1</code>", html.escape(message))
    return f'<span style="color:#b00020">⚠ {text}</span>'


def download_link(text: str, filename: str) -> str:
    """Return a data: link that downloads ``text`` as ``filename`` (or why it is too big)."""
    data = text.encode("utf-8")
    if len(data) > MAX_EXPORT_BYTES:
        return t("observe.export.too_big", size=fmt.count(len(data) / 2**20, 1))
    b64 = base64.b64encode(data).decode("ascii")
    return (f'<a download="{html.escape(filename)}" href="data:text/csv;base64,{b64}">'
            f"⬇ {html.escape(filename)}</a> ({fmt.count(len(data) / 1024, 0)} KB)")
