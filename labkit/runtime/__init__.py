"""What runs inside a lesson's kernel, below the GPU layer: is this a voila page, and its guards.

- :mod:`labkit.runtime.voila` — :func:`running_under_voila` / :func:`forbid_under_voila`: the one
  detector that code which changes the machine (MIG apply, the nvidia-smi MIG verbs) asks first.
- :mod:`labkit.runtime.kernel` — :func:`harden_kernel` and :func:`session_dir`: the classroom
  guards ``labkit.ui.setup()`` switches on under voila.

``labkit.serve`` re-exports these for the serving side; lower layers (``labkit.gpu``) import them
from here, so nothing below ``labkit.ui`` reaches up into ``labkit.serve``.
"""

from __future__ import annotations

from labkit.runtime.voila import (
    VOILA_ENV_VARIABLES,
    VoilaForbiddenError,
    forbid_under_voila,
    running_under_voila,
)

__all__ = ["VOILA_ENV_VARIABLES", "VoilaForbiddenError", "forbid_under_voila",
           "running_under_voila"]
