"""What a student sees, rendered headless: no English outside parentheses, no internal values.

Each lesson's code cells are run here in order, the way the notebook runs them (the builders
the notebooks call, ``ui.<lesson>.<builder>()``, with the variables they pass each other); the
value of each cell's last expression is what the page shows. The widget tree is walked for
every text a student reads: labels and descriptions, options, HTML and Label values, tooltips,
placeholders, tab titles, plotly figures (titles, axis titles, legend names, annotations, bar
texts, hover templates) and tables (headers and cells). The rules are the catalog's
(tests/test_catalog_register.py); a tooltip is never the text "null".

Texts that come from data (a cluster's published name, an MLPerf system) are not the UI's
words; :data:`ALLOWED` lists, per lesson, what may still show and why: proper names from data
and identifiers a lesson teaches as code (NVML calls, nvidia-smi fields) where a table or a
dropdown cannot mark them as ``<code>``.
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
import pytest

from labkit.ui import format as fmt
from tests.test_catalog_register import english_outside_parentheses, internal_values

ROOT = Path(__file__).resolve().parents[1]

#: lesson -> words or internal values that may still show, each with its reason.
ALLOWED: dict[str, dict[str, str]] = {
    "02_mig": {
        "NVIDIA": "board names from data/gpus (NVIDIA's product names)",
        "Blackwell": "board names from data/gpus (RTX PRO 6000 Blackwell)",
        "Server": "board names from data/gpus (RTX PRO 6000 Blackwell Server Edition)",
        "Edition": "board names from data/gpus",
        "Max-Q": "board names from data/gpus",
        "Workstation": "board names from data/gpus",
        "SXM": "board names from data/gpus",
        "PCIe": "board names from data/gpus",
        "version": "the mig-parted example in the import box's placeholder (code)",
        "mig-configs": "the mig-parted example in the import box's placeholder (code)",
        "mig": "the nvidia-smi mig subcommand named in the import title",
        "labkit-mig.sh": "the script's file name on the download link",
    },
    "03_goodput": {},
    "04_reliability": {
        # cluster and component names as Meta, Epoch AI and the StepFun trace publish them
        # clusters as data/reliability/failure_rates.csv names them (the sources' own names)
        "StepFun": "the trace's publisher", "InfiniteHBD": "the trace's name",
    },
    "01_observe": {
        # the reference table teaches the identifiers themselves: NVML's calls and nvidia-smi's
        # --query-gpu field names, as a student types them (code, not prose)
        **dict.fromkeys([
            "nvmlDeviceGetClockInfo", "nvmlDeviceGetCurrentClocksEventReasons",
            "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetFanSpeed", "nvmlDeviceGetFieldValues",
            "nvmlDeviceGetMaxClockInfo", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo.total",
            "nvmlDeviceGetMemoryInfo.used", "nvmlDeviceGetPcieThroughput",
            "nvmlDeviceGetPowerUsage",
            "nvmlDeviceGetRemappedRows", "nvmlDeviceGetTemperature", "nvmlDeviceGetTotalEccErrors",
            "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetUtilizationRates.gpu",
            "nvmlDeviceGetUtilizationRates.memory", "nvmlGpmMetricsGet", "nvmlEventSetWait",
            "nvmlEventTypeXidCriticalError", "eventData", "for",  # "nvmlEventSetWait(set) for …"
        ], "an NVML call in the reference table (code)"),
        **dict.fromkeys([
            "clocks", "clocks_event_reasons", "clocks.sm", "clocks.max.sm", "fan.speed",
            "ecc.errors.uncorrected.volatile.total", "enforced.power.limit", "memory.total",
            "memory.used", "power.draw", "remapped", "remapped_rows", "temperature.gpu",
            "temperature.memory", "utilization.gpu", "utilization.memory",
        ], "an nvidia-smi --query-gpu field in the reference table (code)"),
        # the field lists a student types for a header-less nvidia-smi log (the text box's
        # placeholder and the field-set options): --query-gpu field names (code)
        **dict.fromkeys(["timestamp", "index", "bus_id"],
                        "an nvidia-smi --query-gpu field the student types (code)"),
    },
    "05_break_even": {
        # the price tables (data/economics/*_prices.csv): providers, their models and offers
        # as they sell them (proper names)
        **dict.fromkeys(["Anthropic", "Claude", "Sonnet", "Haiku", "Google", "Gemini", "Flash",
                         "Flash-Lite", "OpenAI", "DeepSeek", "DeepInfra", "Groq", "Together",
                         "Lambda", "Modal", "RunPod", "TensorWave"],
                        "an API or cloud provider, or its model (proper name)"),
        **dict.fromkeys(["Capacity", "Blocks"], "the offer 'AWS EC2 Capacity Blocks' (its name)"),
        "Blackwell": "the board 'RTX PRO 6000 Blackwell' (NVIDIA's product name)",
        "SXM/PCIe": "H100 SXM/PCIe: NVIDIA's form factors",
    },
    "06_benchmarks": {
        # MLPerf Inference rows (data/economics/mlperf_inference_llm.csv): submitters as
        # MLCommons publishes them (organisation names); systems are shown by their labels
        **dict.fromkeys(["ASUSTeK", "Cisco", "Fujitsu", "Google", "Krai", "Nebius", "RedHat"],
                        "an MLPerf submitter's name (proper name)"),
    },
    "07_opex_lab": {},
    "08_orchestration": {},
    "09_capstone": {"Groq": "the API provider whose price the school case cites (proper name)"},
}


def _cells(notebook: Path) -> list[str]:
    book = json.loads(notebook.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in book["cells"] if c["cell_type"] == "code"]


def run_lesson(notebook: Path) -> list[Any]:
    """Run the notebook's code cells in one namespace; return each cell's shown value."""
    namespace: dict[str, Any] = {}
    shown = []
    for source in _cells(notebook):
        tree = ast.parse("\n".join(line for line in source.splitlines()
                                   if not line.lstrip().startswith(("%", "!"))))
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = tree.body[:-1] if last is not None else tree.body
        exec(compile(ast.Module(body=body, type_ignores=[]), str(notebook), "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), str(notebook), "eval"), namespace)
            if value is not None:
                shown.append(value)
    return shown


def _strip(markup: str) -> str:
    # code (a log line, a command) is shown as code: <code>/<pre> content is not prose
    markup = re.sub(r"<(style|script|code|pre)\b.*?</\1>", " ", markup, flags=re.S)
    markup = re.sub(r"<[^>]+>", " ", markup)
    return html.unescape(markup)


#: Where a table cites its sources: the cells under a source header and the footnotes.
SOURCE = "table source"
SOURCE_HEADERS = {"출처"}


def _axes(fig: go.Figure) -> Iterator[Any]:
    """Every axis of the figure's layout (xaxis, yaxis2, … as plotly names them)."""
    plain = fig.layout.to_plotly_json()
    for name in sorted(plain):
        if re.fullmatch(r"[xy]axis\d*", name):
            yield fig.layout[name]


def _figure_texts(fig: go.Figure) -> Iterator[str]:
    layout = fig.layout
    yield layout.title.text or ""
    yield layout.legend.title.text or ""
    for axis in _axes(fig):
        if axis.title.text:
            yield axis.title.text
        yield from (str(v) for v in axis.ticktext or ())
        yield from (s for s in (axis.ticksuffix, axis.tickprefix) if s)
    for note in layout.annotations or ():
        yield note.text or ""
    for trace in fig.data:
        if trace.name:  # the legend, and the hover label even where the legend hides it
            yield trace.name
        colorbar = getattr(trace, "colorbar", None) or getattr(
            getattr(trace, "marker", None), "colorbar", None)
        if colorbar is not None and colorbar.title.text:
            yield colorbar.title.text
        legendgroup_title = getattr(trace, "legendgrouptitle", None)
        if legendgroup_title is not None and legendgroup_title.text:
            yield legendgroup_title.text
        for attr in ("text", "hovertext"):
            value = getattr(trace, attr, None)
            if isinstance(value, str):
                yield value
            elif value is not None:
                yield from (str(v) for v in value)
        yield from (v for v in _values(trace, "customdata") if isinstance(v, str))
        template = getattr(trace, "hovertemplate", None)
        if template:
            yield re.sub(r"%\{[^}]*\}|<extra>.*?</extra>", " ", template)
        for attr in ("x", "y"):
            values = getattr(trace, attr, None)
            if values is not None and len(values) and isinstance(values[0], str):
                yield from values


def texts(value: Any) -> Iterator[tuple[str, str]]:
    """(where, text) for every text a student reads in ``value``."""
    if isinstance(value, pd.DataFrame):
        frame = value.reset_index() if not isinstance(value.index, pd.RangeIndex) else value
        yield from (("table header", str(c)) for c in frame.columns)
        yield from (("table cell", str(v)) for v in frame.to_numpy().ravel() if isinstance(v, str))
        return
    if isinstance(value, go.Figure):
        yield from (("figure", s) for s in _figure_texts(value))
        return
    if isinstance(value, fmt.Table):
        yield from (("table header", h) for h in value.headers)
        sources = [h in SOURCE_HEADERS for h in value.headers]
        for row in value.rows:
            yield from ((SOURCE if is_source else "table cell", c)
                        for c, is_source in zip(row, sources, strict=True))
        yield from ((SOURCE, n) for n in value.footnotes)
        if value.caption:
            yield "table caption", value.caption
        return
    if not isinstance(value, widgets.Widget):
        return
    stack = [value]
    while stack:
        w = stack.pop()
        name = type(w).__name__
        for attr in ("description", "placeholder", "tooltip"):
            text = getattr(w, attr, None)
            if isinstance(text, str) and text:
                yield f"{name}.{attr}", text
        if isinstance(w, (widgets.HTML, widgets.HTMLMath, widgets.Label)):
            yield f"{name}.value", _strip(w.value)
        if isinstance(w, (widgets.Textarea, widgets.Text)) and w.disabled:
            yield f"{name}.value", w.value
        for label in getattr(w, "_options_labels", ()):
            yield f"{name}.options", label
        for title in getattr(w, "titles", ()) or ():
            yield f"{name}.titles", str(title)
        figure = getattr(w, "figure", None)
        if isinstance(figure, go.Figure):
            yield from ((f"{name}.figure", s) for s in _figure_texts(figure))
        stack.extend(getattr(w, "children", ()))


#: A decimal number as a page shows it ("1.26984", "132.197", "31,106.28").
DECIMAL = re.compile(r"(?<![\w.,])\d[\d,]*\.\d+(?![.\d])")
#: The most significant digits a number a person reads carries (labkit.ui.format).
MAX_DIGITS = 4


def raw_numbers(text: str) -> list[str]:
    """Decimals in ``text`` with more than :data:`MAX_DIGITS` significant digits."""
    return [m.group(0) for m in DECIMAL.finditer(text)
            if len(m.group(0).replace(",", "").replace(".", "").lstrip("0")) > MAX_DIGITS]


def _axis_values(fig: go.Figure) -> dict[str, list[float]]:
    """Numbers each layout axis draws: axis name ('xaxis', 'yaxis2') -> the traces' values."""
    values: dict[str, list[float]] = {}
    for trace in fig.data:
        for attr in ("x", "y"):
            data = getattr(trace, attr, None)
            if data is None or not len(data) or isinstance(data[0], str):
                continue
            ref = getattr(trace, f"{attr}axis", None) or attr
            name = f"{attr}axis{ref[1:]}"
            numbers = [float(v) for v in data if isinstance(v, (int, float)) and v == v]
            base = getattr(trace, "base", None)
            if attr == ("x" if getattr(trace, "orientation", None) == "h" else "y") and base:
                numbers += [float(b) for b in ([base] if isinstance(base, (int, float)) else base)]
            values.setdefault(name, []).extend(numbers)
    return values


def raw_ticks(fig: go.Figure) -> list[str]:
    """Axes whose tick labels the browser writes raw: plotly's SI suffixes (40k, 40M) where no
    tick format is set past 10,000, and digits past 1,000만 (-40,000,000) without ticks in
    만/억 (``ticktext``) or values scaled to a larger unit."""
    found = []
    for name, numbers in _axis_values(fig).items():
        axis = fig.layout[name] if name in fig.layout else None
        top = max((abs(v) for v in numbers), default=0)
        if axis is None or axis.type == "category":
            continue
        if top >= 1e4 and not axis.tickformat and not axis.ticktext:
            found.append(f"{name}: SI ticks up to {top:,.0f}")
        elif top >= 1e3 and not axis.ticktext and "," not in (axis.tickformat or ""):
            # plotly writes 1,000-9,999 without a thousands separator ("8000" on 05's axis)
            found.append(f"{name}: ticks without a thousands separator up to {top:,.0f}")
        elif top >= 1e7 and not axis.ticktext:
            found.append(f"{name}: ticks in raw digits up to {top:,.0f}")
    return found


#: A number in scientific notation as Python or plotly writes it ("3.2e+06", "2.4E5").
SCIENTIFIC = re.compile(r"\d(?:\.\d+)?[eE][+-]?\d")
#: A hover template's field: %{y}, %{y:,.0f}, %{customdata[1]}, %{text}.
FIELD = re.compile(r"%\{(?P<name>[a-z]+)(?:\[\d+\])?(?::(?P<spec>[^}]*))?\}")
#: d3 number formats a person reads: fixed decimals (",.0f", ".1f", "+,.0f", "~" dropping
#: trailing zeros) or a percentage (".1%"); plotly's default ("361.189"), "g", "e", "s" (SI:
#: 40k) and "r" are not.
PEOPLE_SPEC = re.compile(r"[+-]?,?\.\d~?[f%]")
#: From here a value in a hover is written in 만/억 by the course's formatters (customdata or
#: text), not as d3 digits ("150,670,000"), as axes do (raw_ticks). [in the trace's unit]
HOVER_DIGITS_MAX = 1e7


def _values(trace: Any, name: str) -> list[Any]:
    value = getattr(trace, name, None)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    out: list[Any] = []
    for v in value:
        out.extend(v if isinstance(v, (list, tuple)) else [v])
    return out


def hover_problems(fig: go.Figure) -> list[str]:
    """What a student would read raw in the figure's hover labels (issue 25).

    Every trace a student can hover has an explicit hover template (plotly's default hover is
    an ``(x, y)`` pair such as ``(92.5, 361.189)``, a waterfall's "Initial"); each numeric
    field of it has a people's format (fixed decimals, below 1,000만), or the value comes
    preformatted (``customdata``/``text``) from the course's formatters: no scientific
    notation there, no more than four significant decimals.
    """
    found = []
    for i, trace in enumerate(fig.data):
        where = f"trace {i} ({trace.type} {trace.name or ''})".replace(" )", ")")
        hoverinfo = getattr(trace, "hoverinfo", None)
        if hoverinfo in ("skip", "none"):
            continue
        template = getattr(trace, "hovertemplate", None)
        if not template:
            found.append(f"{where}: plotly's default hover (no hovertemplate)")
            continue
        for m in FIELD.finditer(template):
            name = m["name"]
            spec = m["spec"] or getattr(trace, f"{name}hoverformat", None)
            values = _values(trace, name)
            numbers = [float(v) for v in values
                       if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
            if not numbers:
                continue
            if not spec or not PEOPLE_SPEC.search(spec):
                found.append(f"{where}: %{{{name}}} without a people's format ({spec!r})")
            elif max(abs(v) for v in numbers) >= HOVER_DIGITS_MAX:
                found.append(f"{where}: %{{{name}}} in raw digits up to {max(numbers):,.0f}")
        for name in ("customdata", "text", "hovertext"):
            for v in _values(trace, name):
                if isinstance(v, str) and (SCIENTIFIC.search(v) or raw_numbers(v)):
                    found.append(f"{where}: {name} {v!r} (scientific or raw)")
                elif isinstance(v, float) and name == "customdata" and f"%{{{name}" in template:
                    found.append(f"{where}: {name} holds a bare number {v!r}")
    return found


#: A header cell with nothing in it, as an HTML table in a widget writes it.
EMPTY_TH = re.compile(r"<th\b[^>]*>\s*</th>")


def empty_headers(value: Any) -> list[str]:
    """Tables in ``value`` with a header cell a student reads as blank: a people's table with an
    empty header, a DataFrame whose index pandas draws under a blank corner, or an HTML table
    in a widget with an empty ``<th>`` (issue 17: 01's, 08's and 09's tables)."""
    if isinstance(value, fmt.Table):
        return [f"table {list(value.headers)}"] if any(not h.strip() for h in value.headers) else []
    if isinstance(value, pd.DataFrame):
        named = not isinstance(value.index, pd.RangeIndex) or value.index.name is not None
        return [f"DataFrame with index {value.index.name!r}"] if named else []
    found, stack = [], [value] if isinstance(value, widgets.Widget) else []
    while stack:
        w = stack.pop()
        if isinstance(w, widgets.HTML) and EMPTY_TH.search(w.value):
            found.append(f"HTML table {_strip(w.value)[:60]!r}")
        stack.extend(getattr(w, "children", ()))
    return found


def problems(lesson: str, shown: list[Any], *, sources: bool = False) -> dict[str, list[str]]:
    """What a student should not see in ``shown``; ``sources``: only the tables' sources."""
    allowed = ALLOWED.get(lesson, {})
    found: dict[str, list[str]] = {}
    for value in shown:
        if not sources and (blank := empty_headers(value)):
            found.setdefault("empty header", []).extend(blank)
        for where, text in texts(value):
            if (where == SOURCE) != sources:
                continue
            if text.strip() == "null":
                found.setdefault(where, []).append("'null'")
            bad = [w for w in english_outside_parentheses(text) if w not in allowed]
            bad += [v for v in internal_values(text) if v.split(" (")[0] not in allowed]
            bad += [f"{n} (raw number)" for n in raw_numbers(text)]
            if bad:
                found.setdefault(where, []).extend(f"{b} in {text[:80]!r}" for b in bad)
        for fig in _figures(value) if not sources else ():
            if ticks := raw_ticks(fig):
                found.setdefault("figure axis", []).extend(ticks)
            if hover := hover_problems(fig):
                found.setdefault("figure hover", []).extend(hover)
    return found


def _figures(value: Any) -> Iterator[go.Figure]:
    if isinstance(value, go.Figure):
        yield value
        return
    stack = [value] if isinstance(value, widgets.Widget) else []
    while stack:
        w = stack.pop()
        figure = getattr(w, "figure", None)
        if isinstance(figure, go.Figure):
            yield figure
        if isinstance(w, go.FigureWidget):
            yield w
        stack.extend(getattr(w, "children", ()))


@pytest.fixture(scope="module")
def lab_gpu() -> None:
    import labkit.gpu as gpu

    gpu.connect("sim:H100-80GB")


@pytest.mark.parametrize("lesson", sorted(ALLOWED))
def test_a_rendered_lesson_shows_no_english_or_internal_values(
    lesson: str, lab_gpu: None
) -> None:
    shown = run_lesson(ROOT / "notebooks" / f"{lesson}.ipynb")
    assert len(shown) > 5  # the lesson's apps and tables, not an empty run
    found = problems(lesson, shown)
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("lesson", sorted(ALLOWED))
def test_a_rendered_lesson_cites_its_sources_in_korean(lesson: str, lab_gpu: None) -> None:
    """Source cells and footnotes: Korean words around the proper names of what is cited."""
    shown = run_lesson(ROOT / "notebooks" / f"{lesson}.ipynb")
    found = problems(lesson, shown, sources=True)
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


@pytest.mark.parametrize(("text", "n"), [("3g.40gb를 놓았습니다", 0), ("board_app failed", 3),
                                         ("null", 3)])
def test_the_scanner_finds_what_it_should(text: str, n: int) -> None:
    assert sum(len(v) for v in problems("03_goodput", [widgets.HTML(text)]).values()) == n


@pytest.mark.parametrize(("value", "n"), [
    (pd.DataFrame({"값": [1]}, index=pd.Index(["a"], name="항목")), 1),
    (pd.DataFrame({"값": [1]}), 0),
    (widgets.VBox([widgets.HTML("<table><tr><th></th><th>값</th></tr></table>")]), 1),
    (widgets.HTML("<table><tr><th>항목</th><th>값</th></tr></table>"), 0),
    (fmt.rows_table([("a", "1")], ["", "값"]), 1),
])
def test_the_scanner_finds_empty_headers(value: Any, n: int) -> None:
    assert len(empty_headers(value)) == n


@pytest.mark.parametrize(("text", "raw"), [
    ("0.888889", ["0.888889"]), ("1.26984배", ["1.26984"]), ("132.197 원/kWh", ["132.197"]),
    ("88.9 %", []), ("1.270", []), ("31,106.28 토큰/초", ["31,106.28"]), ("v5.0", []),
    ("127.0.0.1", []), ("2,319가지", []), ("0.0035", []),
])
def test_the_raw_number_rule(text: str, raw: list[str]) -> None:
    assert raw_numbers(text) == raw


def test_the_tick_rule_wants_korean_units_for_won() -> None:
    won = go.Figure(go.Bar(x=[-40_000_000, 30_000_000], y=["a", "b"], orientation="h"))
    assert raw_ticks(won)
    won.update_xaxes(tickformat=",d")
    assert raw_ticks(won)  # -40,000,000: digits, not 만/억
    won.update_xaxes(tickvals=[-4e7, 0, 3e7], ticktext=["−4,000만", "0", "3,000만"])
    assert not raw_ticks(won)
    assert not raw_ticks(go.Figure(go.Scatter(x=[1, 2], y=[0.2, 0.9])))
    months = go.Figure(go.Bar(x=["1월", "2월"], y=[8000, 6500]))  # 05's 만 원/월 axis
    assert raw_ticks(months)
    months.update_yaxes(tickformat=",~g")
    assert not raw_ticks(months)


def _report_parts() -> tuple[str, str]:
    """Lesson 09's one-page report as text: (the body a reader reads, its sources section)."""
    from labkit.ui import capstone

    decision = capstone.decision_app().result
    assert decision is not None
    page = capstone.report_html(decision)
    body, _, sources = page.partition("<h2>출처</h2>")
    return _strip(body.split("<body>", 1)[1]), _strip(sources)


def test_the_capstone_report_reads_as_korean(lab_gpu: None) -> None:
    body, _ = _report_parts()
    found = problems("09_capstone", [widgets.HTML(body)])
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)
    assert not re.search(r"\[\d+\]", body), "a footnote marker with no footnote of that form"


def test_the_capstone_report_cites_its_sources_in_korean(lab_gpu: None) -> None:
    _, sources = _report_parts()
    found = problems("09_capstone", [widgets.HTML(sources)])
    assert not found, json.dumps(found, ensure_ascii=False, indent=1)


@pytest.mark.parametrize(("values", "signed", "shown"), [
    ([-4e7, 3e7], True, ["−4,000만", "−2,000만", "0", "+2,000만", "+4,000만"]),
    ([0, 1.05e8], False, ["0", "2,500만", "5,000만", "7,500만", "1억", "1.25억"]),
    ([0, 2.6e6], False, ["0", "100만", "200만", "300만"]),
])
def test_won_axis_ticks_in_man_and_eok(values: list[float], signed: bool,
                                        shown: list[str]) -> None:
    from labkit.ui.plotting import won_axis

    axis = won_axis(values, "원", signed=signed)
    assert axis["ticktext"] == shown
    assert axis["tickvals"][0] <= min(values) and axis["tickvals"][-1] >= max(values)
    fig = go.Figure(go.Bar(x=values, y=["a", "b"], orientation="h"), layout={"xaxis": axis})
    assert not raw_ticks(fig)


# --- hover labels (issue 25) ---------------------------------------------------------------------

@pytest.mark.parametrize(("trace", "words"), [
    (go.Scatter(x=[92.5], y=[361.189]), "default hover"),
    (go.Waterfall(x=["a"], y=[3.0]), "default hover"),  # plotly's "Initial"
    (go.Scatter(x=[1.0], y=[2.0], hovertemplate="%{x}: %{y}<extra></extra>"), "people's format"),
    (go.Scatter(x=[1.0], y=[2.5e7], hovertemplate="%{y:,.0f}<extra></extra>"), "raw digits"),
    (go.Bar(x=["a"], y=[1.0], customdata=["3.2e+06"], hovertemplate="%{customdata}"),
     "scientific"),
    (go.Bar(x=["a"], y=[1.0], customdata=[3.2e6], hovertemplate="%{customdata}"), "bare number"),
    (go.Scatter(x=[1.0], y=[2.0], hovertemplate="%{y:.3g}<extra></extra>"), "people's format"),
])
def test_the_hover_rule_finds_raw_hover_labels(trace: Any, words: str) -> None:
    found = hover_problems(go.Figure(trace))
    assert found and any(words in f for f in found), found


@pytest.mark.parametrize("trace", [
    go.Scatter(x=[1.0], y=[2.0], hovertemplate="%{x:,.1~f} h: %{y:,.0f}개<extra></extra>"),
    go.Bar(x=["a"], y=[1.5e8], customdata=["1억 5,000만 원"],
           hovertemplate="%{x}: %{customdata}<extra></extra>"),
    go.Scatter(x=[1.0], y=[2.0], hoverinfo="skip"),
])
def test_the_hover_rule_passes_peoples_hover_labels(trace: Any) -> None:
    assert hover_problems(go.Figure(trace)) == []


def test_every_default_hover_gets_a_peoples_template() -> None:
    """labkit.ui.hover.fill, as FigureOutput applies it, passes the rule on plotly's defaults."""
    from labkit.ui import hover

    fig = go.Figure([go.Scatter(x=[0.0, 92.5], y=[0.0, 361.189], name="전력"),
                     go.Waterfall(x=["예약", "손실"], y=[720.0, -80.0]),
                     go.Bar(x=["구입", "API"], y=[15_067.8, 900.0]),
                     go.Histogram(x=[80.1, 85.3, 90.2])],
                    layout={"xaxis": {"title": {"text": "시간 (s)"}},
                            "yaxis": {"title": {"text": "만 원/년"}}})
    assert len(hover_problems(fig)) == 4
    hover.fill(fig)
    assert hover_problems(fig) == []
    assert fig.data[0].hovertemplate == ("<b>전력</b><br>시간: %{x:,.2~f} s<br>"
                                         "%{y:,.1~f}만 원/년<extra></extra>")
    assert list(fig.data[2].customdata[0]) == ["1억 5,067만 원/년"]  # 1,000만 on: 만/억 (fmt.krw)


@pytest.mark.parametrize(("title", "split"), [
    ("시간 (h)", ("시간", "h")), ("체크포인트 간격, 분", ("체크포인트 간격", "분")),
    ("kW", ("", "kW")), ("원 / 년", ("", "원 / 년")), ("연간 비용 (만 원)", ("연간 비용", "만 원")),
    ("작업에 쓰는 GPU 수 (로그 눈금)", ("작업에 쓰는 GPU 수", "")),
    ("ETTR (유효 학습 시간 비율)", ("ETTR (유효 학습 시간 비율)", "")),
    ("요청 GPU 수", ("요청 GPU 수", "")), (None, ("", "")),
])
def test_an_axis_title_splits_into_label_and_unit(title: str | None,
                                                   split: tuple[str, str]) -> None:
    from labkit.ui.hover import axis_label

    assert axis_label(title) == split
