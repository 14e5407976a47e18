"""Lesson 04's real failure data (Llama 3, published rates, the StepFun trace) and the
exercises.
"""

from __future__ import annotations

import re

import ipywidgets as widgets
import plotly.graph_objects as go

from labkit import eventlog
from labkit import reliability as model
from labkit.data import reliability as data
from labkit.i18n import KO, t
from labkit.ui import format as fmt
from labkit.ui.components import (
    FigureOutput,
    styled_figure,
)
from labkit.ui.exercises import Exercise, exercise_set
from labkit.ui.reliability.base import LLAMA3_GPU_MTBF_H, _table, cluster_label


# -- 6. real data ---------------------------------------------------------------------------
def llama3_causes() -> widgets.VBox:
    """Return Llama 3's interruption causes as a chart, with the table's own arithmetic."""
    table = model.interruption_shares(data.load_llama3_interruptions())
    order = table.sort_values("interruptions")
    fig = styled_figure(title=t("reliability.llama3.title"),
                        xaxis_title=t("reliability.llama3.x"), height=560,
                        margin={"l": 230, "r": 30, "t": 50, "b": 50})
    palette = {"GPU": "#d1495b", "Host": "#e09f3e", "Network": "#3b6fb6",
               "Dependency": "#2e7d32", "Unplanned Maintenance": "#8d6e63", "Unknown": "#9e9e9e"}
    labels = {c: component_label(c) for c in table["component"]}
    for category, rows in order.groupby("category", sort=False):
        fig.add_trace(go.Bar(
            y=[labels[c] for c in rows["component"]], x=rows["interruptions"], orientation="h",
            name=t(f"reliability.llama3.cat.{_slug(str(category))}"),
            marker={"color": palette[str(category)]},
            text=[f"{c} ({p:.1f} %)" for c, p in zip(rows["interruptions"],
                                                     rows["computed_pct"], strict=True)],
            textposition="outside"))
    fig.update_yaxes(categoryorder="array", categoryarray=[labels[c] for c in order["component"]])
    fig.update_xaxes(range=[0, float(table["interruptions"].max()) * 1.3])
    chart = FigureOutput("lk-llama3-chart")
    chart.show(fig)
    box = widgets.VBox([chart])
    box.add_class("lk-llama3")
    return box


def _slug(text: str) -> str:
    return text.lower().replace(" ", "_")


def component_label(component: str) -> str:
    """Return the Korean name of a Llama 3 Table 5 component (the paper's name if none)."""
    key = "reliability.llama3.component." + re.sub(r"[^a-z0-9]+", "_", component.lower()).strip("_")
    return t(key) if key in KO else component


def llama3_numbers() -> fmt.Table:
    """Return check case 3: the sums of Llama 3 Table 5 and the row that does not match."""
    table = model.interruption_shares(data.load_llama3_interruptions())
    bad = table[~table["pct_matches"]]
    gpu = table[table["category"] == "GPU"]
    total = table.attrs["total"]
    rows = [
        (t("reliability.llama3.sum"), f"{total:g}"),
        (t("reliability.llama3.printed_sum"), f"{table.attrs['printed_total_pct']:g} %"),
        (t("reliability.llama3.mismatch"),
         "; ".join(t("reliability.llama3.mismatch_row", component=component_label(r.component),
                     computed=f"{r.computed_pct:.1f} %", printed=f"{r.printed_pct:g} %")
                   for r in bad.itertuples())),
        (t("reliability.llama3.gpu_count"),
         f"{int(gpu['interruptions'].sum())}/{total:g} = "
         f"{100 * gpu['interruptions'].sum() / total:.1f} %"),
        (t("reliability.llama3.gpu_printed"), f"{gpu['printed_pct'].sum():.1f} %"),
    ]
    return _table(rows)


def failure_rates() -> widgets.VBox:
    """Return the failure rates per 1,000 node-days, source by source, as a bar chart."""
    rates = data.load_failure_rates()
    colors = {"published": "#3b6fb6", "derived": "#2e7d32", "measured": "#e09f3e",
              "anecdotal": "#9e9e9e"}
    fig = styled_figure(title=t("reliability.rates.title"),
                        xaxis_title=t("reliability.rates.x"), height=420,
                        margin={"l": 260, "r": 30, "t": 50, "b": 50})
    for kind, rows in rates.groupby("kind", sort=False):
        fig.add_trace(go.Bar(y=[cluster_label(c) for c in rows["cluster"]],
                             x=rows["rate_per_1000_node_days"],
                             orientation="h", name=t(f"reliability.rates.{kind}"),
                             marker={"color": colors[str(kind)]},
                             text=[f"{v:.2f}" for v in rows["rate_per_1000_node_days"]],
                             textposition="outside"))
    fig.update_yaxes(categoryorder="array",
                     categoryarray=[cluster_label(c) for c in rates["cluster"]][::-1])
    chart = FigureOutput("lk-rates-chart")
    chart.show(fig)
    box = widgets.VBox([chart])
    box.add_class("lk-rates")
    return box


def stepfun_numbers() -> fmt.Table:
    """Return the key statistics derived from the InfiniteHBD fault trace."""
    rates = data.load_stepfun_table("stepfun_fault_rates")
    repair = data.load_stepfun_table("stepfun_repair_days").set_index("group")
    gaps = data.load_stepfun_table("stepfun_interarrival").set_index("statistic")["value"]
    total = rates[(rates["level"] == "all")].iloc[0]
    hardware = rates[(rates["level"] == "Hardware Failure") & (rates["class"] == "all")].iloc[0]
    gpu = rates[(rates["level"] == "Hardware Failure") & (rates["class"] == "GPU")].iloc[0]
    rows = [
        (t("reliability.stepfun.rate_all"), f"{total.rate_per_1000_node_days:.2f}"),
        (t("reliability.stepfun.rate_hw"), f"{hardware.rate_per_1000_node_days:.2f}"),
        (t("reliability.stepfun.rate_gpu"), f"{gpu.rate_per_1000_node_days:.2f}"),
        (t("reliability.stepfun.repair"),
         f"{repair.loc['all', 'median_days']:.2f} / {repair.loc['all', 'mean_days']:.1f} / "
         f"{repair.loc['all', 'p90_days']:.1f}"),
        (t("reliability.stepfun.gap"),
         f"{gaps['mean_gap_days']:.2f} / {gaps['median_gap_days']:.2f}"),
        (t("reliability.stepfun.cv"), f"{gaps['gap_cv']:.2f}"),
        (t("reliability.stepfun.lemons"),
         f"{gaps['nodes_with_5_or_more']:.0f} / {gaps['nodes_with_faults']:.0f}"),
        (t("reliability.stepfun.top"), fmt.pct(gaps["top_10pct_nodes_share"])),
        (t("reliability.stepfun.unavailable"), fmt.pct(gaps["unavailable_frac"])),
    ]
    return _table(rows)


# -- 7. exercises ---------------------------------------------------------------------------
def exercises() -> widgets.VBox:
    """Return the lesson's four exercises; answers come from the models."""
    return exercise_set([
        Exercise("reliability.ex1", model.job_mtbf_h(16_384, 50_000), 0.05, "h"),
        Exercise("reliability.ex2", model.young_interval(6, 240), 0.5, "분"),
        Exercise("reliability.ex3",
                 100 * model.interruption_free_probability(4_096, LLAMA3_GPU_MTBF_H, 12),
                 0.5, "%"),
        Exercise("reliability.ex4",
                 100 * eventlog.job_goodput(eventlog.disrupted_run_log(restart_s=40)).goodput,
                 0.05, "%"),
    ])
