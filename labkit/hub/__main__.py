"""``python -m labkit.hub``: run the class hub (``make hub``).

    python -m labkit.hub serve --roster class.csv --teacher NAME [--host H] [--port P]
                               [--cull-timeout S] [--mem-limit-mib M] [--cpu-limit C]
                               [--gpu-policy auto|mig|whole|shared]
                               [--disk-limit-mib D] [--tmp-limit-mib T] [--rebuild-env]
                               [--ssl-cert CERT --ssl-key KEY | --self-signed | --no-tls]
    python -m labkit.hub roster import class.csv   (each new student gets a first-login code)
    python -m labkit.hub roster list
    python -m labkit.hub roster codes [--csv]      (the unused first-login codes)
    python -m labkit.hub roster slips OUT.html [--url URL]   (the codes as A4 slips to print)
    python -m labkit.hub roster set-password NAME  (from standard input; the teacher's too)
    python -m labkit.hub roster reset NAME      (a new first-login code; every session ends)
    python -m labkit.hub roster remove NAME... | --all  [--stop] --yes
                                   (delete students: account, home image, password, hub user)
    python -m labkit.hub status [--json]     (Korean text; --json for scripts)
    python -m labkit.hub install-service [serve's options]   (a systemd unit: labkit.hub.service)
    python -m labkit.hub uninstall-service
    python -m labkit.hub backup DEST          (homes and hub state, while the hub runs)
    python -m labkit.hub restore SRC [NAME...]   (students; none named: all + hub state, stopped)
    python -m labkit.hub warm [--lesson 03] [--page app|lab] [--until HH:MM]   (수업 준비)
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
from pathlib import Path
from typing import Any

from labkit.hub import accounts
from labkit.hub.limits import detect_mechanism
from labkit.hub.roster import (
    Student,
    check_username,
    problem_text,
    system_username,
)
from labkit.hub.roster_cmd import (
    PROG,
    _import_roster,
    _password_set,
    _password_word,
    _said,
    _teacher_password,
    cmd_roster,
)
from labkit.hub.state import HubSettings, HubState, default_state_dir
from labkit.hub.statuslines import isolation_facts, isolation_lines
from labkit.i18n import t

HUB_CONFIG = Path(__file__).resolve().parent / "hubconfig" / "jupyterhub_config.py"
#: The limit mechanisms (labkit.hub.limits.detect_mechanism), for ``status --json``.
MECHANISMS = {
    "cgroup-v2": "cgroup v2 per student: memory.max, cpu.max, pids.max",
    "cgroup-v1": "cgroup v1 per student: memory.limit_in_bytes, cpu.cfs_quota_us, pids.max",
    "rlimit": "rlimits only: RLIMIT_AS per process, RLIMIT_NPROC per student; no CPU cap",
}


def _hub_env(state: HubState) -> dict[str, str]:
    return {**os.environ, "LABKIT_HUB_STATE": str(state.root)}


def _save_serve_options(args: argparse.Namespace, state: HubState
                        ) -> tuple[list[Student], str, HubSettings]:
    """Import ``--roster``, save ``--teacher`` and the other options; return what is stored."""
    if args.roster:
        students = _import_roster(state, args.roster)
        print(_said("hub.cli.serve.roster", path=args.roster, n=len(students)), flush=True)
    roster = state.roster()
    if not roster:
        raise SystemExit(_said("hub.cli.serve.no_roster"))
    settings = state.settings()
    teacher = args.teacher or settings.teacher
    if not teacher:
        raise SystemExit(_said("hub.cli.serve.no_teacher"))
    check_username(teacher)
    if settings.teacher != teacher:  # saved first: if the password is missing and this stops,
        settings.teacher = teacher   # `roster set-password <teacher>` (its advice) knows them
        state.save_settings(settings)
    _teacher_password(state, teacher)  # before anything starts: never a first-use teacher
    for name in ("host", "port"):
        if getattr(args, name) is not None:
            setattr(settings, name, getattr(args, name))
    for flag, field in (("cull_timeout", "cull_timeout_s"), ("mem_limit_mib", "mem_limit_mib"),
                        ("cpu_limit", "cpu_limit"), ("gpu_policy", "gpu_policy"),
                        ("disk_limit_mib", "disk_limit_mib"),
                        ("tmp_limit_mib", "tmp_limit_mib")):
        if getattr(args, flag) is not None:
            setattr(settings, field, getattr(args, flag))
    _tls_settings(args, state, settings)
    state.save_settings(settings)
    return roster, teacher, settings


def cmd_serve(args: argparse.Namespace, state: HubState) -> None:
    """Import the roster, create the accounts, save the settings, run jupyterhub."""
    try:
        accounts.require_root()
    except accounts.NeedRootError as err:
        raise SystemExit(str(err)) from None
    roster, teacher, settings = _save_serve_options(args, state)
    from labkit.hub.userenv import ensure_user_env

    ensure_user_env(force=bool(args.rebuild_env))
    for student in roster:
        if student.username != teacher:
            accounts.ensure_system_user(student.username, role="student")
    accounts.ensure_system_user(teacher, role="teacher")
    print(_said("hub.cli.serve.accounts", n=len(roster),
            applied=t(f"hub.cli.mechanism.{detect_mechanism()}")), flush=True)
    for line in isolation_lines(isolation_status(settings)):
        print(line, flush=True)
    from labkit.hub.tls import class_url

    tls = bool(settings.extra.get("ssl_cert"))
    url = class_url(settings.host, int(settings.port), tls)
    print(_said("hub.cli.serve.open", url=url, teacher=teacher), flush=True)
    for line in exposure_lines(settings.host, tls):
        print(_said(line, port=settings.port), flush=True)
    raise SystemExit(_run_hub(state, [s.username for s in roster] + [teacher]))


def exposure_lines(host: str, tls: bool) -> list[str]:
    """Return the catalog keys of what a teacher must hear about the hub's exposure at start.

    Students' servers share the machine's network, and browsers send a site's cookies to every
    port of the same host name (RFC 6265 section 8.5: cookies do not isolate by port): a
    student's kernel listening on another port of this server, opened by the teacher from a
    link, receives the teacher's hub cookies (the trial). Under TLS the cookies are Secure and
    a student's listener has no certificate the teacher's browser trusts; over plain HTTP
    nothing stops it. Until students' servers get a network namespace of their own, the
    machine's firewall is what closes the other ports: so every start on an address other
    than loopback names both.
    """
    if host in ("127.0.0.1", "localhost", "::1"):
        return []
    return (["hub.cli.serve.firewall"] if tls
            else ["hub.cli.serve.plain_http", "hub.cli.serve.firewall"])


def _class_uids(usernames: list[str]) -> list[int]:
    """The class's system accounts' uids (those that exist)."""
    uids = []
    for name in usernames:
        try:
            uids.append(pwd.getpwnam(system_username(name)).pw_uid)
        except KeyError:
            pass
    return [u for u in uids if u != 0]


def _run_hub(state: HubState, usernames: list[str]) -> int:
    """Clean up what an earlier run left, then run jupyterhub until it stops; return its status.

    The hub's processes die with it and a stop takes at most
    :data:`labkit.hub.lifetime.STOP_DEADLINE_S` (:mod:`labkit.hub.lifetime`).
    """
    from labkit.hub import lifetime

    uids = _class_uids(usernames)
    try:
        found = lifetime.clean_previous_run(state.root, uids)
    except lifetime.HubAlreadyRunning as err:
        raise SystemExit(_said("hub.cli.serve.already_running", pid=err.pid)) from None
    if found["hub"] or found["students"]:
        print(_said("hub.cli.serve.cleaned", hub=found["hub"], students=found["students"]),
              flush=True)
    jupyterhub = str(Path(sys.executable).with_name("jupyterhub"))
    os.umask(0o077)  # the hub's files private; students' servers inherit it (homes are 0700)
    status = lifetime.supervise(
        [jupyterhub, "-f", str(HUB_CONFIG)], run_dir=state.root, env=_hub_env(state),
        cwd=state.root, after=lambda: lifetime.clean_previous_run(state.root, uids))
    print(_said("hub.cli.serve.stopped"), flush=True)
    return status


def cmd_service(args: argparse.Namespace, root: Path) -> None:
    """install-service | uninstall-service: the hub as a systemd unit (labkit.hub.service)."""
    from labkit.hub import service

    if not service.systemd_running():  # a container or CI: say so, change nothing
        raise SystemExit(_said("hub.cli.service.no_systemd", unit=service.UNIT_NAME))
    try:
        accounts.require_root()
    except accounts.NeedRootError as err:
        raise SystemExit(str(err)) from None
    if args.command == "uninstall-service":
        done = service.uninstall()
        print(_said("hub.cli.service.removed" if done else "hub.cli.service.not_installed",
                    unit=service.UNIT_DIR / service.UNIT_NAME))
        return
    state = HubState(root)
    roster, _teacher, settings = _save_serve_options(args, state)
    path = service.install(state.root)
    print(_said("hub.cli.service.installed", unit=path, host=settings.host, port=settings.port,
                n=len(roster)))


def _tls_settings(args: argparse.Namespace, state: HubState, settings: HubSettings) -> None:
    """Set the hub's certificate from ``--ssl-cert/--ssl-key``, ``--self-signed`` or
    ``--no-tls`` (:mod:`labkit.hub.tls`); print how browsers trust a self-signed one."""
    from labkit.hub import tls

    given = (args.ssl_cert, args.ssl_key)
    if any(given) and not all(given):
        raise SystemExit(_said("hub.tls.both"))
    if sum((all(given), bool(args.self_signed), bool(args.no_tls))) > 1:
        raise SystemExit(_said("hub.tls.one_way"))
    if args.no_tls:
        for key in ("ssl_cert", "ssl_key", "ssl_ca"):
            settings.extra.pop(key, None)
    elif all(given):
        pair = tls.check_pair(args.ssl_cert, args.ssl_key)
        settings.extra.update(ssl_cert=str(pair[0]), ssl_key=str(pair[1]))
        settings.extra.pop("ssl_ca", None)
    elif args.self_signed:
        made = tls.self_signed(state.root / "tls", settings.host)
        settings.extra.update(ssl_cert=str(made.cert), ssl_key=str(made.key),
                              ssl_ca=str(made.ca))
        for line in tls.trust_lines(made, int(settings.port)):
            print(f"{PROG}: {line}", flush=True)
    elif settings.extra.get("ssl_cert"):  # as the last start: check the files still load
        tls.check_pair(settings.extra["ssl_cert"], settings.extra["ssl_key"])


def cmd_backup(args: argparse.Namespace, state: HubState) -> None:
    """backup DEST | restore SRC [NAME...] (:mod:`labkit.hub.backup`), as root."""
    from labkit.hub import backup

    try:
        accounts.require_root()
    except accounts.NeedRootError as err:
        raise SystemExit(str(err)) from None
    if args.command == "backup":
        backup.backup(state, Path(args.dest), out=print)
    else:
        raise SystemExit(backup.restore(state, Path(args.src), args.names, out=print))


def _account(username: str) -> dict[str, object] | None:
    try:
        entry = pwd.getpwnam(system_username(username))
        mode = oct(os.stat(entry.pw_dir).st_mode & 0o777)
    except (KeyError, OSError):
        return None
    return {"name": entry.pw_name, "uid": entry.pw_uid, "home": entry.pw_dir,
            "home_mode": mode, "description": entry.pw_gecos}


def isolation_status(settings: HubSettings) -> dict[str, dict[str, Any]]:
    """Return which disk, /tmp, /proc and cgroup isolation applies to each student server, and
    why not (facts: :func:`labkit.hub.statuslines.isolation_facts`)."""
    from labkit.hub import disk, isolation

    return isolation_facts(disk.describe(disk.probe(), settings.disk_limit_mib),
                           isolation.describe(isolation.probe(settings.tmp_limit_mib)))


def status(state: HubState) -> dict[str, object]:
    """Return what the hub enforces and who exists (``status --json``; :func:`status_text`)."""
    settings = state.settings()
    mechanism = detect_mechanism()
    have = _password_set(state)
    users = [{"username": s.username, "display_name": s.display_name,
              "account": _account(s.username), "password_set": s.username in have}
             for s in state.roster()]
    from labkit.hub.tls import class_url, hub_answers

    cert = settings.extra.get("ssl_cert")
    running = hub_answers(int(settings.port), cert)
    return {"state_dir": str(state.root), "teacher": settings.teacher,
            "url": class_url(settings.host, int(settings.port), bool(cert)),
            "running": running,
            "limits": {"mechanism": mechanism, "applied": MECHANISMS[mechanism],
                       "mem_limit_mib": settings.mem_limit_mib,
                       "cpu_limit": settings.cpu_limit if mechanism != "rlimit" else None,
                       "nproc_limit": settings.nproc_limit,
                       "disk_limit_mib": settings.disk_limit_mib,
                       "tmp_limit_mib": settings.tmp_limit_mib},
            "isolation": isolation_status(settings), "ports": state.ports(),
            "cull_timeout_s": settings.cull_timeout_s, "gpu_policy": settings.gpu_policy,
            "service": _service_doc(), "students": users}


def _service_doc() -> dict[str, object]:
    """The systemd unit's state for ``status`` (labkit.hub.service)."""
    from dataclasses import asdict

    from labkit.hub import service

    found = service.service_status()
    return {**asdict(found), "running": found.running}


def _service_line(doc: dict[str, Any] | None) -> str:
    if doc and not doc["installed"] and not doc["systemd"]:  # nothing to install it into
        return t("hub.cli.status.service.none_here")
    if not doc or not doc["installed"]:
        return t("hub.cli.status.service.none")
    if not doc["systemd"]:
        return t("hub.cli.status.service.no_systemd", unit=doc["unit"])
    return t("hub.cli.status.service.running" if doc["running"]
             else "hub.cli.status.service.stopped", unit=doc["unit"])


def status_text(doc: dict[str, Any]) -> str:
    """Return :func:`status`'s document as the teacher reads it (Korean, English terms)."""
    limits = doc["limits"]
    cpu = limits["cpu_limit"]
    lines = [
        t("hub.cli.status.dir", path=doc["state_dir"]),
        t("hub.cli.status.teacher", name=doc["teacher"]) if doc["teacher"]
        else t("hub.cli.status.no_teacher"),
        t("hub.cli.status.running" if doc["running"] else "hub.cli.status.stopped",
          url=doc["url"]),
        t("hub.cli.status.limits", applied=t(f"hub.cli.mechanism.{limits['mechanism']}")),
        t("hub.cli.status.limit_values", mem=limits["mem_limit_mib"], nproc=limits["nproc_limit"],
          cpu=t("hub.cli.status.cpu_cores", n=cpu) if cpu is not None
          else t("hub.cli.status.no_cpu_cap")),
        t("hub.cli.status.disk_values", disk=limits["disk_limit_mib"],
          tmp=limits["tmp_limit_mib"]),
        *isolation_lines(doc.get("isolation") or {}),
        t("hub.cli.status.cull", s=doc["cull_timeout_s"]),
        t("hub.cli.status.gpu", policy=doc["gpu_policy"]),
        _service_line(doc.get("service")),
        t("hub.cli.status.students", n=len(doc["students"])),
    ]
    for s in doc["students"]:
        a = s["account"]
        account = (t("hub.cli.account", name=a["name"], uid=a["uid"], home=a["home"],
                     mode=a["home_mode"]) if a else t("hub.cli.account.none"))
        lines.append(t("hub.cli.status.student", username=s["username"],
                       display=s["display_name"] or s["username"], account=account,
                       password=_password_word(bool(s["password_set"]))))
    return "\n".join(lines)


def _state_dir(arg: str | None) -> Path:
    return Path(arg) if arg else default_state_dir()


def build_parser() -> argparse.ArgumentParser:
    """Return the command line's parser (``serve``, ``roster``, ``status``, ``plan``, ``k8s``);
    its descriptions in the teacher's language (``hub.cli.help.*``)."""
    def h(key: str) -> str:
        return t(f"hub.cli.help.{key}")

    parser = argparse.ArgumentParser(prog="python -m labkit.hub", description=h("description"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state-dir", default=None, help=h("state_dir"))
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help=h("serve"), description=h("serve"))
    install = sub.add_parser("install-service", help=h("install_service"),
                             description=h("install_service"))
    for command in (serve, install):  # the service's serve reads what install-service saved
        command.add_argument("--roster", help=h("roster_file"))
        command.add_argument("--teacher", help=h("teacher"))
        command.add_argument("--host", help=h("host"))
        command.add_argument("--port", type=int, help=h("port"))
        command.add_argument("--cull-timeout", type=int, help=h("cull_timeout"))
        command.add_argument("--mem-limit-mib", type=int, help=h("mem_limit"))
        command.add_argument("--cpu-limit", type=float, help=h("cpu_limit"))
        command.add_argument("--gpu-policy", choices=("auto", "mig", "whole", "shared"),
                             help=h("gpu_policy"))
        command.add_argument("--disk-limit-mib", type=int, help=h("disk_limit"))
        command.add_argument("--tmp-limit-mib", type=int, help=h("tmp_limit"))
    serve.add_argument("--rebuild-env", action="store_true", help=h("rebuild_env"))
    for command in (serve, install):
        command.add_argument("--ssl-cert", help=h("ssl_cert"))
        command.add_argument("--ssl-key", help=h("ssl_key"))
        command.add_argument("--self-signed", action="store_true", help=h("self_signed"))
        command.add_argument("--no-tls", action="store_true", help=h("no_tls"))
    sub.add_parser("uninstall-service", help=h("uninstall_service"),
                   description=h("uninstall_service"))
    roster = sub.add_parser("roster", help=h("roster"), description=h("roster"))
    roster.add_argument("action", choices=("import", "list", "codes", "slips", "set-password",
                                           "reset", "remove"))
    roster.add_argument("names", nargs="*", default=[], help=h("names"))
    roster.add_argument("--all", action="store_true", help=h("all"))
    roster.add_argument("--stop", action="store_true", help=h("stop"))
    roster.add_argument("--yes", action="store_true", help=h("yes"))
    roster.add_argument("--csv", action="store_true", help=h("csv"))
    roster.add_argument("--url", default=None, help=h("url"))
    status_cmd = sub.add_parser("status", help=h("status"), description=h("status"))
    status_cmd.add_argument("--json", action="store_true", help=h("json"))
    backup_cmd = sub.add_parser("backup", help=h("backup"), description=h("backup"))
    backup_cmd.add_argument("dest", help=h("backup_dest"))
    restore_cmd = sub.add_parser("restore", help=h("restore"), description=h("restore"))
    restore_cmd.add_argument("src", help=h("restore_src"))
    restore_cmd.add_argument("names", nargs="*", default=[], help=h("restore_names"))
    warm_cmd = sub.add_parser("warm", help=h("warm"), description=h("warm"))
    warm_cmd.add_argument("--lesson", help=h("warm_lesson"))
    warm_cmd.add_argument("--page", help=h("warm_page"))
    warm_cmd.add_argument("--until", help=h("warm_until"))
    sub.add_parser("plan", add_help=False, help=h("plan"))
    sub.add_parser("k8s", add_help=False, help=h("k8s"))
    return parser


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse what the parser cannot: a roster action without its name or file, ``serve``
    without root (before anything is created)."""
    if (args.command == "roster" and args.action in ("import", "reset", "set-password", "slips")
            and not args.names):
        what = t("hub.cli.roster.needs.file" if args.action in ("import", "slips")
                 else "hub.cli.roster.needs.name")
        parser.error(t("hub.cli.roster.needs", action=args.action, what=what))
    if args.command == "serve":
        try:
            accounts.require_root()  # before anything is created
        except accounts.NeedRootError as err:
            raise SystemExit(str(err)) from None


def _open_state(args: argparse.Namespace) -> HubState:
    """Return the hub's state; only ``serve`` and ``roster import`` (how a class starts, before
    the first serve) may find no state directory yet (serve creates it)."""
    root = _state_dir(args.state_dir)
    starts = args.command == "serve" or (args.command == "roster" and args.action == "import")
    if not starts and not root.is_dir():  # never create it outside serve
        raise SystemExit(t("hub.cli.never_started", path=root))
    return HubState(root)


def cmd_warm(args: argparse.Namespace, state: HubState) -> None:
    """warm [--lesson L] [--page app|lab] [--until HH:MM]: ask the running class page
    (:mod:`labkit.hub.warm`)."""
    from labkit.hub.warm import ask_class_page

    raise SystemExit(ask_class_page(state, args.lesson, args.until, page=args.page, out=print))


def cmd_status(args: argparse.Namespace, state: HubState) -> None:
    """status [--json]: Korean text, or JSON for scripts."""
    if args.json:
        print(json.dumps(status(state), ensure_ascii=False, indent=1))
    else:
        print(status_text(status(state)))


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run one command."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["plan"], ["k8s"]):  # their own command lines
        from labkit.hub import k8s, plan

        raise SystemExit((plan.main_plan if argv[0] == "plan" else k8s.main_k8s)(argv[1:]))
    args = parser.parse_args(argv)
    _check_args(parser, args)
    if args.command in ("install-service", "uninstall-service"):
        try:
            cmd_service(args, _state_dir(args.state_dir))
        except (ValueError, OSError) as err:
            raise SystemExit(f"{PROG}: {err}") from None
        return
    commands = {"serve": cmd_serve, "roster": cmd_roster, "backup": cmd_backup,
                "restore": cmd_backup, "warm": cmd_warm, "status": cmd_status}
    try:
        commands.get(args.command, cmd_status)(args, _open_state(args))
    except (ValueError, OSError) as err:
        said = problem_text(err) if isinstance(err, ValueError) else err
        raise SystemExit(f"{PROG}: {said}") from None


if __name__ == "__main__":
    main()
