"""The teacher's commands: serve's disk and /tmp flags, ``roster remove``, the students' env."""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from labkit.hub import userenv
from labkit.hub.removal import running_processes
from labkit.hub.state import HubSettings, HubState

# --- serve --disk-limit-mib / --tmp-limit-mib, shown in status ---------------------------------


def test_serve_saves_the_disk_and_tmp_flags_and_status_shows_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from labkit.hub import __main__ as cli

    class Exec(Exception):
        pass

    def execve(*_args: object) -> None:
        raise Exec

    monkeypatch.setattr(cli.accounts, "require_root", lambda: None)
    monkeypatch.setattr(cli.accounts, "ensure_system_user", lambda *a, **k: None)
    monkeypatch.setattr("labkit.hub.userenv.ensure_user_env", lambda **_k: None)
    monkeypatch.setattr(cli, "isolation_status", lambda _s: {})
    monkeypatch.setattr(cli.os, "execve", execve)
    monkeypatch.setattr(cli, "_run_hub", execve)  # serve supervises jupyterhub (lifetime)
    monkeypatch.setattr(cli.os, "chdir", lambda _p: None)
    monkeypatch.setattr(cli.os, "umask", lambda _m: 0o022)
    csv = tmp_path / "class.csv"
    csv.write_text("username,display_name\nminji,김민지\n", encoding="utf-8")
    state_dir = tmp_path / "state"
    HubState(state_dir).accounts.set_password("kim", "teacher-pass-1")  # never first-use
    with pytest.raises(Exec):
        cli.main(["--state-dir", str(state_dir), "serve", "--roster", str(csv), "--teacher",
                  "kim", "--disk-limit-mib", "512", "--tmp-limit-mib", "64"])
    settings = HubState(state_dir).settings()
    assert (settings.disk_limit_mib, settings.tmp_limit_mib) == (512, 64)
    assert set(HubState(state_dir).accounts.codes()) == {"minji"}  # make hub hands out codes
    doc = cli.status(HubState(state_dir))
    assert (doc["limits"]["disk_limit_mib"], doc["limits"]["tmp_limit_mib"]) == (  # type: ignore[index]
        512, 64)
    assert "학생 한 명에 디스크(disk) 512 MiB, 임시 폴더(/tmp) 64 MiB" in cli.status_text(doc)
    with pytest.raises(SystemExit):  # the state refuses a home image too small to format
        cli.main(["--state-dir", str(state_dir), "serve", "--disk-limit-mib", "8"])


def test_makefile_passes_disk_mib_and_tmp_mib_to_serve() -> None:
    make = subprocess.run(["make", "-n", "hub", "ROSTER=c.csv", "TEACHER=kim", "DISK_MIB=512",
                           "TMP_MIB=64", "VENV=/nonexistent-venv"],
                          capture_output=True, text=True, cwd=Path(__file__).parents[1],
                          check=False)
    lines = make.stdout.replace("\\\n", " ").splitlines()  # the recipe's continued lines
    line = next(x for x in lines if "labkit.hub serve" in x)
    assert "--disk-limit-mib 512" in line and "--tmp-limit-mib 64" in line


# --- the students' environment: built once per lock, swapped in atomically ---------------------


class Builds:
    """A stand-in for venv + pip that records where it built (the stamp logic is under test)."""

    def __init__(self) -> None:
        self.targets: list[Path] = []

    def __call__(self, target: Path) -> None:
        (target / "lib").mkdir(parents=True)
        (target / "lib" / "marker").write_text(str(len(self.targets)))
        self.targets.append(target)


def test_env_is_built_once_per_lock_and_swapped_in_by_a_link(tmp_path: Path) -> None:
    env, build = tmp_path / "user", Builds()
    userenv.ensure_user_env(env, log=False, build=build, in_use=lambda _e: 0)
    assert build.targets == [tmp_path / f"user-{userenv.stamp()[:12]}"]
    assert env.is_symlink() and env.resolve() == build.targets[0]
    assert (env / userenv.STAMP).read_text() == userenv.stamp()
    userenv.ensure_user_env(env, log=False, build=build, in_use=lambda _e: 0)
    assert len(build.targets) == 1  # a second `make hub`: the stamp matches, nothing is built


def test_a_stale_env_in_use_is_kept_unless_forced(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "user-old"
    (old / "lib").mkdir(parents=True)
    (old / userenv.STAMP).write_text("an older lock")
    env = tmp_path / "user"
    env.symlink_to(old.name)
    build = Builds()
    userenv.ensure_user_env(env, build=build, in_use=lambda _e: 3)  # a class is running
    assert build.targets == [] and env.resolve() == old
    assert "학생 프로세스 3개가 쓰고 있어 다시 만들지 않았습니다" in capsys.readouterr().out
    userenv.ensure_user_env(env, log=False, build=build, in_use=lambda _e: 3, force=True)
    assert env.resolve() == build.targets[0] and userenv.is_current(env)
    assert not old.exists()  # the one it replaced is deleted


def test_an_env_of_an_older_labkit_in_a_plain_folder_is_replaced(tmp_path: Path) -> None:
    env = tmp_path / "user"
    (env / "lib").mkdir(parents=True)  # no stamp: built before stamps, or half built
    build = Builds()
    userenv.ensure_user_env(env, log=False, build=build, in_use=lambda _e: 0)
    assert env.is_symlink() and (env / "lib" / "marker").read_text() == "0"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["user", build.targets[0].name])  # no .old or .link left behind


def test_a_failed_build_leaves_the_env_in_use_as_it_was(tmp_path: Path) -> None:
    old = tmp_path / "user-old"
    old.mkdir()
    env = tmp_path / "user"
    env.symlink_to(old.name)

    def broken(target: Path) -> None:
        target.mkdir()
        raise subprocess.CalledProcessError(1, ["pip"])

    with pytest.raises(subprocess.CalledProcessError):
        userenv.ensure_user_env(env, log=False, build=broken, in_use=lambda _e: 0)
    assert env.resolve() == old


def test_processes_using_counts_a_process_started_from_the_env(tmp_path: Path) -> None:
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    sleeper = env / "bin" / "sleep"
    sleeper.symlink_to("/bin/sleep")
    assert userenv.processes_using(env) == 0
    proc = subprocess.Popen([str(sleeper), "30"])
    try:
        assert userenv.processes_using(env) == 1
    finally:
        proc.kill()
        proc.wait()


# --- roster remove (as root, with real system accounts) -----------------------------------------

ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="creates system users; CI runs as root")
GONE, KEPT, TEACHER = "lkauth-rm1", "lkauth-rm2", "lkauth-t"


@pytest.fixture
def two_students(tmp_path: Path) -> Iterator[tuple[HubState, list[str]]]:
    from jupyterhub import orm

    from labkit.hub.accounts import ensure_system_user, remove_system_user
    from labkit.hub.roster import Student

    state = HubState(tmp_path / "state")
    state.save_roster([Student(GONE, "김하나"), Student(KEPT, "이둘")])
    state.save_settings(HubSettings(teacher=TEACHER, port=1))
    for name in (GONE, KEPT):
        ensure_system_user(name, role="student")
        state.images_dir.mkdir(mode=0o700, exist_ok=True)
        (state.images_dir / f"jupyter-{name}.img").write_bytes(b"\0" * 1024)
    state.accounts.set_password(GONE, "gone-pass-1")
    state.accounts.hand_out([KEPT])  # KEPT has not logged in yet: a first-login code
    session = orm.new_session_factory(state.db_url)()
    session.add_all([orm.User(name=GONE), orm.User(name=KEPT)])
    session.commit()
    session.close()
    yield state, [GONE, KEPT]
    for name in (GONE, KEPT):
        remove_system_user(name)


def _remove(state: HubState, *args: str) -> int:
    from labkit.hub.__main__ import main

    with pytest.raises(SystemExit) as done:
        main(["--state-dir", str(state.root), "roster", "remove", *args])
    return int(done.value.code or 0)


def _hub_users(state: HubState) -> list[str]:
    from jupyterhub import orm

    session = orm.new_session_factory(state.db_url)()
    try:
        return sorted(u.name for u in session.query(orm.User))
    finally:
        session.close()


@ROOT
def test_roster_remove_asks_refuses_while_running_then_deletes_everything(
        two_students: tuple[HubState, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    state, _ = two_students
    assert _remove(state, GONE) == 1  # no --yes: only says what would go
    assert "--yes를 함께 주십시오" in capsys.readouterr().out
    pwd.getpwnam(f"jupyter-{GONE}")  # still there
    entry = pwd.getpwnam(f"jupyter-{GONE}")
    server = subprocess.Popen(["sleep", "60"], user=entry.pw_uid, group=entry.pw_gid,
                              cwd="/")  # stands for the student's running server
    try:
        assert running_processes(GONE) == 1
        assert _remove(state, GONE) == 1  # the dry run still says what would go (the trial)
        said = capsys.readouterr().out
        assert "--yes를 함께 주십시오" in said and "--stop" in said and GONE in said
        assert _remove(state, GONE, "--yes") == 1
        assert f"서버가 실행 중인 학생이 있어 지우지 않았습니다: {GONE}" in capsys.readouterr().out
        assert _remove(state, GONE, "--stop", "--yes") == 0
        server.wait(timeout=10)  # killed first (and reaped by the killer: no status here)
        import psutil

        assert not psutil.pid_exists(server.pid)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    with pytest.raises(KeyError):
        pwd.getpwnam(f"jupyter-{GONE}")
    assert not Path(entry.pw_dir).exists()
    assert not (state.images_dir / f"jupyter-{GONE}.img").exists()
    assert [s.username for s in state.roster()] == [KEPT]
    assert state.accounts.with_password() == set() and set(state.accounts.codes()) == {KEPT}
    assert _hub_users(state) == [KEPT]  # the hub is stopped: its database user goes now
    pwd.getpwnam(f"jupyter-{KEPT}")  # the classmate is untouched
    assert (state.images_dir / f"jupyter-{KEPT}.img").exists()


@ROOT
def test_roster_remove_refuses_the_teacher_strangers_and_no_names(
        two_students: tuple[HubState, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    state, _ = two_students
    assert _remove(state, TEACHER, "--yes") == 2
    assert "교사(teacher) 계정이라 지우지 않습니다" in capsys.readouterr().out
    assert _remove(state, "nobody", "--yes") == 2
    assert _remove(state, "--yes") == 2
    assert _remove(state, GONE, "--all", "--yes") == 2
    assert "--all을 주십시오" in capsys.readouterr().out
    assert len(state.roster()) == 2 and _hub_users(state) == sorted([GONE, KEPT])


@ROOT
def test_roster_remove_all_removes_every_student(
        two_students: tuple[HubState, list[str]]) -> None:
    state, _ = two_students
    assert _remove(state, "--all", "--yes") == 0
    assert state.roster() == [] and _hub_users(state) == []
    for name in (GONE, KEPT):
        with pytest.raises(KeyError):
            pwd.getpwnam(f"jupyter-{name}")
