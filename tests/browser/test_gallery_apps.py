"""The teacher's gallery and every lesson as an app, in a real browser (Debian chromium).

Generic over ``notebooks/NN_*.ipynb``: a new lesson is listed, opened from the gallery, and its
main control (``labkit/serve/lessons.py`` MAIN_INTERACTIONS) must change its main chart; the
same visit then reads the whole page for English and internal values
(:func:`tests.browser.page_text.assert_page_in_korean`, ``tests/browser/test_page_text.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from labkit.serve.lessons import Lesson, discover, main_interaction
from labkit.serve.server import THUMBNAILS
from labkit.serve.thumbnails import perform
from tests.browser.conftest import (
    ARTIFACTS,
    RENDER_TIMEOUT_MS,
    assert_no_traceback,
    confirm_revealing_predictions,
    open_lesson,
    plot_json,
    screenshot,
    wait_for_plot_change,
)
from tests.browser.page_text import assert_page_in_korean
from tests.browser.servers import VoilaServer, voila_server

pytestmark = pytest.mark.browser

LESSONS = discover()


def test_gallery_lists_every_lesson_with_title_goals_and_thumbnail(page, voila_url):  # type: ignore[no-untyped-def]
    page.goto(voila_url, wait_until="load")
    page.wait_for_selector(".lk-gallery")
    assert "학교 미니 AI 데이터센터 실습" in page.inner_text(".lk-gallery-title")
    cards = page.locator(".lk-lesson-card")
    assert cards.count() == len(LESSONS)
    for lesson in LESSONS:
        card = page.locator(f'.lk-lesson-card[data-lesson="{lesson.stem}"]')
        assert lesson.title in card.locator(".lk-lesson-title").inner_text()
        goals = card.locator(".lk-goals li")
        assert goals.count() == len(lesson.goals)
        assert goals.first.inner_text().strip() == lesson.goals[0]
        href = card.locator("a.lk-lesson-link").get_attribute("href")
        assert href == f"/voila/render/{lesson.name}"
        if (THUMBNAILS / f"{lesson.stem}.png").is_file():
            img = card.locator("img.lk-thumb")
            page.wait_for_function("(img) => img.complete && img.naturalWidth > 0",
                                   arg=img.element_handle())
        else:  # graceful fallback: the lesson number instead of a picture
            assert card.locator(".lk-thumb-none").inner_text().strip() == lesson.number
    assert_no_traceback(page)
    screenshot(page, "gallery")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.stem)
def test_lesson_opens_from_gallery_its_main_control_changes_its_chart_all_in_korean(  # type: ignore[no-untyped-def]
        page, voila_url, lesson: Lesson):
    try:
        interaction = main_interaction(lesson)
    except LookupError as err:
        pytest.fail(str(err))
    page.goto(voila_url, wait_until="load")
    page.locator(f'.lk-lesson-card[data-lesson="{lesson.stem}"] a.lk-lesson-link').click()
    page.wait_for_selector(".lk-banner", timeout=RENDER_TIMEOUT_MS)
    chart = f".{interaction.chart} .js-plotly-plot .main-svg"
    # an app that shows its prediction's answer appears once the prediction is confirmed
    page.wait_for_selector(chart, state="attached", timeout=RENDER_TIMEOUT_MS)
    confirm_revealing_predictions(page)
    page.wait_for_selector(chart, timeout=RENDER_TIMEOUT_MS)
    assert page.locator(".lk-course-bar").inner_text().startswith("← 수업 목록")
    assert page.evaluate("() => document.documentElement.lang") == "ko"
    before = plot_json(page, interaction.chart)
    assert before is not None
    perform(page, interaction)
    wait_for_plot_change(page, interaction.chart, before)
    assert_no_traceback(page)
    screenshot(page, f"app_{lesson.stem}")
    # everything the page shows now, its revealed parts and the moved chart: Korean only
    assert_page_in_korean(page, lesson.stem, ARTIFACTS, RENDER_TIMEOUT_MS)
    assert_no_traceback(page)


@pytest.fixture(scope="module")
def dark_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VoilaServer]:
    from labkit.serve import notebooks_dir

    with voila_server(notebooks_dir(), tmp_path_factory.mktemp("dark"),
                      env={"LABKIT_THEME": "dark"}, theme="dark") as server:
        yield server


def test_dark_theme_darkens_page_and_plots(page, dark_server: VoilaServer):  # type: ignore[no-untyped-def]
    lesson = LESSONS[0]
    interaction = main_interaction(lesson)
    open_lesson(page, dark_server.url, lesson.name, interaction.chart)
    assert page.evaluate("() => document.body.classList.contains('theme-dark')")
    # waited for, not read once: a confirmed prediction's app redraws its chart, and for a
    # moment the Output area holds no plot (CI saw querySelector return null there)
    paper = page.wait_for_function(
        "(css) => { const all = document.querySelectorAll('.' + css + ' .js-plotly-plot');"
        " const g = all[all.length - 1];"
        " return g && g._fullLayout ? g._fullLayout.paper_bgcolor : null; }",
        arg=interaction.chart).json_value()
    assert paper not in ("#fff", "#ffffff", "white", "rgb(255, 255, 255)"), paper
    assert_no_traceback(page)
    screenshot(page, f"dark_{lesson.stem}")
    page.goto(dark_server.url, wait_until="load")
    page.wait_for_selector(".lk-gallery")
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), background
    screenshot(page, "dark_gallery")


def test_thumbnail_files_are_served(page, voila_url):  # type: ignore[no-untyped-def]
    for png in sorted(THUMBNAILS.glob("*.png")):
        response = page.request.get(f"{voila_url}voila/templates/labkit/static/thumbnails/"
                                    f"{png.name}")
        assert response.status == 200 and response.body() == Path(png).read_bytes()
