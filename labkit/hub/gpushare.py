"""Each student's GPU share on the class hub: a MIG device, a whole GPU, or a shared GPU.

The teacher picks a policy:

- ``"mig"``: one MIG device each (``CUDA_VISIBLE_DEVICES=MIG-<uuid>``); the operator made
  them beforehand (``python -m labkit.hub.plan``; the hub never changes MIG).
- ``"whole"``: one whole GPU each (GPUs with MIG off).
- ``"shared"``: the students take turns on the GPUs (time-slicing): student *i* gets unit
  ``i mod n`` of every GPU and MIG device there is, so the class spreads evenly.
- ``"auto"``: ``"mig"`` if there are MIG devices, else ``"whole"`` if there is a GPU for every
  student, else ``"shared"``.

Two halves: :func:`assign` is pure (a :class:`LabGpus` inventory and the roster in, one
:class:`Share` per student out); :func:`read_lab` reads the inventory through NVML
(``labkit.gpu.connect()``: the real GPU or the simulated lab). Assignment follows the roster
order, so a student keeps the same slice across hub restarts as long as the roster and the MIG
layout stay the same (students added at the end of the roster never move anyone).

The hub's spawner calls :func:`environment_for` and puts the result in the single-user server's
environment; ``LABKIT_GPU_SHARE`` (JSON, :meth:`Share.to_env`) lets the lessons' banner say which
slice is the student's.

References
----------
.. [1] NVIDIA CUDA C Programming Guide, "CUDA Environment Variables": ``CUDA_VISIBLE_DEVICES``
   takes GPU indices or UUIDs, and ``MIG-<uuid>`` for a MIG device.
.. [2] NVIDIA MIG user guide, "CUDA Device Enumeration": one MIG device per CUDA process is
   what CUDA enumerates; a MIG-enabled GPU's own UUID gives no usable device.
.. [3] NVIDIA GPU operator, "Time-Slicing GPUs in Kubernetes": oversubscribing a GPU by
   time-slicing gives no memory or fault isolation between the sharers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from labkit.i18n import t

__all__ = [
    "ENV_SHARE",
    "POLICIES",
    "STATE_KEY",
    "GpuUnit",
    "LabGpus",
    "NoShareLeft",
    "Share",
    "ShareState",
    "assign",
    "environment_for",
    "pre_spawn_hook",
    "read_lab",
    "resolve_policy",
    "share_for",
]

#: The environment variable the lessons' banner reads (JSON of :meth:`Share.to_env`).
ENV_SHARE = "LABKIT_GPU_SHARE"
#: The key of a server's share in its spawner's state (:class:`ShareState`).
STATE_KEY = "labkit_gpu_share"
#: The policies a teacher can pick.
POLICIES = ("auto", "mig", "whole", "shared")
_MAX_ROSTER = 500


class NoShareLeft(RuntimeError):
    """No GPU share is left for a student (or the lab GPU cannot be read).

    ``str(err)`` is the Korean message; ``reason`` is a short code (``"no_slice"``,
    ``"no_gpu"``, ``"nvml"``) and ``username`` the student. ``jupyterhub_message`` holds the
    message too: JupyterHub shows that attribute of a spawn failure on the spawn page
    (``jupyterhub.utils.format_exception``) instead of a generic "Spawn failed".
    """

    def __init__(self, username: str, reason: str, message: str) -> None:
        self.username = username
        self.reason = reason
        self.jupyterhub_message = message
        super().__init__(message)


@dataclass(frozen=True)
class GpuUnit:
    """One thing CUDA can be given: a whole GPU or one MIG device.

    Attributes
    ----------
    kind : {"gpu", "mig"}
    gpu_index : int
        The (parent) GPU's NVML index.
    uuid : str
        ``GPU-...`` or ``MIG-...`` (``nvmlDeviceGetUUID``), what ``CUDA_VISIBLE_DEVICES`` takes.
    name : str
        ``nvmlDeviceGetName`` of the GPU (for a MIG device: its parent's name).
    profile : str
        The MIG device's GPU instance profile (``"1g.10gb"``); ``""`` for a whole GPU.
    mig_index : int or None
        The MIG device's index on its GPU (``nvmlDeviceGetMigDeviceHandleByIndex``).
    """

    kind: str
    gpu_index: int
    uuid: str
    name: str
    profile: str = ""
    mig_index: int | None = None


@dataclass(frozen=True)
class LabGpus:
    """What the lab has to share out: GPUs with MIG off, and MIG devices.

    Attributes
    ----------
    whole : tuple of GpuUnit
        GPUs with MIG off (a MIG-enabled GPU is only usable through its MIG devices), by index.
    mig : tuple of GpuUnit
        MIG devices, by GPU index then MIG device index.
    """

    whole: tuple[GpuUnit, ...] = ()
    mig: tuple[GpuUnit, ...] = ()


@dataclass(frozen=True)
class Share:
    """One student's GPU share.

    Attributes
    ----------
    policy : {"mig", "whole", "shared"}
        The policy that gave it (``"auto"`` resolved).
    unit : GpuUnit
        The GPU or MIG device.
    sharers : int
        Students on this unit (1 unless ``policy == "shared"``).
    slot : int
        The student's place in the roster, from 1.
    """

    policy: str
    unit: GpuUnit
    sharers: int
    slot: int

    @property
    def cuda_visible_devices(self) -> str:
        """The value of ``CUDA_VISIBLE_DEVICES`` (the unit's UUID)."""
        return self.unit.uuid

    def to_env(self) -> str:
        """Return the share as the JSON text of ``LABKIT_GPU_SHARE`` (read by the lesson banner).

        Keys: ``policy``, ``kind``, ``gpu_index``, ``uuid``, ``name``, ``profile``,
        ``mig_index``, ``sharers``, ``slot``.
        """
        doc: dict[str, Any] = {"policy": self.policy, **asdict(self.unit),
                               "sharers": self.sharers, "slot": self.slot}
        return json.dumps(doc, ensure_ascii=False, sort_keys=True)


def _check_roster(roster: Sequence[str]) -> list[str]:
    if isinstance(roster, str) or not isinstance(roster, Sequence):
        raise ValueError(f"roster must be a sequence of usernames, got {roster!r}")
    names = list(roster)
    if len(names) > _MAX_ROSTER:
        raise ValueError(f"roster has {len(names)} names; at most {_MAX_ROSTER}")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"roster names must be non-empty strings, got {name!r}")
        if name in seen:
            raise ValueError(f"roster lists {name!r} twice")
        seen.add(name)
    return names


def resolve_policy(lab: LabGpus, students: int, policy: str) -> str:
    """Return the policy ``policy`` means for this lab (``"auto"`` decided, others as given).

    ``"auto"``: ``"mig"`` when the lab has MIG devices, else ``"whole"`` when it has at least
    ``students`` GPUs with MIG off, else ``"shared"``.

    Raises
    ------
    ValueError
        For a policy not in :data:`POLICIES` or a negative ``students``.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if isinstance(students, bool) or not isinstance(students, int) or students < 0:
        raise ValueError(f"students must be a whole number >= 0, got {students!r}")
    if policy != "auto":
        return policy
    if lab.mig:
        return "mig"
    return "whole" if len(lab.whole) >= students else "shared"


def assign(lab: LabGpus, roster: Sequence[str], policy: str) -> dict[str, Share | None]:
    """Return each roster name's share (None: nothing left for that student).

    Pure: the same inventory, roster and policy always give the same answer. Student *k* of
    the roster (0-based) gets unit *k* of the policy's pool (``"mig"``: the MIG devices;
    ``"whole"``: the GPUs with MIG off); with ``"shared"`` the pool is every GPU with MIG off
    and every MIG device, and student *k* gets unit ``k mod len(pool)``.

    Parameters
    ----------
    lab : LabGpus
    roster : sequence of str
        Usernames in roster order (the class roster's order).
    policy : {"auto", "mig", "whole", "shared"}

    Returns
    -------
    dict of str to Share or None
        In roster order.

    Raises
    ------
    ValueError
        For an unknown policy or a roster with a duplicate or empty name.
    """
    names = _check_roster(roster)
    resolved = resolve_policy(lab, len(names), policy)
    if resolved == "shared":
        pool = [*lab.whole, *lab.mig]
        out: dict[str, Share | None] = {}
        for k, name in enumerate(names):
            if not pool:
                out[name] = None
                continue
            unit = k % len(pool)
            sharers = len(range(unit, len(names), len(pool)))
            out[name] = Share("shared", pool[unit], sharers, k + 1)
        return out
    units = lab.mig if resolved == "mig" else lab.whole
    return {name: Share(resolved, units[k], 1, k + 1) if k < len(units) else None
            for k, name in enumerate(names)}


def share_for(lab: LabGpus, username: str, roster: Sequence[str], policy: str) -> Share:
    """Return ``username``'s share, or raise :class:`NoShareLeft` (Korean message).

    Raises
    ------
    ValueError
        If ``username`` is not on the roster, or for a bad policy or roster.
    NoShareLeft
        ``reason="no_gpu"`` when the lab has nothing of the policy's kind;
        ``reason="no_slice"`` when every unit is taken by students earlier in the roster.
    """
    shares = assign(lab, roster, policy)
    if username not in shares:
        raise ValueError(f"{username!r} is not on the class roster")
    share = shares[username]
    if share is not None:
        return share
    resolved = resolve_policy(lab, len(shares), policy)
    pool = {"mig": lab.mig, "whole": lab.whole}.get(resolved, (*lab.whole, *lab.mig))
    kind = t(f"hub.share.kind.{resolved}")
    if not pool:
        raise NoShareLeft(username, "no_gpu", t("hub.share.no_gpu", kind=kind))
    raise NoShareLeft(username, "no_slice", t(
        "hub.share.no_slice", kind=kind, count=len(pool),
        position=list(shares).index(username) + 1))


# --- reading the lab through NVML ---------------------------------------------------------------


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def read_lab(nv: ModuleType) -> LabGpus:
    """Return the lab's GPUs with MIG off and its MIG devices, read through NVML.

    Only reads: ``nvmlDeviceGetCount``/``GetName``/``GetUUID`` and
    :func:`labkit.gpu.mig_live.read_state` (MIG mode, GPU instances, MIG devices). A GPU whose
    MIG mode is on but has no MIG devices gives nothing (CUDA cannot use it whole).

    Parameters
    ----------
    nv : module
        The NVML module from ``labkit.gpu.connect()`` (real or simulated).

    Raises
    ------
    nv.NVMLError
        From any query.
    """
    from labkit.gpu.mig_live import read_state

    whole: list[GpuUnit] = []
    mig: list[GpuUnit] = []
    for index in range(nv.nvmlDeviceGetCount()):
        h = nv.nvmlDeviceGetHandleByIndex(index)
        name, uuid = _text(nv.nvmlDeviceGetName(h)), _text(nv.nvmlDeviceGetUUID(h))
        state = read_state(nv, index)
        if not state.enabled:
            whole.append(GpuUnit("gpu", index, uuid, name))
            continue
        profiles = {gi.id: gi.profile for gi in state.gpu_instances}
        for dev in state.mig_devices:
            mig.append(GpuUnit("mig", index, dev.uuid, name,
                               profiles.get(dev.gpu_instance_id, ""), dev.index))
    return LabGpus(tuple(whole), tuple(mig))


def environment_for(username: str, roster: Sequence[str], policy: str) -> dict[str, str]:
    """Return the environment variables of ``username``'s single-user server: their GPU share.

    Reads the lab GPU through ``labkit.gpu.connect()`` (``$LABKIT_GPU``: real or simulated),
    then :func:`share_for`.

    Parameters
    ----------
    username : str
        The student (a roster name).
    roster : sequence of str
        Every name the GPUs are shared among, in roster order.
    policy : {"auto", "mig", "whole", "shared"}

    Returns
    -------
    dict of str to str
        ``CUDA_VISIBLE_DEVICES`` (a ``GPU-``/``MIG-`` UUID) and ``LABKIT_GPU_SHARE`` (JSON, see
        :meth:`Share.to_env`); on a simulated lab also ``LABKIT_GPU`` (the hub's ``sim:`` spec),
        so the student's lessons simulate the same boards.

    Raises
    ------
    NoShareLeft
        When nothing is left for the student, or NVML cannot be read (``reason="nvml"``).
    ValueError
        For a name not on the roster, a bad roster or an unknown policy.
    """
    import labkit.gpu as gpu
    from labkit.gpu.backend import ENV as GPU_ENV

    status = gpu.status()  # never raises: kind "none" says why there is no lab GPU
    if status.kind == "none":
        raise NoShareLeft(username, "nvml", t("hub.share.nvml", reason=status.reason or ""))
    nv = gpu.connect()
    try:
        lab = read_lab(nv)
    except nv.NVMLError as err:
        raise NoShareLeft(username, "nvml", t("hub.share.nvml", reason=str(err))) from err
    share = share_for(lab, username, roster, policy)
    env = {"CUDA_VISIBLE_DEVICES": share.cuda_visible_devices, ENV_SHARE: share.to_env()}
    if status.kind == "sim":  # the student's lessons simulate the same lab as the hub
        env[GPU_ENV] = status.spec
    return env


def pre_spawn_hook(roster: Sequence[str], policy: str) -> Callable[[Any], None]:
    """Return a ``c.Spawner.pre_spawn_hook`` that gives each server its GPU share.

    The hook calls :func:`environment_for` with the spawner's user name and adds the result to
    ``spawner.environment``; :class:`NoShareLeft` propagates, so JupyterHub fails the spawn and
    shows its Korean ``jupyterhub_message`` on the spawn page.

    Parameters
    ----------
    roster : sequence of str
        Usernames sharing the GPUs, in roster order (put the teacher last to give them a spare
        slice, or leave them out).
    policy : {"auto", "mig", "whole", "shared"}

    Raises
    ------
    ValueError
        At once, for an unknown policy or a bad roster (not at the first spawn).
    """
    names = _check_roster(roster)
    resolve_policy(LabGpus(), len(names), policy)  # checks the policy now

    def hook(spawner: Any) -> None:
        env = environment_for(spawner.user.name, names, policy)
        spawner.environment.update(env)
        spawner.labkit_gpu_share = env[ENV_SHARE]  # kept hub-side by ShareState

    return hook


class ShareState:
    """Spawner mixin: keep each server's GPU share in the spawner's state, on the hub's side.

    The teacher's class page reads a student's share from the hub (the server model's
    ``state``, scope ``admin:server_state``), never from the student's own server: a student
    can change anything their server reports, but not what the hub stored when it spawned it.
    The spawner (or :func:`pre_spawn_hook`) sets :attr:`labkit_gpu_share` to the
    ``$LABKIT_GPU_SHARE`` it gives the server; JupyterHub keeps ``get_state()`` in its
    database and returns it in the REST API's server model.

    Use it before the spawner class: ``class S(ShareState, LocalProcessSpawner)``.
    """

    labkit_gpu_share: str = ""

    def get_state(self) -> dict[str, Any]:
        """Return the spawner's state with the share under :data:`STATE_KEY`."""
        state: dict[str, Any] = super().get_state()  # type: ignore[misc]
        if self.labkit_gpu_share:
            state[STATE_KEY] = self.labkit_gpu_share
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        """Load the spawner's state (the share back from the hub's database)."""
        super().load_state(state)  # type: ignore[misc]
        self.labkit_gpu_share = str(state.get(STATE_KEY) or "")

    def clear_state(self) -> None:
        """Forget the share with the rest of the state (the server stopped)."""
        super().clear_state()  # type: ignore[misc]
        self.labkit_gpu_share = ""
