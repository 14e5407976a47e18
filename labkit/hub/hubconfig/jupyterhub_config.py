# JupyterHub config of the class hub: `python -m labkit.hub serve` starts
# `jupyterhub -f <this file>`; everything is in labkit.hub.config.configure (tested there).
from labkit.hub.config import configure

configure(get_config())  # noqa: F821
