"""Widgets for lesson 06 "벤치마크 읽는 법": reading benchmark claims and racks.

Builders:

- :func:`mlperf_table` — the MLPerf Inference LLM rows;
- :func:`claim_app` — two rows picked by the student: the checklist and the normalization steps;
- :func:`rack_app` — "3x faster = 1/3 of the racks": the four conditions and a verdict;
- :func:`defaults_table`, :func:`case_numbers_06`, :func:`exercises_06`.

All numbers come from :mod:`labkit.benchmarks`; defaults, ranges and sources from
``data/economics/`` (:mod:`labkit.data.economics`, :mod:`labkit.data.benchmarks`).
"""

from __future__ import annotations

import functools
import html
import math
import re
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from labkit import benchmarks as model
from labkit import validate
from labkit.data.benchmarks import benchmark_results, load_mlperf
from labkit.data.economics import Defaults
from labkit.i18n import KO, t
from labkit.ui import economics as econ_ui
from labkit.ui import format as fmt
from labkit.ui.components import Field, FigureOutput, LiveApp, guard, slider_field
from labkit.ui.economics import (
    TABLE_HTML,
    TD_HTML,
    default_slider,
    econ_figure,
    field_box,
    lesson_defaults,
)
from labkit.ui.exercises import Exercise, exercise_set
from labkit.validate import InputError

__all__ = [
    "CLAIM_PRESETS",
    "ClaimApp",
    "RackApp",
    "case_numbers_06",
    "claim_app",
    "defaults_table",
    "exercises_06",
    "mlperf_table",
    "rack_app",
    "steps_figure",
]

_OK, _WARN, _UNKNOWN = "✔", "⚠", "?"


def defaults_table() -> fmt.Table:
    """Return lesson 06's parameters: value, range, unit, source, date and reliability."""
    return econ_ui.defaults_table("06")


@functools.cache
def _mlperf() -> tuple[pd.DataFrame, tuple[model.BenchmarkResult, ...]]:
    frame = load_mlperf()
    return frame, tuple(benchmark_results(frame))


#: The English note data/economics/mlperf_inference_llm.csv keeps after an open-division row's
#: benchmark ("(open: … substituted)"), and its catalog key (a system is shown by its label).
_DATA_NOTES = ((re.compile(r"\(open: (?P<model>[^()]+) substituted\)"),
                "econ.mlperf.open_substituted"),)


#: MLPerf's LLM benchmark ids (``llama2-70b-99.9``, ``llama2-70b-interactive-99.9``,
#: ``llama3.1-405b``): the model, its size and the accuracy target, 99 or 99.9 % of the reference
#: model's score (MLCommons inference rules, "Benchmarks"; the interactive latency bound is the
#: scenario's, shown beside it as 대화형).
_BENCHMARK_ID = re.compile(r"^llama(?P<version>\d(?:\.\d)?)-(?P<size>\d+)b(?:-interactive)?"
                           r"(?:-(?P<accuracy>99(?:\.9)?))?(?=\s|$)")


def _data_words(text: str) -> str:
    """Return a benchmark name from the MLPerf table as people write it, its English note in
    Korean: ``llama2-70b-99.9`` -> "Llama 2 70B (기준 정확도의 99.9 %)"; an id of another shape
    is kept as MLPerf publishes it."""
    for pattern, key in _DATA_NOTES:
        match = pattern.search(text)
        if match is not None:
            text = text.replace(match.group(0), t(key, model=match["model"]))
    match = _BENCHMARK_ID.search(text)
    if match is not None:
        name = f"Llama {match['version']} {match['size']}B"
        if match["accuracy"]:
            name += " " + t("econ.mlperf.accuracy", accuracy=match["accuracy"])
        text = name + text[match.end():]
    return text


def _row_label(row: pd.Series) -> str:
    # submitter and benchmark as MLPerf publishes them (proper names), the system by its
    # people's label (the data file's ``label``); the scenario, sparsity and unit in Korean
    sparse = " " + t("econ.col.sparsity") if row["sparsity"] else ""
    return (f"{row['version']} · {row['submitter']} {row['label']} · "
            f"{_data_words(row['benchmark'])} · "
            f"{t('econ.slo.' + row['slo'])} · {row['precision']}{sparse} · "
            f"{row['total_accel']}개 · {row['result']:,.0f} {t('econ.unit.tokens_per_s')}")


def mlperf_table() -> fmt.Table:
    """Return the MLPerf Inference LLM rows for people: the columns the lesson reads first.

    Round, system, accelerators, benchmark and scenario, then throughput (whole system and per
    accelerator), precision, sparsity, measured power (blank where the row has none),
    availability, division and submitter.
    """
    frame, _ = _mlperf()
    frame = frame.assign(system=frame["label"], benchmark=frame["benchmark"].map(_data_words))
    words = {"Offline": t("econ.slo.Offline"), "Server": t("econ.slo.Server"),
             "Interactive": t("econ.slo.Interactive"), "available": t("econ.avail.available"),
             "preview": t("econ.avail.preview"), "closed": t("econ.div.closed"),
             "open": t("econ.div.open")}
    return fmt.people_table(frame, {
        "version": fmt.Col(t("econ.col.version")), "system": fmt.Col(t("econ.col.system")),
        "total_accel": fmt.Col(t("econ.col.accelerators"), "int"),
        "benchmark": fmt.Col(t("econ.col.benchmark")),
        "slo": fmt.Col(t("econ.col.slo"), words=words),
        "result": fmt.Col(t("econ.col.result"), "int"),
        "result_per_accel": fmt.Col(t("econ.col.per_accel"), "int"),
        "precision": fmt.Col(t("econ.col.precision")),
        "sparsity": fmt.Col(t("econ.col.sparsity"), "bool"),
        "power_w_system": fmt.Col(t("econ.col.power"), "int"),
        "availability": fmt.Col(t("econ.col.availability"), words=words),
        "division": fmt.Col(t("econ.col.division"), words=words),
        "submitter": fmt.Col(t("econ.col.submitter"))})


def _find_row(frame: pd.DataFrame, version: str, system: str, slo: str) -> int:
    hits = frame.index[(frame["version"] == version) & (frame["system"] == system)
                       & (frame["slo"] == slo)].tolist()
    return int(hits[0]) if hits else 0


def _status_cell(status: str) -> str:
    color = {"ok": "#1b7f3b", "warn": "#b26a00", "unknown": "#777"}[status]
    mark = {"ok": _OK, "warn": _WARN, "unknown": _UNKNOWN}[status]
    return f'<span style="color:{color};font-weight:700">{mark}</span>'


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return t("econ.yes") if v else t("econ.no")
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return t("econ.unstated")
    if isinstance(v, float):
        return f"{v:,.0f}"
    return html.escape(str(v))


#: The pairs the lesson's text names, by preset key: (claimant, baseline), each
#: (round, system, scenario) of data/economics/mlperf_inference_llm.csv (shared cases
#: economics.md, case 7: 3.98x announced, 3.16x against the same-date v5.0 baseline).
CLAIM_PRESETS: dict[str, tuple[tuple[str, str, str], tuple[str, str, str]]] = {
    "announced": (("v4.1", "B200-SXM-180GBx1_TRT", "Server"),
                  ("v4.1", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")),
    "baseline_v50": (("v4.1", "B200-SXM-180GBx1_TRT", "Server"),
                     ("v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")),
    "same_date": (("v5.0", "B200-SXM-180GBx8_TRT", "Server"),
                  ("v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")),
    "measured_power": (("v5.1", "SR680a_V3_B200SXMx8_TRT", "Offline"),
                       ("v4.1", "H200-SXM-141GBx8_TRT_MaxQ", "Offline")),
}


@dataclass(frozen=True)
class ClaimView:
    """The checklist and the normalization of one picked pair."""

    claimant_index: int
    baseline_index: int
    checklist: tuple[model.ChecklistItem, ...]
    normalization: model.ClaimNormalization


class ClaimApp(LiveApp[ClaimView]):
    """Pick two MLPerf rows; read the claim with the checklist (see :func:`claim_app`)."""

    def __init__(self, defaults: Defaults) -> None:
        frame, self.results = _mlperf()
        self._pairs = {key: (_find_row(frame, *a), _find_row(frame, *b))
                       for key, (a, b) in CLAIM_PRESETS.items()}
        self._applying = False
        options = [(_row_label(row), int(i)) for i, row in frame.iterrows()]
        first, second = self._pairs["announced"]
        claimant = widgets.Dropdown(options=options, value=first,
                                    layout=widgets.Layout(width="760px"))
        baseline = widgets.Dropdown(options=options, value=second,
                                    layout=widgets.Layout(width="760px"))
        self.preset = widgets.Dropdown(
            options=[(t(f"econ.claim.preset.{k}"), k) for k in (*CLAIM_PRESETS, "custom")],
            value="announced", layout=widgets.Layout(width="560px"))
        self.preset.add_class("lk-claim-preset")
        self.preset.observe(self._preset_changed, names="value")
        measured = defaults.value("precision_gain_measured")
        fields = [
            Field("claimant", t("econ.claim.claimant"), claimant),
            Field("baseline", t("econ.claim.baseline"), baseline),
            slider_field("precision_gain", t("econ.f.precision_gain"), 2.0, min=1.0, max=2.0,
                         step=0.01, readout_format=".2f", unit=t("econ.claim.measured_hint",
                                                                  g=f"{measured:.2f}")),
            slider_field("sparsity_gain", t("econ.f.sparsity_gain"), 2.0, min=1.0, max=2.0,
                         step=0.01, readout_format=".2f", unit=t(
                             "econ.claim.measured_hint",
                             g=f"{defaults.value('sparsity_gain_measured'):.2f}")),
        ]
        for f in fields[2:]:  # the unit line ("배 (2 = 이론 최대, …)") beside its slider, not
            f.control.layout.width = "300px"  # wrapped below it (issue 17's trial)
        super().__init__("claim", fields, error_prefix="econ")
        self.checklist = widgets.HTML()
        self.checklist.add_class("lk-claim-checklist")
        self.steps = widgets.HTML()
        self.steps.add_class("lk-claim-steps")
        self.chart = FigureOutput("lk-claim-chart")
        preset_box = widgets.HBox([widgets.HTML(f"<b>{t('econ.claim.preset')}</b>",
                                                layout=widgets.Layout(width="250px")),
                                   self.preset, guard(self.preset, "claim-preset")],
                                  layout=widgets.Layout(align_items="center"))
        self.children = [preset_box, field_box(list(self.fields.values())), self.status,
                         self.checklist, self.steps, self.chart]
        self.update()

    def _preset_changed(self, change: dict[str, Any]) -> None:
        """Put a named pair into the two dropdowns, then recompute once."""
        pair = self._pairs.get(change["new"])
        if pair is None:  # "custom" (or a value a browser made up): the dropdowns stay
            return
        self._applying = True
        try:
            self.fields["claimant"].control.value = pair[0]
            self.fields["baseline"].control.value = pair[1]
        finally:
            self._applying = False
        self.update()

    def update(self, *args: Any) -> None:
        """Recompute (once per preset, not once per dropdown it sets); name the pair shown."""
        if self._applying:
            return
        pair = (self.fields["claimant"].control.value, self.fields["baseline"].control.value)
        named = next((k for k, v in self._pairs.items() if v == pair), "custom")
        if self.preset.value != named:
            self.preset.unobserve(self._preset_changed, names="value")
            self.preset.value = named
            self.preset.observe(self._preset_changed, names="value")
        super().update(*args)

    def _pick(self, key: str, index: Any) -> model.BenchmarkResult:
        i = validate.integer(key, index, minimum=0)
        if i >= len(self.results):
            raise InputError(key, "at_most", index, f"{key} must be a row number",
                             limit=len(self.results) - 1)
        return self.results[i]

    def compute(self, values: dict[str, Any]) -> ClaimView:
        a = self._pick("claimant", values["claimant"])
        b = self._pick("baseline", values["baseline"])
        return ClaimView(int(values["claimant"]), int(values["baseline"]),
                         model.benchmark_checklist(a, b),
                         model.normalize_claim(a, b, precision_gain=values["precision_gain"],
                                               sparsity_gain=values["sparsity_gain"]))

    def render(self, r: ClaimView) -> None:
        self.checklist.value = checklist_html(r.checklist)
        self.steps.value = steps_html(r.normalization)
        self.chart.show(steps_figure(r.normalization))


def checklist_html(items: tuple[model.ChecklistItem, ...]) -> str:
    """Return the checklist as a small HTML table (question, mark, what the rows say)."""
    rows = []
    for item in items:
        values = {k: _fmt_value(v) for k, v in item.values.items()}
        if item.key == "slo":  # MLPerf's scenario in Korean, its own word in parentheses
            values = {k: f"{t(f'econ.slo.{v}')}({v})" if f"econ.slo.{v}" in KO else values[k]
                      for k, v in item.values.items()}
        if item.key == "model":  # MLPerf's benchmark ids as people write them
            values = {k: _data_words(str(v)) for k, v in item.values.items()}
        rows.append(f"<tr><td>{_status_cell(item.status)}</td>"
                    f"<td><b>{t(f'econ.check.{item.key}.q')}</b></td>"
                    f"<td>{t(f'econ.check.{item.key}.{item.status}', **values)}</td></tr>")
    return (f"<h4>{t('econ.claim.checklist_title')}</h4>" + TABLE_HTML
            + "".join(rows).replace("<td>", TD_HTML) + "</table>")


def _step_note(step: model.NormalizationStep) -> str:
    d = {k: (_fmt_value(v) if not isinstance(v, float) else v) for k, v in step.detail.items()}
    key = step.key.value
    if key == "per_system":
        return t("econ.step.per_system.note", a=f"{d['claimant_tokens_per_s']:,.0f}",
                 b=f"{d['baseline_tokens_per_s']:,.0f}")
    if key == "per_accelerator":
        if not step.applied:
            return t("econ.step.same", what=t("econ.check.chip_vs_system.q"))
        return t("econ.step.per_accelerator.note", na=d["claimant_accelerators"],
                 nb=d["baseline_accelerators"], a=f"{d['claimant_per_accelerator']:,.0f}",
                 b=f"{d['baseline_per_accelerator']:,.0f}")
    if key == "precision":
        if d["halvings"] == 0:
            return t("econ.step.precision.same", p=d["claimant_precision"])
        if not step.applied:
            return t("econ.step.precision.skipped")
        return t("econ.step.precision.note", pa=d["claimant_precision"],
                 pb=d["baseline_precision"], n=f"{abs(float(step.detail['halvings'])):g}",
                 g=f"{d['gain']:.2f}")
    if key == "sparsity":
        if not (step.detail["claimant_sparsity"] or step.detail["baseline_sparsity"]):
            return t("econ.step.sparsity.none")
        if not step.applied:
            return t("econ.step.precision.skipped")
        return t("econ.step.sparsity.note", g=f"{d['gain']:.2f}")
    basis = step.detail.get("basis")
    if basis is None:
        return t("econ.step.per_watt.none")
    return t(f"econ.step.per_watt.{basis}", wa=f"{d['claimant_w_per_accelerator']:,.0f}",
             wb=f"{d['baseline_w_per_accelerator']:,.0f}")


def steps_html(n: model.ClaimNormalization) -> str:
    """Return the normalization as an HTML table: step, factor, ratio after, why."""
    rows = []
    for s in n.steps:
        factor = f"× {fmt.ratio(s.factor, 3)}" if s.applied else "—"
        rows.append(f"<tr><td><b>{t(f'econ.step.{s.key.value}')}</b></td><td>{factor}</td>"
                    f"<td><b>{fmt.ratio(s.ratio, 2)}배</b></td><td>{_step_note(s)}</td></tr>")
    headline = n.step("per_accelerator").ratio
    summary = t("econ.claim.summary", headline=fmt.ratio(headline, 2), final=fmt.ratio(n.ratio, 2))
    return (f"<h4>{t('econ.claim.steps_title')}</h4>" + TABLE_HTML
            + "".join(rows).replace("<td>", TD_HTML) + f"</table><p><b>{summary}</b></p>")


def steps_figure(n: model.ClaimNormalization) -> go.Figure:
    """Return a bar per normalization step: the ratio after it."""
    return econ_figure(
        [{"type": "bar", "x": [t(f"econ.step.{s.key.value}") for s in n.steps],
          "y": [s.ratio for s in n.steps],
          "marker": {"color": ["#999" if not s.applied else "#3b6fb6" for s in n.steps]},
          "text": [f"{fmt.ratio(s.ratio, 2)}배" for s in n.steps], "textposition": "outside",
          "cliponaxis": False}],
        title=t("econ.claim.chart_title"), showlegend=False, height=360,
        margin={"l": 60, "r": 20, "t": 50, "b": 70},
        yaxis={"title": {"text": t("econ.axis.ratio")},
               "range": [0, max(1.2, *(s.ratio for s in n.steps)) * 1.15]},
        shapes=[{"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": 1, "y1": 1,
                 "yref": "y", "line": {"color": "black", "dash": "dot"}}])


def claim_app(defaults: Defaults | None = None) -> ClaimApp:
    """Return the claim reader, starting on shared case 7 (B200 x1 vs DGX-H100, v4.1 Server)."""
    return ClaimApp(defaults or lesson_defaults())


# -- "3x faster = 1/3 of the racks" ------------------------------------------------------------

_SERVER_KW = ("old_server_kw", "new_server_kw")


def _rack_below_servers(values: dict[str, Any]) -> InputError | None:
    """The error for a rack power below a server's power, named for the rack's control.

    The model checks "a server fits in a rack" on each server's power; when the student just
    lowered the rack power, the message belongs under the rack control, echoing the rack.
    """
    rack = values["rack_kw"]
    try:
        servers = [validate.positive(k, values[k]) for k in _SERVER_KW]
        validate.positive("rack_kw", rack)
    except InputError:
        return None  # the model's own message for a bad value, under its own control
    widest = max(servers)
    if rack >= widest:
        return None
    return InputError("rack_kw", "at_least", rack,
                      f"rack_kw must be >= the largest server power ({widest:g})", limit=widest)


class RackApp(LiveApp[model.RackClaimCheck]):
    """The four conditions of "N times faster = 1/N of the racks" (see :func:`rack_app`)."""

    def __init__(self, defaults: Defaults) -> None:
        d = defaults
        per_s = t("econ.unit.tokens_per_s")
        fields = [
            default_slider(d["demand_tokens_per_s"], "demand_tokens_per_s",
                    t("econ.f.demand_tokens_per_s"), digits=0, unit=per_s),
            default_slider(d["old_tokens_per_s_per_server"], "old_tokens_per_s_per_server",
                    t("econ.f.old_tokens_per_s_per_server"), digits=0, unit=per_s),
            default_slider(d["claimed_speedup"], "claimed_speedup", t("econ.f.claimed_speedup"),
                    digits=1, unit="배"),
            default_slider(d["workload_speedup"], "workload_speedup", t("econ.f.workload_speedup"),
                    digits=1, unit="배"),
            default_slider(d["old_server_kw"], "old_server_kw", t("econ.f.old_server_kw"), digits=1,
                    unit="kW"),
            default_slider(d["new_server_kw"], "new_server_kw", t("econ.f.new_server_kw"), digits=1,
                    unit="kW"),
            default_slider(d["rack_kw"], "rack_kw", t("econ.f.rack_kw"), digits=0, unit="kW"),
            default_slider(d["feed_limit_tokens_per_s_per_server"],
                    "feed_limit_tokens_per_s_per_server", t("econ.f.feed_limit"), digits=0,
                    unit=per_s),
        ]
        last: dict[str, str | None] = {"key": None}
        for f in fields:  # observed before LiveApp's own recompute, so compute sees the key
            f.control.observe(lambda _c, key=f.key: last.__setitem__("key", key), names="value")
        self._last = last
        super().__init__("racks", fields, error_prefix="econ")
        self.verdict = widgets.HTML()
        self.verdict.add_class("lk-racks-verdict")
        self.conditions = widgets.HTML()
        self.conditions.add_class("lk-racks-conditions")
        self.chart = FigureOutput("lk-racks-chart")
        reset = widgets.Button(description=t("common.reset"))
        reset.on_click(self.reset)
        self.children = [field_box(list(self.fields.values())), reset, self.status,
                         self.verdict, self.conditions, self.chart]
        self.update()

    def compute(self, values: dict[str, Any]) -> model.RackClaimCheck:
        if self._last["key"] == "rack_kw":
            blamed = _rack_below_servers(values)
            if blamed is not None:
                raise blamed
        return model.rack_claim_check(
            values["demand_tokens_per_s"], values["old_tokens_per_s_per_server"],
            values["old_server_kw"], values["new_server_kw"], values["rack_kw"],
            claimed_speedup=values["claimed_speedup"],
            workload_speedup=values["workload_speedup"],
            feed_limit_tokens_per_s_per_server=values["feed_limit_tokens_per_s_per_server"])

    def render(self, r: model.RackClaimCheck) -> None:
        color = {"holds": "#1b7f3b", "partly": "#b26a00", "fails": "#b00020"}[r.verdict]
        summary = t("econ.racks.summary", old=r.old.racks, new=r.new.racks,
                    target=r.target_racks, so=r.old.servers, sn=r.new.servers,
                    kwo=f"{r.old.provisioned_kw:,.1f}", kwn=f"{r.new.provisioned_kw:,.1f}")
        verdict = t(f"econ.racks.verdict.{r.verdict}", n=f"{r.claimed_speedup:g}")
        self.verdict.value = (f'<div style="font-size:1.7em;font-weight:700;color:{color}">'
                              f"{verdict}</div><div>{summary}</div>")
        rows = []
        for c in r.conditions:
            values = {k: _condition_value(k, v) for k, v in c.values.items()}
            rows.append(f"<tr><td>{_status_cell('ok' if c.ok else 'warn')}</td>"
                        f"<td><b>{t(f'econ.racks.{c.key}.q', n=f'{r.claimed_speedup:g}')}</b>"
                        f"</td><td>{t(f'econ.racks.{c.key}.detail', **values)}</td></tr>")
        self.conditions.value = (TABLE_HTML + "".join(rows).replace("<td>", TD_HTML) + "</table>")
        groups = [t("econ.racks.old"), t("econ.racks.new"), t("econ.racks.promise")]
        racks = [r.old.racks, r.new.racks, r.target_racks]
        servers = [r.old.servers, r.new.servers]
        self.chart.show(econ_figure(
            [{"type": "bar", "x": groups, "y": racks, "name": t("econ.racks.racks"),
              "marker": {"color": "#3b6fb6"}, "text": racks, "textposition": "outside",
              "cliponaxis": False},
             {"type": "bar", "x": groups[:2], "y": servers, "name": t("econ.racks.servers"),
              "marker": {"color": "#9db8de"}, "text": servers, "textposition": "outside",
              "cliponaxis": False}],
            title=t("econ.racks.chart_title"), barmode="group", height=330,
            # legend above the plot, right-aligned: inside the figure at any width (the
            # gallery thumbnail cut a legend on the right)
            legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0,
                    "yanchor": "bottom"},
            margin={"l": 60, "r": 20, "t": 70, "b": 50},
            yaxis={"title": {"text": t("econ.axis.count")}}))


_CONDITION_FORMATS = {"claimed": "{:g}", "workload": "{:.2f}", "old_kw": "{:.1f}",
                      "new_kw": "{:.1f}", "power_ratio": "{:.2f}", "tokens_per_kw_gain": "{:.2f}",
                      "wanted_tokens_per_s": "{:,.0f}", "feed_limit": "{:,.0f}",
                      "effective_tokens_per_s": "{:,.0f}"}


def _condition_value(key: str, value: Any) -> str:
    if key == "new_utilization":
        return fmt.pct(value)
    if key in _CONDITION_FORMATS and isinstance(value, (int, float)):
        return _CONDITION_FORMATS[key].format(value)
    return _fmt_value(value)


def rack_app(defaults: Defaults | None = None) -> RackApp:
    """Return the "3x = 1/3 racks" check, with the lesson defaults (H100 -> B200 boxes)."""
    return RackApp(defaults or lesson_defaults())


def case_numbers_06() -> fmt.Table:
    """Return shared check case 7 as a table (deterministic text for nbval)."""
    frame, results = _mlperf()
    d = lesson_defaults()
    b200 = results[_find_row(frame, "v4.1", "B200-SXM-180GBx1_TRT", "Server")]
    h100 = results[_find_row(frame, "v4.1", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")]
    b200_50 = results[_find_row(frame, "v5.0", "B200-SXM-180GBx8_TRT", "Server")]
    h100_50 = results[_find_row(frame, "v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "Server")]
    g = d.value("precision_gain_measured")
    raw = model.normalize_claim(b200, h100, precision_gain=1.0)
    measured = model.normalize_claim(b200, h100, precision_gain=g)
    worst = model.normalize_claim(b200, h100, precision_gain=2.0)
    same_date = model.normalize_claim(b200_50, h100_50, precision_gain=1.0, per_watt=False)
    same_date_worst = model.normalize_claim(b200_50, h100_50, precision_gain=2.0)
    rows = [
        (t("econ.case7.raw"), f"{raw.step('per_accelerator').ratio:.2f}배"),
        (t("econ.case7.measured", g=f"{g:.3f}"), f"{measured.step('precision').ratio:.2f}배"),
        (t("econ.case7.worst"), f"{worst.step('precision').ratio:.2f}배"),
        (t("econ.case7.per_watt_raw"), f"{raw.ratio:.2f}배"),
        (t("econ.case7.per_watt_measured"), f"{measured.ratio:.2f}배"),
        (t("econ.case7.per_watt_worst"), f"{worst.ratio:.2f}배"),
        (t("econ.case7.same_date"), f"{same_date.ratio:.2f}배"),
        (t("econ.case7.same_date_worst"), f"{same_date_worst.ratio:.2f}배"),
    ]
    return fmt.pairs_table(rows, t("econ.col.item"), t("econ.col.value"))


def exercises_06() -> widgets.VBox:
    """Return lesson 06's exercises; answers come from :mod:`labkit.economics`."""
    frame, results = _mlperf()
    h200 = results[_find_row(frame, "v5.0", "H200-SXM-141GBx8_TRT", "Offline")]
    h100 = results[_find_row(frame, "v5.0", "DGX-H100_H100-SXM-80GBx8_TRT", "Offline")]
    b200 = results[_find_row(frame, "v5.1", "SR680a_V3_B200SXMx8_TRT", "Offline")]
    plan = model.servers_and_racks(200_000, 31_106.28, 10.2, 20)
    return exercise_set([
        Exercise("econ.ex06_1", model.normalize_claim(h200, h100, per_watt=False).ratio, 0.01,
                 "배"),
        Exercise("econ.ex06_2", model.normalize_claim(b200, h200, precision_gain=2.0,
                                                      per_watt=False).ratio, 0.01, "배"),
        Exercise("econ.ex06_3", float(plan.racks), 0.0, "개"),
    ])

