"""``nvidia-smi mig`` commands for a MIG layout, and layouts read back from such commands.

Pure (text in, text out; nothing is run).

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import re

from labkit import validate
from labkit.gpumodels import GpuModel
from labkit.mig.layout import Layout, PlacementCheck, _size_order
from labkit.mig.placement import PlacementError
from labkit.validate import InputError

__all__ = ["CommandPlacementError", "from_nvidia_smi", "to_nvidia_smi"]


class CommandPlacementError(PlacementError):
    """A ``-cgi`` profile tuple that does not fit where the commands put it.

    Attributes
    ----------
    rule : str
        The :class:`~labkit.mig.placement.PlacementError` rule.
    line : int
        The line of the text (1-based).
    item : str
        The tuple (``"9:4"``, ``"3g.20gb"``).
    check : PlacementCheck
        Why it does not fit, on the layout built so far (``labkit.ui.mig_explain`` words it).
    """

    def __init__(self, rule: str, message: str, *, line: int, item: str,
                 check: PlacementCheck) -> None:
        super().__init__(rule, message)
        self.line = line
        self.item = item
        self.check = check


def to_nvidia_smi(layout: Layout, gpu: int = 0, *, sudo: bool = True) -> str:
    """Return the ``nvidia-smi`` commands that build ``layout`` on GPU ``gpu``.

    Enable MIG, then one ``nvidia-smi mig -cgi <profile ID>:<start> -C`` per GI (the GI at an
    explicit placement plus its default compute instance), largest first. With explicit
    placements the creation order cannot make a step fail (NVIDIA MIG user guide, "Instance
    Geometry": only creation *without* placements depends on the order). Start from a GPU
    with no GIs (``nvidia-smi mig -dci`` then ``-dgi`` remove existing ones).

    Parameters
    ----------
    layout : Layout
    gpu : int, default 0
        The GPU index (``-i``).
    sudo : bool, default True
        Prefix each command with ``sudo`` (MIG changes need root; NVML "Requires root").

    References
    ----------
    .. [1] ``nvidia-smi mig -h``: ``-cgi`` takes profile tuples, "a profile name or ID and an
       optional placement specifier, which consists of a colon and a placement start index".

    Used in: notebooks/02_mig.ipynb
    """
    index = validate.integer("gpu", gpu)
    pre = "sudo " if sudo else ""
    lines = [f"{pre}nvidia-smi -i {index} -mig 1"]
    for gi in sorted(layout.instances, key=_size_order):
        lines.append(f"{pre}nvidia-smi mig -i {index} -cgi {gi.profile.id}:{gi.start} -C")
    return "\n".join(lines)


_CGI = re.compile(r"^(?:sudo\s+)?nvidia-smi\s+mig\s+(?P<args>.*)$")


def from_nvidia_smi(text: str, model: GpuModel | str) -> Layout:
    """Return the layout that ``nvidia-smi mig -cgi`` commands in ``text`` build.

    Reads ``-cgi`` profile tuples (ID or name, optional ``:start``; comma-separated); a tuple
    without a start goes where the driver would put it. ``-dgi`` (destroy all) empties the
    layout; other lines (``-mig 1``, ``-dci``, comments) are skipped.

    Raises
    ------
    InputError
        ``nvidia_smi`` (rule ``other``) for a line it cannot read.
    CommandPlacementError
        If a GI does not fit (a :class:`PlacementError` with the line and the check).

    Used in: notebooks/02_mig.ipynb
    """
    if not isinstance(text, str) or len(text) > 20_000:
        raise InputError("nvidia_smi", "other", "...", "expected at most 20,000 characters")
    layout = Layout(model)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        match = _CGI.match(line)
        if not match:
            continue
        args = match.group("args").split()
        if "-dgi" in args:
            layout.clear()
            continue
        for flag in ("-cgi", "--create-gpu-instance"):
            if flag in args:
                pos = args.index(flag)
                if pos + 1 >= len(args):
                    raise InputError("nvidia_smi", "other", raw,
                                     f"line {number}: {flag} needs a profile list")
                for item in args[pos + 1].split(","):
                    profile, _, start = item.partition(":")
                    key: str | int = int(profile) if profile.isdigit() else profile
                    if start and not start.isdigit():
                        raise InputError("nvidia_smi", "other", raw,
                                         f"line {number}: bad placement {item!r}")
                    begin = int(start) if start else None
                    try:
                        layout.place(key, begin)
                    except PlacementError as err:  # the UI words the check
                        raise CommandPlacementError(
                            err.rule, f"line {number} ({item}): {err}", line=number,
                            item=item, check=layout.check(key, begin)) from err
    return layout


