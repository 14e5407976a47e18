"""Lesson 09, the capstone: the class decides buy / rent / API and a sharing policy for 우리 학교.

- :func:`decision_app` — the decision's controls (how much the school uses the server, the
  rent and API prices, the class and its jobs; everything else from the school case), a chart
  of the three yearly costs, the recommendation and the class's sharing modes, and the
  one-page report for the 행정실 and the teacher (:func:`report_html`, an HTML download).

Used in: notebooks/09_capstone.ipynb
"""

from __future__ import annotations

import html
import math
from datetime import date
from typing import Any

import ipywidgets as widgets
import plotly.graph_objects as go

from labkit import capstone
from labkit.capstone import Decision
from labkit.data import school as school_data
from labkit.data.tariff import load_tariff
from labkit.i18n import t
from labkit.school import SchoolCase
from labkit.ui import format as fmt
from labkit.ui import school as ui_school
from labkit.ui.components import Field, FigureOutput, LiveApp, number_field, styled_figure
from labkit.ui.files import download_link

__all__ = ["DecisionApp", "decision_app", "decision_figure", "key_numbers", "report_html",
           "share_title", "share_total"]

_COLORS = {"buy": "#3b6fb6", "rent": "#2a9d8f", "api": "#e76f51"}
_PCT = ("class_frac", "after_school_frac", "vacation_frac", "always_on_frac")
REPORT_NAME = "우리학교_AI서버_결정.html"


def _won(x: float) -> str:
    return fmt.krw(x)


def decision_figure(d: Decision) -> Any:
    """Return the three yearly costs as bars, the cheapest outlined. [만 원/년]"""
    fig = styled_figure(title=t("capstone.chart.title"), yaxis_title=t("capstone.chart.y"),
                        showlegend=False, height=340)
    keys = list(capstone.OPTIONS)
    ys = [d.costs_krw[k] / 10_000 for k in keys]
    fig.add_trace(go.Bar(
        x=[t(f"capstone.option.{k}") for k in keys], y=ys,
        text=[_won(d.costs_krw[k]) for k in keys], textposition="outside",
        # one figure per value: the bar's own label (1억 5,067만 원), not y in 만 원 beside it
        hovertemplate="%{x}: %{text}<extra></extra>",
        marker={"color": [_COLORS[k] for k in keys],
                "line": {"width": [4 if k == d.cheapest else 0 for k in keys],
                         "color": "#222"}}))
    fig.update_yaxes(range=[0, max(ys) * 1.2], tickformat=",d")
    return fig


def _hours(h: float) -> str:
    """Hours as lesson 02 shows them: 4 h, 1.5 h, 0 h (two decimals at most, no "4.00")."""
    return f"{fmt.number(round(h, 2))} h" if math.isfinite(h) else "n/a"


def _share_rows(d: Decision) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for s in d.sharing:
        state = t("capstone.share.ok") if s.ok else t("capstone.share.lost",
                                                      n=s.jobs - s.done_jobs)
        rows.append((t(f"capstone.mode.{s.mode}"), _hours(s.makespan_h) if s.done_jobs
                     else "—", _hours(s.mean_wait_h) if s.done_jobs else "—",
                     f"{s.done_jobs}/{s.jobs}", state))
    return rows


def share_title(d: Decision) -> str:
    """The sharing table's title: the class, its GPUs and the per-GPU count the table shows."""
    c = d.case
    return t("capstone.share.title", students=c.students, gpus=c.n_gpus,
             n=capstone.students_per_gpu(c))


def share_total(d: Decision) -> str:
    """The line under the sharing table: what the chosen mode means for the whole class."""
    c = d.case
    chosen = [s for s in d.sharing if s.mode == d.share_mode]
    if chosen:
        return t("capstone.share.class_total", gpus=c.n_gpus, students=c.students)
    worst = max(d.sharing, key=lambda s: s.jobs - s.done_jobs)
    return t("capstone.share.class_lost", n=worst.jobs - worst.done_jobs, students=c.students)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], css: str) -> str:
    head = "".join(f"<th style='padding:2px 10px;text-align:left'>{html.escape(h)}</th>"
                   for h in header)
    body = "".join("<tr>" + "".join(f"<td style='padding:2px 10px'>{html.escape(c)}</td>"
                                    for c in r) + "</tr>" for r in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def recommendation_lines(d: Decision) -> list[str]:
    """The recommendation in Korean, one sentence a line (plain text)."""
    c = d.case
    lines = [t("capstone.rec.cheapest", option=t(f"capstone.option.{d.cheapest}"),
               cost=_won(d.costs_krw[d.cheapest]), saving=_won(d.saving_krw)),
             t("capstone.rec.utilization", pct=fmt.pct(d.utilization),
               used=f"{d.room.used_gpu_h:,.0f}", class_pct=fmt.pct(d.class_share))]
    if d.share_mode is None:
        lines.append(t("capstone.rec.no_share", gb=f"{c.job_memory_gb:g}"))
    else:
        lines.append(t("capstone.rec.share", mode=t(f"capstone.mode.{d.share_mode}"),
                       n=capstone.students_per_gpu(c), students=c.students, gpus=c.n_gpus))
    lines.append(t(f"capstone.rec.why.{d.cheapest}"))
    return lines


def _assumption(source: str) -> str:
    """A data file's source as the report says it: the files mark a teaching assumption with
    a leading ``[A]`` (data/school/case.yaml); the 행정실 reads "수업용 가정"."""
    if source.startswith("[A]"):
        return t("capstone.report.assumption", rest=source[3:].strip())
    return source


def _footnotes(case: SchoolCase) -> list[str]:
    sources = school_data.case_sources()
    default = school_data.load_default_case()
    # a figure the school changed is its own, not the default's source (stop 20's trial)
    notes = [f"{t(f'school.f.{k}')}: "
             + (f"{_assumption(src)} ({as_of})" if getattr(case, k) == getattr(default, k)
                else t("capstone.report.school_value"))
             for k, (src, as_of) in sources.items()
             if k in ("server_price_usd", "fx_krw_per_usd", "pue", "contract_kw", "tariff_class",
                      "api_usd_per_m_tokens", "rent_usd_per_gpu_hour", "students")]
    tariff = load_tariff(case.tariff_class)
    notes.append(t("capstone.report.tariff_source", source=tariff.source,
                   date=str(tariff.effective_date)))
    notes.append(t("capstone.report.model_source"))
    return notes


def report_html(d: Decision, *, today: date | None = None) -> str:
    """Return the one-page report for the 행정실 and the teacher (a standalone HTML page).

    Korean, printable on one A4 page: the case, the three yearly costs, the recommendation,
    the sharing modes, and every figure's source as a numbered footnote.
    """
    c = d.case
    day = (today or date.today()).isoformat()
    costs = [(t(f"capstone.option.{k}"), _won(v)) for k, v in d.ranked()]
    notes = _footnotes(c)
    foot = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    rec = "".join(f"<li>{html.escape(line)}</li>" for line in recommendation_lines(d))
    facts = [
        t("school.card.server", gpu=c.gpu_model, n=c.n_gpus, price=_won(c.server_price_krw)),
        t("school.card.power", tariff=c.tariff_class, kw=f"{c.contract_kw:g}", pue=f"{c.pue:g}"),
        t("school.card.class", students=c.students, start=f"{c.class_start_h:g}",
          end=f"{c.class_end_h:g}", per_gpu=str(c.students_per_gpu)),
    ]
    fact_html = "".join(f"<li>{html.escape(f)}</li>" for f in facts)
    share = _table((t("capstone.share.mode"), t("capstone.share.makespan"),
                    t("capstone.share.wait"), t("capstone.share.done"),
                    t("capstone.share.state")), list(_share_rows(d)), "lk-report-share")
    cost_table = _table((t("capstone.report.option"), t("capstone.report.cost")),
                        list(costs), "lk-report-costs")
    title = html.escape(t("capstone.report.title", name=c.name))
    return (
        '<!DOCTYPE html><html lang="ko"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>body{{font-family:'Noto Sans CJK KR','Malgun Gothic',"
        "sans-serif;max-width:760px;margin:24px auto;font-size:14px;line-height:1.6}"
        "h1{font-size:20px}h2{font-size:16px;margin-top:18px}table{border-collapse:collapse}"
        "td,th{border-bottom:1px solid #ddd}.foot{font-size:12px;color:#555}</style></head>"
        f"<body><h1>{title}</h1>"
        f"<p>{html.escape(t('capstone.report.for', date=day))}</p>"
        f"<h2>{html.escape(t('capstone.report.case'))}</h2><ul>{fact_html}</ul>"
        f"<h2>{html.escape(t('capstone.report.costs'))}</h2>{cost_table}"
        f"<p>{html.escape(t('capstone.report.same_work'))}</p>"
        f"<h2>{html.escape(t('capstone.report.decision'))}</h2><ol>{rec}</ol>"
        f"<h2>{html.escape(t('capstone.report.sharing'))}</h2>"
        f"<p>{html.escape(share_title(d))}</p>{share}<p>{html.escape(share_total(d))}</p>"
        f"<h2>{html.escape(t('capstone.report.sources'))}</h2><ol class='foot'>{foot}</ol>"
        "</body></html>")


def _control_value(case: SchoolCase, key: str) -> float:
    """The case's figure ``key`` as its control shows it (the usage fractions in %)."""
    value = float(getattr(case, key))
    return round(value * 100, 6) if key in _PCT else value


class DecisionApp(LiveApp[Decision]):
    """The capstone's decision (see :func:`decision_app`).

    Built on the school case every lesson reads; it follows a save or reset in the school
    editor of the same kernel (:func:`labkit.ui.school.on_case_changed`): the case, its server
    and tariff are taken again and the controls start from the new case's figures.
    """

    def __init__(self, case: SchoolCase | None = None) -> None:
        loaded = school_data.load_case()
        self.case = case or loaded.case
        self.server = school_data.server_for_case(self.case)
        self.tariff = load_tariff(self.case.tariff_class)
        self.calendar = school_data.load_school_calendar()
        self._following = False
        c = self.case
        fields: list[Field] = [
            number_field(key, t(f"school.f.{key}"), _control_value(c, key), unit="%",
                         step=5, scale=100) for key in _PCT]
        fields += [
            number_field("api_usd_per_m_tokens", t("school.f.api_usd_per_m_tokens"),
                         c.api_usd_per_m_tokens, unit="USD", step=0.05),
            number_field("rent_usd_per_gpu_hour", t("school.f.rent_usd_per_gpu_hour"),
                         c.rent_usd_per_gpu_hour, unit="USD/GPU·h", step=0.1),
            number_field("students", t("school.f.students"), c.students,
                         unit=t("school.unit.people")),
            number_field("job_memory_gb", t("school.f.job_memory_gb"), c.job_memory_gb,
                         unit="GB", step=0.5),
        ]
        super().__init__("capstone", fields, error_prefix="school")
        self.chart = FigureOutput("lk-capstone-chart")
        self.recommendation = widgets.HTML()
        self.recommendation.add_class("lk-capstone-recommendation")
        self.sharing_table = widgets.HTML()
        self.sharing_table.add_class("lk-capstone-sharing")
        self.report = widgets.HTML()
        self.report.add_class("lk-capstone-report-box")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.chart,
                         self.recommendation, self.sharing_table, self.report]
        #: What a prediction about the cheapest option hides until it is confirmed (issue 25;
        #: the report too: it names the cheapest option, the new teacher's trial found);
        #: the controls stay to read.
        self.revealing = [self.chart, self.recommendation, self.sharing_table, self.report]
        self.update()
        if case is None:
            ui_school.on_case_changed(self.follow)

    def follow(self, case: SchoolCase) -> None:
        """Decide for ``case``, just saved (or reset) in the school editor: one recompute."""
        self.case = case
        self.server = school_data.server_for_case(case)
        self.tariff = load_tariff(case.tariff_class)
        self._following = True
        try:
            for key, f in self.fields.items():
                f.default = _control_value(case, key)  # the tasks' "initial value" too
                f.control.value = f.default
        finally:
            self._following = False
        self.update()

    def update(self, *args: Any) -> None:
        """Recompute (see :meth:`LiveApp.update`); once, not per control, while following."""
        if not self._following:
            super().update(*args)

    def compute(self, values: dict[str, Any]) -> Decision:
        case = self.case.changed(**values)
        return capstone.decide(case, self.server, self.tariff, self.calendar)

    def render(self, result: Decision) -> None:
        self.chart.show(decision_figure(result))
        lines = recommendation_lines(result)
        self.recommendation.value = (
            '<div style="padding:8px 12px;border-left:4px solid #3b6fb6;background:#eef3fb">'
            f"<b>{html.escape(t('capstone.rec.title'))}</b><br>"
            + "<br>".join(html.escape(line) for line in lines) + "</div>")
        self.sharing_table.value = (
            f"<b>{html.escape(share_title(result))}</b>"
            + _table((t("capstone.share.mode"), t("capstone.share.makespan"),
                      t("capstone.share.wait"), t("capstone.share.done"),
                      t("capstone.share.state")), list(_share_rows(result)),
                     "lk-capstone-share-table")
            + f"<div class='lk-capstone-share-total'>{html.escape(share_total(result))}</div>")
        # a button named 보고서 내려받기 (issue 25: the trial did not find the file's link)
        link = download_link(REPORT_NAME, report_html(result).encode("utf-8"),
                             mime="text/html", css_class="lk-capstone-report",
                             label=t("capstone.report.download"), button=True)
        self.report.value = link.value


def key_numbers() -> fmt.Table:
    """Return the default case's decision as a small Korean table (deterministic text).

    The default case (``data/school/case.yaml``), not a saved copy, so the checked numbers are
    the same on every machine.

    Used in: notebooks/09_capstone.ipynb
    """
    case = school_data.load_default_case()
    d = capstone.decide(case, school_data.server_for_case(case), load_tariff(case.tariff_class),
                        school_data.load_school_calendar())
    rows = [(t(f"capstone.option.{k}"), _won(v)) for k, v in d.ranked()]
    rows += [(t("capstone.key.utilization"), fmt.pct(d.utilization)),
             (t("capstone.key.class_share"), fmt.pct(d.class_share)),
             (t("capstone.key.cheapest"), t(f"capstone.option.{d.cheapest}")),
             (t("capstone.key.share"), t(f"capstone.mode.{d.share_mode}") if d.share_mode
              else "—")]
    return fmt.rows_table(rows, [t("capstone.key.item"), t("capstone.key.value")])


def decision_app() -> DecisionApp:
    """Return the capstone decision for the school case every lesson uses.

    Used in: notebooks/09_capstone.ipynb
    """
    return DecisionApp()
