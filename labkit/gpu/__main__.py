"""``python -m labkit.gpu``: check the lab GPU before class, nvidia-smi style.

Examples::

    python -m labkit.gpu                      # like nvidia-smi -L (real GPU, else simulated)
    python -m labkit.gpu mig -lgip            # GPU-instance profiles (Free/Total, GiB, SM, ...)
    python -m labkit.gpu mig -lgipp -i 0      # possible placements of GPU 0
    python -m labkit.gpu mig -lgi             # GPU instances; -lci: compute instances
    python -m labkit.gpu --gpu sim:A30 mig -lgip   # a simulated A30 (same as LABKIT_GPU=sim:A30)

Changing MIG, spelled as nvidia-smi spells it (the simulated lab by default)::

    python -m labkit.gpu -i 0 -mig 1              # enable MIG mode on GPU 0 (0: disable)
    python -m labkit.gpu -i 0 -pm 0               # persistence mode off (1: on)
    python -m labkit.gpu mig -cgi 9,14,19,19 -C   # GPU instances (IDs or names) + default CIs
    python -m labkit.gpu mig -dci [-gi 1] [-ci 0] # destroy compute instances (all by default)
    python -m labkit.gpu mig -dgi [-gi 1]         # destroy GPU instances

With ``LABKIT_GPU=sim:<models>`` (or ``--gpu sim:...``) the change lands in the simulated lab
every process shares, so ``nvitop -1`` and ``gpustat`` in another shell show it. On a simulated
GPU with MIG disabled, ``-cgi`` enables MIG first (and says so). On a real GPU these verbs are
refused unless ``--allow-real-gpu-changes`` is given (then they call NVML as nvidia-smi does,
needing root); they are refused from a voila app and from a JupyterHub server (``JUPYTERHUB_*``
in the environment) whatever the flags. The first line on stderr says which GPU was used and,
for a simulated one, why the real one was not.
"""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType

from labkit.gpu import backend, smi, smi_mig

__all__ = ["main"]


#: Environment variables JupyterHub sets in every single-user server (jupyterhub/spawner.py).
HUB_ENV_PREFIX = "JUPYTERHUB_"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m labkit.gpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default="auto",
                        help="auto (default; $LABKIT_GPU overrides), real, or sim:<model>[,...]")
    parser.add_argument("-L", "--list-gpus", action="store_true", help="list GPUs (default)")
    parser.add_argument("-i", "--id", type=int, default=None, help="GPU index")
    parser.add_argument("-mig", type=int, choices=(0, 1), default=None, dest="set_mig",
                        help="disable (0) or enable (1) MIG mode")
    parser.add_argument("-pm", "--persistence-mode", type=int, choices=(0, 1), default=None,
                        dest="set_pm", help="disable (0) or enable (1) persistence mode")
    parser.add_argument("--allow-real-gpu-changes", action="store_true",
                        help="let -mig/-pm/-cgi/-dci/-dgi change a real GPU (needs root)")
    sub = parser.add_subparsers(dest="command")
    mig = sub.add_parser("mig", help="MIG tables and changes")
    table = mig.add_mutually_exclusive_group(required=True)
    for flag, text in (("-lgip", "GPU-instance profiles"), ("-lgipp", "possible placements"),
                       ("-lgi", "GPU instances"), ("-lci", "compute instances"),
                       ("-dci", "destroy compute instances"), ("-dgi", "destroy GPU instances")):
        table.add_argument(flag, dest="table", action="store_const", const=flag[1:], help=text)
    table.add_argument("-cgi", dest="cgi", default=None,
                       help="create GPU instances: profile IDs or names, comma-separated")
    mig.add_argument("-C", dest="default_ci", action="store_true",
                     help="with -cgi: also create each GI's default compute instance")
    mig.add_argument("-gi", dest="gi_ids", default=None, help="GPU instance IDs (-dci, -dgi)")
    mig.add_argument("-ci", dest="ci_ids", default=None, help="compute instance IDs (-dci)")
    mig.add_argument("-i", "--id", dest="mig_id", type=int, default=None, help="GPU index")
    return parser


def _ids(text: str | None) -> list[int] | None:
    return None if text is None else [int(x) for x in text.split(",") if x.strip()]


def _change_refused(kind: str, allow_real: bool) -> str | None:
    """Return why a MIG change may not run here, or None."""
    from labkit.runtime.voila import running_under_voila

    if running_under_voila():
        return "MIG changes are not allowed from a voila app"
    hub = sorted(k for k in os.environ if k.startswith(HUB_ENV_PREFIX))
    if hub:
        return f"MIG changes are not allowed from a JupyterHub server ({hub[0]} is set)"
    if kind != "sim" and not allow_real:
        return ("refusing to change a real GPU: pass --allow-real-gpu-changes (as root), or use "
                "a simulated lab (LABKIT_GPU=sim:<model>)")
    return None


def _change(nv: ModuleType, args: argparse.Namespace, gpu: int) -> list[str]:
    lines: list[str] = []
    if args.set_mig is not None:
        return smi_mig.set_mig_mode(nv, gpu, bool(args.set_mig))
    if args.set_pm is not None:
        return smi_mig.set_persistence_mode(nv, gpu, bool(args.set_pm))
    if args.cgi is not None:
        h = nv.nvmlDeviceGetHandleByIndex(gpu)
        if backend.status().kind == "sim" and nv.nvmlDeviceGetMigMode(h)[0] == 0:
            print(f"# simulated GPU {gpu}: MIG mode was disabled; enabling it first "
                  f"(nvidia-smi -i {gpu} -mig 1)", file=sys.stderr)
            lines += smi_mig.set_mig_mode(nv, gpu, True)[:-1]
        return lines + smi_mig.create_gpu_instances(nv, gpu, args.cgi, args.default_ci)
    if args.table == "dci":
        return smi_mig.destroy_compute_instances(nv, gpu, _ids(args.gi_ids), _ids(args.ci_ids))
    return smi_mig.destroy_gpu_instances(nv, gpu, _ids(args.gi_ids))


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit status (0, 1 on an NVML error, 2 when refused)."""
    args = _parser().parse_args(argv)
    if args.command == "mig" and args.mig_id is not None:
        args.id = args.mig_id
    changing = args.set_mig is not None or args.set_pm is not None or (
        args.command == "mig" and (args.cgi is not None or args.table in ("dci", "dgi")))

    import pynvml

    try:
        shared = True if args.gpu.startswith("sim") else None
        nv = backend.connect(args.gpu, shared=shared)
    except (pynvml.NVMLError, ValueError, PermissionError) as err:
        print(f"labkit.gpu: cannot use the GPU ({args.gpu}): {err}", file=sys.stderr)
        return 1
    st = backend.status()
    note = f" (real GPU not used: {st.reason})" if st.reason else ""
    print(f"# lab GPU: {st.kind} [{st.spec}] {st.name}, driver {st.driver_version}, "
          f"NVML {st.nvml_version}{note}", file=sys.stderr)
    if args.id is not None and not 0 <= args.id < nv.nvmlDeviceGetCount():
        print(f"labkit.gpu: no GPU {args.id}", file=sys.stderr)
        return 1
    if changing:
        refused = _change_refused(st.kind, args.allow_real_gpu_changes)
        if refused:
            print(f"labkit.gpu: {refused}", file=sys.stderr)
            return 2
        if st.kind == "sim" and not st.shared:
            print("# note: this simulated lab is private to this command and its change ends "
                  "with it; set LABKIT_GPU=sim:<model> so every process shares one lab",
                  file=sys.stderr)
        try:
            print("\n".join(_change(nv, args, 0 if args.id is None else args.id)))
        except smi_mig.SmiError as err:
            print(err)
            return err.status
        except pynvml.NVMLError as err:
            print(f"labkit.gpu: NVML error: {err} ({type(err).__name__})", file=sys.stderr)
            return 1
        return 0
    try:
        if args.command == "mig":
            render = {"lgip": smi.lgip, "lgipp": smi.lgipp, "lgi": smi.lgi, "lci": smi.lci}
            print(render[args.table](nv, args.id))
        else:
            print(smi.list_gpus(nv))
    except pynvml.NVMLError as err:
        print(f"labkit.gpu: NVML error: {err} ({type(err).__name__})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
