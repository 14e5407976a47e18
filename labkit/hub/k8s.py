"""Beyond one server: the class hub as values for the zero-to-jupyterhub Helm chart.

``python -m labkit.hub.k8s --roster class.csv --teacher NAME --policy mig --gpu H100-80GB
--out values.yaml`` renders the same class as the one-server hub: labkit's own roster
authenticator (:class:`labkit.hub.auth.RosterAuthenticator`: accounts handed out as one-time
first-login codes, never claimed by whoever logs in first) in a labkit hub image
(:data:`DEFAULT_HUB_IMAGE`), its passwords and codes on the hub's persistent volume
(:data:`STATE_DIR`), the teacher in the one-server hub's teacher role (not a hub admin, who
could open every student's server), per-student memory and
CPU limits, the GPU share as a KubeSpawner profile whose ``extra_resource_limits`` asks the
NVIDIA device plugin for one MIG device (``nvidia.com/mig-1g.10gb: 1``, the GPU operator's
"mixed" strategy; ``nvidia.com/gpu`` with "single") or one GPU, the idle culler with the
one-server hub's timeout (:data:`labkit.hub.state.DEFAULT_CULL_TIMEOUT_S`, 600 s, unless the
teacher sets another), the single-user image with labkit and the curriculum in it
(:data:`DEFAULT_IMAGE`, built from ``docs/hub-k8s.md``), and the curriculum step: a
``postStart`` lifecycle hook that merges the image's ``notebooks/`` (:data:`IMAGE_CURRICULUM`)
into the student's persistent home as the student, with the same rule as the one-server
spawner (:mod:`labkit.hub.curriculum`: a file the student changed is never overwritten).
Install::

    helm upgrade --install labkit jupyterhub/jupyterhub --values values.yaml

Policies as in :mod:`labkit.hub.gpushare`: ``mig`` (the MIG profile comes from
:func:`labkit.hub.plan.plan_class` for the roster's size), ``whole`` (``nvidia.com/gpu: 1``),
``shared`` (``nvidia.com/gpu: 1`` on a GPU the operator's time-slicing config advertises several
times), ``auto`` (``mig`` when ``--gpu`` names a MIG board, else ``whole``).

Requests and limits: memory is requested as much as its limit (the pod's memory cannot be taken
by a classmate's pod: memory is not compressible), CPU is requested at half its limit (CPU is
compressible: a busy classmate only slows others down), both overridable.

References
----------
.. [1] zero-to-jupyterhub ``jupyterhub/values.schema.yaml`` (``hub.config``,
   ``singleuser.memory``/``cpu``/``profileList``, ``cull``) and "Customizing User Resources".
.. [2] KubeSpawner ``profile_list`` / ``kubespawner_override`` / ``extra_resource_limits``.
.. [3] NVIDIA GPU operator, "GPU Operator with MIG" (strategies) and "Time-Slicing GPUs in
   Kubernetes".
.. [4] jupyterhub-idle-culler ``--timeout``/``--cull-every`` (the chart's ``cull``).
.. [5] zero-to-jupyterhub, "Customizing User Environment": ``singleuser.lifecycleHooks``
   ``postStart`` to put files into the user's home (the way the guide runs gitpuller), and
   ``singleuser.image``; the chart's single-user home is ``/home/jovyan``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from labkit.data.roster import RosterLike, read_roster, validate_username
from labkit.hub.gpushare import POLICIES
from labkit.hub.plan import plan_class
from labkit.hub.state import DEFAULT_CULL_TIMEOUT_S, cull_every_s
from labkit.i18n import t
from labkit.validate import InputError

__all__ = ["AUTHENTICATOR", "DEFAULT_CULL_TIMEOUT_S", "DEFAULT_HUB_IMAGE", "DEFAULT_IMAGE", "HOME",
           "IMAGE_CURRICULUM", "STATE_DIR", "curriculum_command", "main_k8s", "render_values",
           "teacher_load_roles", "values_yaml"]

#: The single-user image ``name:tag`` (labkit + the curriculum; its Dockerfile is in
#: docs/hub-k8s.md), tagged with labkit's version.
DEFAULT_IMAGE = "labkit-singleuser:0.1.0"
#: The hub's image ``name:tag``: the chart's hub image with labkit installed (docs/hub-k8s.md).
DEFAULT_HUB_IMAGE = "labkit-hub:0.1.0"
#: The authenticator the hub runs, as on one server (:mod:`labkit.hub.auth`).
AUTHENTICATOR = "labkit.hub.auth.RosterAuthenticator"
#: The authenticator's state (roster, passwords, first-login codes) on the hub's persistent
#: volume: the chart mounts its ``hub-db-dir`` claim at ``/srv/jupyterhub``.
STATE_DIR = "/srv/jupyterhub/labkit"
#: Where the image holds the teacher's notebooks (the Dockerfile's ``COPY notebooks/``).
IMAGE_CURRICULUM = "/srv/labkit/notebooks"
#: The chart's single-user home (the persistent volume; the jupyter/docker-stacks user).
HOME = "/home/jovyan"
# Kubernetes memory quantities (resource.Quantity) as KubeSpawner takes them: 512M, 2G, 1.5Gi.
_MEMORY = re.compile(r"^\d+(\.\d+)?([KMGT]i?)?$")
_MAX_CPU = 64.0
_STRATEGIES = ("mixed", "single")


def _memory(field: str, value: str) -> str:
    if not isinstance(value, str) or not _MEMORY.match(value.strip()):
        raise InputError(field, "other", value, f"{field} must be a Kubernetes memory quantity "
                         f"such as 512M, 2G or 1.5Gi, got {value!r}")
    return value.strip()


def _cpu(field: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            0 < value <= _MAX_CPU):
        raise InputError(field, "other", value,
                         f"{field} must be a number of cores in (0, {_MAX_CPU:g}], got {value!r}")
    return float(value)


def _resource(policy: str, gpu: str | None, students: int, gpus: int | None,
              strategy: str) -> tuple[str, str, dict[str, str]]:
    """Return (resolved policy, GPU share description, extra_resource_limits)."""
    if policy == "auto":
        policy = "mig" if gpu is not None and _has_mig(gpu) else "whole"
    if policy == "mig":
        if gpu is None:
            raise InputError("gpu", "other", None, "policy 'mig' needs --gpu (the MIG board)")
        profile = plan_class(students, gpu, gpus=gpus).profile.name
        name = f"nvidia.com/mig-{profile}" if strategy == "mixed" else "nvidia.com/gpu"
        return policy, f"MIG {profile}", {name: "1"}
    return policy, policy, {"nvidia.com/gpu": "1"}


def _has_mig(gpu: str) -> bool:
    from labkit.mig import resolve_model

    try:
        resolve_model(gpu)
    except InputError:
        return False
    return True


def render_values(roster: Sequence[RosterLike], teacher: str, *, policy: str = "auto",
                  gpu: str | None = None, gpus: int | None = None, mem: str = "2G",
                  cpu: float = 1.0, mem_guarantee: str | None = None,
                  cpu_guarantee: float | None = None,
                  cull_timeout_s: int = DEFAULT_CULL_TIMEOUT_S, mig_strategy: str = "mixed",
                  image: str = DEFAULT_IMAGE, hub_image: str = DEFAULT_HUB_IMAGE
                  ) -> dict[str, Any]:
    """Return the zero-to-jupyterhub chart values for the class (plain data, YAML-ready).

    Parameters
    ----------
    roster : sequence of RosterEntry (or any RosterLike)
        The class (:func:`labkit.data.roster.read_roster`), in roster order.
    teacher : str
        The teacher's username: the teacher role (:func:`teacher_load_roles`), not a hub admin,
        and no first-use login (added to the allow-list if not listed).
    policy : {"auto", "mig", "whole", "shared"}, default "auto"
    gpu : str, optional
        The GPU model (``"H100-80GB"``); needed for ``"mig"``.
    gpus : int, optional
        GPUs in the cluster for the class (see :func:`labkit.hub.plan.plan_class`).
    mem, mem_guarantee : str
        Memory limit and request per student (Kubernetes quantities; request default: the
        limit).
    cpu, cpu_guarantee : float
        CPU limit and request per student [cores] (request default: half the limit).
    cull_timeout_s : int, default 600
        Idle time before a server is stopped [s] (60 .. 7 days): the one-server hub's default
        (:data:`labkit.hub.state.DEFAULT_CULL_TIMEOUT_S`); the culler looks every
        :func:`labkit.hub.state.cull_every_s` seconds, as on one server.
    mig_strategy : {"mixed", "single"}, default "mixed"
        The GPU operator's MIG strategy: the resource name the device plugin advertises.
    image : str, default DEFAULT_IMAGE
        The single-user image ``name:tag``: labkit installed and the notebooks at
        :data:`IMAGE_CURRICULUM` (docs/hub-k8s.md).
    hub_image : str, default DEFAULT_HUB_IMAGE
        The hub's image ``name:tag``: the chart's hub image with labkit installed (its
        :data:`AUTHENTICATOR`; docs/hub-k8s.md).

    Returns
    -------
    dict
        Keys ``hub``, ``singleuser``, ``cull`` (the chart merges its defaults under them).

    Raises
    ------
    InputError
        For a bad policy, teacher name, memory or CPU, timeout, strategy or image, or a
        class that does not fit the MIG plan.
    """
    if policy not in POLICIES:
        raise InputError("policy", "choice", policy, f"policy must be one of "
                         f"{', '.join(POLICIES)}, got {policy!r}", limit=POLICIES)
    if mig_strategy not in _STRATEGIES:
        raise InputError("mig_strategy", "choice", mig_strategy, "mig_strategy must be "
                         f"mixed or single, got {mig_strategy!r}", limit=_STRATEGIES)
    try:
        validate_username(teacher or "")
    except ValueError as err:
        raise InputError("teacher", "other", teacher,
                         f"teacher must be a roster username: {err}") from None
    if isinstance(cull_timeout_s, bool) or not isinstance(cull_timeout_s, int) or not (
            60 <= cull_timeout_s <= 7 * 86400):
        raise InputError("cull_timeout_s", "other", cull_timeout_s,
                         f"cull_timeout_s must be whole seconds in [60, 604800], got "
                         f"{cull_timeout_s!r}")
    users = [e.username for e in roster]
    students = [u for u in users if u != teacher]
    if not students:
        raise InputError("roster", "other", len(users), "the roster lists no student")
    resolved, share, limits = _resource(policy, gpu, len(students), gpus, mig_strategy)
    limit_cpu = _cpu("cpu", cpu)
    singleuser: dict[str, Any] = {
        "image": _image(image),
        "defaultUrl": "/lab/tree/labkit",
        "lifecycleHooks": {"postStart": {"exec": {"command": curriculum_command()}}},
        "memory": {"limit": _memory("mem", mem),
                   "guarantee": _memory("mem_guarantee", mem_guarantee or mem)},
        "cpu": {"limit": limit_cpu, "guarantee": _cpu("cpu_guarantee", cpu_guarantee)
                if cpu_guarantee is not None else limit_cpu / 2},
        "profileList": [{
            "display_name": t("hub.k8s.profile", share=share),
            "slug": f"labkit-{resolved}",
            "description": t(f"hub.k8s.profile.{resolved}"),
            "default": True,
            "kubespawner_override": {"extra_resource_limits": limits},
        }],
    }
    allowed = users if teacher in users else [*users, teacher]
    return {
        "hub": {
            "image": _image(hub_image, "hub_image"),
            "config": {
                "JupyterHub": {"authenticator_class": AUTHENTICATOR},
                # no admin: the teacher's own role (hub.loadRoles), as on one server
                "Authenticator": {"allowed_users": allowed, "admin_users": []},
                "RosterAuthenticator": {"teacher_users": [teacher], "state_dir": STATE_DIR},
            },
            "loadRoles": teacher_load_roles(teacher),
            # the state directory on the hub's volume knows its teacher before any login
            "extraConfig": {"labkit-state": _state_config(teacher)},
        },
        "singleuser": singleuser,
        "cull": {"enabled": True, "users": False, "adminUsers": False,
                 "timeout": cull_timeout_s, "every": cull_every_s(cull_timeout_s)},
    }


def _image(image: str, field: str = "image") -> dict[str, str]:
    name, sep, tag = image.rpartition(":") if isinstance(image, str) else ("", "", "")
    if not sep or not name or not tag or "/" in tag:
        raise InputError(field, "other", image, f"{field} must be name:tag, got {image!r}")
    return {"name": name, "tag": tag}


def teacher_load_roles(teacher: str) -> dict[str, dict[str, Any]]:
    """Return the chart's ``hub.loadRoles``: the one-server hub's teacher role, and an empty
    ``admin`` role (a hub database from before, where the teacher was admin, is set straight).

    The scopes are :data:`labkit.hub.config.TEACHER_SCOPES` (the class and its activity,
    starting and stopping servers; never ``access:servers`` or tokens for others) without the
    one-server class page's service, which the chart does not run.
    """
    from labkit.hub.config import TEACHER_ROLE, TEACHER_SCOPES

    scopes = [s for s in TEACHER_SCOPES if not s.startswith("access:services")]
    return {TEACHER_ROLE: {"description": "labkit teacher: the class, start/stop servers",
                           "scopes": scopes, "users": [teacher]},
            "admin": {"users": []}}


def _state_config(teacher: str) -> str:
    """Return the ``hub.extraConfig`` snippet that writes the teacher into the state directory
    (``settings.json`` on the hub's volume) at every hub start, so ``roster import`` gives the
    teacher no first-login code and ``roster set-password TEACHER`` knows the name. ``c`` is
    the hub's config (the chart runs extraConfig inside jupyterhub_config.py)."""
    return ("# labkit: the roster authenticator's state (roster, passwords, first-login codes)\n"
            "import dataclasses as _dc\n"
            "from pathlib import Path as _Path\n"
            "from labkit.hub.state import HubState as _HubState\n"
            "_state = _HubState(_Path(c.RosterAuthenticator.state_dir))\n"
            "_settings = _state.settings()\n"
            f"if _settings.teacher != {teacher!r}:\n"
            f"    _state.save_settings(_dc.replace(_settings, teacher={teacher!r}))\n")


def curriculum_command(python: str = "python") -> list[str]:
    """Return the pods' ``postStart`` command: merge the image's notebooks into ``~/labkit``.

    It runs in the student's container as the student, after the home volume is mounted
    (Kubernetes lifecycle hooks), with the one-server hub's merge rule
    (:func:`labkit.hub.curriculum.merge`: new and unchanged files updated, the student's edits
    kept, nothing removed).

    Parameters
    ----------
    python : str, default "python"
        The image's interpreter (``python`` on the image's PATH).
    """
    return [python, "-m", "labkit.hub.curriculum", "--from", IMAGE_CURRICULUM,
            f"{HOME}/labkit"]


def values_yaml(values: dict[str, Any]) -> str:
    """Return ``values`` as the text of a values.yaml (UTF-8, Korean kept, keys in order)."""
    head = ("# zero-to-jupyterhub values for the labkit class hub (python -m labkit.hub k8s).\n"
            "# helm upgrade --install labkit jupyterhub/jupyterhub --values values.yaml\n")
    return head + yaml.safe_dump(values, allow_unicode=True, sort_keys=False, width=100)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m labkit.hub k8s",
        description="Render values for the zero-to-jupyterhub Helm chart from the class roster.")
    p.add_argument("--roster", type=Path, required=True, help="roster CSV (username,display_name)")
    p.add_argument("--teacher", required=True, help="the teacher's username (the teacher role)")
    p.add_argument("--policy", choices=POLICIES, default="auto", help="GPU share per student")
    p.add_argument("--gpu", help="GPU model of the nodes, e.g. H100-80GB")
    p.add_argument("--gpus", type=int, help="GPUs for the class (default: as the plan needs)")
    p.add_argument("--mem", default="2G", help="memory limit per student (default 2G)")
    p.add_argument("--cpu", type=float, default=1.0, help="CPU limit per student [cores]")
    p.add_argument("--cull-timeout", type=int, default=DEFAULT_CULL_TIMEOUT_S,
                   help=f"idle seconds before a server is stopped (default "
                        f"{DEFAULT_CULL_TIMEOUT_S}, as on one server)")
    p.add_argument("--mig-strategy", choices=_STRATEGIES, default="mixed",
                   help="the GPU operator's MIG strategy (default mixed)")
    p.add_argument("--image", default=DEFAULT_IMAGE,
                   help=f"single-user image name:tag with labkit and the notebooks "
                        f"(default {DEFAULT_IMAGE}, docs/hub-k8s.md)")
    p.add_argument("--hub-image", default=DEFAULT_HUB_IMAGE,
                   help=f"hub image name:tag with labkit installed (default {DEFAULT_HUB_IMAGE}, "
                        "docs/hub-k8s.md)")
    p.add_argument("--out", type=Path, help="write values.yaml here (default: stdout)")
    return p


def main_k8s(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m labkit.hub k8s``; return the exit status (2 for bad input)."""
    args = _parser().parse_args(argv)
    try:
        values = render_values(
            read_roster(args.roster), args.teacher, policy=args.policy, gpu=args.gpu,
            gpus=args.gpus, mem=args.mem, cpu=args.cpu, cull_timeout_s=args.cull_timeout,
            mig_strategy=args.mig_strategy, image=args.image, hub_image=args.hub_image)
    except ValueError as err:
        print(t("hub.k8s.error", message=str(err)), file=sys.stderr)
        return 2
    text = values_yaml(values)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(t("hub.plan.wrote", path=str(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main_k8s())
