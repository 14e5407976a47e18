"""Servers and racks for a demand, and when "3x faster" means a third of the racks.

Pure. Course notes, "3배 성능 = 랙 수 1/3이 성립하려면".

Used in: notebooks/06_benchmarks.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from labkit import validate

# -- "3x faster = a third of the racks" ---------------------------------------------------------

def _ceil(x: float) -> int:
    """Ceiling that treats float noise next to a whole number (3.0000000001) as that number."""
    n = round(x)
    return int(n) if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else math.ceil(x)


def _floor(x: float) -> int:
    """Floor with the same tolerance as :func:`_ceil`."""
    n = round(x)
    return int(n) if abs(x - n) <= 1e-9 * max(1.0, abs(x)) else math.floor(x)


class RackPlan(NamedTuple):
    """Servers and racks for a demand (see :func:`servers_and_racks`).

    Used in: notebooks/06_benchmarks.ipynb
    """

    servers: int
    racks: int
    provisioned_kw: float


def servers_and_racks(demand_tokens_per_s: float, tokens_per_s_per_server: float,
                      server_kw: float, rack_kw: float) -> RackPlan:
    """Return the servers and racks a demand needs under a rack power limit.

    ``servers = ceil(demand / throughput)``; a rack holds ``floor(rack_kw / server_kw)``
    servers; ``racks = ceil(servers / per rack)``; provisioned power = servers x server_kw.

    Parameters
    ----------
    demand_tokens_per_s : float
        Peak demand to serve, >= 0. [tokens/s]
    tokens_per_s_per_server : float
        What one server sustains on this workload, > 0. [tokens/s]
    server_kw : float
        One server's maximum power, > 0 and <= ``rack_kw``. [kW]
    rack_kw : float
        Power (and cooling) a rack can supply, > 0 (enterprise average < 8-10 kW; air-cooled
        H100/H200 racks 20-40 kW; Uptime Institute survey 2024). [kW]

    Returns
    -------
    RackPlan
        (servers, racks, provisioned kW); (0, 0, 0.0) for no demand.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, negative demand, throughput or power <= 0, or a server that
        needs more power than a rack supplies.

    Used in: notebooks/06_benchmarks.ipynb
    """
    demand = validate.non_negative("demand_tokens_per_s", demand_tokens_per_s)
    tps = validate.positive("tokens_per_s_per_server", tokens_per_s_per_server)
    rack = validate.positive("rack_kw", rack_kw)
    kw = validate.at_most("server_kw", validate.positive("server_kw", server_kw), rack,
                          "rack_kw")
    servers = max(_ceil(demand / tps), 1) if demand > 0 else 0
    per_rack = _floor(rack / kw)
    racks = math.ceil(servers / per_rack)
    return RackPlan(servers, racks, servers * kw)


@dataclass(frozen=True)
class RackCondition:
    """One of the four conditions of "3x faster = a third of the racks", evaluated.

    Used in: notebooks/06_benchmarks.ipynb
    """

    key: str
    ok: bool
    values: Mapping[str, Any]


@dataclass(frozen=True)
class RackClaimCheck:
    """The result of :func:`rack_claim_check`.

    Used in: notebooks/06_benchmarks.ipynb
    """

    old: RackPlan
    new: RackPlan
    claimed_speedup: float
    effective_speedup: float
    target_racks: int
    conditions: tuple[RackCondition, ...]

    @property
    def rack_ratio(self) -> float:
        """New racks / old racks (nan without demand). [unitless]"""
        return self.new.racks / self.old.racks if self.old.racks else math.nan

    @property
    def verdict(self) -> str:
        """``"holds"`` (a third of the racks, all four conditions met), ``"partly"`` (fewer
        racks, but not the claimed cut or not every condition) or ``"fails"`` (no fewer racks).
        """
        if self.new.racks <= self.target_racks and all(c.ok for c in self.conditions):
            return "holds"
        if self.new.racks < self.old.racks:
            return "partly"
        return "fails"


RACK_CONDITIONS = ("workload", "power", "demand", "bottleneck")
"""The four conditions (course notes, "3배 성능 = 랙 수 1/3이 성립하려면")."""


def rack_claim_check(
    demand_tokens_per_s: float,
    old_tokens_per_s_per_server: float,
    old_server_kw: float,
    new_server_kw: float,
    rack_kw: float,
    *,
    claimed_speedup: float = 3.0,
    workload_speedup: float | None = None,
    feed_limit_tokens_per_s_per_server: float | None = None,
    tolerance: float = 0.05,
) -> RackClaimCheck:
    """Check "N times faster, so 1/N of the racks" for a demand, condition by condition.

    Conditions (:data:`RACK_CONDITIONS`):

    1. ``workload`` — the speed-up holds on my workload: ``workload_speedup >= claimed x
       (1 - tolerance)``;
    2. ``power`` — server (hence rack) power did not grow: ``new_kw <= old_kw x (1 +
       tolerance)``; otherwise fewer servers fit per rack and energy per token falls less;
    3. ``demand`` — there is demand to fill it: the old fleet has at least ``claimed_speedup``
       servers (one box stays one box, whatever its speed);
    4. ``bottleneck`` — storage, network or host can feed the faster server: its throughput
       ``old x workload_speedup`` is at most ``feed_limit_tokens_per_s_per_server``.

    The new server's throughput is ``old x workload_speedup``, capped at the feed limit.

    Parameters
    ----------
    demand_tokens_per_s : float
        Peak demand, >= 0. [tokens/s]
    old_tokens_per_s_per_server, old_server_kw : float
        Today's server: throughput (> 0) [tokens/s] and power (> 0) [kW].
    new_server_kw : float
        The faster server's power, > 0. [kW]
    rack_kw : float
        Rack power limit, > 0, at least each server's power. [kW]
    claimed_speedup : float, default 3.0
        The advertised speed-up, >= 1. [unitless]
    workload_speedup : float, optional
        The speed-up measured on my workload, > 0; defaults to the claim. [unitless]
    feed_limit_tokens_per_s_per_server : float, optional
        Most tokens/s the rest of the system can feed one server, > 0; None = no limit.
        [tokens/s]
    tolerance : float, default 0.05
        Slack for conditions 1 and 2, in [0, 1). [fraction]

    Returns
    -------
    RackClaimCheck
        Old and new :class:`RackPlan`, the racks the claim promises (``ceil(old / N)``), the
        conditions and a verdict.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for any bad value (see :func:`servers_and_racks`).

    Used in: notebooks/06_benchmarks.ipynb
    """
    claimed = validate.at_least("claimed_speedup", claimed_speedup, 1.0)
    workload = (claimed if workload_speedup is None
                else validate.positive("workload_speedup", workload_speedup))
    tol = validate.finite("tolerance", tolerance)
    if not 0 <= tol < 1:
        raise validate.InputError("tolerance", "fraction", tolerance,
                                  f"tolerance must be in [0, 1), got {tolerance!r}",
                                  limit="[0, 1)")
    old_tps = validate.positive("old_tokens_per_s_per_server", old_tokens_per_s_per_server)
    rack = validate.positive("rack_kw", rack_kw)
    for name, value in (("old_server_kw", old_server_kw), ("new_server_kw", new_server_kw)):
        validate.at_most(name, validate.positive(name, value), rack, "rack_kw")
    feed = (None if feed_limit_tokens_per_s_per_server is None
            else validate.positive("feed_limit_tokens_per_s_per_server",
                                   feed_limit_tokens_per_s_per_server))
    wanted_tps = old_tps * workload
    new_tps = min(wanted_tps, feed) if feed is not None else wanted_tps
    old = servers_and_racks(demand_tokens_per_s, old_tps, old_server_kw, rack_kw)
    new = servers_and_racks(demand_tokens_per_s, new_tps, new_server_kw, rack_kw)
    old_kw = validate.positive("old_server_kw", old_server_kw)
    new_kw = validate.positive("new_server_kw", new_server_kw)
    per_rack_old = _floor(rack_kw / old_kw)
    per_rack_new = _floor(rack_kw / new_kw)
    power_ratio = new_kw / old_kw
    effective = new_tps / old_tps
    demand = validate.non_negative("demand_tokens_per_s", demand_tokens_per_s)
    conditions = (
        RackCondition("workload", workload >= claimed * (1 - tol),
                      {"claimed": claimed, "workload": workload}),
        RackCondition("power", new_kw <= old_kw * (1 + tol),
                      {"old_kw": old_kw, "new_kw": new_kw, "power_ratio": power_ratio,
                       "tokens_per_kw_gain": effective / power_ratio,
                       "per_rack_old": per_rack_old, "per_rack_new": per_rack_new}),
        RackCondition("demand", old.servers >= claimed,
                      {"old_servers": old.servers, "new_servers": new.servers,
                       "claimed": claimed,
                       "new_utilization": (demand / (new.servers * new_tps)
                                           if new.servers else 0.0)}),
        RackCondition("bottleneck", feed is None or wanted_tps <= feed,
                      {"wanted_tokens_per_s": wanted_tps, "feed_limit": feed,
                       "effective_tokens_per_s": new_tps}),
    )
    return RackClaimCheck(old, new, claimed, effective, _ceil(old.racks / claimed),
                          conditions)
