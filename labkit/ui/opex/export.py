"""The room's scenario as CSV and as a one-page Korean summary for the 행정실."""

from __future__ import annotations

import base64
import csv
import html
import io
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from labkit import opex
from labkit.i18n import t
from labkit.ui import format as fmt
from labkit.ui.opex.common import COLORS, _tariff, _won
from labkit.ui.opex.room import RoomApp

# --- export ----------------------------------------------------------------------------------

def _cell(value: Any) -> Any:
    """Keep spreadsheet programs from running a cell as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def csv_text(result: opex.OpexResult, inputs: dict[str, Any]) -> str:
    """Return the scenario as one tidy CSV: ``section,key,value,unit`` rows.

    Sections: ``input`` (every control value), ``result`` (:func:`labkit.opex.summary_table`),
    ``bill`` (each month's bill lines, key ``YYYY-MM.<line>``), ``source`` (provenance).
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["section", "key", "value", "unit"])
    for key, value in inputs.items():
        writer.writerow(["input", key, _cell(value), ""])
    for row in opex.summary_table(result).itertuples(index=False):
        writer.writerow(["result", row.key, _cell(row.value), row.unit])
    for month, bill in result.bills.iterrows():
        for col, value in bill.items():
            unit = "KRW" if str(col).endswith("_krw") else ("kW" if str(col).endswith("_kw")
                                                           else "")
            writer.writerow(["bill", f"{month}.{col}", value, unit])
    tar = _tariff(result.tariff_class)
    writer.writerow(["source", "tariff", _cell(tar.source), f"as_of {tar.as_of}"])
    writer.writerow(["source", "tariff_verified", tar.verified, ""])
    writer.writerow(["source", "server", _cell(result.design.server.source), ""])
    return out.getvalue()


def _svg_bills(result: opex.OpexResult) -> str:
    """A small stacked-bar chart of the 12 bills as inline SVG (no scripts in the summary)."""
    bills = result.bills
    parts = [("base", bills["base_krw"]), ("energy", bills["energy_krw"]),
             ("adders", bills["climate_krw"] + bills["fuel_krw"]),
             ("taxes", bills["vat_krw"] + bills["fund_levy_krw"])]
    width, height, left, bottom = 640, 150, 60, 20
    top = float(bills["total_krw"].max()) * 1.1 or 1.0
    bar = (width - left - 10) / len(bills)
    shapes = []
    for i, _ in enumerate(bills.index):
        y = float(height - bottom)
        for key, series in parts:
            h = float(series.iloc[i]) / top * (height - bottom - 10)
            y -= h
            shapes.append(f'<rect x="{left + i * bar + 4:.1f}" y="{y:.1f}" '
                          f'width="{bar - 8:.1f}" height="{h:.1f}" fill="{COLORS[key]}"/>')
        shapes.append(f'<text x="{left + i * bar + bar / 2:.1f}" y="{height - 6}" '
                      f'font-size="11" text-anchor="middle">{bills.index[i].month}월</text>')
    for frac in (0.5, 1.0):
        value = top / 1.1 * frac
        y_line = height - bottom - value / top * (height - bottom - 10)
        shapes.append(f'<text x="{left - 6}" y="{y_line + 4:.1f}" font-size="10" '
                      f'text-anchor="end">{value / 10_000:,.0f}만</text>'
                      f'<line x1="{left}" x2="{width - 10}" y1="{y_line:.1f}" y2="{y_line:.1f}" '
                      f'stroke="#ddd"/>')
    legend = "".join(
        f'<span style="display:inline-block;width:10px;height:10px;background:{COLORS[k]};'
        f'margin:0 4px 0 12px"></span>{html.escape(t(f"opex.bill.{k}"))}' for k, _ in parts)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'role="img" aria-label="{html.escape(t("opex.report.chart"))}">'
            + "".join(shapes) + f'</svg><div class="legend">{legend}</div>')


def _key_rows(result: opex.OpexResult) -> list[tuple[str, str]]:
    """The summary's key figures: (label, value) pairs."""
    d = result.design
    total_idle, _ = result.idle_costs()
    return [
        (t("opex.report.servers"), f"{d.server.name} × {d.n_servers} ({d.gpus} GPU)"),
        (t("opex.report.power"), f"{fmt.fixed(d.peak_facility_kw, 1)} kW (PUE {d.pue:g}), "
                                 + t("opex.report.contract", kw=f"{d.contract:g}")),
        (t("opex.report.tariff"), result.tariff_class
         + (" · " + t("opex.f.school_exception") if d.school_exception else "")),
        (t("opex.sum.utilization"), fmt.pct(result.mean_utilization)),
        (t("opex.sum.electricity"), fmt.krw(result.electricity_krw)),
        (t("opex.line.staff"), fmt.krw(result.breakdown.staff_krw)),
        (t("opex.line.maintenance"), fmt.krw(result.breakdown.maintenance_krw)),
        (t("opex.report.opex"), fmt.krw(result.opex_krw)),
        (t("opex.line.capital"), fmt.krw(result.breakdown.capital_krw)),
        (t("opex.line.facility"), fmt.krw(result.breakdown.facility_krw)),
        (t("opex.report.tco"), fmt.krw(result.tco_krw)),
        (t("opex.ch.used"), _won(result.cost_per_used_gpu_h)),
        (t("opex.ch.student"), _won(result.cost_per_student_h)),
        (t("opex.report.tokens"), _won(result.cost_per_m_tokens)),
        (t("opex.report.rent"), fmt.krw(result.rent_same_work_krw)),
        (t("opex.report.api"), fmt.krw(result.api_same_work_krw)),
        (t("opex.report.idle"), f"{fmt.pct(result.idle_share)} ({fmt.krw(total_idle)})"),
    ]


def _bill_rows(result: opex.OpexResult) -> list[tuple[str, ...]]:
    """The summary's bill table: one row per month and the year's total."""
    bill_rows: list[tuple[str, ...]] = [
        (f"{p.year}년 {p.month}월", f"{b['kwh']:,.0f}", f"{b['billing_kw']:.1f}",
         f"{b['base_krw']:,.0f}", f"{b['energy_krw']:,.0f}", f"{b['total_krw']:,.0f}")
        for p, b in result.bills.iterrows()]
    bill_rows.append((t("opex.report.year_total"), f"{result.bills['kwh'].sum():,.0f}", "",
                      f"{result.bills['base_krw'].sum():,.0f}",
                      f"{result.bills['energy_krw'].sum():,.0f}",
                      f"{result.bills['total_krw'].sum():,.0f}"))
    return bill_rows


def _sources_text(result: opex.OpexResult) -> str:
    """The summary's sources in Korean; the data files' own (English) wording stays in the CSV."""
    tar = _tariff(result.tariff_class)
    key = "opex.report.source_tariff" if tar.verified else "opex.report.source_tariff_unverified"
    return " ".join([t(key, cls=result.tariff_class, date=tar.effective_date, as_of=tar.as_of),
                     t("opex.report.source_server", name=result.design.server.name),
                     t("opex.report.source_csv")])


def summary_html(result: opex.OpexResult, school: str = "") -> str:
    """Return a one-page Korean summary for the school administration (self-contained HTML).

    Holds the design, the year's bills (a table and an inline SVG chart), opex/TCO, costs per
    hour and per token, the class-hours-only comparison is not included (it is a lesson view),
    the sources and, while the tariff is unverified, the warning to check KEPCO's table.
    """
    e = html.escape
    tar = _tariff(result.tariff_class)
    key_rows, bill_rows = _key_rows(result), _bill_rows(result)
    warning = (f'<p class="warn">⚠ {e(t("opex.warn.unverified", date=tar.effective_date))}</p>'
               if not tar.verified else "")
    title = t("opex.report.title") + (f" — {school}" if school else "")
    return f"""<!DOCTYPE html>
<html lang="ko"><head><meta charset="utf-8"><title>{e(title)}</title>
<style>
@page {{ size: A4; margin: 14mm; }}
body {{ font-family: "Noto Sans CJK KR", "Malgun Gothic", "Apple SD Gothic Neo", sans-serif;
  font-size: 10.5px; color: #222; max-width: 760px; margin: auto; }}
svg {{ display: block; margin-top: 4px; }} .legend {{ margin: 2px 0 6px; }}
h1 {{ font-size: 18px; margin: 0 0 2px; }} h2 {{ font-size: 13px; margin: 8px 0 3px; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 1px 6px; text-align: left; }}
td.n, th.n {{ text-align: right; white-space: nowrap; }}
.warn {{ background: #fff6e0; border-left: 4px solid #d98e04; padding: 4px 8px; }}
.small {{ color: #555; font-size: 9px; margin: 2px 0; }}
</style></head><body>
<h1>{e(title)}</h1>
<p class="small">{e(t("opex.report.made", day=date.today().isoformat()))}</p>
{warning}
<h2>{e(t("opex.report.key"))}</h2>
<table>{"".join(
    "<tr>" + "".join(f"<td>{e(k)}</td><td class='n'>{e(v)}</td>" for k, v in key_rows[i:i + 2])
    + "</tr>" for i in range(0, len(key_rows), 2))}</table>
<h2>{e(t("opex.report.bills"))}</h2>
{_svg_bills(result)}
<table><tr>{"".join(f"<th class='n'>{e(h)}</th>" for h in (
        t("opex.report.month"), "kWh", t("opex.report.billing_kw"), t("opex.bill.base"),
        t("opex.bill.energy"), t("opex.report.due")))}</tr>
{"".join("<tr>" + "".join(f"<td class='n'>{e(c)}</td>" for c in row) + "</tr>"
         for row in bill_rows)}</table>
<h2>{e(t("opex.report.notes"))}</h2>
<p class="small">{e(t("opex.report.method"))}</p>
<p class="small">{e(t("opex.report.sources"))} {e(_sources_text(result))}</p>
</body></html>
"""


def _data_link(name: str, mime: str, payload: bytes, label: str, css: str) -> str:
    encoded = base64.b64encode(payload).decode("ascii")
    return (f'<a class="{css}" download="{html.escape(name)}" '
            f'href="data:{mime};base64,{encoded}" style="margin-right:16px">'
            f"⬇ {html.escape(label)}</a>")


class ExportPanel(widgets.VBox):
    """Export the room's scenario: CSV + one-page HTML, per-session temp folder + downloads."""

    def __init__(self, room: RoomApp) -> None:
        super().__init__()
        self.room = room
        self.add_class("lk-export")
        self.folder: Path | None = None
        self.button = widgets.Button(description=t("opex.export.button"), icon="download",
                                     layout=widgets.Layout(width="260px"))
        self.button.add_class("lk-export-button")
        self.button.on_click(self.export)
        self.links = widgets.HTML()
        self.links.add_class("lk-export-links")
        self.children = [self.button, self.links]
        self.files: dict[str, Path] = {}

    def _session_folder(self) -> Path:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="labkit-opex-"))
        return self.folder

    def export(self, *_: Any) -> dict[str, Path]:
        """Write the CSV and the HTML summary into this session's folder; show the links."""
        result = self.room.result
        if result is None:
            self.links.value = t("opex.export.nothing")
            return {}
        folder = self._session_folder()
        inputs = {k: f.control.value for k, f in self.room.fields.items()}
        files = {
            "opex_scenario.csv": ("text/csv;charset=utf-8",
                                  ("\ufeff" + csv_text(result, inputs)).encode("utf-8")),
            "opex_summary.html": ("text/html;charset=utf-8",
                                  summary_html(result).encode("utf-8")),
        }
        links = []
        self.files = {}
        for name, (mime, payload) in files.items():
            path = folder / name
            path.write_bytes(payload)
            self.files[name] = path
            css = "lk-export-csv" if name.endswith(".csv") else "lk-export-html"
            links.append(_data_link(name, mime, payload, t(f"opex.export.{css[10:]}"), css))
        self.links.value = (" ".join(links) + "<br>"
                            + f'<span style="color:#555">{t("opex.export.where")}</span>')
        return self.files


def export_panel(room: RoomApp) -> ExportPanel:
    """Return the export panel for ``room``.

    Used in: notebooks/07_opex_lab.ipynb
    """
    return ExportPanel(room)
