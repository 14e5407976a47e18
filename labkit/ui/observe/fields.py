"""The field picker of lesson 01's replay: a `noheader` log's columns, and a preview of its rows.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from labkit.data.observe.smi_csv import COMMON_FIELD_SETS
from labkit.i18n import t
from labkit.ui.observe.common import css

__all__ = ["field_set_dropdown", "fields_text", "gpu_column_dropdown", "gpu_column_options",
           "preview_html"]


def fields_text() -> widgets.Text:
    """Return the text box where a student types a `noheader` log's ``--query-gpu`` fields."""
    return css(widgets.Text(value="", placeholder="timestamp,index,utilization.gpu",
                            description=t("observe.replay.fields_label"),
                            continuous_update=False, layout=widgets.Layout(width="520px"),
                            style={"description_width": "initial"}), "lk-replay-fields")


def field_set_dropdown() -> widgets.Dropdown:
    """Return the dropdown of common ``--query-gpu`` field sets (``COMMON_FIELD_SETS``)."""
    return css(widgets.Dropdown(
        options=[(t("observe.replay.field_set.custom"), "")]
        + [(t(f"observe.replay.field_set.{k}"), k) for k in COMMON_FIELD_SETS],
        value="", description=t("observe.replay.field_set_label"),
        layout=widgets.Layout(width="520px"), style={"description_width": "initial"}),
        "lk-replay-field-set")


def preview_html(text: str, rows: int = 5) -> str:
    """Return the first rows of an uploaded CSV as a small table (for the field picker)."""
    from labkit.data.observe import preview_rows

    cells = preview_rows(text, rows=rows)
    width = max((len(r) for r in cells), default=0)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c[:40])}</td>" for c in r) + "</tr>"
                   for r in cells)
    return (t("observe.replay.preview", n=width)
            + f'<table class="lk-preview" style="font-size:85%">{body}</table>')



def gpu_column_dropdown() -> widgets.Dropdown:
    """Return the picker of the column that tells GPUs apart (hidden until a log needs it).

    Shown when a ``--query-gpu`` CSV log has two readings of one moment and GPU that the file
    does not resolve (a wrapper's own GPU column): the operator says which column is the GPU.
    """
    return css(widgets.Dropdown(
        options=[(t("observe.replay.gpu_column.auto"), "")], value="",
        description=t("observe.replay.gpu_column_label"),
        layout=widgets.Layout(width="520px", display="none"),
        style={"description_width": "initial"}), "lk-replay-gpu-column")


def gpu_column_options(names: list[str]) -> list[tuple[str, str]]:
    """Return the picker's options: automatic, then the header's columns (as written)."""
    return [(t("observe.replay.gpu_column.auto"), "")] + [
        (n[:60], n) for n in dict.fromkeys(names) if n and n != "timestamp"]
