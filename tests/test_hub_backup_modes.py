"""Restoring a home keeps its private folders private (the trial: ~/.labkit, ~/.labkit/run and
~/.jupyter came back 0755 from archives that held 0700; tarfile's ``data`` filter leaves a
folder's mode to the umask)."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from labkit.hub.backup import _extract_home


def _archive(path: Path) -> None:
    with tarfile.open(path, "w") as tar:
        for name, mode in ((".labkit", 0o700), (".labkit/run", 0o700), ("labkit", 0o755),
                           ("shared", 0o777)):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
        data = b"x"
        info = tarfile.TarInfo("labkit/03_goodput.ipynb")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))


def test_restored_folders_keep_their_mode_without_group_or_other_write(tmp_path: Path) -> None:
    archive, home = tmp_path / "home.tar", tmp_path / "home"
    _archive(archive)
    home.mkdir()
    files = _extract_home(archive, home, os.getuid(), os.getgid())
    assert files == 1
    modes = {p: (home / p).stat().st_mode & 0o777
             for p in (".labkit", ".labkit/run", "labkit", "shared")}
    assert modes == {".labkit": 0o700, ".labkit/run": 0o700, "labkit": 0o755, "shared": 0o755}
    assert (home.stat().st_mode & 0o777) == 0o700
