"""The JupyterHub configuration of the class hub (applied by ``hubconfig/jupyterhub_config.py``).

:func:`configure` reads the hub's private state (:class:`labkit.hub.state.HubState`: roster,
teacher's settings, secrets) and sets JupyterHub's traitlets:

- the proxy (configurable-http-proxy from the Makefile's local prefix ``.hub/node``) on the
  teacher's host/port; the Hub's own API and the proxy's API on free loopback ports chosen at
  every start (:func:`free_loopback_ports`; written to the state directory's ``ports.json``), so
  a second hub beside a class never clashes with it;
- accounts: roster allow-list, the teacher's own role (:data:`TEACHER_SCOPES`: the class,
  starting and stopping servers, the class page; not a JupyterHub admin, who could open every
  student's server in the hub's origin), handed-out first-login codes, login throttling
  (:mod:`labkit.hub.auth`), every page a student or teacher meets in Korean
  (``labkit/hub/templates``: the frame ``page.html`` and login, home, spawn, spawn-pending,
  stop-pending, not-running, error/404, token and logout pages);
- spawning: :class:`labkit.hub.spawner.LabkitSpawner`, ``concurrent_spawn_limit``, timeouts
  for a 2-core server;
- cookies HttpOnly (JupyterHub's default) + ``SameSite=Lax``, ``Secure`` under TLS;
- services: jupyterhub-idle-culler with the teacher's timeout, and the teacher's class page
  (:func:`class_page_service`).
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from labkit.hub.activity import report_interval_s
from labkit.hub.lifetime import tied
from labkit.hub.limits import detect_mechanism
from labkit.hub.passwords import MIN_PASSWORD as _MIN_PASSWORD
from labkit.hub.roster import STUDENTS_GROUP, Student
from labkit.hub.singleuser_config import ENV_HUB_TLS
from labkit.hub.state import HubSettings, HubState, cull_every_s
from labkit.i18n import t

__all__ = ["REPO", "TEACHER_GROUP", "TEACHER_ROLE", "TEACHER_SCOPES", "TEMPLATES",
           "class_page_service", "configure", "free_loopback_ports", "proxy_command",
           "teacher_roles"]

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
#: The shortest password a student may choose (labkit.hub.passwords, NIST SP 800-63B).
MIN_PASSWORD = _MIN_PASSWORD
#: The teacher's role (``c.JupyterHub.load_roles``) instead of JupyterHub's ``admin``.
TEACHER_ROLE = "teacher"
#: The group that holds :data:`TEACHER_ROLE` too (:func:`teacher_roles`).
TEACHER_GROUP = "teachers"
#: What the teacher does on the hub: see the class and its activity, start and stop students'
#: servers, open the class page (JupyterHub "Scopes"). Never ``access:servers`` (a student's
#: server, hence a page the student wrote, would open in the teacher's browser with the
#: teacher's rights on the hub's origin), ``tokens`` or ``admin:users`` (tokens for others).
TEACHER_SCOPES = ("self", "list:users", "read:users", "read:users:activity", "read:servers",
                  "servers", "access:services!service=classpage")


def proxy_command() -> list[str]:
    """Return configurable-http-proxy's command (the Makefile's ``.hub/node`` prefix first).

    Raises
    ------
    FileNotFoundError
        If it is not installed (``make hub`` installs it).
    """
    local = REPO / ".hub" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
    found = str(local) if local.exists() else shutil.which("configurable-http-proxy")
    if not found:
        raise FileNotFoundError("configurable-http-proxy is not installed: run `make hub` "
                                "(installs it from npm into .hub/node)")
    return [found]


def class_page_service(settings: HubSettings, roster: list[Student]
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return ([service], [role]) for the teacher's class page (:mod:`labkit.hub.classpage`).

    The service listens on a loopback port (``settings.extra["classpage_port"]``, else a free
    one); its scoped token goes to the hub's API only (it reads the students' results from
    their homes itself, never through their servers).
    """
    from labkit.hub import classpage

    port = int(settings.extra.get("classpage_port") or free_loopback_ports(1)[0])
    service, role = classpage.service_spec(port=port, roster=roster, admins=[settings.teacher])
    return [dict(service)], [dict(role)]


_HANDED_OUT: set[int] = set()  # ports this process chose already (never hand one out twice)


def free_loopback_ports(count: int) -> list[int]:
    """Return ``count`` distinct TCP ports free on 127.0.0.1 now (the kernel picks them).

    All sockets are held open together, so the ports differ from each other and from every port
    this process chose before. The port is free when chosen; the Hub and the proxy bind it
    moments later, the way JupyterHub's own ``random_port`` is used.

    Raises
    ------
    ValueError
        If ``count`` < 1.
    """
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count!r}")
    held: list[socket.socket] = []
    ports: list[int] = []
    try:
        while len(ports) < count:
            sock = socket.socket()
            held.append(sock)
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
            if port not in _HANDED_OUT:
                ports.append(port)
                _HANDED_OUT.add(port)
    finally:
        for sock in held:
            sock.close()
    return ports


def teacher_roles(teacher: str) -> list[dict[str, Any]]:
    """Return the ``load_roles`` entries of the teacher: their role, and an admin role with no
    one in it (so a hub database from before, where the teacher was admin, is set straight).

    The role is held by the teacher and by the group :data:`TEACHER_GROUP` (``load_groups``):
    ``roster set-password TEACHER`` on a running hub deletes and re-creates the teacher to end
    their sessions (:mod:`labkit.hub.sessions`), which drops a role given by name until the
    next start; the group membership is given back through the REST API at once.
    """
    return [{"name": TEACHER_ROLE, "description": "labkit teacher: the class, start/stop servers",
             "scopes": list(TEACHER_SCOPES), "users": [teacher], "groups": [TEACHER_GROUP]},
            {"name": "admin", "users": []}]


def _services(settings: HubSettings, roster: list[Student], state: HubState
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    services: list[dict[str, Any]] = [{
        "name": "idle-culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                    f"--timeout={int(settings.cull_timeout_s)}",
                    f"--cull-every={cull_every_s(settings.cull_timeout_s)}"],
    }]
    roles: list[dict[str, Any]] = [{
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }]
    page_services, page_roles = class_page_service(settings, roster)
    from labkit.hub.sessions import service_spec  # the teacher's roster commands, hub running

    roster_service, roster_role = service_spec(state)
    return services + page_services + [roster_service], roles + page_roles + [roster_role]


def _warm_environment(services: list[dict[str, Any]], state: HubState,
                      settings: HubSettings) -> None:
    """Give the class page what "수업 준비" needs (:mod:`labkit.hub.warm`): the secret the
    ``warm`` command sends, and the hub's spawn limit."""
    from labkit.hub import answerkey, warm

    for service in services:
        if service["name"] == "classpage":
            service["environment"][warm.ENV_SECRET] = warm.warm_secret(state.root)
            service["environment"]["LABKIT_CLASSPAGE_ROSTER_FILE"] = str(
                state.root / "roster.json")  # students imported while the hub runs
            key = answerkey.protect(state.root)  # the teacher's copy, out of students' reach
            if key is not None:
                service["environment"][answerkey.ENV_ANSWER_KEY] = str(key)
            service["environment"]["LABKIT_CLASSPAGE_SPAWN_LIMIT"] = str(
                int(settings.concurrent_spawn_limit))
            service["environment"]["LABKIT_CLASSPAGE_CULL_TIMEOUT"] = str(
                int(settings.cull_timeout_s))


def _isolation(c: Any, state: HubState, settings: HubSettings) -> None:
    """Probe (before the Hub starts any thread) and set each student's disk, /tmp and /proc."""
    from labkit.hub import disk, isolation

    c.LabkitSpawner.images_dir = str(state.images_dir)
    c.LabkitSpawner.disk_limit_mib = int(settings.disk_limit_mib) if disk.probe().works else 0
    plan = isolation.probe(int(settings.tmp_limit_mib)).plan
    c.LabkitSpawner.private_namespace = plan is not None
    c.LabkitSpawner.tmp_limit_mib = int(settings.tmp_limit_mib)
    c.LabkitSpawner.hidepid = plan.hidepid if plan else ""
    c.LabkitSpawner.hide_cgroups = plan.hide_cgroups if plan else False


def _record_ports(state: HubState, settings: HubSettings, hub_port: int, api_port: int,
                  services: list[dict[str, Any]]) -> None:
    """Write this start's ports to the state (``status`` and the tests read them)."""
    page = next((s for s in services if s["name"] == "classpage"), {})
    state.save_ports({"public": int(settings.port), "hub": hub_port, "proxy_api": api_port,
                      "classpage": urlsplit(str(page.get("url", ""))).port or 0})


def _authenticator(c: Any, state: HubState, teacher: str, roster: Sequence[Student]) -> None:
    """The roster's handed-out accounts, the teacher as admin, the Korean templates."""
    from labkit.hub.auth import landing_url

    c.JupyterHub.authenticator_class = "labkit.hub.auth.RosterAuthenticator"
    c.JupyterHub.default_url = landing_url  # the teacher: the class page; students: their lab
    c.Authenticator.allowed_users = {s.username for s in roster} | {teacher}
    c.Authenticator.admin_users = set()  # the teacher's own role instead (teacher_roles)
    c.RosterAuthenticator.teacher_users = {teacher}
    c.RosterAuthenticator.state_dir = str(state.root)  # roster, passwords, first-login codes
    c.JupyterHub.template_paths = [str(TEMPLATES)]
    # a callable value is called with the user (JupyterHub template_vars)
    c.JupyterHub.template_vars = {"labkit_t": lambda _user: t, "labkit_min_password": MIN_PASSWORD}


def _spawner(c: Any, settings: HubSettings, roster: Sequence[Student]) -> None:
    """One system user's server per student, with the class's limits and GPU policy."""
    c.JupyterHub.spawner_class = "labkit.hub.spawner.LabkitSpawner"
    c.JupyterHub.concurrent_spawn_limit = int(settings.concurrent_spawn_limit)
    c.LabkitSpawner.curriculum_dir = str(Path(settings.extra.get(
        "curriculum_dir", REPO / "notebooks")))
    c.LabkitSpawner.limit_mechanism = detect_mechanism()
    c.LabkitSpawner.mem_limit_mib = int(settings.mem_limit_mib)
    c.LabkitSpawner.cpu_limit_cores = float(settings.cpu_limit)
    c.LabkitSpawner.nproc_limit = int(settings.nproc_limit)
    c.LabkitSpawner.extra_env = dict(settings.extra.get("env", {}))
    if settings.extra.get("ssl_cert"):  # the students' servers set their _xsrf cookie Secure
        c.LabkitSpawner.extra_env[ENV_HUB_TLS] = "1"
    c.LabkitSpawner.roster_usernames = [s.username for s in roster]
    c.LabkitSpawner.gpu_policy = settings.gpu_policy
    # imported now, not at the first spawn: the spawner reads each student's GPU share inside
    # the hub's event loop, where importing the lab's modules (~0.6 s) held every request
    import labkit.gpu.sim.lab
    import labkit.gpu.sim.shared  # noqa: F401


def _hub_and_proxy(c: Any, state: HubState, settings: HubSettings) -> tuple[int, int, bool]:
    """The hub's and the proxy's addresses, TLS, database, secrets and pid files; return the
    hub's and the proxy API's ports and whether the class's address is HTTPS."""
    free_hub, free_api = free_loopback_ports(2)  # unless the settings fix them
    hub_port = int(settings.extra.get("hub_port") or free_hub)
    api_port = int(settings.extra.get("proxy_api_port") or free_api)
    tls = {k: settings.extra[k] for k in ("ssl_cert", "ssl_key") if settings.extra.get(k)}
    scheme = "https" if tls else "http"

    c.JupyterHub.bind_url = f"{scheme}://{settings.host}:{int(settings.port)}/"
    c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{hub_port}"
    if tls:
        c.JupyterHub.ssl_cert = tls["ssl_cert"]
        c.JupyterHub.ssl_key = tls["ssl_key"]
    c.JupyterHub.db_url = state.db_url
    c.JupyterHub.cookie_secret_file = str(state.cookie_secret_file)
    c.JupyterHub.pid_file = str(state.root / "jupyterhub.pid")
    c.JupyterHub.cleanup_servers = True
    # the proxy and the services die with the hub (labkit.hub.lifetime)
    c.ConfigurableHTTPProxy.command = tied(proxy_command(), state.root)
    if tls:  # HTTP on the same port answered with a redirect (labkit.hub.tls)
        from labkit.hub.tls import proxy_command as tls_proxy_command

        c.ConfigurableHTTPProxy.command = tied(tls_proxy_command(
            proxy_command()[0], settings.extra.get("ssl_ca")), state.root)
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{api_port}"
    c.ConfigurableHTTPProxy.auth_token = state.proxy_token()
    c.ConfigurableHTTPProxy.pid_file = str(state.root / "proxy.pid")
    return hub_port, api_port, bool(tls)


def configure(c: Any, state: HubState | None = None) -> None:
    """Set JupyterHub's config ``c`` for the class (see the module docstring).

    Raises
    ------
    ValueError
        If no roster was imported or no teacher is set.
    """
    state = state or HubState()
    settings = state.settings()
    roster = state.roster()
    if not roster:
        raise ValueError("no roster imported: python -m labkit.hub roster import class.csv")
    if not settings.teacher:
        raise ValueError("no teacher set: python -m labkit.hub serve --teacher NAME")
    hub_port, api_port, tls = _hub_and_proxy(c, state, settings)

    _authenticator(c, state, settings.teacher, roster)
    _spawner(c, settings, roster)
    _isolation(c, state, settings)
    c.Spawner.disable_user_config = True
    # a stopping server gets SIGINT, then SIGTERM, then SIGKILL (LocalProcessSpawner)
    c.LocalProcessSpawner.interrupt_timeout = 10
    c.LocalProcessSpawner.term_timeout = 5
    # 2 shared cores: JupyterLab + voila imports take tens of seconds under a class's load
    c.Spawner.http_timeout = int(settings.extra.get("http_timeout", 120))
    c.Spawner.start_timeout = int(settings.extra.get("start_timeout", 180))

    c.JupyterHub.tornado_settings = {
        "cookie_options": {"SameSite": "Lax", **({"Secure": True} if tls else {})},
        # the Korean "server is starting" page at once, not after 10 s of a blank wait
        "slow_spawn_timeout": 0,
    }
    services, c.JupyterHub.load_roles = _services(settings, roster, state)
    c.JupyterHub.load_roles = [*c.JupyterHub.load_roles, *teacher_roles(settings.teacher)]
    c.JupyterHub.load_groups = {TEACHER_GROUP: {"users": [settings.teacher]}, STUDENTS_GROUP: {
        "users": [s.username for s in roster if s.username != settings.teacher]}}
    c.JupyterHub.services = [{**s, "command": tied(s["command"], state.root)} if "command" in s
                             else s for s in services]
    _warm_environment(c.JupyterHub.services, state, settings)
    # activity (JupyterLab, voila pages and widgets) reaches the hub well before the culler's
    # timeout: the servers' reports and the proxy's (both 300 s by default; labkit.hub.activity)
    interval = report_interval_s(settings.cull_timeout_s)
    c.JupyterHub.last_activity_interval = interval
    c.Spawner.environment = {"JUPYTERHUB_ACTIVITY_INTERVAL": str(interval)}
    _record_ports(state, settings, hub_port, api_port, c.JupyterHub.services)
    os.environ.setdefault("LABKIT_HUB_STATE", str(state.root))
