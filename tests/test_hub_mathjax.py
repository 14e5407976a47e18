"""The students' voila pages load no MathJax from the internet (labkit.hub.singleuser_config).

As the students' servers' extension, voila takes ``mathjax_url``/``mathjax_config`` from the
server's settings and, where they are missing, gives its page cdnjs's MathJax URL. labkit sets
both to None, as ``make present``'s standalone voila has them; voila's JS then loads no MathJax.
The browser check is tests/hub/test_hub_browser.py (no outside request on the student's path).
"""

from __future__ import annotations

import json
import logging

import nbformat
from traitlets.config import Config

from labkit.hub.singleuser_config import configure
from labkit.hub.warm import LESSONS_DIR


def _settings() -> dict[str, object]:
    c = Config()
    configure(c)
    return dict(c.ServerApp.tornado_settings)


def test_students_voila_pages_get_no_mathjax_url() -> None:
    from voila.configuration import VoilaConfiguration
    from voila.utils import get_page_config

    settings = _settings()
    assert settings["mathjax_url"] is None and settings["mathjax_config"] is None
    page = get_page_config("/user/a/", settings, logging.getLogger("test"),
                           VoilaConfiguration())
    assert page["fullMathjaxUrl"] is None and page["mathjaxConfig"] is None
    assert "cdnjs" not in json.dumps(page) and "http" not in json.dumps(
        {k: page[k] for k in ("fullMathjaxUrl", "mathjaxConfig")})


def test_no_lesson_needs_tex_math() -> None:
    """Without MathJax, TeX math would show as its source: no lesson's text has any."""
    import re

    math = re.compile(r"\$\$|\$[^$\n]+\$|\\\(|\\\[|\\begin\{")
    found = {p.name: m.group(0) for p in sorted(LESSONS_DIR.glob("*.ipynb"))
             for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown"
             for m in [math.search(c.source)] if m}
    assert found == {}
