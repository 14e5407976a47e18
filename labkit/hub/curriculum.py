"""Each student's own copy of the curriculum, merged with the teacher's updates.

On every start of a student's server the hub merges the checkout's ``notebooks/`` into
``~/labkit/`` (the folder JupyterLab opens), as nbgitpuller does for a git repository ("never
overwrites the student's changes", https://nbgitpuller.readthedocs.io):

- a file the student does not have is copied;
- a file the student has not changed since the last copy (same SHA-256 as recorded in
  ``~/labkit/.labkit-curriculum.json``) is replaced by the teacher's newer version;
- a file the student changed or deleted-and-recreated is kept; a deleted file is not restored
  unless the teacher changed it;
- nothing is ever removed.

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

__all__ = ["MANIFEST", "merge", "plan", "read_curriculum"]

MANIFEST = ".labkit-curriculum.json"
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


def merge(dest: Path, files: dict[str, bytes]) -> dict[str, str]:
    """Merge ``files`` into ``dest`` by :func:`plan` (run as the student). Returns the actions."""
    dest.mkdir(mode=0o755, parents=True, exist_ok=True)
    manifest = dest / MANIFEST
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    present: dict[str, str | None] = {}
    for rel in files:
        path = dest / rel
        present[rel] = _sha(path.read_bytes()) if path.is_file() else None
    actions = plan(files, present, recorded)
    for rel in actions:
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.labkit-tmp")
        tmp.write_bytes(files[rel])
        os.replace(tmp, path)
        recorded[rel] = _sha(files[rel])
    manifest.write_text(json.dumps(recorded, indent=1, sort_keys=True), encoding="utf-8")
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
    actions = merge(Path(args[0]).expanduser(), files)
    print(json.dumps(actions))


if __name__ == "__main__":
    main()
