"""Replay of an operator's log through the dashboard's panels (lesson 01).

A shipped trace or an upload (nvidia-smi --query-gpu CSV or dmon, an nvidia-smi -q/-q -x
snapshot, a dcgm-exporter scrape; a field picker for noheader logs), scrubbed with a time slider.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import html
import math
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

import ipywidgets as widgets
import pandas as pd

from labkit import observe as model
from labkit.i18n import KO, error_text, t
from labkit.observe.mig_series import SeriesId, split_mig_series
from labkit.ui import format as fmt
from labkit.ui.components import guard
from labkit.ui.observe.charts import activity_figure, power_figure
from labkit.ui.observe.chunked_upload import ChunkedUpload
from labkit.ui.observe.common import (
    ACTIVITY_LINES,
    DEFAULT_TRACE,
    MAX_CHART_POINTS,
    POWER_LINES,
    LiveFigureOutput,
    css,
    download_link,
    error_html,
    no_null_tooltips,
)
from labkit.ui.observe.errors import row_reason_text
from labkit.ui.observe.fields import (
    field_set_dropdown,
    fields_text,
    gpu_column_dropdown,
    gpu_column_options,
    preview_html,
)
from labkit.ui.observe.panels import panel_html, signals_html
from labkit.ui.observe.snapshot import snapshot_html
from labkit.ui.observe.upload import (
    MAX_UPLOAD_BYTES,
    UPLOAD_SUFFIXES,
    log_error_text,
    read_upload,
    too_large_text,
    upload_hint_text,
)
from labkit.validate import InputError

__all__ = ["ReplayApp", "current_replay", "replay_app", "series_label"]


def series_label(series: SeriesId, devices: Mapping[int, Mapping[str, str]],
                 source: str = "") -> str:
    """Return the GPU choice's Korean label of one series: a whole GPU or a MIG device.

    ``"GPU 0: NVIDIA H100 80GB HBM3"``; a MIG device ``"GPU 0 · MIG 1g.10gb (GI 3)"`` (with
    ``CI n`` when the log names the compute instance, as ``nvidia-smi dmon`` does). A GPU the
    log does not name (``nvidia-smi dmon``) is ``"GPU 0 (nvidia-smi dmon)"`` with ``source``.
    """
    if not series.is_mig:
        info = devices.get(series.gpu, {})
        if info.get("parent_gpu"):  # a MIG device the Prometheus source numbered on its own
            return t("observe.gpu_option_mig", gpu=info["parent_gpu"],
                     profile=f" {info['GPU_I_PROFILE']}" if info.get("GPU_I_PROFILE") else "",
                     ids=f" (GI {info['GPU_I_ID']})" if info.get("GPU_I_ID") else "")
        name = info.get("name") or info.get("modelName", "")
        if not name:
            return t("observe.gpu_option_unnamed", index=series.gpu,
                     source=source or t("observe.gpu_option_no_source"))
        return t("observe.gpu_option", index=series.gpu, name=name)
    ids = [f"GI {series.gi_id}"] if series.gi_id is not None else []
    if series.ci_id is not None:
        ids.append(f"CI {series.ci_id}")
    return t("observe.gpu_option_mig", gpu=series.gpu,
             profile=f" {series.profile}" if series.profile else "",
             ids=f" ({', '.join(ids)})" if ids else "")


def _segments(log: model.LogImport) -> list[tuple[str, float, float]]:
    """Return a log's named stretches (its ``# segments:`` line), none if it has none or a bad
    one (an upload's line is the operator's, not a reason to refuse the log)."""
    from labkit.data.observe import trace_segments

    try:
        return trace_segments(log)
    except ValueError:
        return []


def _nbytes(content: Any) -> int:
    return content.nbytes if isinstance(content, memoryview) else len(content) \
        if isinstance(content, bytes | bytearray) else 0


def _noheader(text: str) -> bool:
    """Whether a --query-gpu CSV has no header line (read with the picker's field list)."""
    from labkit.data.observe.smi_csv import looks_like_header

    for line in text[:65536].splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return not looks_like_header(line)
    return False


def trace_label(name: str) -> str:
    """Return a trace's name as the list shows it: a shipped trace's Korean name, else the
    file's own name (an operator's log)."""
    key = f"observe.replay.trace_name.{name}"
    return t(key) if key in KO else name


class ReplayApp(widgets.VBox):
    """Replay a log through the dashboard's panels (see :func:`replay_app`)."""

    PANELS = ("gpu_util", "sm_active", "tensor_active", "dram_active", "memory", "power",
              "temperature", "clocks", "errors")

    def __init__(self, log: model.LogImport | None = None) -> None:
        super().__init__()
        self.add_class("lk-replay")
        from labkit.data.observe import trace_names

        names = trace_names()
        self.source = css(widgets.Dropdown(
            options=[(trace_label(n), n) for n in names],
            value=DEFAULT_TRACE if DEFAULT_TRACE in names else (names[0] if names else None),
            description=t("observe.replay.trace_label"),
            layout=widgets.Layout(width="520px"), style={"description_width": "initial"}),
            "lk-replay-trace")
        self.upload = css(ChunkedUpload(accept=",".join(UPLOAD_SUFFIXES),
                                        description=t("observe.replay.upload"),
                                        max_bytes=MAX_UPLOAD_BYTES), "lk-replay-upload")
        self.upload_error = css(widgets.HTML(""), "lk-replay-upload-error")
        self.upload_hint = css(widgets.HTML(upload_hint_text()), "lk-replay-upload-hint")
        self.fields = fields_text()
        self.field_set = field_set_dropdown()
        self.gpu_column = gpu_column_dropdown()
        self.preview = css(widgets.HTML(""), "lk-replay-preview")
        self.snapshot = css(widgets.HTML(""), "lk-replay-snapshot")
        # the current noheader upload: waiting for its field list, or read with it (a change of
        # the list or field set reads it again; a new upload drops it)
        self._pending: tuple[str, str] | None = None
        self.info = css(widgets.HTML(""), "lk-replay-info")
        self.error = css(widgets.HTML(""), "lk-replay-error")
        self.log_import: model.LogImport | None = None
        self.trace: model.Trace | None = None
        self.segments: list[tuple[str, float, float]] = []
        self.children = [
            widgets.HBox([self.source, guard(self.source, "replay-trace")]),
            widgets.HBox([self.upload, self.upload_error, self.upload_hint]),
            self.fields, widgets.HBox([self.field_set, guard(self.field_set, "replay-field-set")],
                                      layout=widgets.Layout(align_items="center")),
            widgets.HBox([self.gpu_column, guard(self.gpu_column, "replay-gpu-column")],
                         layout=widgets.Layout(align_items="center")),
            self.preview, self.error, self.info, self.snapshot,
            *self._build_scrub()]
        self.source.observe(self._on_source, names="value")
        self.upload.observe(self._on_upload, names="value")
        self.upload.observe(self._on_refused, names="refused")
        self.field_set.observe(self._on_field_set, names="value")
        self.fields.observe(self._on_fields, names="value")
        self.gpu_column.observe(self._on_fields, names="value")
        self.gpu.observe(self._on_position, names="value")
        self.time.observe(self._on_position, names="value")
        self.export.on_click(self._on_export)
        no_null_tooltips(self)
        if log is not None:
            self.load(log)
        elif self.source.value:
            self._on_source({"new": self.source.value})

    def _build_scrub(self) -> list[widgets.Widget]:
        """Create the GPU choice, time slider, panels and charts; return their rows."""
        self.gpu = css(widgets.Dropdown(options=[(" ", 0)], value=0,
                                        description=t("observe.gpu_label")), "lk-replay-gpu")
        self.time = css(widgets.IntSlider(value=0, min=0, max=0, step=1,
                                          description=t("observe.replay.time_label"),
                                          continuous_update=False, readout=False,
                                          layout=widgets.Layout(width="600px")),
                        "lk-replay-time")
        self.time_text = css(widgets.HTML(""), "lk-replay-time-text")
        self.cards = {p: css(widgets.HTML(""), "lk-replay-panel", f"lk-panel-{p}")
                      for p in self.PANELS}
        self.signals = css(widgets.HTML(""), "lk-replay-signals")
        self.one_moment = css(widgets.HTML(""), "lk-replay-one-moment")
        self.activity = LiveFigureOutput("lk-replay-activity")
        self.power = LiveFigureOutput("lk-replay-power")
        self.export = css(widgets.Button(description=t("observe.export.button")),
                          "lk-replay-export")
        self.export_link = css(widgets.HTML(""), "lk-replay-export-link")
        grid = widgets.GridBox(list(self.cards.values()), layout=widgets.Layout(
            grid_template_columns="repeat(auto-fill, minmax(210px, 1fr))", grid_gap="8px"))
        # a browser may move the GPU and the time, not the list or the range (issue 17)
        gpu_note, time_note = guard(self.gpu, "replay-gpu"), guard(self.time, "replay-time")
        return [widgets.HBox([self.gpu, gpu_note, self.time, self.time_text, time_note],
                             layout=widgets.Layout(flex_flow="row wrap", align_items="center")),
                self.signals, grid,
                self.one_moment, self.activity, self.power,
                widgets.HBox([self.export, self.export_link])]

    # -- loading --------------------------------------------------------------------------------
    def _show_error(self, message: str) -> None:
        self.error.value = error_html(message)

    def _show_upload_error(self, message: str) -> None:
        """Show an upload's error beside the upload control (issue 16: not rows below it)."""
        self.error.value = ""
        self.upload_error.value = error_html(message)

    def _on_source(self, change: Any) -> None:
        from labkit.data.observe import load_trace, trace_names

        name = change["new"]
        if name not in trace_names():  # a browser can send any value
            self._show_error(t("observe.replay.unknown_trace", name=str(name)[:80]))
            return
        try:
            self.load(load_trace(name))
            self.snapshot.value = ""
        except ValueError as err:
            self._show_error(log_error_text(err, source=name))

    def _on_upload(self, change: Any) -> None:
        value = change["new"]
        if not value:
            return
        from labkit.data.observe import decode_log

        name = ""
        self.upload_error.value = ""
        try:
            name, data = read_upload(value)
            text = decode_log(data, name=name, max_bytes=MAX_UPLOAD_BYTES)
        except InputError as err:
            if err.field == "size":  # beside the control, with how to cut the file
                item = value[0] if isinstance(value, tuple) and value else {}
                self.upload_error.value = error_html(too_large_text(
                    str(item.get("name", "")), _nbytes(item.get("content", b""))))
            else:
                self._show_upload_error(error_text(err, prefix="observe.upload"))
            return
        except ValueError as err:
            self._show_upload_error(log_error_text(err, source=name or None))
            return
        finally:
            self.upload.unobserve(self._on_upload, names="value")
            self.upload.value = ()  # drop the bytes from the widget
            self.upload.observe(self._on_upload, names="value")
        if self._pending is not None:  # the last file was noheader: its field list is not
            self._pending = None       # this file's (issue 16)
            self._reset_fields()
        self._set_gpu_columns([])  # the last file's columns are not this file's
        self._read_text(name, text)

    def _set_gpu_columns(self, names: list[str]) -> None:
        """Offer ``names`` as the GPU column (hidden, back to automatic, when empty)."""
        self.gpu_column.unobserve(self._on_fields, names="value")
        keep = self.gpu_column.value if self.gpu_column.value in names else ""
        self.gpu_column.options = gpu_column_options(names)
        self.gpu_column.value = keep
        self.gpu_column.layout.display = None if names else "none"
        self.gpu_column.observe(self._on_fields, names="value")

    def _reset_fields(self) -> None:
        """Empty the field list and field set without reading anything."""
        self.fields.unobserve(self._on_fields, names="value")
        self.field_set.unobserve(self._on_field_set, names="value")
        self.fields.value, self.field_set.value = "", ""
        self.fields.observe(self._on_fields, names="value")
        self.field_set.observe(self._on_field_set, names="value")

    def _read_text(self, name: str, text: str) -> None:
        """Read an uploaded log's text; never silent: an error nobody foresaw (a reader's bug)
        is shown in Korean beside the upload control, the last good log kept (issue 16)."""
        try:
            self._read_text_or_raise(name, text)
        except Exception as err:  # a widget callback's error is otherwise lost
            self._show_upload_error(t("observe.upload.unexpected", name=name[:120] or "-",
                                      error=f"`{type(err).__name__}`"))

    def _on_refused(self, change: Any) -> None:
        """The browser refused an over-size file (or a client sent a bad chunk sequence)."""
        info = change["new"] or {}
        if info.get("kind") == "too_large":
            self.upload_error.value = error_html(too_large_text(str(info.get("name", "")),
                                                                int(info.get("size", 0))))
        elif info:
            self.upload_error.value = error_html(t("observe.upload.broken"))

    def _read_text_or_raise(self, name: str, text: str) -> None:
        """Read an uploaded log's text; a noheader CSV waits for its field list."""
        from labkit.data.observe import header_fields, parse_nvidia_smi_query, read_log
        from labkit.data.observe.smi_query import looks_like_query

        fields = self.fields.value.strip()[:2000] or None
        gpu_column = str(self.gpu_column.value or "") or None
        snapshot = None
        try:
            if looks_like_query(text) is not None:
                snapshot = parse_nvidia_smi_query(text, source=name)
                log = snapshot.log
            else:
                log = read_log(text, source=name, fields=fields, gpu_column=gpu_column)
        except ValueError as err:
            kind = getattr(err, "kind", None)
            if kind == "no_header" or kind == "duplicate" or gpu_column or (
                    fields and self._pending is not None):
                self._pending = (name, text[:MAX_UPLOAD_BYTES])
                self.preview.value = preview_html(text)
            if kind == "duplicate" or gpu_column:  # which column is the GPU? (issue 26)
                self._set_gpu_columns(header_fields(text, fields))
            self._show_upload_error(log_error_text(err, source=name))
            return
        self._pending = (name, text[:MAX_UPLOAD_BYTES]) if (
            (fields and log.format == "nvidia-smi-csv" and _noheader(text))
            or gpu_column) else None
        self.preview.value = ""
        self.load(log)
        self.snapshot.value = snapshot_html(snapshot) if snapshot is not None else ""

    def _on_field_set(self, change: Any) -> None:
        from labkit.data.observe import COMMON_FIELD_SETS

        fields = COMMON_FIELD_SETS.get(str(change["new"]))
        if fields is not None:
            self.fields.value = ",".join(fields)  # -> _on_fields re-reads a waiting upload

    def _on_fields(self, _change: Any) -> None:
        if self._pending is not None:
            self._read_text(*self._pending)

    def load(self, log: model.LogImport) -> None:
        """Show ``log``: info line, GPU choice, time slider at the start."""
        frame, series = split_mig_series(log.frame)
        trace = model.Trace(frame)
        self.log_import, self.trace = log, trace
        self.segments = _segments(log)
        self.error.value = ""
        self.upload_error.value = ""
        words = t(f"observe.replay.format.{log.format}") \
            if f"observe.replay.format.{log.format}" in KO else log.format
        options = [(series_label(s, log.devices, words), s.index) for s in series]
        self.gpu.unobserve(self._on_position, names="value")
        self.time.unobserve(self._on_position, names="value")
        self.gpu.options = options
        self.gpu.value = trace.gpus[0]
        self.time.max = len(trace.times) - 1
        self.time.value = 0
        self.gpu.observe(self._on_position, names="value")
        self.time.observe(self._on_position, names="value")
        self.info.value = self._info_html(log)
        self.export_link.value = ""
        self.render()

    def _info_html(self, log: model.LogImport) -> str:
        fmt_name = t(f"observe.replay.format.{log.format}")
        start = log.start.strftime("%Y-%m-%d %H:%M:%S") if log.start else "-"
        lines = [t("observe.replay.info", source=html.escape(trace_label(log.source)),
                   format=fmt_name,
                   rows=fmt.count(log.rows), gpus=len(log.devices), start=start,
                   duration=f"{self.trace.duration_s if self.trace else 0:.1f}")]
        shipped = f"observe.replay.trace_source.{log.source}"
        if shipped in KO:  # a shipped trace: its provenance in Korean (the file has the rest)
            lines.append(t("observe.replay.meta_source", source=t(shipped)))
        elif log.metadata.get("source"):  # the operator's own words, quoted
            lines.append(t("observe.replay.meta_source",
                           source=f"“{html.escape(log.metadata['source'][:300])}”"))
        metrics = set(log.frame["metric"])
        if log.format == "nvidia-smi-csv" and "sm_active_frac" not in metrics:
            # only --query-gpu: dcgm-exporter has SM activity, dmon and -q are not util.gpu logs
            lines.append("<b>" + t("observe.replay.no_sm_active") + "</b>")
        if log.unparsed:
            shown = "; ".join(
                html.escape(t("observe.reader.line", line=u.line, reason=row_reason_text(u.reason)))
                for u in log.unparsed[:5])
            lines.append('<span style="color:#a15c00">' + t(
                "observe.replay.unparsed", n=len(log.unparsed), rows=shown) + "</span>")
        if log.gpu_column:
            lines.append(t("observe.replay.gpu_column", column=html.escape(log.gpu_column)))
        if log.ignored_fields:
            lines.append(t("observe.replay.ignored",
                           fields=html.escape(", ".join(log.ignored_fields[:20]))))
        return "<br>".join(lines)

    # -- scrubbing ------------------------------------------------------------------------------
    def _on_position(self, _change: Any = None) -> None:
        self.render()

    def position(self) -> tuple[int, float]:
        """Return the (validated) GPU and time the slider points at."""
        assert self.trace is not None
        gpu = self.gpu.value if self.gpu.value in self.trace.gpus else self.trace.gpus[0]
        k = self.time.value
        if not isinstance(k, int) or not 0 <= k < len(self.trace.times):
            k = 0
        return gpu, float(self.trace.times[k])

    def render(self) -> None:
        """Draw the panels and charts at the slider's time."""
        if self.trace is None:
            return
        gpu, t_s = self.position()
        view = self.trace.view(gpu, t_s)
        for p, card in self.cards.items():
            card.value = panel_html(p, view, replay=True)
        self.signals.value = signals_html(view)
        self.time_text.value = t("observe.replay.at", t=f"{t_s:.1f}",
                                 total=f"{self.trace.duration_s:.1f}")
        one = len(self.trace.times) == 1  # a single scrape/snapshot: nothing to replay
        self.one_moment.value = t("observe.replay.one_moment") if one else ""
        for chart in (self.activity, self.power):  # drawn (kept current), shown with a span
            chart.layout.display = "none" if one else None
        act = self._frame(gpu, [k for k, _ in ACTIVITY_LINES] + ["gr_engine_active_frac"])
        pw = self._frame(gpu, list(POWER_LINES))
        x_range = (float(self.trace.times[0]), float(self.trace.times[-1]))
        self.activity.show(activity_figure(act, title=t("observe.chart.activity"),
                                           marker_t=t_s, x_range=x_range,
                                           segments=self.segments))
        self.power.show(power_figure(pw, title=t("observe.chart.power"), marker_t=t_s,
                                     x_range=x_range))

    def _frame(self, gpu: int, metrics: Sequence[str]) -> pd.DataFrame:
        assert self.trace is not None
        cols = {m: self.trace.series(gpu, m) for m in metrics if m in self.trace.metrics}
        if not cols:
            return pd.DataFrame(index=pd.Index([], name="timestamp_s"))
        frame = pd.concat(cols, axis=1).sort_index()
        frame = frame.groupby(level=0).last()
        if len(frame) > MAX_CHART_POINTS:  # thin for drawing only
            step = math.ceil(len(frame) / MAX_CHART_POINTS)
            frame = frame.iloc[::step]
        return frame

    def _on_export(self, _button: Any = None) -> None:
        log = self.log_import
        if log is None:
            return
        text = model.export_csv(log.frame, source=f"labkit replay of {log.source}",
                                as_of=log.metadata.get("as_of") or time.strftime("%Y-%m-%d"))
        stem = PurePath(log.source).stem or "log"
        self.export_link.value = download_link(text, f"{stem}_tidy.csv")


def replay_app(path: str | None = None) -> ReplayApp:
    """Return the replay app: a shipped trace (or ``path``, from Python only), or an upload.

    ``path`` is read in JupyterLab by the student's own code; the voila page offers only the
    shipped traces and the size-capped upload, never a server path. The app becomes this
    kernel's :func:`current_replay` (the live Prometheus source feeds it).
    """
    if path is None:
        app = ReplayApp()
    else:
        from labkit.data.observe import read_log_file

        app = ReplayApp(read_log_file(path))
    global _CURRENT_REPLAY
    _CURRENT_REPLAY = weakref.ref(app)
    return app


_CURRENT_REPLAY: weakref.ref[ReplayApp] | None = None


def current_replay() -> ReplayApp | None:
    """Return the replay app :func:`replay_app` last built in this kernel (None if none)."""
    return _CURRENT_REPLAY() if _CURRENT_REPLAY is not None else None

