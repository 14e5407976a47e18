"""Nothing a page of the course loads leaves the machine (a school network may have no internet).

Every request chromium makes for the gallery and a lesson app (voila, as ``make present`` serves
them) is recorded; any to a host other than this machine fails the test. voila's own templates
link Font Awesome from cdn.jsdelivr.net: labkit's template serves it from
``labkit/serve/jupyter/nbconvert/templates/labkit/static/fontawesome`` (issue 23). The hub's
student path is checked the same way in tests/hub/test_hub_browser.py.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import open_lesson

pytestmark = pytest.mark.browser

LOCAL = {"127.0.0.1", "localhost", "::1", ""}


def record_requests(page: Any) -> tuple[list[str], dict[str, int]]:
    """Record every request's URL and every response's status on ``page`` from now on."""
    urls: list[str] = []
    statuses: dict[str, int] = {}
    page.on("request", lambda request: urls.append(request.url))
    page.on("response", lambda response: statuses.__setitem__(response.url, response.status))
    return urls, statuses


def outside(urls: list[str]) -> list[str]:
    """The URLs that leave the machine (data:, blob: and about: stay)."""
    return [u for u in urls if urlsplit(u).scheme in ("http", "https", "ws", "wss")
            and (urlsplit(u).hostname or "") not in LOCAL]


def test_gallery_and_lesson_load_nothing_from_outside(page, voila_url) -> None:  # type: ignore[no-untyped-def]
    urls, statuses = record_requests(page)
    page.goto(voila_url, wait_until="load")
    page.wait_for_selector(".lk-gallery")
    open_lesson(page, voila_url, "03_goodput.ipynb")
    page.wait_for_load_state("load")
    assert urls and outside(urls) == [], outside(urls)
    icons = [u for u in statuses if "/static/fontawesome/css/all.min.css" in u]
    assert icons and all(statuses[u] == 200 for u in icons), icons  # served here, not lost
