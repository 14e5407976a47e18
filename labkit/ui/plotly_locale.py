"""plotly.js's own interface in Korean: the mode bar's tooltips and its notices.

plotly.js words its mode bar (``Zoom``, ``Download plot as a PNG`` …) through its locale
dictionary; a figure's ``config`` may carry that dictionary (``config.locales``, plotly.js
"Localization" docs: https://plotly.com/javascript/configuration-options/#change-the-default-locale).
The Korean words come from the catalog (``plot.*`` keys in :mod:`labkit.i18n.ko.common`).
The English keys are plotly.js's own strings as its bundle spells them (jupyterlab-plotly 6.x,
the renderer JupyterLab and voila use); a string plotly.js renames simply stays English, which
tests/browser's page-text scan would show.
"""

from __future__ import annotations

import functools
from typing import Any

from labkit.i18n import t

#: plotly.js's English string -> catalog key.
STRINGS: dict[str, str] = {
    "Download plot as a PNG": "plot.download_png",
    "Download plot as a png": "plot.download_png",
    "Download plot": "plot.download",
    "Download plot as JSON": "plot.download_json",
    "Zoom": "plot.zoom",
    "Pan": "plot.pan",
    "Box Select": "plot.box_select",
    "Lasso Select": "plot.lasso_select",
    "Zoom in": "plot.zoom_in",
    "Zoom out": "plot.zoom_out",
    "Autoscale": "plot.autoscale",
    "Reset axes": "plot.reset_axes",
    "Reset": "plot.reset",
    "Reset view": "plot.reset_view",
    "Reset views": "plot.reset_view",
    "Share chart...": "plot.share",
    "Toggle Spike Lines": "plot.spikelines",
    "Show closest data on hover": "plot.hover_closest",
    "Compare data on hover": "plot.hover_compare",
    "Toggle show closest data on hover": "plot.hover_toggle",
    "Double-click to zoom back out": "plot.double_click",
    "Taking snapshot - this may take a few seconds": "plot.snapshot_wait",
    "Snapshot succeeded": "plot.snapshot_done",
    "Sorry, there was a problem downloading your snapshot!": "plot.snapshot_failed",
}

LOCALE = "ko"


@functools.cache
def config() -> dict[str, Any]:
    """The ``config`` keys that make plotly.js speak Korean.

    Returns
    -------
    dict
        ``{"locale": "ko", "locales": {"ko": {"dictionary": {english: korean}}}}``, to merge into
        a figure's ``config``. Cached: the catalog does not change while a kernel runs.
    """
    return {"locale": LOCALE,
            "locales": {LOCALE: {"dictionary": {en: t(key) for en, key in STRINGS.items()}}}}
