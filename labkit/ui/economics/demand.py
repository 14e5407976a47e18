"""A school's monthly demand priced both ways (:func:`demand_app`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from labkit import economics as model
from labkit import validate
from labkit.data.economics import Defaults
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.components import number_field
from labkit.ui.economics.common import (
    _BIG,
    COLORS,
    MAN,
    _eok,
    econ_figure,
    lesson_defaults,
    times,
)
from labkit.ui.economics.curves import CostCurvesApp, _PricingFollower, cost_curves_app
from labkit.validate import InputError

# -- a school's demand ---------------------------------------------------------------------------

#: Most copies of the cluster the demand app sizes (beyond: "at most N students"). [count]
MAX_CLUSTER_COPIES = 10_000


@dataclass(frozen=True)
class DemandView:
    """A school's monthly demand priced both ways."""

    tokens: float
    api_krw: float
    owned_krw: float
    servers_needed: int
    utilization: float


class DemandApp(_PricingFollower):
    """Students x requests x tokens -> monthly tokens and cost (see :func:`demand_app`)."""

    def __init__(self, curves: CostCurvesApp, defaults: Defaults) -> None:
        d = defaults
        self.curves = curves
        fields = [
            number_field("students", t("econ.f.students"), d.value("students"), unit="명"),
            number_field("requests_per_day", t("econ.f.requests_per_day"),
                         d.value("requests_per_day"), unit="회/일"),
            number_field("tokens_per_request", t("econ.f.tokens_per_request"),
                         d.value("tokens_per_request"), unit="토큰", step=10),
            number_field("days_per_month", t("econ.f.days_per_month"),
                         d.value("days_per_month"), unit="일"),
        ]
        super().__init__("demand", fields, error_prefix="econ")
        self._follow_curves(curves, "demand")

    def compute(self, values: dict[str, Any]) -> DemandView:
        r = self.curves.result
        if r is None:
            raise ValueError(t("econ.no_cluster"))
        # A class has at least one student (0 leaves nothing to compare: "API is inf x cheaper")
        validate.positive("students", values["students"])
        tokens = model.monthly_demand_tokens(values["students"], values["requests_per_day"],
                                             values["tokens_per_request"],
                                             values["days_per_month"])
        c = r.view.cluster
        # More demand than one cluster makes: copies of the servers (staff/facility shared).
        ratio = tokens / r.capacity_tokens
        if not ratio <= MAX_CLUSTER_COPIES:  # also inf / nan from 1e308 students
            per_student = model.monthly_demand_tokens(1, values["requests_per_day"],
                                                      values["tokens_per_request"],
                                                      values["days_per_month"])
            raise InputError("students", "at_most", values["students"],
                             f"demand needs more than {MAX_CLUSTER_COPIES:,} copies of the cluster",
                             limit=math.floor(MAX_CLUSTER_COPIES * r.capacity_tokens / per_student))
        copies = max(1, math.ceil(ratio))
        owned_cluster = replace(c, servers=c.servers * copies)
        owned = model.owned_cost_krw_per_month(owned_cluster, tokens, r.tokens_per_s_per_gpu,
                                               r.derate)
        cap = model.monthly_capacity_tokens(owned_cluster, r.tokens_per_s_per_gpu, r.derate)
        return DemandView(tokens, model.api_cost_krw(0, tokens, 0, r.api_price_krw_per_m),
                          owned, owned_cluster.servers, tokens / cap)

    def render(self, result: DemandView) -> None:
        if result.api_krw < result.owned_krw:
            verdict = t("econ.demand.api_cheaper", times=times(
                result.owned_krw / result.api_krw) if result.api_krw > 0 else "∞")
        else:
            verdict = t("econ.demand.owned_cheaper",
                        times=times(result.api_krw / result.owned_krw))
        self.big.value = _BIG.format(
            big=t("econ.demand.big", n=_eok(result.tokens, 2)),
            detail="<br>".join([
                t("econ.demand.costs", api=fmt.krw(result.api_krw),
                  owned=fmt.krw(result.owned_krw), servers=result.servers_needed,
                  pct=fmt.pct(result.utilization)),
                f"<b>{verdict}</b>"]),
        )
        self.chart.show(econ_figure(
            [{"type": "bar", "x": [t("econ.curves.api"), t("econ.curves.owned")],
              "y": [result.api_krw / MAN, result.owned_krw / MAN],
              "marker": {"color": [COLORS["api"], COLORS["owned"]]},
              "text": [fmt.krw(result.api_krw), fmt.krw(result.owned_krw)],
              "textposition": "auto"}],
            title=t("econ.demand.chart_title"), height=280, showlegend=False,
            yaxis={"title": {"text": t("econ.axis.man_won_per_month")}, "tickformat": ",~g"}))


def demand_app(curves: CostCurvesApp | None = None,
               defaults: Defaults | None = None) -> DemandApp:
    """Return the school demand estimator, priced with ``curves``' API price and throughput."""
    return DemandApp(curves if curves is not None else cost_curves_app(defaults=defaults),
                     defaults or lesson_defaults())
