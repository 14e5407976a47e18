"""Restoring a home keeps its private folders private (the trial: ~/.labkit, ~/.labkit/run and
~/.jupyter came back 0755 from archives that held 0700; tarfile's ``data`` filter leaves a
folder's mode to the umask), and a link the filter refuses is left out, not the end of the
restore (the trial: a student's ``ln -s /srv/canary ~/.labkit/x.lnk`` stopped it half-way)."""

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
    files, skipped = _extract_home(archive, home, os.getuid(), os.getgid())
    assert (files, skipped) == (1, [])
    modes = {p: (home / p).stat().st_mode & 0o777
             for p in (".labkit", ".labkit/run", "labkit", "shared")}
    assert modes == {".labkit": 0o700, ".labkit/run": 0o700, "labkit": 0o755, "shared": 0o755}
    assert (home.stat().st_mode & 0o777) == 0o700


def test_a_link_out_of_the_home_is_left_out_and_the_rest_restored(tmp_path: Path) -> None:
    source, archive, home = tmp_path / "src", tmp_path / "home.tar", tmp_path / "home"
    (source / ".labkit").mkdir(parents=True)
    (source / ".labkit" / "progress.jsonl").write_text('{"key": "03.ex1"}\n')
    (source / "labkit").mkdir()
    (source / "labkit" / "03_goodput.ipynb").write_text("{}")
    (source / ".labkit" / "x.lnk").symlink_to("/etc/passwd")  # absolute: refused
    (source / "labkit" / "up.lnk").symlink_to("../../..")  # out of the home: refused
    (source / "labkit" / "same.lnk").symlink_to("03_goodput.ipynb")  # inside: kept
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(str(source), arcname=".")
    home.mkdir()
    files, skipped = _extract_home(archive, home, os.getuid(), os.getgid())
    assert files == 2
    assert sorted(skipped) == [".labkit/x.lnk", "labkit/up.lnk"]
    assert (home / ".labkit" / "progress.jsonl").read_text() == '{"key": "03.ex1"}\n'
    assert os.readlink(home / "labkit" / "same.lnk") == "03_goodput.ipynb"
    assert not (home / ".labkit" / "x.lnk").is_symlink()
    assert not (home / "labkit" / "up.lnk").is_symlink()
