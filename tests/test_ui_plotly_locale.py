"""plotly.js's mode bar in Korean (issue 17: the page-text scan found its English tooltips)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest

from labkit.ui import plotly_locale
from labkit.ui.components import FigureOutput
from tests.test_catalog_register import english_outside_parentheses

ROOT = Path(__file__).resolve().parents[1]
BUNDLES = sorted((ROOT / ".venv/share/jupyter/labextensions/jupyterlab-plotly/static").glob("*.js"))


def test_every_shown_figure_carries_the_korean_locale() -> None:
    out = FigureOutput()
    out.show(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])))
    output: dict[str, Any] = dict(out.outputs[0])
    config = output["data"]["application/vnd.plotly.v1+json"]["config"]
    assert config["locale"] == "ko" and config["displaylogo"] is False
    # the cloud-upload button is gone (an English dialog; data leaving the school)
    assert config["showSendToCloud"] is False
    assert config["modeBarButtonsToRemove"] == ["sendDataToCloud"]
    words = config["locales"]["ko"]["dictionary"]
    assert words["Zoom"] == "확대할 영역 고르기"
    assert words["Download plot as a PNG"] == "그림(PNG)으로 내려받기"
    for korean in words.values():
        assert not english_outside_parentheses(korean), korean


@pytest.mark.skipif(not BUNDLES, reason="jupyterlab-plotly's bundle is not installed here")
def test_the_mode_bar_strings_the_renderer_uses_are_all_translated() -> None:
    # the oracle is plotly.js's own bundle as installed: every mode-bar title it localises
    # (``_(gd, "Zoom")`` minified as ``return X(t,"Zoom")``) must have a Korean entry
    source = "".join(p.read_text(encoding="utf-8", errors="replace") for p in BUNDLES)
    titles = set(re.findall(r'return [\w$]+\([\w$]+,"([A-Z][^"]{2,60})"\)', source))
    titles |= {"Download plot as a PNG"} & set(re.findall(r'"(Download plot as a PNG)"', source))
    assert {"Zoom", "Pan", "Autoscale", "Reset axes"} <= titles  # the scan found the bundle
    drawing = {t for t in titles if t.startswith(("Draw ", "Erase ", "Orbital", "Turntable",
                                                  "Reset camera"))}  # 3-D/drawing: not used
    missing = titles - drawing - set(plotly_locale.STRINGS)
    assert not missing, f"plotly.js strings without Korean: {sorted(missing)}"
