"""Lesson 05's inputs as one :class:`BreakEvenScenario` and the one-at-a-time sensitivity table.

Pure.

Used in: notebooks/05_break_even.ipynb
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import pandas as pd

from labkit import validate
from labkit.economics.break_even import break_even_tokens_per_month, break_even_utilization
from labkit.economics.cost import OwnedCluster, usd_to_krw

# -- what moves the break-even: lesson inputs and one-at-a-time sensitivity ----------------------

#: The owned cluster's inputs (every :class:`OwnedCluster` field but the KRW server price, which a
#: scenario derives from its USD price).
CLUSTER_INPUTS: tuple[str, ...] = tuple(
    f.name for f in fields(OwnedCluster) if f.name not in ("server_capex_krw", "_"))
#: Lesson 05's own inputs, in the units the lesson shows (money in USD where the lesson says so).
LESSON_INPUTS = ("server_capex_usd", "fx_krw_per_usd", "api_price_usd_per_m",
                 "tokens_per_s_per_gpu", "derate")
#: Every input of a :class:`BreakEvenScenario` by name (what :func:`sensitivity` may vary).
SCENARIO_INPUTS = LESSON_INPUTS + CLUSTER_INPUTS


@dataclass(frozen=True)
class BreakEvenScenario:
    """Lesson 05's inputs: an owned cluster priced in USD, an API price and a throughput.

    USD is converted to KRW here, once: the scenario's cluster is ``owned`` with its server
    priced at ``server_capex_usd x fx_krw_per_usd``.

    Parameters
    ----------
    server_capex_usd : float
        One server's price. >= 0. [USD]
    fx_krw_per_usd : float
        Exchange rate, > 0. [KRW/USD]
    api_price_usd_per_m : float
        API price per 1M tokens (blended), >= 0. [USD]
    tokens_per_s_per_gpu : float
        Benchmark throughput per GPU, > 0. [tokens/s]
    derate : float
        Share of the benchmark throughput reached on the real workload, in (0, 1]. [fraction]
    owned : OwnedCluster
        The cluster's other inputs (:data:`CLUSTER_INPUTS`); its ``server_capex_krw`` is
        replaced by the converted USD price.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field, for any value outside its range.

    See Also
    --------
    BreakEvenScenario.from_inputs : the same from flat keyword inputs (:data:`SCENARIO_INPUTS`).

    Used in: notebooks/05_break_even.ipynb
    """

    server_capex_usd: float
    fx_krw_per_usd: float
    api_price_usd_per_m: float
    tokens_per_s_per_gpu: float
    derate: float
    owned: OwnedCluster

    def __post_init__(self) -> None:
        capex = validate.non_negative("server_capex_usd", self.server_capex_usd)
        fx = validate.positive("fx_krw_per_usd", self.fx_krw_per_usd)
        validate.non_negative("api_price_usd_per_m", self.api_price_usd_per_m)
        validate.positive("tokens_per_s_per_gpu", self.tokens_per_s_per_gpu)
        validate.fraction("derate", self.derate)
        if not isinstance(self.owned, OwnedCluster):
            raise validate.InputError("owned", "other", self.owned, "owned must be an OwnedCluster")
        krw = usd_to_krw(capex, fx)
        if self.owned.server_capex_krw != krw:
            object.__setattr__(self, "owned", replace(self.owned, server_capex_krw=krw))

    @classmethod
    def from_inputs(cls, **inputs: Any) -> BreakEvenScenario:
        """Return the scenario from every input by name (:data:`SCENARIO_INPUTS`).

        Cluster inputs with a default in :class:`OwnedCluster` may be left out.

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            For an unknown name (rule ``choice``), a missing lesson input (rule ``required``),
            or a value outside its field's range.
        """
        for name in inputs:
            validate.one_of("parameter", name, SCENARIO_INPUTS)
        for name in LESSON_INPUTS:
            if name not in inputs:
                raise validate.InputError(name, "required", None, f"{name} is required")
        lesson = {n: inputs[n] for n in LESSON_INPUTS}
        cluster = {n: v for n, v in inputs.items() if n in CLUSTER_INPUTS}
        capex = usd_to_krw(validate.non_negative("server_capex_usd", lesson["server_capex_usd"]),
                           validate.positive("fx_krw_per_usd", lesson["fx_krw_per_usd"]))
        return cls(**lesson, owned=OwnedCluster(capex, **cluster))

    def input(self, name: str) -> Any:
        """Return the input ``name`` (one of :data:`SCENARIO_INPUTS`), in its own unit."""
        validate.one_of("parameter", name, SCENARIO_INPUTS)
        return getattr(self if name in LESSON_INPUTS else self.owned, name)

    def with_input(self, name: str, value: Any) -> BreakEvenScenario:
        """Return the scenario with one input replaced (validated by its field).

        Raises
        ------
        labkit.validate.InputError (a ValueError)
            For an unknown name (rule ``choice``), or a value outside the field's range.
        """
        validate.one_of("parameter", name, SCENARIO_INPUTS)
        if name in LESSON_INPUTS:
            return replace(self, **{name: value})
        return replace(self, owned=replace(self.owned, **{name: value}))

    def cluster(self) -> OwnedCluster:
        """Return the owned cluster, capex converted to KRW at ``fx_krw_per_usd``."""
        return self.owned

    @property
    def api_price_krw_per_m(self) -> float:
        """The API price converted at ``fx_krw_per_usd``. [KRW per 1M tokens]"""
        return usd_to_krw(self.api_price_usd_per_m, self.fx_krw_per_usd)

    def break_even_tokens_per_month(self) -> float:
        """N* for this scenario (see :func:`break_even_tokens_per_month`). [tokens per month]"""
        return break_even_tokens_per_month(self.cluster(), self.api_price_krw_per_m,
                                           self.tokens_per_s_per_gpu, self.derate)

    def break_even_utilization(self) -> float:
        """u* for this scenario (see :func:`break_even_utilization`). [fraction]"""
        return break_even_utilization(self.cluster(), self.api_price_krw_per_m,
                                      self.tokens_per_s_per_gpu, self.derate)


def _scenario_break_even(s: BreakEvenScenario) -> float:
    return s.break_even_tokens_per_month()


def sensitivity(
    base: BreakEvenScenario,
    ranges: Mapping[str, tuple[float, float]],
    metric: Callable[[BreakEvenScenario], float] = _scenario_break_even,
) -> pd.DataFrame:
    """Return a one-at-a-time sensitivity table (the data of a tornado chart).

    Each named input is set to its low and then its high value, all others kept at ``base``,
    and ``metric`` is evaluated (by default the break-even tokens per month).

    Parameters
    ----------
    base : BreakEvenScenario
        The scenario every row starts from.
    ranges : mapping of str to (float, float)
        Scenario input name (:data:`SCENARIO_INPUTS`) -> (low, high) values, in the input's own
        unit.
    metric : callable, optional
        Scenario -> number; default :meth:`BreakEvenScenario.break_even_tokens_per_month`.

    Returns
    -------
    pandas.DataFrame
        Columns ``parameter``, ``low``, ``high``, ``result_low``, ``result_high`` (the metric's
        unit; may be ``inf``), ``swing`` = |result_high - result_low| (``inf`` if either end is
        infinite and the other is not), sorted by swing, largest first; ``attrs["base"]``
        holds the metric at ``base``.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        If a name is not a scenario field (rule ``choice``), or a low/high value is invalid for
        its field (the field's own error).

    Used in: notebooks/05_break_even.ipynb
    """
    rows = []
    for name, bounds in ranges.items():
        validate.one_of("parameter", name, SCENARIO_INPUTS)
        low, high = (validate.finite(name, v) for v in bounds)
        r_low = metric(base.with_input(name, low))
        r_high = metric(base.with_input(name, high))
        if math.isinf(r_low) and math.isinf(r_high):
            swing = 0.0
        else:
            swing = abs(r_high - r_low)
        rows.append((name, low, high, r_low, r_high, swing))
    frame = pd.DataFrame(rows, columns=["parameter", "low", "high", "result_low", "result_high",
                                        "swing"])
    frame = frame.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)
    frame.attrs["base"] = metric(base)
    return frame


