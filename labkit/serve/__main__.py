"""``python -m labkit.serve``: the lessons as voila apps for a class (``make present``).

    python -m labkit.serve [--port P] [--theme light|dark] [--lesson NN ...] [--warm N]
                           [--max-kernels N] [PATH]

The teacher's own screen: voila on 127.0.0.1 only. ``--lesson 03 --warm 2`` keeps two kernels of
lesson 03 preheated, so the app appears without waiting for the notebook to run. A class works
on the class hub (``make hub``), every student on their own server.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from labkit.serve import (
    CONFIG_DIR,
    THEMES,
    notebooks_dir,
    serve_environment,
    voila_command,
)

DEFAULT_WARM = 2


def resolve_lessons(root: Path, wanted: list[str]) -> list[str]:
    """Return the notebooks in ``root`` for lesson numbers or names (``03``, ``03_goodput``).

    Raises
    ------
    SystemExit
        If one matches no notebook (the message lists those present).
    """
    present = sorted(p.name for p in root.glob("[0-9][0-9]_*.ipynb"))
    names = []
    for item in wanted:
        key = item.removesuffix(".ipynb")
        match = [n for n in present if n.removesuffix(".ipynb") == key or n[:2] == key.zfill(2)]
        if not match:
            raise SystemExit(f"labkit: no lesson {item!r} in {root} "
                             f"(present: {', '.join(present)})")
        names.append(match[0])
    return names


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, print where to connect, and exec voila from the config folder."""
    parser = argparse.ArgumentParser(prog="python -m labkit.serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8866)
    parser.add_argument("--theme", choices=THEMES, default=os.environ.get("LABKIT_THEME", "light"))
    parser.add_argument("--lesson", action="append", default=[],
                        help="lesson of the day (number or name; repeatable): kept preheated")
    parser.add_argument("--warm", type=int, default=None,
                        help=f"preheated kernels per --lesson (default {DEFAULT_WARM})")
    parser.add_argument("--max-kernels", type=int, default=None,
                        help="kernels at once, warm ones included (default 40)")
    parser.add_argument("--max-memory-mib", type=int, default=None,
                        help="no new page above this server+kernels memory (default 75%% of RAM)")
    parser.add_argument("--kernel-memory-mib", type=int, default=None,
                        help="address-space cap of each kernel (default 2048)")
    parser.add_argument("path", nargs="?", default=None)
    args = parser.parse_args(argv)

    root = Path(args.path).resolve() if args.path else notebooks_dir()
    lessons = resolve_lessons(root, [x for item in args.lesson for x in item.split(",") if x])
    warm_n = DEFAULT_WARM if args.warm is None else args.warm
    warm = {name: warm_n for name in lessons}
    max_kernels = args.max_kernels
    if max_kernels is None and warm:
        max_kernels = max(40, sum(warm.values()) + 10)
    env = serve_environment(theme=args.theme, max_kernels=max_kernels,
                            max_memory_mib=args.max_memory_mib,
                            kernel_memory_mib=args.kernel_memory_mib)
    command = voila_command(args.port, root, theme=args.theme, warm=warm)
    print(f"labkit: serving the lessons at http://localhost:{args.port}/ (this machine only; "
          "a class uses `make hub`)", flush=True)
    for name in lessons:
        print(f"labkit: lesson {name} ({warm_n} warm kernels) at "
              f"http://localhost:{args.port}/voila/render/{name}", flush=True)
    if warm:
        print("labkit: preheating; the apps are ready when voila logs "
              "'Kernel pool of ... is filled'", flush=True)
    os.environ.update(env)
    # voila's kernel_pools_config has no non-JSON command-line form; traitlets warns about it
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning:traitlets.traitlets")
    os.chdir(CONFIG_DIR)  # voila loads voila.py from here, never from a student's folder
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
