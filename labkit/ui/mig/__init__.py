"""Widgets for lesson 02, "GPU를 나눠 쓰기": the MIG board, exports, live lab GPU, sharing modes.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`board_app` — the GPU drawn as memory units with its compute slices; pick a model and a
  profile, click a start position; illegal moves explained; Free/Total and fragmentation live;
  presets;
- :func:`challenge_panel` — "seven students each need a 1g.10gb, one project a 3g": a target
  for the board, and why it does not fit on one GPU;
- :func:`export_panel` — ``nvidia-smi`` commands and the mig-parted config of the board (text to
  copy, or a download), and reading a config (or commands) back onto the board;
- :func:`live_panel` — the lab GPU's MIG state (real or simulated), refreshed; applying the
  board only where :func:`labkit.gpu.mig_live.apply_allowed` says so, otherwise the commands
  to copy;
- :func:`sharing_modes` — MIG vs MPS vs time-slicing (table);
- :func:`workload_app` — a class's jobs under whole-GPU FIFO, time-slicing, MPS and the board's
  MIG layout;
- :func:`case1_numbers`, :func:`layout_counts` — deterministic tables checked by nbval;
- :func:`exercises` — 문제 with answers computed by :mod:`labkit.mig`.

The numbers all come from :mod:`labkit.mig` and :mod:`labkit.sharing`.
"""

from __future__ import annotations

from labkit.ui.mig.board import (
    CHALLENGE,
    DEFAULT_MODEL,
    BoardApp,
    ChallengePanel,
    board_app,
    board_html,
    capacity_html,
    challenge_panel,
    fragmentation_html,
    mig_models,
)
from labkit.ui.mig.panels import (
    ExportPanel,
    LivePanel,
    export_panel,
    live_panel,
    state_html,
)
from labkit.ui.mig.sharing import (
    WorkloadApp,
    WorkloadView,
    case1_numbers,
    exercises,
    layout_counts,
    sharing_modes,
    workload_app,
)

__all__ = [
    "CHALLENGE",
    "DEFAULT_MODEL",
    "BoardApp",
    "ChallengePanel",
    "ExportPanel",
    "LivePanel",
    "WorkloadApp",
    "WorkloadView",
    "board_app",
    "board_html",
    "capacity_html",
    "case1_numbers",
    "challenge_panel",
    "exercises",
    "export_panel",
    "fragmentation_html",
    "layout_counts",
    "live_panel",
    "mig_models",
    "sharing_modes",
    "state_html",
    "workload_app",
]
