"""Every lesson as a voila app: no English outside parentheses and no internal value on the page.

Issue 17's "done when", read as a student reads it: each lesson (generic over
``notebooks/NN_*.ipynb``) is opened once on the session's voila server by
``tests/browser/test_gallery_apps.py`` (from the gallery, its predictions confirmed and its main
control moved: one visit, so what a confirmed prediction reveals is read too), its charts drawn,
and everything the page shows is read from chromium (:mod:`tests.browser.page_text`: visible text,
tooltips and other attributes, drop-down options, the tab title, the text in plotly's SVG; each
widget tab opened in turn). The
rules and the per-lesson allow list are the headless scan's (``tests/test_rendered_korean.py``),
so a word allowed there (a proper name from data) is allowed here, and nothing else.
"""

from __future__ import annotations

import pytest

from labkit.serve.lessons import discover
from tests.browser.page_text import findings, page_texts
from tests.test_rendered_korean import ALLOWED

pytestmark = pytest.mark.browser

LESSONS = discover()


def test_every_lesson_has_an_allow_list_entry() -> None:
    """A new lesson is scanned with an empty allow list: name it in the one list first."""
    assert sorted(ALLOWED) == sorted(lesson.stem for lesson in LESSONS)


SAMPLE = """<title>01. 관측</title><body>
<div class="jp-Cell jp-MarkdownCell"><p>대기(wait) 시간은 <code>board_app</code>로 잽니다.</p>
<p>Loaded here</p><pre>nvidia-smi --query-gpu=utilization.gpu</pre></div>
<div class="jp-Cell"><div class="lk-room"><span title="null">요금</span>
<input placeholder="예: 30분"><select><option>선착순</option><option>fifo_policy</option></select>
<div style="display:none" title="Hidden tip">Hidden words</div>
<div class="js-plotly-plot"><svg><text>Zoom out</text><text>7월</text></svg></div></div></div>
</body>"""


def test_the_page_scan_finds_what_it_should(page) -> None:  # type: ignore[no-untyped-def]
    """The collector and the rules on a small page: English outside parentheses, a 'null'
    tooltip, an internal option value and English chart text are found; parenthesized terms,
    code, hidden elements and Korean are not."""
    page.set_content(SAMPLE)
    found = {(f.kind, f.problem) for f in findings("03_goodput", page_texts(page))}
    assert found == {("text", "Loaded, here"), ("title", "'null'"), ("chart", "Zoom, out"),
                     ("option", "fifo, fifo_policy (snake_case identifier)")}
    where = {f.kind: f.where for f in findings("03_goodput", page_texts(page))}
    assert where["text"] == "cell 1 (markdown)" and where["title"] == "cell 2 .lk-room"
