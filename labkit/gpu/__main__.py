"""``python -m labkit.gpu``: check the lab GPU before class, nvidia-smi style.

Examples::

    python -m labkit.gpu                      # like nvidia-smi -L (real GPU, else simulated)
    python -m labkit.gpu mig -lgip            # GPU-instance profiles (Free/Total, GiB, SM, ...)
    python -m labkit.gpu mig -lgipp -i 0      # possible placements of GPU 0
    python -m labkit.gpu mig -lgi             # GPU instances; -lci: compute instances
    python -m labkit.gpu --gpu sim:A30 mig -lgip   # a simulated A30 (same as LABKIT_GPU=sim:A30)

Reads only: nothing here changes a GPU setting. The first line on stderr says which GPU was used
and, for a simulated one, why the real one was not.
"""

from __future__ import annotations

import argparse
import sys

from labkit.gpu import backend, smi

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit status (0, or 1 on an NVML error)."""
    parser = argparse.ArgumentParser(prog="python -m labkit.gpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default="auto",
                        help="auto (default; $LABKIT_GPU overrides), real, or sim:<model>[,...]")
    parser.add_argument("-L", "--list-gpus", action="store_true", help="list GPUs (default)")
    sub = parser.add_subparsers(dest="command")
    mig = sub.add_parser("mig", help="MIG tables")
    table = mig.add_mutually_exclusive_group(required=True)
    for flag, text in (("-lgip", "GPU-instance profiles"), ("-lgipp", "possible placements"),
                       ("-lgi", "GPU instances"), ("-lci", "compute instances")):
        table.add_argument(flag, dest="table", action="store_const", const=flag[1:], help=text)
    mig.add_argument("-i", "--id", type=int, default=None, help="GPU index")
    args = parser.parse_args(argv)

    import pynvml

    try:
        nv = backend.connect(args.gpu)
    except (pynvml.NVMLError, ValueError) as err:
        print(f"labkit.gpu: cannot use the GPU ({args.gpu}): {err}", file=sys.stderr)
        return 1
    st = backend.status()
    note = f" (real GPU not used: {st.reason})" if st.reason else ""
    print(f"# lab GPU: {st.kind} [{st.spec}] {st.name}, driver {st.driver_version}, "
          f"NVML {st.nvml_version}{note}", file=sys.stderr)
    try:
        if args.command == "mig":
            if args.id is not None and not 0 <= args.id < nv.nvmlDeviceGetCount():
                print(f"labkit.gpu: no GPU {args.id}", file=sys.stderr)
                return 1
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
