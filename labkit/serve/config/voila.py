# Voila configuration, loaded from this folder: labkit.serve starts voila here, a folder labkit
# controls, because voila executes any voila.py / voila.json in its working directory.
# Everything is in labkit.serve.server.configure (tested there): the guard for the denial of
# service in voila 0.5.13's binary-header parsing, kernel culling and the tab-close shutdown
# (voila#1458), labkit's template and gallery, and the caps on kernels and memory.
from labkit.serve.server import configure

configure(get_config())  # noqa: F821
