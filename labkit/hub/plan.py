"""The class's MIG layout: how many GPUs, cut into which MIG devices, for a class of N students.

``python -m labkit.hub.plan --students 28 --gpu H100-80GB`` proposes 4 GPUs x 7 x 1g.10gb,
prints the plan (Korean, English terms in parentheses) and, with ``--out DIR``, writes what the
operator applies: ``DIR/mig-parted.yaml`` (``nvidia-mig-parted apply -f ... -c <label>``) and
``DIR/nvidia-smi-mig.sh`` (the same layout as ``nvidia-smi mig`` commands). The hub itself never
changes MIG; it only reads the MIG devices the operator made (:mod:`labkit.hub.gpushare`), and
``--check`` compares them with the plan (read-only).

The choice (:func:`plan_class`): every GPU gets the same layout, one MIG profile repeated as
often as the board allows (a homogeneous layout is what mig-parted's ``all-<profile>`` configs
are, and what the GPU operator's "single" strategy needs). Without ``--gpus``: the board's
smallest slice (the ``all-1g.*`` preset), on as few GPUs as hold the class. With ``--gpus N``: the
largest slice (most memory, then most compute) of which N GPUs still hold one per student.

Built on lesson 02's planner (:mod:`labkit.mig`): :meth:`~labkit.mig.Layout.from_profiles`,
:func:`~labkit.mig.presets`, :func:`~labkit.mig.to_mig_parted`, :func:`~labkit.mig.to_nvidia_smi`.

References
----------
.. [1] NVIDIA/mig-parted ``deployments/systemd/config-default`` (``all-1g.10gb`` etc.).
.. [2] NVIDIA GPU operator, "GPU Operator with MIG": strategies ``single`` (every GPU the same
   layout) and ``mixed`` (one resource per profile, ``nvidia.com/mig-1g.10gb``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from labkit import mig
from labkit.gpumodels import GiProfile, GpuModel
from labkit.hub.gpushare import LabGpus
from labkit.i18n import t
from labkit.mig import placement as rules
from labkit.validate import InputError

__all__ = ["MAX_GPUS", "MAX_STUDENTS", "ClassPlan", "check_lab", "main_plan", "operator_files",
           "plan_class", "plan_text"]

#: Most students a plan is made for (labkit.data.roster.MAX_STUDENTS).
MAX_STUDENTS = 500
#: Most GPUs in one plan (the simulated lab's limit; a server has at most 8-16).
MAX_GPUS = 64
_DEFAULT_LABEL = "labkit-class"


@dataclass(frozen=True)
class ClassPlan:
    """A class's MIG layout: ``gpus`` GPUs, each cut the same way.

    Attributes
    ----------
    students : int
    model : GpuModel
        The board.
    profile : GiProfile
        The MIG profile every student gets one of.
    layout : Layout
        One GPU's layout (``per_gpu`` GIs of ``profile``, with placements).
    gpus : int
        GPUs the plan uses (GPU indices 0 .. gpus-1).
    label : str
        The mig-parted config name (the preset's name, e.g. ``all-1g.10gb``, when it is one).
    """

    students: int
    model: GpuModel
    profile: GiProfile
    layout: mig.Layout
    gpus: int
    label: str

    @property
    def per_gpu(self) -> int:
        """MIG devices on each GPU."""
        return len(self.layout)

    @property
    def mig_devices(self) -> int:
        """MIG devices in all."""
        return self.per_gpu * self.gpus

    @property
    def spare(self) -> int:
        """MIG devices left over after one per student (for the teacher, or late joiners)."""
        return self.mig_devices - self.students


def _plain(model: GpuModel) -> list[GiProfile]:
    assert model.mig is not None  # mig.resolve_model guarantees it
    return [p for p in model.mig.profiles if not p.suffix]


def _per_gpu(model: GpuModel, profile: GiProfile) -> int:
    assert model.mig is not None
    return rules.remaining_capacity(model.mig, [], profile)


def _pick(model: GpuModel, students: int, gpus: int | None) -> GiProfile:
    plain = _plain(model)
    if gpus is None:
        return min(plain, key=lambda p: (p.compute_slices, p.memory_slices, p.id))
    fitting = [p for p in plain if _per_gpu(model, p) * gpus >= students]
    if not fitting:
        most = max(_per_gpu(model, p) for p in plain)
        raise InputError("students", "at_most", students,
                         f"{students} students do not fit on {gpus} x {model.short_name}: at "
                         f"most {most * gpus} MIG devices ({most} per GPU)", limit=most * gpus)
    return max(fitting, key=lambda p: (p.memory_slices, p.compute_slices, -p.id))


def plan_class(students: int, model: GpuModel | str, *, gpus: int | None = None,
               profile: str | None = None) -> ClassPlan:
    """Return the class's MIG layout: one MIG device per student, every GPU cut the same way.

    Parameters
    ----------
    students : int
        Students, 1 .. 500.
    model : GpuModel or str
        The board (``"H100-80GB"``, ``"A100-40GB"``, ...; MIG-capable).
    gpus : int, optional
        GPUs the school has for the class (1 .. 64). Default: as few as the class needs with
        the smallest slice.
    profile : str, optional
        Force a GI profile (``"1g.20gb"``); default: chosen as the module docstring says.

    Returns
    -------
    ClassPlan

    Raises
    ------
    InputError
        ``students`` or ``gpus`` not a whole number in range; ``model`` unknown or without
        MIG; ``profile`` not one of the board's; ``students`` (rule ``at_most``) when the class
        does not fit on ``gpus`` GPUs.

    Examples
    --------
    >>> p = plan_class(28, "H100-80GB")
    >>> (p.gpus, p.per_gpu, p.profile.name)
    (4, 7, '1g.10gb')
    """
    n = _whole("students", students, MAX_STUDENTS)
    count = None if gpus is None else _whole("gpus", gpus, MAX_GPUS)
    board = mig.resolve_model(model)
    if profile is None:
        chosen = _pick(board, n, count)
    else:
        names = [p.name for p in board.mig.profiles] if board.mig else []
        if profile not in names:
            raise InputError("profile", "choice", profile,
                             f"{board.short_name} has no profile {profile!r}; it has "
                             f"{', '.join(names)}", limit=tuple(names))
        chosen = mig.Layout(board).profile(profile)
    per_gpu = _per_gpu(board, chosen)
    layout = mig.Layout.from_profiles(board, [chosen.name] * per_gpu)
    used = math.ceil(n / per_gpu) if count is None else count
    if used * per_gpu < n:
        raise InputError("students", "at_most", n,
                         f"{n} students do not fit on {used} x {board.short_name} with "
                         f"{chosen.name} ({per_gpu} per GPU)", limit=used * per_gpu)
    label = next((name for name, lay in mig.presets(board).items() if lay == layout),
                 _DEFAULT_LABEL)
    return ClassPlan(n, board, chosen, layout, used, label)


def _whole(field: str, value: object, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, "integer", value, f"{field} must be a whole number, got "
                         f"{value!r}", limit=1)
    if value < 1:
        raise InputError(field, "at_least", value, f"{field} must be >= 1, got {value}",
                         limit=1)
    if value > most:
        raise InputError(field, "at_most", value, f"{field} must be <= {most}, got {value}",
                         limit=most)
    return value


def operator_files(plan: ClassPlan) -> dict[str, str]:
    """Return the operator's files for ``plan``: file name -> text.

    ``mig-parted.yaml``: one mig-parted config (``plan.label``) for GPUs 0 .. gpus-1.
    ``nvidia-smi-mig.sh``: a bash script (``set -euo pipefail``: it stops at the first failing
    command) that enables MIG and creates the GIs and their compute instances on each GPU with
    ``nvidia-smi`` (explicit placements), for a machine without mig-parted; ``main_plan``
    writes it mode 0755.
    """
    devices = list(range(plan.gpus))
    parted = mig.to_mig_parted(plan.layout, plan.label, devices=devices)
    lines = [
        "#!/usr/bin/env bash",
        f"# labkit class plan: {plan.students} students, {plan.gpus} x {plan.model.short_name}, "
        f"{plan.per_gpu} x {plan.profile.name} per GPU.",
        "# Run as root on the GPU server, with no GPU processes running and no GPU instances",
        "# yet (nvidia-smi mig -dci; nvidia-smi mig -dgi). The class hub never runs this.",
        "set -euo pipefail",
    ]
    for gpu in devices:
        lines += ["", mig.to_nvidia_smi(plan.layout, gpu, sudo=False)]
    lines += ["", "nvidia-smi -L"]
    return {"mig-parted.yaml": parted, "nvidia-smi-mig.sh": "\n".join(lines) + "\n"}


def plan_text(plan: ClassPlan) -> str:
    """Return the plan as the teacher and operator read it (Korean, English terms)."""
    assert plan.model.mig is not None
    memory_gib = plan.profile.memory_mib / 1024
    return "\n".join([
        t("hub.plan.title", students=plan.students, model=plan.model.short_name),
        t("hub.plan.layout", gpus=plan.gpus, per_gpu=plan.per_gpu, profile=plan.profile.name,
          devices=plan.mig_devices, spare=plan.spare),
        t("hub.plan.per_student", memory=f"{memory_gib:.1f}",
          compute=plan.profile.compute_slices, slices=plan.model.mig.compute_slices,
          sms=plan.profile.sm_count),
        t("hub.plan.label", label=plan.label),
        t("hub.plan.never"),
    ])


def check_lab(plan: ClassPlan, lab: LabGpus) -> list[str]:
    """Return what differs between ``plan`` and the lab's MIG devices (Korean; [] if it matches).

    Read-only: compares, per planned GPU, the MIG devices of ``plan.profile`` that
    :func:`labkit.hub.gpushare.read_lab` found with ``plan.per_gpu``.

    Parameters
    ----------
    plan : ClassPlan
    lab : LabGpus
        From :func:`labkit.hub.gpushare.read_lab`.
    """
    problems: list[str] = []
    for gpu in range(plan.gpus):
        found = [u for u in lab.mig if u.gpu_index == gpu]
        mine = sum(1 for u in found if u.profile == plan.profile.name)
        if any(u.gpu_index == gpu for u in lab.whole):
            problems.append(t("hub.plan.check.mig_off", gpu=gpu))
        elif mine != plan.per_gpu or len(found) != mine:
            problems.append(t("hub.plan.check.devices", gpu=gpu, found=mine,
                              profile=plan.profile.name, planned=plan.per_gpu,
                              other=len(found) - mine))
    gpus = {u.gpu_index for u in (*lab.whole, *lab.mig)}
    if len(gpus) < plan.gpus and not problems:
        problems.append(t("hub.plan.check.gpus", found=len(gpus), planned=plan.gpus))
    return problems


def _check_live(plan: ClassPlan) -> int:
    import labkit.gpu as gpu
    from labkit.hub.gpushare import read_lab

    status = gpu.status()
    if status.kind == "none":
        print(t("hub.share.nvml", reason=status.reason or ""), file=sys.stderr)
        return 2
    nv = gpu.connect()
    try:
        lab = read_lab(nv)
    except nv.NVMLError as err:
        print(t("hub.share.nvml", reason=str(err)), file=sys.stderr)
        return 2
    problems = check_lab(plan, lab)
    for line in problems:
        print(line)
    print(t("hub.plan.check.ok", name=status.name) if not problems else
          t("hub.plan.check.differs", count=len(problems)))
    return 0 if not problems else 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m labkit.hub plan",
        description="Propose the class's MIG layout (one MIG device per student) and write "
                    "the operator's mig-parted config and nvidia-smi commands.")
    p.add_argument("--students", type=int, required=True, help="students in the class")
    p.add_argument("--gpu", required=True, help="GPU model, e.g. H100-80GB, A100-40GB, A30")
    p.add_argument("--gpus", type=int, help="GPUs available (default: as few as needed)")
    p.add_argument("--profile", help="force a MIG profile, e.g. 1g.20gb")
    p.add_argument("--out", type=Path, help="directory for mig-parted.yaml and "
                                            "nvidia-smi-mig.sh")
    p.add_argument("--check", action="store_true",
                   help="compare the lab GPU's MIG devices with the plan (read-only; exit 1 "
                        "when they differ)")
    return p


def main_plan(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m labkit.hub plan``; return the exit status.

    0: done (and, with ``--check``, the lab matches); 1: ``--check`` found differences;
    2: bad input or the lab GPU cannot be read.
    """
    args = _parser().parse_args(argv)
    try:
        plan = plan_class(args.students, args.gpu, gpus=args.gpus, profile=args.profile)
    except ValueError as err:
        print(t("hub.plan.error", message=str(err)), file=sys.stderr)
        return 2
    print(plan_text(plan))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, text in operator_files(plan).items():
            path = args.out / name
            path.write_text(text, encoding="utf-8")
            if name.endswith(".sh"):  # the operator runs it as ./nvidia-smi-mig.sh
                path.chmod(0o755)
            print(t("hub.plan.wrote", path=str(path)))
        print(t("hub.plan.apply", path=str(args.out / "mig-parted.yaml"), label=plan.label))
    if args.check:
        return _check_live(plan)
    return 0


if __name__ == "__main__":
    sys.exit(main_plan())
