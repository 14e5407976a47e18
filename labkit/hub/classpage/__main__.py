"""``python -m labkit.hub.classpage --port N``: the class page service (the hub starts it)."""

import sys

from labkit.hub.classpage.app import main

sys.exit(main())
