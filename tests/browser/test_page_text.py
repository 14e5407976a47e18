"""Every lesson as a voila app: no English outside parentheses and no internal value on the page.

Issue 17's "done when", read as a student reads it: each lesson (generic over
``notebooks/NN_*.ipynb``) is opened once on the session's voila server, its charts drawn, and
everything the page shows is read from chromium (:mod:`tests.browser.page_text`: visible text,
tooltips and other attributes, drop-down options, the tab title, the text in plotly's SVG; each
widget tab opened in turn). The
rules and the per-lesson allow list are the headless scan's (``tests/test_rendered_korean.py``),
so a word allowed there (a proper name from data) is allowed here, and nothing else.
"""

from __future__ import annotations

import pytest

from labkit.serve.lessons import Lesson, discover
from tests.browser.conftest import ARTIFACTS, RENDER_TIMEOUT_MS, assert_no_traceback, open_lesson
from tests.browser.page_text import all_texts, findings, page_texts
from tests.test_rendered_korean import ALLOWED

pytestmark = pytest.mark.browser

LESSONS = discover()

#: Every chart on the page has drawn (the notebook has run to its end: voila's streamed page
#: is loaded) and no widget is still waiting for its model.
ALL_DRAWN = """() => document.readyState === 'complete'
  && [...document.querySelectorAll('.js-plotly-plot')].every((g) => g.querySelector('.main-svg'))
  && !document.body.innerText.includes('Loading widget')"""


def test_every_lesson_has_an_allow_list_entry() -> None:
    """A new lesson is scanned with an empty allow list: name it in the one list first."""
    assert sorted(ALLOWED) == sorted(lesson.stem for lesson in LESSONS)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.stem)
def test_a_lesson_page_shows_no_english_or_internal_value(  # type: ignore[no-untyped-def]
        page, voila_url, lesson: Lesson):
    open_lesson(page, voila_url, lesson.name)
    page.wait_for_function(ALL_DRAWN, timeout=RENDER_TIMEOUT_MS)
    page.wait_for_timeout(500)  # the last outputs' widget views
    assert_no_traceback(page)
    texts = all_texts(page)
    assert sum(kind == "chart" for _w, kind, _t in texts) > 0  # the charts' SVG text was read
    found = findings(lesson.stem, texts)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"page_text_{lesson.stem}.txt").write_text(
        "".join(f.line() + "\n" for f in found), encoding="utf-8")
    assert not found, "\n".join(f.line() for f in found)
    # the mode bar is there, in Korean, without the cloud-upload button (an English dialog)
    assert page.locator('.modebar-btn[data-title="확대할 영역 고르기"]').count() > 0
    assert page.locator('.modebar-btn[data-title="차트 공유"]').count() == 0


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
