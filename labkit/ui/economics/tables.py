"""Lesson 05's tables (prices, defaults, key numbers) and exercises."""

from __future__ import annotations

from dataclasses import replace

import ipywidgets as widgets

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

#: data/economics/defaults.csv units -> catalog keys of their Korean form (``econ.unit.<key>``);
#: units starting with "fraction" are shown as percent.
UNITS = {
    "USD": "usd", "KRW/USD": "krw_per_usd", "GPUs": "gpus", "servers": "servers",
    "years": "years", "fraction per year": "pct_per_year", "kW": "kw", "fraction": "pct",
    "unitless": "none", "KRW/kWh": "krw_per_kwh", "KRW/(kW·month)": "krw_per_kw_month",
    "KRW/year": "krw_per_year", "fraction of capex per year": "pct_capex_per_year",
    "USD per 1M tokens": "usd_per_m", "tokens/s": "tokens_per_s",
    "USD per GPU-hour": "usd_per_gpu_h", "people": "people",
    "requests per student per day": "requests", "tokens": "tokens", "days": "days",
    "x per halving of bits": "x_per_halving", "x": "x",
}


def reliability_words() -> dict[str, str]:
    """The data files' reliability codes in Korean (primary, secondary, teaching assumption)."""
    return {code: t(f"econ.rel.{code.replace(' ', '_')}")
            for code in ("primary", "secondary", "teaching assumption")}


def source_cols() -> dict[str, fmt.Col]:
    """The provenance columns every price/parameter table ends with (date, reliability, source)."""
    return {"as_of": fmt.Col(t("econ.col.as_of"), "date"),
            "reliability": fmt.Col(t("econ.col.reliability"), words=reliability_words()),
            "source": fmt.Col(t("econ.col.source"), "note")}


def _shown_value(value: float, unit: str) -> str:
    """One parameter value in its unit as the table shows it (fractions in %, won in 만)."""
    if unit.startswith("fraction"):
        return fmt.number(value * 100)
    if unit.startswith(("KRW", "tokens")):
        return fmt.large(value)
    return fmt.number(value)


#: Words of the price files shown in Korean (catalog ``econ.word.<key>``): whole cells of the
#: cloud offers and providers, and the English words inside hardware item names.
CELL_WORDS = {"on-demand": "on_demand", "serverless": "serverless",
              "weekly median": "weekly_median", "long tail": "long_tail",
              "marketplace": "marketplace", "neoclouds": "neoclouds",
              "effective after the June 2025 P5 price cut": "after_p5_cut",
              "on-demand before the June 2025 cut (98.32 USD/h for 8 GPUs)": "before_p5_cut",
              "on-demand (CoreWeave SXM 6.16)": "on_demand_coreweave"}
ITEM_WORDS = {"workstation-class server": "workstation_server", "OEM server": "oem_server",
              "server (lesson default)": "server_default", "server": "server", "(new)": "new"}


def _words(table: dict[str, str]) -> dict[str, str]:
    return {text: t(f"econ.word.{key}") for text, key in table.items()}


def _korean_item(name: str) -> str:
    """A hardware item's name with its English words in Korean ("8xH200 server" -> "8xH200 서버").

    Phrases are tried longest first; the first one found is replaced.
    """
    for text, key in ITEM_WORDS.items():  # longest phrases first
        if text in name:
            return name.replace(text, t(f"econ.word.{key}"))
    return name


def cloud_prices() -> fmt.Table:
    """Return the cloud GPU-hour prices (data/economics/cloud_gpu_prices.csv) for people."""
    words = _words(CELL_WORDS)
    return fmt.people_table(load_cloud_prices(), {
        "gpu": fmt.Col("GPU"), "provider": fmt.Col(t("econ.col.provider"), words=words),
        "usd_per_gpu_hour": fmt.Col(t("econ.col.usd_per_gpu_hour"), "number", 2),
        "offer": fmt.Col(t("econ.col.offer"), "note", words=words), **source_cols()})


def api_prices(input_per_output: float = 3.0) -> fmt.Table:
    """Return the API price table with each model's blended price (input:output = r:1).

    Prices in USD per 1M tokens from ``data/economics/api_prices.csv``; the blend is
    :func:`labkit.economics.blended_price`.
    """
    frame = load_api_prices().copy()
    frame["blended"] = [round(model.blended_price(i, o, input_per_output), 3) for i, o
                        in zip(frame["usd_per_m_input"], frame["usd_per_m_output"], strict=True)]
    return fmt.people_table(frame, {
        "model": fmt.Col(t("econ.col.model")), "provider": fmt.Col(t("econ.col.provider")),
        "usd_per_m_input": fmt.Col(t("econ.col.usd_in"), "number"),
        "usd_per_m_output": fmt.Col(t("econ.col.usd_out"), "number"),
        "blended": fmt.Col(t("econ.col.usd_blended", r=f"{input_per_output:g}"), "number"),
        **source_cols()})


def hardware_prices() -> fmt.Table:
    """Return GPU and server prices (``data/economics/hardware_prices.csv``) for people."""
    frame = load_hardware_prices().copy()
    frame["item"] = [_korean_item(str(i)) for i in frame["item"]]
    return fmt.people_table(frame, {
        "item": fmt.Col(t("econ.col.item")), "gpus": fmt.Col(t("econ.col.gpus"), "int"),
        "price_usd_low": fmt.Col(t("econ.col.usd_low"), "int"),
        "price_usd_high": fmt.Col(t("econ.col.usd_high"), "int"), **source_cols()})


def defaults_table(lesson: str = "05") -> fmt.Table:
    """Return the lesson's parameters for people: value and range in Korean units, sources.

    Values in the unit of the "단위" column: fractions in %, won and tokens in 만/억
    (``data/economics/defaults.csv``; its English units read through :data:`UNITS`).
    """
    frame = lesson_defaults().frame
    rows = frame[frame["lesson"] == lesson].copy()
    rows["name"] = [t(f"econ.p.{p}") if f"econ.p.{p}" in KO else p for p in rows["parameter"]]
    rows["shown_unit"] = [t(f"econ.unit.{UNITS[u]}") if u in UNITS else u for u in rows["unit"]]
    rows["shown_value"] = [_shown_value(v, u) for v, u in zip(rows["value"], rows["unit"],
                                                                strict=True)]
    rows["range"] = [f"{_shown_value(lo, u)} ~ {_shown_value(hi, u)}" for lo, hi, u in
                     zip(rows["low"], rows["high"], rows["unit"], strict=True)]
    return fmt.people_table(rows, {
        "name": fmt.Col(t("econ.col.parameter")),
        "shown_value": fmt.Col(t("econ.col.value"), "number"),
        "shown_unit": fmt.Col(t("econ.col.unit")),
        "range": fmt.Col(t("econ.col.range"), "number"), **source_cols()})


def case_numbers_05() -> fmt.Table:
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
    return fmt.pairs_table(rows, t("econ.col.item"), t("econ.col.value"))


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
