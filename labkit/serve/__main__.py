"""``python -m labkit.serve [--host H] [--port P] [--token T] [PATH]``: voila for a class."""

from __future__ import annotations

import argparse
import os

from labkit.serve import CONFIG_DIR, LOCAL_HOSTS, voila_command


def main() -> None:
    """Parse arguments, print where to connect, and exec voila from the config folder."""
    parser = argparse.ArgumentParser(prog="python -m labkit.serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8866)
    parser.add_argument("--token", default=os.environ.get("LABKIT_TOKEN"))
    parser.add_argument("path", nargs="?", default=None)
    args = parser.parse_args()
    from pathlib import Path

    argv, token = voila_command(args.host, args.port, args.token,
                                Path(args.path) if args.path else None)
    shown = "localhost" if args.host in LOCAL_HOSTS else args.host
    url = f"http://{shown}:{args.port}/" + (f"?token={token}" if token else "")
    print(f"labkit: serving the lessons at {url}", flush=True)
    os.chdir(CONFIG_DIR)  # voila loads voila.py from here, never from a student's folder
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
