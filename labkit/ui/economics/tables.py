"""Lesson 05's tables (prices, defaults, key numbers) and exercises."""

from __future__ import annotations

from dataclasses import replace

import ipywidgets as widgets
import pandas as pd

from labkit import economics as model
from labkit.data.economics import (
    load_api_prices,
    load_cloud_prices,
    load_hardware_prices,
    scenario_from_defaults,
)
from labkit.i18n import KO, t
from labkit.ui import format as fmt
from labkit.ui.economics.common import EOK, _eok, _won, lesson_defaults
from labkit.ui.exercises import Exercise, exercise_set


def cloud_prices() -> pd.DataFrame:
    """Return the cloud GPU-hour prices (data/economics/cloud_gpu_prices.csv) in Korean columns."""
    frame = load_cloud_prices()
    table = frame[["gpu", "provider", "offer", "usd_per_gpu_hour", "as_of", "reliability"]]
    return table.rename(columns={
        "gpu": "GPU", "provider": t("econ.col.provider"), "offer": t("econ.col.offer"),
        "usd_per_gpu_hour": t("econ.col.usd_per_gpu_hour"), "as_of": t("econ.col.as_of"),
        "reliability": t("econ.col.reliability")}).reset_index(drop=True)


def api_prices(input_per_output: float = 3.0) -> pd.DataFrame:
    """Return the API price table with each model's blended price (input:output = r:1).

    Prices in USD per 1M tokens from ``data/economics/api_prices.csv``; the blend is
    :func:`labkit.economics.blended_price`.
    """
    frame = load_api_prices()
    table = frame[["model", "provider", "usd_per_m_input", "usd_per_m_output", "as_of",
                   "reliability"]].copy()
    table.insert(4, "blended", [round(model.blended_price(i, o, input_per_output), 3) for i, o
                                in zip(frame["usd_per_m_input"], frame["usd_per_m_output"],
                                       strict=True)])
    return table.rename(columns={
        "model": t("econ.col.model"), "provider": t("econ.col.provider"),
        "usd_per_m_input": t("econ.col.usd_in"), "usd_per_m_output": t("econ.col.usd_out"),
        "blended": t("econ.col.usd_blended", r=f"{input_per_output:g}"),
        "as_of": t("econ.col.as_of"), "reliability": t("econ.col.reliability")})


def hardware_prices() -> pd.DataFrame:
    """Return GPU and server prices (``data/economics/hardware_prices.csv``), Korean headers."""
    frame = load_hardware_prices()
    table = frame[["item", "gpus", "price_usd_low", "price_usd_high", "as_of", "reliability",
                   "source"]]
    return table.rename(columns={
        "item": t("econ.col.item"), "gpus": "GPU", "price_usd_low": t("econ.col.usd_low"),
        "price_usd_high": t("econ.col.usd_high"), "as_of": t("econ.col.as_of"),
        "reliability": t("econ.col.reliability"), "source": t("econ.col.source")})


# -- numbers and exercises ---------------------------------------------------------------------

def defaults_table(lesson: str = "05") -> pd.DataFrame:
    """Return the lesson's parameters: value, range, unit, source, date and reliability."""
    frame = lesson_defaults().frame
    rows = frame[frame["lesson"] == lesson]
    table = rows[["parameter", "value", "unit", "low", "high", "as_of", "reliability",
                  "source"]].copy()
    table["parameter"] = [t(f"econ.p.{p}") if f"econ.p.{p}" in KO else p
                          for p in table["parameter"]]
    return table.rename(columns={
        "parameter": t("econ.col.parameter"), "value": t("econ.col.value"),
        "unit": t("econ.col.unit"), "low": t("econ.col.low"), "high": t("econ.col.high"),
        "as_of": t("econ.col.as_of"), "reliability": t("econ.col.reliability"),
        "source": t("econ.col.source")}).reset_index(drop=True)


def case_numbers_05() -> pd.DataFrame:
    """Return the lesson's key numbers at the defaults (shared check cases 1 and 3).

    Deterministic text for ``# NBVAL_CHECK_OUTPUT``.
    """
    s = scenario_from_defaults(lesson_defaults())
    c = s.cluster()
    full, forty = c.annual_cost_breakdown(1.0), c.annual_cost_breakdown(0.4)
    shares = full.shares()
    tps = s.tokens_per_s_per_gpu
    demand = model.monthly_demand_tokens(1_000, 50, 1_300, 30)
    api = model.api_cost_krw(0, demand, 0, s.api_price_krw_per_m)
    rows = [
        (t("econ.case.annual_100"), fmt.krw(full.total_krw)),
        (t("econ.case.annual_40"), fmt.krw(forty.total_krw)),
        (t("econ.case.gpu_h_100"), _won(c.cost_per_gpu_hour(1.0))),
        (t("econ.case.gpu_h_40"), _won(c.cost_per_gpu_hour(0.4))),
        (t("econ.case.electricity_share"), fmt.pct(shares["energy"] + shares["base_charge"])),
        (t("econ.case.fixed"), fmt.krw(model.fixed_cost_krw_per_month(c))),
        (t("econ.case.marginal"),
         f"{model.marginal_cost_krw_per_token(c, tps) * 1e6:,.2f}원"),
        (t("econ.case.n_star", usd="0.60"), _eok(s.break_even_tokens_per_month())),
        (t("econ.case.u_star"), fmt.pct(s.break_even_utilization())),
        (t("econ.case.school"), _eok(demand)),
        (t("econ.case.school_api"), fmt.krw(api)),
        (t("econ.case.school_ratio"),
         f"{model.fixed_cost_krw_per_month(c) / api:.1f}배"),
    ]
    column = t("econ.col.item")
    return pd.DataFrame(rows, columns=[column, t("econ.col.value")]).set_index(column)


def exercises_05() -> widgets.VBox:
    """Return lesson 05's exercises; answers come from :mod:`labkit.economics`."""
    s = scenario_from_defaults(lesson_defaults())
    c = s.cluster()
    dear = replace(s, api_price_usd_per_m=1.0)
    return exercise_set([
        Exercise("econ.ex05_1", c.cost_per_gpu_hour(0.25), 30.0, "원"),
        Exercise("econ.ex05_2", dear.break_even_tokens_per_month() / EOK, 0.5, "억 토큰"),
        Exercise("econ.ex05_3", model.rent_vs_own_break_even_utilization(
            c, model.usd_to_krw(1.99, s.fx_krw_per_usd)) * 100, 0.5, "%"),
    ])
