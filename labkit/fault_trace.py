"""Statistics of a per-node fault trace: rates per 1,000 node-days, repair times, burstiness.

Pure: a list of event mappings in, pandas tables out; no I/O (``labkit.data.reliability`` reads
the trace file). The event format is that of StepFun's InfiniteHBD fault trace
(github.com/stepfun-ai/InfiniteHBD-Trace, ``fault_trace.json``, Apache-2.0; paper: "InfiniteHBD",
arXiv 2502.03885, SIGCOMM 2025): one mapping per event with ``node_id``, ``event_time`` (days),
``event_type`` (``"fault_start"`` / ``"fault_end"``) and ``fault_type`` (``Level``, ``Class``,
``Desc``). The trace covers 400 GPU servers for 348 days.

The lesson ships the tables derived here (``data/reliability/stepfun_*.csv``), not the trace.

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from labkit import validate

__all__ = [
    "TRACE_DAYS",
    "TRACE_NODES",
    "fault_rates",
    "interarrival_stats",
    "pair_faults",
    "repair_days",
]

#: Servers and days the InfiniteHBD trace covers (its README: 400 randomly chosen GPU servers
#: of an LLM-pretraining cluster, 348 days from 2024-03-30).
TRACE_NODES = 400
TRACE_DAYS = 348.0

_PAIR_COLUMNS = ["node_id", "start_day", "end_day", "repair_days", "level", "class", "desc"]


def _event(e: Any, i: int) -> tuple[str, float, str, tuple[str, str, str]]:
    if not isinstance(e, Mapping):
        raise validate.InputError(f"events[{i}]", "other", e, f"events[{i}] must be a mapping")
    try:
        node = str(e["node_id"])
        kind = str(e["event_type"])
        ft = e["fault_type"]
        fault = (str(ft["Level"]), str(ft["Class"]), str(ft["Desc"]))
    except (KeyError, TypeError) as err:
        raise validate.InputError(
            f"events[{i}]", "other", e,
            f"events[{i}] needs node_id, event_time, event_type and fault_type "
            f"(Level, Class, Desc); missing {err}",
        ) from None
    time = validate.finite(f"events[{i}].event_time", e.get("event_time"))
    validate.one_of(f"events[{i}].event_type", kind, ("fault_start", "fault_end"))
    return node, time, kind, fault


def pair_faults(events: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Pair each ``fault_start`` with its ``fault_end``: one row per fault.

    Per node, in time order, an end closes the earliest open fault of the same fault type
    (Level, Class, Desc). Matching the type matters where a node has two faults open at once
    (two nodes in the InfiniteHBD trace): pairing by time order alone would close a GPU fault
    with a CPU fault's end.

    Parameters
    ----------
    events : iterable of mapping
        Trace events (see the module docstring). ``event_time`` in days.

    Returns
    -------
    pandas.DataFrame
        Columns ``node_id``, ``start_day``, ``end_day``, ``repair_days`` (end - start) [d],
        ``level``, ``class``, ``desc``; sorted by start time.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a malformed event, an end with no open fault of its type, or a fault never closed.
    """
    open_faults: dict[tuple[str, tuple[str, str, str]], list[float]] = defaultdict(list)
    rows: list[tuple[Any, ...]] = []
    parsed = [_event(e, i) for i, e in enumerate(events)]
    order = sorted(range(len(parsed)), key=lambda i: (parsed[i][1], parsed[i][2] != "fault_start"))
    for i in order:
        node, time, kind, fault = parsed[i]
        if kind == "fault_start":
            open_faults[(node, fault)].append(time)
            continue
        starts = open_faults.get((node, fault))
        if not starts:
            raise validate.InputError(
                f"events[{i}]", "other", node,
                f"events[{i}]: fault_end on node {node} at day {time} has no open {fault[1]!r} "
                "fault",
            )
        start = starts.pop(0)
        rows.append((node, start, time, time - start, *fault))
    left = [(node, fault) for (node, fault), starts in open_faults.items() if starts]
    if left:
        node, fault = left[0]
        raise validate.InputError("events", "other", node,
                                  f"{len(left)} fault(s) never end, e.g. {fault[1]!r} on {node}")
    frame = pd.DataFrame(rows, columns=_PAIR_COLUMNS)
    return frame.sort_values(["start_day", "node_id"], kind="stable").reset_index(drop=True)


def _rate(count: float, nodes: float, days: float) -> float:
    return 1000 * count / (nodes * days)


def fault_rates(
    pairs: pd.DataFrame, nodes: int = TRACE_NODES, days: float = TRACE_DAYS
) -> pd.DataFrame:
    """Return fault starts per 1,000 node-days by level and class, with totals.

    Parameters
    ----------
    pairs : pandas.DataFrame
        :func:`pair_faults` output (columns ``level``, ``class``).
    nodes : int, default 400
        Servers observed. Whole number >= 1.
    days : float, default 348
        Days observed. Must be > 0. [d]

    Returns
    -------
    pandas.DataFrame
        Columns ``level``, ``class`` (``"all"`` on total rows), ``fault_starts``,
        ``rate_per_1000_node_days`` = 1000 x count / (nodes x days); the overall total first,
        then each level's total followed by its classes, largest first.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For bad ``nodes``/``days``.
    """
    n = validate.integer("nodes", nodes, minimum=1)
    d = validate.positive("days", days)
    rows = [("all", "all", len(pairs))]
    levels = pairs.groupby("level").size().sort_values(ascending=False, kind="stable")
    for level, count in levels.items():
        rows.append((str(level), "all", int(count)))
        classes = (pairs[pairs["level"] == level].groupby("class").size()
                   .sort_values(ascending=False, kind="stable"))
        rows += [(str(level), str(c), int(k)) for c, k in classes.items()]
    frame = pd.DataFrame(rows, columns=["level", "class", "fault_starts"])
    frame["rate_per_1000_node_days"] = [_rate(c, n, d) for c in frame["fault_starts"]]
    return frame


def repair_days(pairs: pd.DataFrame) -> pd.DataFrame:
    """Return repair-time statistics (fault end - start), overall and per level.

    Quantiles use numpy's default (linear interpolation between order statistics).

    Parameters
    ----------
    pairs : pandas.DataFrame
        :func:`pair_faults` output.

    Returns
    -------
    pandas.DataFrame
        One row per group (``"all"`` first, then each level): ``group``, ``faults``,
        ``median_days``, ``mean_days``, ``p90_days``, ``max_days`` [d], ``zero_length``
        (faults that end when they start).
    """
    groups = [("all", pairs)] + [(str(k), g) for k, g in pairs.groupby("level")]
    rows = []
    for name, g in groups:
        d = g["repair_days"].to_numpy(dtype=float)
        rows.append((name, len(d), float(np.median(d)), float(d.mean()),
                     float(np.quantile(d, 0.9)), float(d.max()), int((d == 0).sum())))
    return pd.DataFrame(rows, columns=["group", "faults", "median_days", "mean_days", "p90_days",
                                       "max_days", "zero_length"])


def interarrival_stats(
    pairs: pd.DataFrame, nodes: int = TRACE_NODES, days: float = TRACE_DAYS
) -> pd.DataFrame:
    """Return how bursty the cluster's faults are, and how concentrated on a few nodes.

    Parameters
    ----------
    pairs : pandas.DataFrame
        :func:`pair_faults` output.
    nodes : int, default 400
        Servers observed. Whole number >= 1.
    days : float, default 348
        Days observed. Must be > 0. [d]

    Returns
    -------
    pandas.DataFrame
        Columns ``statistic``, ``value``, ``unit``. Statistics: ``mean_gap_days``,
        ``median_gap_days`` (gaps between consecutive fault starts anywhere in the cluster),
        ``gap_cv`` (standard deviation / mean of the gaps; 1 for a Poisson stream, larger when
        faults come in bursts), ``max_starts_same_time``, ``nodes_with_faults``,
        ``nodes_with_5_or_more``, ``max_faults_one_node``, ``top_10pct_nodes_share`` (share of
        faults on the 10 % of observed nodes with the most), ``unavailable_frac`` (node-days in
        a fault / all node-days).

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For bad ``nodes``/``days`` or fewer than 3 faults.
    """
    n = validate.integer("nodes", nodes, minimum=1)
    d = validate.positive("days", days)
    if len(pairs) < 3:
        raise validate.InputError("pairs", "other", len(pairs), "need at least 3 faults")
    starts = np.sort(pairs["start_day"].to_numpy(dtype=float))
    gaps = np.diff(starts)
    per_node = pairs.groupby("node_id").size().sort_values(ascending=False)
    top = max(1, round(0.1 * n))
    rows = [
        ("mean_gap_days", float(gaps.mean()), "d"),
        ("median_gap_days", float(np.median(gaps)), "d"),
        ("gap_cv", float(gaps.std() / gaps.mean()), "ratio"),
        ("max_starts_same_time", float(pd.Series(starts).value_counts().max()), "faults"),
        ("nodes_with_faults", float(len(per_node)), "nodes"),
        ("nodes_with_5_or_more", float((per_node >= 5).sum()), "nodes"),
        ("max_faults_one_node", float(per_node.max()), "faults"),
        ("top_10pct_nodes_share", float(per_node.iloc[:top].sum() / len(pairs)), "fraction"),
        ("unavailable_frac", float(pairs["repair_days"].sum() / (n * d)), "fraction"),
    ]
    return pd.DataFrame(rows, columns=["statistic", "value", "unit"])
