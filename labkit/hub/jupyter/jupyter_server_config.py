# Config of every student's single-user server (the spawner puts this folder on
# $JUPYTER_CONFIG_PATH). Everything is in labkit.hub.singleuser.configure (tested there).
from labkit.hub.singleuser_config import configure

configure(get_config())  # noqa: F821
