"""Each student's own copy of the curriculum, merged with the teacher's updates.

On every start of a student's server the hub merges the checkout's ``notebooks/`` into
``~/labkit/`` (the folder JupyterLab opens), as nbgitpuller does for a git repository ("never
overwrites the student's changes", https://nbgitpuller.readthedocs.io):

- a file the student does not have is copied;
- a file the student has not changed since the last copy (same SHA-256 as recorded in
  ``~/labkit/.labkit-curriculum.json``) is replaced by the teacher's newer version;
- a file the student changed or deleted-and-recreated is kept; a deleted file is not restored
  unless the teacher changed it;
- nothing is ever removed;
- whatever the student put in the way is worked around, never a reason the server cannot start:
  a ``~/labkit`` that is a symbolic link or a file is moved aside (``labkit-moved-<time>``) and
  a fresh folder made, with a Korean note (:data:`NOTICE`) saying where it went; a lesson file
  that is a link, or cannot be read, counts as the student's own change (kept, not followed).

The hub (root) reads the teacher's files; the writing runs as the student
(``python -m labkit.hub.curriculum DEST`` under the student's uid, the files on stdin), so a
link the student planted in their home cannot make root write anywhere else. The teacher's
checkout is only read: saving a notebook never dirties it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path

__all__ = ["MANIFEST", "NOTICE", "make_room", "merge", "plan", "read_curriculum"]

MANIFEST = ".labkit-curriculum.json"
#: The note left in a fresh ``~/labkit`` when the old one was moved aside (Korean, for the student).
NOTICE = "labkit-폴더-안내.txt"
PATTERNS = ("*.ipynb",)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_curriculum(source: Path) -> dict[str, bytes]:
    """Return the curriculum files under ``source`` (relative path -> content), sorted."""
    files: dict[str, bytes] = {}
    for pattern in PATTERNS:
        for path in sorted(source.glob(pattern)):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(source).as_posix()] = path.read_bytes()
    return dict(sorted(files.items()))


def plan(files: dict[str, bytes], present: dict[str, str | None],
         recorded: dict[str, str]) -> dict[str, str]:
    """Decide what to write (pure).

    Parameters
    ----------
    files : dict
        The teacher's files, relative path -> content.
    present : dict
        The student's files, relative path -> SHA-256 (None: missing).
    recorded : dict
        Relative path -> SHA-256 of the teacher's version last copied.

    Returns
    -------
    dict
        Relative path -> ``"copy"`` (missing, never copied), ``"update"`` (unchanged by the
        student, changed by the teacher); other files are not listed.
    """
    actions: dict[str, str] = {}
    for rel, data in files.items():
        theirs, last, new = present.get(rel), recorded.get(rel), _sha(data)
        if theirs is None and last is None:
            actions[rel] = "copy"
        elif theirs is None and last != new:
            actions[rel] = "copy"
        elif theirs is not None and theirs == last and last != new:
            actions[rel] = "update"
    return actions


def make_room(dest: Path, now: str | None = None) -> Path | None:
    """Move ``dest`` aside if it is not a real folder (a link, a file); return where, or None.

    ``now`` names the moved one (``labkit-moved-<now>``; default: the time, UTC, to the second).
    """
    if not dest.is_symlink() and (dest.is_dir() or not os.path.lexists(dest)):
        return None
    import datetime as _dt

    stamp = now or _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
    aside = dest.with_name(f"{dest.name}-moved-{stamp}")
    os.rename(dest, aside)  # the link itself moves; nothing it points to is touched
    return aside


def _present(path: Path) -> str | None:
    """The student's file's SHA-256; a link or an unreadable file is their own ("student")."""
    if path.is_symlink():
        return "student"
    if not path.is_file():
        return None if not os.path.lexists(path) else "student"
    try:
        return _sha(path.read_bytes())
    except OSError:
        return "student"


def _write(path: Path, data: bytes) -> None:
    """Write ``path`` through a fresh temporary file (whatever the student left in its place)."""
    tmp = path.with_name(f".{path.name}.labkit-tmp")
    if tmp.is_dir() and not tmp.is_symlink():
        import shutil

        shutil.rmtree(tmp)
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def merge(dest: Path, files: dict[str, bytes]) -> dict[str, str]:
    """Merge ``files`` into ``dest`` by :func:`plan` (run as the student). Returns the actions.

    A ``dest`` that is not a real folder is moved aside first (:func:`make_room`); the note
    :data:`NOTICE` is then written and listed as ``"notice"``.
    """
    from labkit.i18n import t

    moved = make_room(dest)
    dest.mkdir(mode=0o755, parents=True, exist_ok=True)
    manifest = dest / MANIFEST
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8")) \
            if not manifest.is_symlink() else {}
        if not isinstance(recorded, dict):
            recorded = {}
    except (OSError, ValueError):
        recorded = {}
    present = {rel: _present(dest / rel) for rel in files}
    actions = plan(files, present, recorded)
    for rel in actions:
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, files[rel])
        recorded[rel] = _sha(files[rel])
    if manifest.is_dir() and not manifest.is_symlink():  # ours: a folder there is in the way
        os.rename(manifest, manifest.with_name(f"{MANIFEST}-moved-{os.getpid()}"))
    _write(manifest, json.dumps(recorded, indent=1, sort_keys=True).encode("utf-8"))
    if moved is not None:
        _write(dest / NOTICE, (t("hub.curriculum.moved", name=dest.name, moved=moved.name)
                               + "\n").encode("utf-8"))
        actions[NOTICE] = "notice"
    return actions


USAGE = ("usage: python -m labkit.hub.curriculum DEST < files.json\n"
         "       python -m labkit.hub.curriculum --from SOURCE DEST")


def main(argv: list[str] | None = None) -> None:
    """Merge the curriculum into DEST (run as the student).

    ``python -m labkit.hub.curriculum DEST``: the files come as JSON on stdin (the one-server
    hub's spawner, which reads the teacher's checkout as root).
    ``python -m labkit.hub.curriculum --from SOURCE DEST``: the files are read from SOURCE (a
    Kubernetes pod's ``postStart`` hook, with the curriculum baked into the single-user image;
    :mod:`labkit.hub.k8s`).
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[0] == "--from":
        source, args = Path(args[1]), args[2:]
        if not source.is_dir():
            raise SystemExit(f"curriculum source {source} is not a directory")
        files = read_curriculum(source)
    elif len(args) == 1 and not args[0].startswith("-"):
        payload = json.load(sys.stdin)
        files = {rel: base64.b64decode(data) for rel, data in payload.items()}
    else:
        raise SystemExit(USAGE)
    for rel in files:
        if rel.startswith("/") or ".." in Path(rel).parts:
            raise SystemExit(f"refusing path {rel!r}")
    dest = Path(args[0]).expanduser()
    actions = merge(dest, files)
    # ~/.labkit holds the server's runtime folder (kernel sockets) and the progress file: a link
    # or a file there would stop the server from starting, so it is moved aside the same way
    state = make_room(dest.parent / ".labkit")
    if state is not None:
        actions[state.name] = "moved"
    print(json.dumps(actions))


if __name__ == "__main__":
    main()
