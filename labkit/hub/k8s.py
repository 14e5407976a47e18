"""Beyond one server: the class hub as values for the zero-to-jupyterhub Helm chart.

``python -m labkit.hub.k8s --roster class.csv --teacher NAME --policy mig --gpu H100-80GB
--out values.yaml`` renders the same class as the one-server hub: the roster as the
authenticator's allow-list (first-use passwords), the teacher as admin, per-student memory and
CPU limits, the GPU share as a KubeSpawner profile whose ``extra_resource_limits`` asks the
NVIDIA device plugin for one MIG device (``nvidia.com/mig-1g.10gb: 1``, the GPU operator's
"mixed" strategy; ``nvidia.com/gpu`` with "single") or one GPU, and the idle culler. Install::

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
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from labkit.data.roster import RosterLike, read_roster
from labkit.hub.gpushare import POLICIES
from labkit.hub.plan import plan_class
from labkit.i18n import t
from labkit.validate import InputError

__all__ = ["DEFAULT_CULL_TIMEOUT_S", "main_k8s", "render_values", "values_yaml"]

#: Idle time before the culler stops a student's server: the chart's default ``cull.timeout``.
DEFAULT_CULL_TIMEOUT_S = 3600
#: How often the culler looks: the chart's default ``cull.every``.
DEFAULT_CULL_EVERY_S = 600
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
                  image: str | None = None) -> dict[str, Any]:
    """Return the zero-to-jupyterhub chart values for the class (plain data, YAML-ready).

    Parameters
    ----------
    roster : sequence of RosterEntry (or any RosterLike)
        The class (:func:`labkit.data.roster.read_roster`), in roster order.
    teacher : str
        The teacher's username: a JupyterHub admin (added to the allow-list if not listed).
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
    cull_timeout_s : int, default 3600
        Idle time before a server is stopped [s] (60 .. 7 days).
    mig_strategy : {"mixed", "single"}, default "mixed"
        The GPU operator's MIG strategy: the resource name the device plugin advertises.
    image : str, optional
        The single-user image ``name:tag`` (an image with labkit installed); default: the
        chart's.

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
    if not re.match(r"^[a-z][a-z0-9_-]{0,23}$", teacher or ""):
        raise InputError("teacher", "other", teacher,
                         f"teacher must be a roster-style username, got {teacher!r}")
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
        "defaultUrl": "/lab",
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
    if image is not None:
        name, sep, tag = image.rpartition(":")
        if not sep or not name or not tag or "/" in tag:
            raise InputError("image", "other", image, f"image must be name:tag, got {image!r}")
        singleuser["image"] = {"name": name, "tag": tag}
    allowed = users if teacher in users else [*users, teacher]
    return {
        "hub": {"config": {
            "JupyterHub": {"authenticator_class":
                           "firstuseauthenticator.FirstUseAuthenticator"},
            "Authenticator": {"allowed_users": allowed, "admin_users": [teacher]},
            # min_password_length: FirstUseAuthenticator's default (7), as on the one-server hub
            "FirstUseAuthenticator": {"create_users": False},
        }},
        "singleuser": singleuser,
        "cull": {"enabled": True, "users": False, "adminUsers": False,
                 "timeout": cull_timeout_s, "every": DEFAULT_CULL_EVERY_S},
    }


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
    p.add_argument("--teacher", required=True, help="the teacher's username (hub admin)")
    p.add_argument("--policy", choices=POLICIES, default="auto", help="GPU share per student")
    p.add_argument("--gpu", help="GPU model of the nodes, e.g. H100-80GB")
    p.add_argument("--gpus", type=int, help="GPUs for the class (default: as the plan needs)")
    p.add_argument("--mem", default="2G", help="memory limit per student (default 2G)")
    p.add_argument("--cpu", type=float, default=1.0, help="CPU limit per student [cores]")
    p.add_argument("--cull-timeout", type=int, default=DEFAULT_CULL_TIMEOUT_S,
                   help="idle seconds before a server is stopped (default 3600)")
    p.add_argument("--mig-strategy", choices=_STRATEGIES, default="mixed",
                   help="the GPU operator's MIG strategy (default mixed)")
    p.add_argument("--image", help="single-user image name:tag with labkit installed")
    p.add_argument("--out", type=Path, help="write values.yaml here (default: stdout)")
    return p


def main_k8s(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m labkit.hub k8s``; return the exit status (2 for bad input)."""
    args = _parser().parse_args(argv)
    try:
        values = render_values(
            read_roster(args.roster), args.teacher, policy=args.policy, gpu=args.gpu,
            gpus=args.gpus, mem=args.mem, cpu=args.cpu, cull_timeout_s=args.cull_timeout,
            mig_strategy=args.mig_strategy, image=args.image)
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
