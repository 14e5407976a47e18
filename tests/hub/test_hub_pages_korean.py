"""A mischievous student's error pages on the real class hub are Korean (issue 13).

As student A, through the proxy: the hub's admin page and B's server (403), a missing hub page,
a missing page, file and voila app on A's own server (404). Each page is Korean; JupyterHub's
and jupyter_server's English text (their messages, "Jupyter has lots of moons", "You are
requesting a page that does not exist!") never reaches the student. Needs root (conftest).
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from labkit.i18n import t
from tests.hub import hubclient
from tests.hub.conftest import ROOT_REASON, STUDENT_A, STUDENT_B, Hub

pytestmark = [pytest.mark.hub,
              pytest.mark.skipif(os.geteuid() != 0, reason=ROOT_REASON)]

@pytest.fixture(scope="module")
def servers(hub: Hub, students: dict[str, Any]) -> dict[str, Any]:
    """A's and B's servers running (started here, or already by an earlier module).

    Not test_hub_security's fixture: that one proves the concurrent spawn limit with two spawns
    at once, and in a full run it would find these servers already running (400, 400)."""
    for name in (STUDENT_A, STUDENT_B):
        hubclient.start_server(students[name])
    return {"a": students[STUDENT_A], "b": students[STUDENT_B]}


#: English words that may stand on a Korean page: product names and the status line's HTTP.
NAMES = {"JupyterLab", "HTTP"}


def _text(html: str) -> str:
    """What a reader sees: no scripts, styles, noscript, hidden dialog, tags."""
    html = re.sub(r"(?s)<(script|style|noscript)\b.*?</\1>", " ", html)
    html = re.sub(r'(?s)<div class="modal fade".*?</div>\s*</div>\s*</div>\s*</div>', " ", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _english(text: str) -> list[str]:
    bare = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", " ", text)  # terms in brackets
    return [w for w in re.findall(r"[A-Za-z]{3,}", bare) if w not in NAMES]


@pytest.mark.parametrize(("path", "status", "key"), [
    ("hub/admin", 403, "hub.error.403"),
    (f"user/{STUDENT_B}/lab", 403, None),  # B's server (its own 403) or the hub's
    ("hub/no-such-page", 404, "hub.error.404"),
    (f"user/{STUDENT_A}/no-such-page", 404, "hub.server.error.404"),
    (f"user/{STUDENT_A}/files/labkit/no-such-file.txt", 404, "hub.server.error.404"),
    (f"user/{STUDENT_A}/voila/render/labkit/no-such-lesson.ipynb", 404,
     "serve.notfound.title"),
])
def test_a_students_error_pages_are_korean(hub: Hub, servers: dict[str, Any],
                                           path: str, status: int, key: str | None) -> None:
    a = servers["a"]
    reply = a.session.get(hub.base + path, timeout=60)
    reply.encoding = "utf-8"
    assert reply.status_code == status, (path, reply.status_code, reply.text[:300])
    text = _text(reply.text)
    if key is not None:
        assert t(key) in text, (path, text[:600])
    else:
        assert t("hub.error.403") in text or t("hub.server.error.403") in text, text[:600]
    assert re.search(r"[가-힣]{2,}", text), text[:600]
    assert not _english(text), (path, _english(text), text[:600])
