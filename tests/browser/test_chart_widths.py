"""Every chart of a lesson fits its output area in a real browser (no chart wider than the
notebook column: plotly's responsive layout, no fixed pixel width past the column)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import assert_no_traceback, open_lesson

pytestmark = pytest.mark.browser

#: For every plotly chart: how far its right edge passes the page's content column. [px]
OVERFLOW_JS = """
() => [...document.querySelectorAll('.js-plotly-plot')].map(g => {
  const area = g.closest('.jp-OutputArea-output, .jp-Cell-outputArea, .jp-Notebook, body');
  const a = area.getBoundingClientRect(), r = g.getBoundingClientRect();
  const css = [...(g.closest('.widget-output') || g).classList].join(' ');
  return {css: css, over: Math.round(r.right - a.right), width: Math.round(r.width),
          area: Math.round(a.width)};
})
"""


@pytest.mark.parametrize("notebook", ["04_reliability.ipynb"])
def test_no_chart_is_wider_than_its_output_area(page, voila_url, notebook):  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1100, "height": 900})
    open_lesson(page, voila_url, notebook)
    page.wait_for_selector(".lk-interval-chart .js-plotly-plot .main-svg")
    page.wait_for_selector(".lk-eventlog-chart .js-plotly-plot .main-svg")
    charts = page.evaluate(OVERFLOW_JS)
    assert len(charts) >= 5
    wide = [c for c in charts if c["over"] > 1]
    assert not wide, wide
    assert_no_traceback(page)
