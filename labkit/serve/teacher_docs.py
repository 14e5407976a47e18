"""``python -m labkit.serve.teacher_docs``: write the teacher's pages in ``docs/`` from the lessons.

Writes, for the default school case on the simulated lab GPU (so the pages are the same on
every machine):

- ``docs/answer-key.md`` and ``docs/answer-key.html`` (prints on A4): every prediction, task,
  exercise and exit ticket with its answer (:mod:`labkit.ui.answer_key`).

``tests/test_teacher_docs.py`` checks that the committed pages equal what this writes; rerun it
after changing a lesson's questions or answers. The pages go to ``docs/`` only: ``notebooks/`` is
what the class hub copies to every student, and the students' servers serve nothing from
``docs/``.

Used in: docs/teacher.md
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from labkit.serve.lessons import discover

__all__ = ["DOCS", "answer_key_pages", "default_case", "main"]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: The simulated lab GPU the pages are made on (lesson 02's board is this model too).
SIM_GPU = "sim:H100-80GB"


@contextmanager
def default_case() -> Iterator[None]:
    """Run the body with the default school case (an empty ``$LABKIT_HOME``) on the simulated
    lab GPU, whatever this machine has saved or plugged in; restores ``$LABKIT_HOME``."""
    import labkit.gpu as gpu

    saved = os.environ.get("LABKIT_HOME")
    with tempfile.TemporaryDirectory(prefix="labkit-teacher-") as home:
        os.environ["LABKIT_HOME"] = home
        try:
            gpu.connect(SIM_GPU)
            yield
        finally:
            if saved is None:
                os.environ.pop("LABKIT_HOME", None)
            else:
                os.environ["LABKIT_HOME"] = saved


def lesson_titles(root: Path | None = None) -> dict[str, str]:
    """Return each lesson's title by number, read from the notebooks' headers."""
    return {lesson.number: lesson.title for lesson in discover(root)}


def answer_key_pages() -> dict[str, str]:
    """Return the answer key's pages by file name (``answer-key.md``, ``answer-key.html``).

    Build them inside :func:`default_case` for the committed pages.
    """
    from labkit.ui.answer_key import build_key, render_html, render_markdown

    keys = build_key()
    titles = lesson_titles()
    return {"answer-key.md": render_markdown(keys, titles),
            "answer-key.html": render_html(keys, titles)}


def main(argv: list[str] | None = None) -> int:
    """Write the teacher's pages into ``--out`` (default ``docs/``); return 0."""
    parser = argparse.ArgumentParser(prog="python -m labkit.serve.teacher_docs",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    with default_case():
        pages = answer_key_pages()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (args.out / name).write_text(text, encoding="utf-8")
        print(args.out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
