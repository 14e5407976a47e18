"""``python -m labkit.hub``: run the class hub (``make hub``).

    python -m labkit.hub serve --roster class.csv --teacher NAME [--host H] [--port P]
                               [--cull-timeout S] [--mem-limit-mib M] [--cpu-limit C]
                               [--gpu-policy auto|mig|whole|shared]
    python -m labkit.hub roster import class.csv
    python -m labkit.hub roster list
    python -m labkit.hub roster reset NAME      (forget NAME's password: set anew at next login)
    python -m labkit.hub status
    python -m labkit.hub plan --students 28 --gpu H100-80GB [--out DIR]   (the class MIG layout)
    python -m labkit.hub k8s --roster class.csv --teacher NAME ... --out values.yaml

The hub keeps its state in a private directory (``/var/lib/labkit-hub`` as root;
``$LABKIT_HUB_STATE`` or ``--state-dir`` to choose). ``serve`` needs root: it creates one system
account per student.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import sys
import urllib.request
from pathlib import Path

from labkit.hub import accounts
from labkit.hub.limits import detect_mechanism
from labkit.hub.roster import Student, parse_roster, system_username, validate_username
from labkit.hub.state import HubSettings, HubState

HUB_CONFIG = Path(__file__).resolve().parent / "hubconfig" / "jupyterhub_config.py"
MECHANISMS = {
    "cgroup-v2": "cgroup v2 per student: memory.max, cpu.max, pids.max",
    "cgroup-v1": "cgroup v1 per student: memory.limit_in_bytes, cpu.cfs_quota_us, pids.max",
    "rlimit": "rlimits only: RLIMIT_AS per process, RLIMIT_NPROC per student; no CPU cap",
}


def _import_roster(state: HubState, path: str) -> list[Student]:
    text = Path(path).read_text(encoding="utf-8-sig")
    students = parse_roster(text, source=path)
    state.save_roster(students)
    return students


def _hub_env(state: HubState) -> dict[str, str]:
    return {**os.environ, "LABKIT_HUB_STATE": str(state.root)}


def cmd_serve(args: argparse.Namespace, state: HubState) -> None:
    """Import the roster, create the accounts, save the settings, exec jupyterhub."""
    try:
        accounts.require_root()
    except accounts.NeedRootError as err:
        raise SystemExit(str(err)) from None
    if args.roster:
        students = _import_roster(state, args.roster)
        print(f"labkit hub: roster {args.roster}: {len(students)} students", flush=True)
    roster = state.roster()
    if not roster:
        raise SystemExit("labkit hub: no roster: give --roster class.csv (ROSTER=class.csv)")
    settings = state.settings()
    teacher = args.teacher or settings.teacher
    if not teacher:
        raise SystemExit("labkit hub: give --teacher NAME (TEACHER=NAME): the teacher's login")
    validate_username(teacher)
    settings.teacher = teacher
    for name in ("host", "port"):
        if getattr(args, name) is not None:
            setattr(settings, name, getattr(args, name))
    for flag, field in (("cull_timeout", "cull_timeout_s"), ("mem_limit_mib", "mem_limit_mib"),
                        ("cpu_limit", "cpu_limit"), ("gpu_policy", "gpu_policy")):
        if getattr(args, flag) is not None:
            setattr(settings, field, getattr(args, flag))
    state.save_settings(settings)
    from labkit.hub.userenv import ensure_user_env

    ensure_user_env()
    for student in [*roster, Student(teacher)]:
        accounts.ensure_system_user(student.username)
    print(f"labkit hub: {len(roster)} student accounts ready (jupyter-<username>, home 0700); "
          f"limits: {MECHANISMS[detect_mechanism()]}", flush=True)
    for what, line in isolation_status(settings).items():
        print(f"labkit hub: {what}: {line}", flush=True)
    print(f"labkit hub: open http://{settings.host}:{settings.port}/ "
          f"(teacher: {teacher}, admin)", flush=True)
    jupyterhub = str(Path(sys.executable).with_name("jupyterhub"))
    os.chdir(state.root)
    os.umask(0o077)  # the hub's files private; students' servers inherit it (homes are 0700)
    os.execve(jupyterhub, [jupyterhub, "-f", str(HUB_CONFIG)], _hub_env(state))


def _password_set(state: HubState) -> set[str]:
    import dbm

    try:
        with dbm.open(str(state.passwords_file), "r") as db:
            return {k.decode() if isinstance(k, bytes) else k for k in db.keys()}
    except dbm.error:
        return set()


def cmd_roster(args: argparse.Namespace, state: HubState) -> None:
    """roster import | list | reset."""
    if args.action == "import":
        students = _import_roster(state, args.value)
        print(f"imported {len(students)} students from {args.value}")
    elif args.action == "list":
        have = _password_set(state)
        for s in state.roster():
            print(f"{s.username}\t{s.display_name}\t{s.system_user}\t"
                  f"{'password set' if s.username in have else 'first login pending'}")
    elif args.action == "reset":
        from labkit.hub.auth import reset_password

        name = validate_username(args.value)
        if name not in {s.username for s in state.roster()} | {state.settings().teacher}:
            raise SystemExit(f"{name} is not on the roster")
        done = reset_password(state.passwords_file, name)
        print(f"{name}: password {'forgotten' if done else 'was not set'}; the next login "
              "sets a new one")


def isolation_status(settings: HubSettings) -> dict[str, str]:
    """Return which disk, /tmp and /proc isolation applies to each student server, and why."""
    from labkit.hub import disk, isolation

    return {"disk": disk.describe(disk.probe(), settings.disk_limit_mib),
            **isolation.describe(isolation.probe(settings.tmp_limit_mib))}


def status(state: HubState) -> dict[str, object]:
    """Return what the hub enforces and who exists (printed by ``status``)."""
    settings = state.settings()
    mechanism = detect_mechanism()
    users = []
    have = _password_set(state)
    for s in state.roster():
        try:
            entry = pwd.getpwnam(system_username(s.username))
            account = f"{entry.pw_name} (uid {entry.pw_uid}, home {entry.pw_dir} "
            account += f"{oct(os.stat(entry.pw_dir).st_mode & 0o777)})"
        except (KeyError, OSError):
            account = "not created yet"
        users.append({"username": s.username, "display_name": s.display_name,
                      "account": account, "password_set": s.username in have})
    try:
        with urllib.request.urlopen(
                f"http://127.0.0.1:{settings.port}/hub/health", timeout=3) as reply:
            running = reply.status == 200
    except OSError:
        running = False
    return {"state_dir": str(state.root), "teacher": settings.teacher,
            "url": f"http://{settings.host}:{settings.port}/", "running": running,
            "limits": {"mechanism": mechanism, "applied": MECHANISMS[mechanism],
                       "mem_limit_mib": settings.mem_limit_mib,
                       "cpu_limit": settings.cpu_limit if mechanism != "rlimit" else None,
                       "nproc_limit": settings.nproc_limit},
            "isolation": isolation_status(settings), "ports": state.ports(),
            "cull_timeout_s": settings.cull_timeout_s, "gpu_policy": settings.gpu_policy,
            "students": users}


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run one command."""
    parser = argparse.ArgumentParser(prog="python -m labkit.hub", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state-dir", default=None, help="the hub's private state directory")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="start the class hub (as root)")
    serve.add_argument("--roster")
    serve.add_argument("--teacher")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--cull-timeout", type=int, help="stop idle servers after S seconds")
    serve.add_argument("--mem-limit-mib", type=int)
    serve.add_argument("--cpu-limit", type=float)
    serve.add_argument("--gpu-policy", choices=("auto", "mig", "whole", "shared"),
                       help="each student's GPU share (labkit.hub.gpushare)")
    roster = sub.add_parser("roster", help="import | list | reset NAME")
    roster.add_argument("action", choices=("import", "list", "reset"))
    roster.add_argument("value", nargs="?", default="")
    sub.add_parser("status", help="what the hub enforces, who can log in")
    sub.add_parser("plan", add_help=False, help="the class MIG layout (labkit.hub.plan)")
    sub.add_parser("k8s", add_help=False, help="zero-to-jupyterhub values (labkit.hub.k8s)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["plan"], ["k8s"]):  # their own command lines
        from labkit.hub import k8s, plan

        raise SystemExit((plan.main_plan if argv[0] == "plan" else k8s.main_k8s)(argv[1:]))
    args = parser.parse_args(argv)
    if args.command == "roster" and args.action in ("import", "reset") and not args.value:
        what = "file" if args.action == "import" else "name"
        parser.error(f"roster {args.action} needs a {what}")
    if args.command == "serve":
        try:
            accounts.require_root()  # before anything is created
        except accounts.NeedRootError as err:
            raise SystemExit(str(err)) from None
    try:
        state = HubState(Path(args.state_dir) if args.state_dir else None)
        if args.command == "serve":
            cmd_serve(args, state)
        elif args.command == "roster":
            cmd_roster(args, state)
        else:
            print(json.dumps(status(state), ensure_ascii=False, indent=1))
    except (ValueError, OSError) as err:
        raise SystemExit(f"labkit hub: {err}") from None


if __name__ == "__main__":
    main()
