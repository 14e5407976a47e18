"""MIG devices as their own series: split a tidy frame's ``<key>@mig:<tag>`` metrics out.

The readers keep a MIG device's readings on its parent GPU under a suffixed metric name
(``labkit.data.observe``): dcgm-exporter's ``GPU_I_PROFILE`` / ``GPU_I_ID`` labels give
``gr_engine_active_frac@mig:1g.10gb:7``; ``nvidia-smi dmon``'s MIG rows give
``gpu_util_frac@mig:gi1:ci0``. A dashboard needs each MIG device as a series of its own (a GPU
choice with plain metric names), which :func:`split_mig_series` returns.

Pure: pandas only.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

__all__ = ["MIG_MARK", "SeriesId", "split_mig_series"]

#: What the readers put between a metric's key and a MIG device's tag.
MIG_MARK = "@mig:"
#: A MIG profile name as NVIDIA writes it ("1g.10gb", "1c.2g.20gb", "1g.10gb+me"; go-nvlib).
_PROFILE = re.compile(r"^(?:\d+c\.)?\d+g\.\d+gb(?:\+\w+)?$")


@dataclass(frozen=True)
class SeriesId:
    """One series of a split frame: a whole GPU, or a MIG device on it.

    Attributes
    ----------
    index : int
        The series' number in the split frame's ``gpu`` column.
    gpu : int
        The parent GPU's index (as in the log).
    profile : str or None
        MIG profile ("1g.10gb"), None for a whole GPU or when the log does not name it.
    gi_id, ci_id : int or None
        GPU instance and compute instance IDs, when the log names them.
    """

    index: int
    gpu: int
    profile: str | None = None
    gi_id: int | None = None
    ci_id: int | None = None

    @property
    def is_mig(self) -> bool:
        """Whether this is a MIG device (not a whole GPU)."""
        return self.profile is not None or self.gi_id is not None or self.ci_id is not None


def _parse_tag(tag: str) -> tuple[str | None, int | None, int | None]:
    """Return (profile, gi_id, ci_id) of a tag: "1g.10gb:7", "gi1:ci0", "7", "1g.10gb"."""
    profile = gi = ci = None
    for part in tag.split(":"):
        if _PROFILE.match(part):
            profile = part
        elif part.startswith("gi") and part[2:].isdigit():
            gi = int(part[2:])
        elif part.startswith("ci") and part[2:].isdigit():
            ci = int(part[2:])
        elif part.isdigit():
            gi = int(part)
    return profile, gi, ci


def split_mig_series(frame: pd.DataFrame) -> tuple[pd.DataFrame, tuple[SeriesId, ...]]:
    """Return ``frame`` with every MIG device as its own ``gpu`` series, and the series.

    Rows whose metric is ``<key>@mig:<tag>`` move to a new series number (after the highest GPU
    index, in order of parent GPU then tag) with the metric ``<key>``; other rows keep their
    GPU. A frame without MIG rows comes back unchanged.

    Parameters
    ----------
    frame : pandas.DataFrame
        A tidy frame (:data:`labkit.observe.FRAME_COLUMNS`).

    Returns
    -------
    (pandas.DataFrame, tuple of SeriesId)
        The split frame and its series, whole GPUs first, in ``index`` order.
    """
    metric = frame["metric"].astype(str)
    is_mig = metric.str.contains(MIG_MARK, regex=False)
    whole = tuple(SeriesId(int(g), int(g)) for g in sorted(frame.loc[~is_mig, "gpu"].unique()))
    if not is_mig.any():
        return frame, whole
    parts = metric[is_mig].str.split(MIG_MARK, n=1, expand=True)
    pairs = sorted({(int(g), str(tag)) for g, tag in zip(frame.loc[is_mig, "gpu"], parts[1],
                                                         strict=True)},
                   key=lambda p: (p[0], _sort_key(p[1])))
    first = int(frame["gpu"].max()) + 1
    number = {pair: first + k for k, pair in enumerate(pairs)}
    out = frame.copy()
    # the readers store ``gpu`` as a narrow integer and ``metric`` as a categorical (memory);
    # the new series numbers and plain metric names need room of their own
    out["gpu"] = out["gpu"].astype("int64")
    out["metric"] = metric
    out.loc[is_mig, "gpu"] = [number[(int(g), str(tag))] for g, tag in
                              zip(frame.loc[is_mig, "gpu"], parts[1], strict=True)]
    out.loc[is_mig, "metric"] = parts[0].to_numpy()
    mig = tuple(SeriesId(number[(g, tag)], g, *_parse_tag(tag)) for g, tag in pairs)
    return out, whole + mig


def _sort_key(tag: str) -> tuple[int, int, str]:
    _, gi, ci = _parse_tag(tag)
    return (gi if gi is not None else -1, ci if ci is not None else -1, tag)
