"""The teacher's printable answer key on the hub: the class page's copy, out of students' reach.

``docs/answer-key.html`` (:mod:`labkit.serve.teacher_docs`) is for the teacher. The students'
servers get the curriculum (``notebooks/``, :mod:`labkit.hub.curriculum`) and the ``labkit``
package and ``data/`` (:mod:`labkit.hub.userenv`), never ``docs/``; but the checkout itself may
sit where every account can read it (``/opt/labkit``, a home with mode 0755). At each start
(:func:`protect`, run by the hub as root) the hub:

- copies the key into its private state directory (0700, the copy 0600) -- the class page
  (root, beside the hub) serves that copy to the teacher only, as a download
  (:data:`COPY_NAME`);
- takes the "others" permission bits off the checkout's ``docs/answer-key.*`` (git records no
  read bits, so the working tree is otherwise unchanged): the students' system accounts
  (``jupyter-<name>``, neither the owner nor in the owner's group) cannot open them;
- takes the same bits off the checkout's ``.git`` folder: its history holds every version of
  the key (the trial read it with ``git show HEAD:docs/answer-key.md`` as a student). Nothing
  of the students' reads the checkout (labkit is copied into their environment), and its
  owner's and group's git work as before.

What this cannot hide: the lessons grade in the student's own kernel, so the definitions the
key is made from are in the students' environment, and a student who reads the lessons' code
can work the answers out (as with any notebook that checks answers in its kernel).
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

__all__ = ["COPY_NAME", "DOCS", "ENV_ANSWER_KEY", "protect"]

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: The copy's file name in the hub's state directory.
COPY_NAME = "answer-key.html"
#: The class page's environment variable naming the copy.
ENV_ANSWER_KEY = "LABKIT_CLASSPAGE_ANSWER_KEY"
_KEY_FILES = ("answer-key.html", "answer-key.md")


def protect(state_root: Path, docs: Path = DOCS) -> Path | None:
    """Copy ``docs/answer-key.html`` into ``state_root`` (0600) and make the checkout's answer
    key files and its ``.git`` folder unreadable to other accounts; return the copy (None
    without an answer key).

    Raises
    ------
    OSError
        If the copy cannot be written (the state directory is the hub's own).
    """
    closed = [path for path in (docs / name for name in _KEY_FILES) if path.is_file()]
    history = docs.parent / ".git"  # a folder; a worktree's ".git" file names one elsewhere
    if history.is_dir():
        closed.append(history)
    for path in closed:
        if not path.is_symlink():
            mode = stat.S_IMODE(path.stat().st_mode)
            if mode & 0o007:
                os.chmod(path, mode & ~0o007)
    source = docs / COPY_NAME
    if not source.is_file():
        return None
    target = state_root / COPY_NAME
    staged = target.with_name(f".{COPY_NAME}.tmp")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
        shutil.copyfileobj(src, out)
    os.chmod(staged, 0o600)
    os.replace(staged, target)
    return target
