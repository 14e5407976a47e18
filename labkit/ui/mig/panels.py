"""Lesson 02's panels linked to the board: export/import (nvidia-smi, mig-parted) and the
live lab GPU.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

import labkit.gpu as gpu
from labkit import mig
from labkit.data.gpus import load_gpu_model
from labkit.data.mig import read_mig_parted
from labkit.gpu import mig_live
from labkit.i18n import error_text, t
from labkit.mig import CommandPlacementError, PlacementError
from labkit.ui.mig.board import _RED, _TABLE_CSS, BoardApp, _bad, _ok, mig_models
from labkit.ui.mig_explain import explain_check

# --- export and import --------------------------------------------------------------------------


def _download_link(text: str, filename: str, mime: str) -> str:
    data = base64.b64encode(text.encode()).decode()
    return (f'<a download="{filename}" href="data:{mime};charset=utf-8;base64,{data}" '
            f'style="font-weight:600">⬇ {t("mig.export.download", file=filename)}</a>')


class ExportPanel(widgets.VBox):
    """nvidia-smi commands / mig-parted config of a board, and reading one back."""

    def __init__(self, board: BoardApp) -> None:
        super().__init__()
        self.add_class("lk-export")
        self.board = board
        self.kind = "smi"
        self.smi_button = widgets.Button(description=t("mig.export.smi"), icon="terminal")
        self.parted_button = widgets.Button(description=t("mig.export.parted"), icon="file")
        self.text = widgets.Textarea(layout=widgets.Layout(width="95%", height="190px"))
        self.download = widgets.HTML()
        self.paste = widgets.Textarea(placeholder=t("mig.import.placeholder"),
                                      layout=widgets.Layout(width="95%", height="140px"))
        self.load_button = widgets.Button(description=t("mig.import.load"), icon="upload")
        self.import_message = widgets.HTML()
        for w, key in [(self.smi_button, "export-smi"), (self.parted_button, "export-parted"),
                       (self.text, "export-text"), (self.download, "export-download"),
                       (self.paste, "import-text"), (self.load_button, "import-load"),
                       (self.import_message, "import-message")]:
            w.add_class(f"lk-{key}")
        self.smi_button.on_click(lambda _b: self.show("smi"))
        self.parted_button.on_click(lambda _b: self.show("parted"))
        self.load_button.on_click(lambda _b: self.load())
        board.on_change.append(lambda _lay: self.refresh())
        self.children = [widgets.HBox([self.smi_button, self.parted_button]), self.text,
                         self.download, widgets.HTML(f"<b>{t('mig.import.title')}</b>"),
                         self.paste, self.load_button, self.import_message]
        self.refresh()

    def show(self, kind: str) -> None:
        """Show the board as ``"smi"`` commands or a ``"parted"`` config."""
        self.kind = kind if kind in ("smi", "parted") else "smi"
        self.refresh()

    def refresh(self) -> None:
        """Re-export the board's layout."""
        lay = self.board.mig_layout
        if self.kind == "smi":
            text = mig.to_nvidia_smi(lay)
            self.download.value = _download_link(text + "\n", "labkit-mig.sh", "text/x-shellscript")
        else:
            text = mig.to_mig_parted(lay, "labkit")
            self.download.value = _download_link(text, "labkit-mig-config.yaml", "text/yaml")
        self.text.value = text

    def load(self) -> None:
        """Read the pasted mig-parted config or nvidia-smi commands onto the board."""
        text = str(self.paste.value)
        model = self.board.mig_layout.model
        try:
            if "nvidia-smi" in text:
                layout = mig.from_nvidia_smi(text, model)
            else:
                layout = read_mig_parted(text, model)
        except CommandPlacementError as err:  # say why, in the lesson's words
            reason = t("mig.why.line", line=err.line, item=err.item,
                       reason=explain_check(err.check, model.short_name,
                                            [p.name for p in self.board.mig_layout.spec.profiles]))
            self.import_message.value = _bad(t("mig.import.does_not_fit", message=reason))
            return
        except PlacementError as err:
            self.import_message.value = _bad(t("mig.import.does_not_fit", message=str(err)))
            return
        except ValueError as err:
            self.import_message.value = _bad(error_text(err, prefix="mig.import"))
            return
        self.board.set_layout(layout)
        self.import_message.value = _ok(t("mig.import.done", layout=self.board.describe()))


def export_panel(board: BoardApp) -> ExportPanel:
    """Return the export/import panel linked to ``board``.

    Used in: notebooks/02_mig.ipynb
    """
    return ExportPanel(board)


# --- the live lab GPU ---------------------------------------------------------------------------


def _lab_model(status: Any) -> str | None:
    """Return the short model name of the lab GPU (simulated: its spec; real: by name)."""
    if status.kind == "sim":
        try:
            return gpu.parse_spec(status.spec)[0]
        except ValueError:
            return None
    for m in mig_models():
        if load_gpu_model(m).name == status.name:
            return m
    return None


class LivePanel(widgets.VBox):
    """The lab GPU's MIG state, refreshed; applying the board where allowed."""

    def __init__(self, board: BoardApp | None = None, *, nv: Any = None, index: int = 0) -> None:
        super().__init__()
        self.add_class("lk-live")
        self.board = board
        self.index = index
        self._nv = nv
        self.status = widgets.HTML()
        self.state_html = widgets.HTML()
        self.refresh_button = widgets.Button(description=t("mig.live.refresh"), icon="refresh")
        self.result = widgets.HTML()
        self.commands = widgets.Textarea(layout=widgets.Layout(width="95%", height="150px"))
        for w, key in [(self.status, "status"), (self.state_html, "state"),
                       (self.refresh_button, "refresh"), (self.result, "result"),
                       (self.commands, "commands")]:
            w.add_class(f"lk-live-{key}")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.dry_button: widgets.Button | None = None
        self.apply_button: widgets.Button | None = None
        children: list[widgets.Widget] = [self.status, self.refresh_button, self.state_html]
        if board is not None:
            children += self._apply_controls()
            board.on_change.append(lambda _lay: self._update_commands())
            self._update_commands()
        self.children = children
        self.refresh()

    def _apply_controls(self) -> list[widgets.Widget]:
        dry_ok, _ = mig_live.apply_allowed(dry_run=True)
        real_ok, real_why = mig_live.apply_allowed(dry_run=False)
        out: list[widgets.Widget] = [widgets.HTML(f"<b>{t('mig.live.apply_title')}</b>")]
        buttons = []
        if dry_ok:  # never under voila: the buttons do not even exist there
            self.dry_button = widgets.Button(description=t("mig.live.dry_run"), icon="eye")
            self.dry_button.add_class("lk-live-dry-run")
            self.dry_button.on_click(lambda _b: self.apply(dry_run=True))
            buttons.append(self.dry_button)
        if real_ok:
            self.apply_button = widgets.Button(description=t("mig.live.apply"),
                                               button_style="danger", icon="bolt")
            self.apply_button.add_class("lk-live-apply")
            self.apply_button.on_click(lambda _b: self.apply(dry_run=False))
            buttons.append(self.apply_button)
        note = t(f"mig.live.why.{real_why}") if real_why else t("mig.live.allowed")
        notice = widgets.HTML(f'<div style="color:#555">{html.escape(note)}</div>')
        notice.add_class("lk-live-notice")
        out += [notice]
        if buttons:
            out.append(widgets.HBox(buttons))
        out += [widgets.HTML(t("mig.live.commands")), self.commands, self.result]
        return out

    def _update_commands(self) -> None:
        if self.board is not None:
            self.commands.value = mig.to_nvidia_smi(self.board.mig_layout, self.index)

    def _connect(self) -> Any:
        if self._nv is None:
            self._nv = gpu.connect()
        return self._nv

    def refresh(self) -> None:
        """Read the lab GPU again and redraw its state; an NVML error shows as n/a."""
        try:
            nv = self._connect()
            state = mig_live.read_state(nv, self.index)
        except Exception as err:  # NVML errors and a missing GPU: this panel shows n/a
            self.status.value = t("common.na_reason", reason=html.escape(str(err) or
                                                                         type(err).__name__))
            self.state_html.value = ""
            return
        status = gpu.status()
        kind = t("mig.live.kind_sim") if status.kind == "sim" else t("mig.live.kind_real")
        model = _lab_model(status)
        line = t("mig.live.gpu", index=self.index, name=state.name, kind=kind)
        if self.board is not None and model and model != self.board.mig_layout.model.short_name:
            line += " " + t("mig.live.other_model", board=self.board.mig_layout.model.short_name,
                            model=model)
        self.status.value = f"<b>{html.escape(line)}</b>"
        self.state_html.value = state_html(state)

    def apply(self, dry_run: bool = True) -> mig_live.ApplyResult | None:
        """Apply (or preview) the board's layout on the lab GPU; show the NVML calls."""
        if self.board is None:
            return None
        try:
            nv = self._connect()
            result = mig_live.apply(nv, self.index, self.board.mig_layout, dry_run=dry_run)
        except mig_live.MigApplyError as err:
            text = t(f"mig.live.error.{err.reason}", message=str(err).splitlines()[0])
            self.result.value = _bad(text) + _log_html(err.log)
            self.refresh()
            return None
        except Exception as err:  # an NVML read failed: the panel reports it
            self.result.value = _bad(t("common.na_reason", reason=str(err)))
            return None
        head = t("mig.live.done_dry" if dry_run else "mig.live.done",
                 n=sum(1 for c in result.log if c.changes))
        if not result.steps:
            head = t("mig.live.nothing")
        self.result.value = _ok(head) + _log_html(result.log)
        self.refresh()
        return result


def _log_html(log: Sequence[mig_live.NvmlCall]) -> str:
    changes = [c for c in log if c.changes]
    reads = len(log) - len(changes)
    rows = "".join(
        f"<tr><td>{'↩ ' if c.rollback else ''}<code>{html.escape(c.function)}</code></td>"
        f"<td>{html.escape(c.arguments)}</td><td>{html.escape(c.outcome)}</td></tr>"
        for c in changes)
    table = (f'{_TABLE_CSS}<table class="lk-table lk-mig-table" style="font-size:12px">'
             f"<thead><tr><th>{t('mig.log.call')}</th><th>{t('mig.log.args')}</th>"
             f"<th>{t('mig.log.outcome')}</th></tr></thead><tbody>{rows}</tbody></table>"
             if rows else "")
    return f"<div>{t('mig.log.reads', n=reads)}</div>{table}"


def state_html(state: mig.MigState) -> str:
    """Return a GPU's MIG state (mode, GIs with CIs and MIG device UUIDs, processes) as HTML."""
    if not state.mig_supported:
        return t("mig.live.no_mig")
    mode = t("mig.live.on") if state.enabled else t("mig.live.off")
    lines = [t("mig.live.mode", mode=mode)]
    if state.pending:
        lines.append(f'<span style="color:{_RED}">{t("mig.live.pending")}</span>')
    pids = ", ".join(map(str, state.processes)) or t("mig.live.none")
    lines.append(t("mig.live.processes", pids=pids))
    uuid = {d.gpu_instance_id: d.uuid for d in state.mig_devices}
    rows = []
    for gi in state.gpu_instances:
        cis = ", ".join(f"CI {c.id} ({c.name or c.profile_id}, {c.start}:{c.size})"
                        for c in gi.compute_instances) or t("mig.live.no_ci")
        rows.append(f"<tr><td>{gi.id}</td><td>{html.escape(gi.profile)}</td>"
                    f"<td>{gi.start}:{gi.size}</td><td>{html.escape(cis)}</td>"
                    f"<td><code>{html.escape(uuid.get(gi.id, '—'))}</code></td></tr>")
    if state.enabled:
        if rows:
            head = "".join(f"<th>{t(k)}</th>" for k in (
                "mig.live.gi", "mig.cap.profile", "mig.live.placement", "mig.live.ci",
                "mig.live.uuid"))
            lines.append(f'{_TABLE_CSS}<table class="lk-table lk-mig-table" '
                         f'style="font-size:13px"><thead><tr>{head}'
                         f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        else:
            lines.append(t("mig.live.no_gi"))
        lines.append(t("mig.live.devices", n=len(state.mig_devices)))
    return "<br>".join(lines)


def live_panel(board: BoardApp | None = None, *, index: int = 0) -> LivePanel:
    """Return the live panel for GPU ``index`` of the lab GPU, linked to ``board``.

    Used in: notebooks/02_mig.ipynb
    """
    return LivePanel(board, index=index)


