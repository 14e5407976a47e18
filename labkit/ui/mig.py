"""Widgets for lesson 02, "GPU를 나눠 쓰기": the MIG board, exports, live lab GPU, sharing modes.

Builders (each returns a widget or a table; the notebook only calls them):

- :func:`board_app` — the GPU drawn as memory units with its compute slices; pick a model and a
  profile, click a start position; illegal moves explained; Free/Total and fragmentation live;
  presets;
- :func:`challenge_panel` — "seven students each need a 1g.10gb, one project a 3g": a target
  for the board, and why it does not fit on one GPU;
- :func:`export_panel` — ``nvidia-smi`` commands and the mig-parted config of the board (text to
  copy, or a download), and reading a config (or commands) back onto the board;
- :func:`live_panel` — the lab GPU's MIG state (real or simulated), refreshed; applying the
  board only where :func:`labkit.gpu.mig_live.apply_allowed` says so, otherwise the commands
  to copy;
- :func:`sharing_modes` — MIG vs MPS vs time-slicing (table);
- :func:`workload_app` — a class's jobs under whole-GPU FIFO, time-slicing, MPS and the board's
  MIG layout;
- :func:`case1_numbers`, :func:`layout_counts` — deterministic tables checked by nbval;
- :func:`exercises` — 문제 with answers computed by :mod:`labkit.mig`.

The numbers all come from :mod:`labkit.mig` and :mod:`labkit.sharing`.
"""

from __future__ import annotations

import base64
import functools
import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

import labkit.gpu as gpu
from labkit import mig, validate
from labkit import sharing as share
from labkit.data.gpus import available_models, load_gpu_model
from labkit.data.mig import read_mig_parted
from labkit.gpu import mig_live
from labkit.i18n import error_text, t
from labkit.mig import CommandPlacementError, Layout, PlacementError
from labkit.ui import format as fmt
from labkit.ui.components import FigureOutput, LiveApp, number_field, styled_figure
from labkit.ui.exercises import Exercise, exercise_set
from labkit.ui.mig_explain import explain, explain_check
from labkit.validate import InputError

__all__ = [
    "BoardApp",
    "ChallengePanel",
    "ExportPanel",
    "LivePanel",
    "WorkloadApp",
    "board_app",
    "case1_numbers",
    "challenge_panel",
    "exercises",
    "export_panel",
    "layout_counts",
    "live_panel",
    "mig_models",
    "sharing_modes",
    "workload_app",
]

DEFAULT_MODEL = "H100-80GB"
#: The challenge: seven students each need a 1g.10gb, one project needs a 3g.40gb.
CHALLENGE = {"1g.10gb": 7, "3g.40gb": 1}
_COLORS = {1: "#8ecae6", 2: "#57b3d9", 3: "#ffb703", 4: "#fb8500", 7: "#2a9d8f"}
_GREEN, _RED = "#1b7f3b", "#b00020"
_BOARD_PX = 760
_TABLE_CSS = ("<style>.lk-mig-table td,.lk-mig-table th{padding:3px 12px;text-align:left}"
              "</style>")


@functools.cache
def mig_models() -> tuple[str, ...]:
    """Return the short names of the MIG-capable GPU models in ``data/gpus/``."""
    return tuple(m for m in available_models() if load_gpu_model(m).mig is not None)


def _gib(mib: float) -> str:
    return f"{mib / 1024:.1f} GiB"


def _color(compute_slices: int) -> str:
    return _COLORS.get(compute_slices, "#adb5bd")


def _ok(text: str) -> str:
    return f'<span style="color:{_GREEN}">✔ {html.escape(text)}</span>'


def _bad(text: str) -> str:
    return f'<span style="color:{_RED}">✘ {html.escape(text)}</span>'


# --- the board ----------------------------------------------------------------------------------


def board_html(layout: Layout, profile: str | None = None,
               frag: mig.Fragmentation | None = None) -> str:
    """Return the board as HTML: memory units, the GIs on them, compute slices, open starts."""
    spec = layout.spec
    units = spec.memory_units
    frag = frag or layout.fragmentation()
    stranded = set(frag.stranded_units)
    cols = f"display:grid;grid-template-columns:repeat({units},1fr);gap:4px;"
    cell = "border-radius:6px;padding:6px 2px;text-align:center;font-size:12px;"
    head = "".join(f'<div style="{cell}color:#555">{t("mig.board.unit", n=u)}</div>'
                   for u in range(units))
    blocks = []
    for u in range(units):
        gi = layout.holder(u)
        if gi is not None and gi.start == u:
            p = gi.profile
            slices = "■" * p.compute_slices
            border = "2px solid #6a4c93" if p.suffix else "1px solid #00000033"
            blocks.append(
                f'<div class="lk-board-gi" title="{html.escape(p.name)}@{gi.start}" '
                f'style="{cell}grid-column:{u + 1}/span {p.memory_slices};'
                f'background:{_color(p.compute_slices)};border:{border}">'
                f"<b>{html.escape(p.name)}</b><br>{slices}<br>"
                f'<span style="font-size:11px">{gi.start}:{p.memory_slices} · '
                f"{_gib(p.memory_mib)}</span></div>")
        elif gi is None:
            if u in stranded:
                style = ("background:repeating-linear-gradient(45deg,#f8d7da,#f8d7da 6px,"
                         "#fff 6px,#fff 12px);border:1px dashed #b00020;color:#b00020")
                label = t("mig.board.stranded")
            else:
                style, label = "background:#f1f3f5;border:1px dashed #adb5bd;color:#868e96", \
                    t("mig.board.free")
            blocks.append(f'<div class="lk-board-free" style="{cell}{style}">{label}</div>')
    marks = []
    if profile is not None:
        try:
            legal = set(layout.legal_starts(profile))
            open_ = set(layout.open_starts(profile))
        except PlacementError:
            legal, open_ = set(), set()
        for u in range(units):
            sign, color = ("▲", _GREEN) if u in open_ else ("△", "#e67700") if u in legal else (
                "·", "#ced4da")
            marks.append(f'<div style="{cell}color:{color};padding:0">{sign}</div>')
    used = layout.used_compute_slices()
    squares = []
    for gi in layout.sorted_instances():
        squares += [f'<span style="display:inline-block;width:22px;height:14px;margin:1px;'
                    f'background:{_color(gi.profile.compute_slices)};border-radius:3px"></span>'
                    ] * gi.profile.compute_slices
    squares += ['<span style="display:inline-block;width:22px;height:14px;margin:1px;'
                'background:#f1f3f5;border:1px dashed #adb5bd;border-radius:3px"></span>'
                ] * (spec.compute_slices - used)
    compute = (f'<div style="margin-top:6px;font-size:13px">'
               f'{t("mig.board.compute", used=used, total=spec.compute_slices)} '
               f'{"".join(squares)}</div>')
    return (f'<div style="max-width:{_BOARD_PX}px">'
            f'<div style="{cols}">{head}</div>'
            f'<div style="{cols}margin-top:2px">{"".join(blocks)}</div>'
            + (f'<div style="{cols}">{"".join(marks)}</div>' if marks else "")
            + compute + "</div>")


def capacity_html(layout: Layout, selected: str | None = None) -> str:
    """Return Free/Total per profile (like ``nvidia-smi mig -lgip``) as an HTML table."""
    rows = []
    capacity = layout.free_capacity()
    for p in layout.spec.profiles:
        free, total = capacity[p.name]
        weight = "font-weight:700;background:#fff3bf" if p.name == selected else ""
        color = _GREEN if free else _RED
        starts = ",".join(str(s) for s in p.placements)
        rows.append(f'<tr style="{weight}"><td>{html.escape(p.name)}</td><td>{p.id}</td>'
                    f'<td style="color:{color}">{free}/{total}</td>'
                    f"<td>{_gib(p.memory_mib)}</td><td>{p.compute_slices}</td>"
                    f"<td>{{{starts}}}:{p.memory_slices}</td></tr>")
    head = "".join(f"<th>{t(k)}</th>" for k in (
        "mig.cap.profile", "mig.cap.id", "mig.cap.free_total", "mig.cap.memory",
        "mig.cap.compute", "mig.cap.placements"))
    return (f'{_TABLE_CSS}<table class="lk-table lk-mig-table" '
            f'style="border-collapse:collapse;font-size:13px">'
            f"<caption style='text-align:left'>{t('mig.cap.title')}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def fragmentation_html(layout: Layout, frag: mig.Fragmentation | None = None) -> str:
    """Return one line on free and stranded memory (fragmentation)."""
    frag = frag or layout.fragmentation()
    if not frag.free_units:
        return t("mig.frag.full")
    if not frag.stranded_units:
        return t("mig.frag.none", free=len(frag.free_units))
    return (f'<span style="color:{_RED}">'
            + t("mig.frag.some", units=", ".join(map(str, frag.stranded_units)),
                n=len(frag.stranded_units), pct=fmt.pct(frag.stranded_frac),
                gib=_gib(frag.stranded_mib))
            + "</span>")


class BoardApp(widgets.VBox):
    """The MIG board (see :func:`board_app`).

    Attributes
    ----------
    layout : Layout
        The board's current layout (only changed through the rules).
    on_change : list of callables
        Called with the layout after every change (linked panels).
    """

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        super().__init__()
        self.add_class("lk-board")
        self.mig_layout = Layout(model)
        self.on_change: list[Callable[[Layout], None]] = []
        self.model_select = widgets.Dropdown(
            options=[(f"{m} — {load_gpu_model(m).name}", m) for m in mig_models()],
            value=self.mig_layout.model.short_name, description=t("mig.board.model"),
            layout=widgets.Layout(width="460px"), style={"description_width": "90px"})
        self.profile_select = widgets.Dropdown(description=t("mig.board.profile"),
                                               layout=widgets.Layout(width="300px"),
                                               style={"description_width": "90px"})
        self.preset_select = widgets.Dropdown(layout=widgets.Layout(width="220px"))
        self.preset_button = widgets.Button(description=t("mig.board.preset_apply"))
        self.auto_button = widgets.Button(description=t("mig.board.auto"),
                                          tooltip=t("mig.board.auto_tip"),
                                          layout=widgets.Layout(width="170px"))
        self.clear_button = widgets.Button(description=t("mig.board.clear"))
        self.remove_select = widgets.Dropdown(layout=widgets.Layout(width="200px"))
        self.remove_button = widgets.Button(description=t("mig.board.remove_one"))
        self.grid = widgets.HTML()
        self.message = widgets.HTML()
        self.capacity = widgets.HTML()
        self.fragmentation = widgets.HTML()
        for w, key in [(self.model_select, "model"), (self.profile_select, "profile"),
                       (self.preset_select, "preset"), (self.preset_button, "preset-apply"),
                       (self.auto_button, "auto"), (self.clear_button, "clear"),
                       (self.remove_select, "remove-select"), (self.remove_button, "remove"),
                       (self.grid, "grid"), (self.message, "message"),
                       (self.capacity, "capacity"), (self.fragmentation, "fragmentation")]:
            w.add_class(f"lk-board-{key}")
        self.starts = widgets.HBox(layout=widgets.Layout(max_width=f"{_BOARD_PX}px"))
        self.start_buttons: list[widgets.Button] = []  # a pool: shown for the model's units
        self.model_select.observe(self._on_model, names="value")
        self.profile_select.observe(self._on_profile, names="value")
        self.preset_button.on_click(lambda _b: self.apply_preset(self.preset_select.value))
        self.auto_button.on_click(lambda _b: self.press(None))
        self.clear_button.on_click(lambda _b: self.clear())
        self.remove_button.on_click(lambda _b: self.remove_at(self.remove_select.value))
        controls = widgets.HBox([self.model_select, self.profile_select],
                                layout=widgets.Layout(flex_flow="row wrap"))
        presets = widgets.HBox([widgets.HTML(f"<b>{t('mig.board.presets')}</b>&nbsp;"),
                                self.preset_select, self.preset_button, self.clear_button],
                               layout=widgets.Layout(align_items="center"))
        click = widgets.HBox([widgets.HTML(f"<b>{t('mig.board.click')}</b>&nbsp;"),
                              self.auto_button], layout=widgets.Layout(align_items="center"))
        self.removes = widgets.HBox([widgets.HTML(f"<b>{t('mig.board.remove')}</b>&nbsp;"),
                                     self.remove_select, self.remove_button],
                                    layout=widgets.Layout(align_items="center"))
        self.children = [controls, presets, click, self.starts, self.grid, self.message,
                         self.removes, self.fragmentation, self.capacity]
        self._build_model_controls()
        self.render()

    # -- model-dependent controls ----------------------------------------------------------------

    def _build_model_controls(self) -> None:
        spec = self.mig_layout.spec
        width = f"{(_BOARD_PX - 4 * (spec.memory_units - 1)) / spec.memory_units:.0f}px"
        while len(self.start_buttons) < spec.memory_units:  # never closed: views stay valid
            u = len(self.start_buttons)
            b = widgets.Button(description=str(u), layout=widgets.Layout(margin="0 2px"))
            b.add_class(f"lk-board-start-{u}")
            b.on_click(lambda _b, u=u: self.press(u))
            self.start_buttons.append(b)
        for u, b in enumerate(self.start_buttons):
            b.layout.width = width
            b.layout.display = None if u < spec.memory_units else "none"
        self.starts.children = self.start_buttons
        names = [p.name for p in spec.profiles]
        self.profile_select.unobserve(self._on_profile, names="value")
        self.profile_select.options = names
        self.profile_select.value = names[0]
        self.profile_select.observe(self._on_profile, names="value")
        choices = mig.presets(self.mig_layout.model)
        self.preset_select.options = list(choices)
        self.preset_select.value = next(iter(choices))

    # -- actions ---------------------------------------------------------------------------------

    @property
    def profile(self) -> str:
        """The selected profile name."""
        return str(self.profile_select.value)

    def press(self, start: Any) -> bool:
        """Place the selected profile at ``start`` (None: where the driver would); explain
        failures. Returns whether it was placed."""
        profile = self.profile
        try:
            gi = self.mig_layout.place(profile, start)
        except (PlacementError, InputError):
            self.render(_bad(explain(self.mig_layout, profile, start)), changed=False)
            return False
        units = f"{gi.start}" if gi.profile.memory_slices == 1 else (
            f"{gi.start}–{gi.start + gi.profile.memory_slices - 1}")
        self.render(_ok(t("mig.board.placed", profile=profile, start=gi.start, units=units)))
        return True

    def remove_at(self, unit: Any) -> None:
        """Remove the GI that starts at (or covers) memory unit ``unit``."""
        try:
            gi = self.mig_layout.remove(int(unit))
        except (ValueError, TypeError):
            self.render(_bad(t("mig.board.nothing_there", unit=unit)))
            return
        self.render(_ok(t("mig.board.removed", profile=gi.profile.name, start=gi.start)))

    def clear(self) -> None:
        """Remove every GI."""
        self.mig_layout.clear()
        self.render(_ok(t("mig.board.cleared")))

    def apply_preset(self, key: Any) -> None:
        """Replace the layout with the preset ``key`` of this model."""
        choices = mig.presets(self.mig_layout.model)
        if key not in choices:
            self.render(_bad(t("mig.board.no_preset", key=key)))
            return
        self.mig_layout = choices[key].copy()
        self.render(_ok(t("mig.board.preset_done", key=key, layout=self.describe())))

    def set_layout(self, layout: Layout, note: str = "") -> None:
        """Show ``layout`` (switching the model if it is another board's)."""
        if layout.model.short_name != self.mig_layout.model.short_name:
            self.mig_layout = Layout(layout.model)
            self.model_select.unobserve(self._on_model, names="value")
            self.model_select.value = layout.model.short_name
            self.model_select.observe(self._on_model, names="value")
            self._build_model_controls()
        self.mig_layout = layout.copy()
        self.render(_ok(note or t("mig.board.loaded", layout=self.describe())))

    def describe(self) -> str:
        """Return the layout as ``3g.40gb@4, 1g.10gb@0`` (or the Korean for empty)."""
        parts = [f"{gi.profile.name}@{gi.start}" for gi in self.mig_layout.sorted_instances()]
        return ", ".join(parts) or t("mig.board.empty")

    def _on_model(self, change: dict[str, Any]) -> None:
        try:
            self.mig_layout = Layout(str(change["new"]))
        except (InputError, ValueError) as err:
            self.render(_bad(error_text(err)))
            return
        self._build_model_controls()
        self.render(t("mig.board.model_changed", model=self.mig_layout.model.name))

    def _on_profile(self, _change: dict[str, Any]) -> None:
        self.render(html.escape(explain(self.mig_layout, self.profile)), changed=False)

    # -- drawing ---------------------------------------------------------------------------------

    def render(self, message: str | None = None, changed: bool = True) -> None:
        """Redraw the board, the start buttons, Free/Total and fragmentation; tell linked
        panels when the layout ``changed``."""
        profile = self.profile
        lay = self.mig_layout
        frag = lay.fragmentation()
        legal = set(lay.legal_starts(profile))
        open_ = set(lay.open_starts(profile))
        for u, b in enumerate(self.start_buttons[:lay.spec.memory_units]):
            b.button_style = "success" if u in open_ else "warning" if u in legal else ""
            b.tooltip = explain(lay, profile, u)
        gis = lay.sorted_instances()
        self.removes.layout.display = None if gis else "none"
        options = [(f"{gi.profile.name}@{gi.start}", gi.start) for gi in gis]
        if list(self.remove_select.options) != options:
            self.remove_select.options = options
            if options and self.remove_select.value is None:
                self.remove_select.value = options[-1][1]
        self.grid.value = board_html(lay, profile, frag)
        self.capacity.value = capacity_html(lay, profile)
        self.fragmentation.value = fragmentation_html(lay, frag)
        if message is not None:
            self.message.value = message
        if changed:
            for callback in self.on_change:
                callback(lay)

def board_app(model: str = DEFAULT_MODEL) -> BoardApp:
    """Return the MIG board for ``model`` (``"H100-80GB"``, ``"A30"``, ...).

    Used in: notebooks/02_mig.ipynb
    """
    return BoardApp(model)


class ChallengePanel(widgets.VBox):
    """A target for the board (see :func:`challenge_panel`)."""

    def __init__(self, board: BoardApp, target: Mapping[str, int]) -> None:
        super().__init__()
        self.add_class("lk-challenge")
        self.board = board
        self.target = dict(target)
        self.progress = widgets.HTML()
        self.check_button = widgets.Button(description=t("mig.target.check"))
        self.message = widgets.HTML()
        for w, key in [(self.progress, "progress"), (self.check_button, "check"),
                       (self.message, "message")]:
            w.add_class(f"lk-challenge-{key}")
        self.check_button.on_click(lambda _b: self.check())
        board.on_change.append(lambda _lay: self.show_progress())
        self.children = [widgets.HBox([self.progress, self.check_button],
                                      layout=widgets.Layout(align_items="center")),
                         self.message]
        self.show_progress()

    def show_progress(self) -> None:
        """Show how much of the target the board's layout meets."""
        counts = self.board.mig_layout.counts()
        parts = []
        for name, want in self.target.items():
            have = counts.get(name, 0)
            mark = "✔" if have >= want else "…"
            parts.append(f"{html.escape(name)} {have}/{want} {mark}")
        self.progress.value = f"<b>{t('mig.target.title')}</b> " + " · ".join(parts)

    def check(self) -> str:
        """Say whether the target fits on one GPU of the board's model, and if not, why and
        how many GPUs it takes (first fit, largest first)."""
        board = self.board.mig_layout
        names = [n for n, k in self.target.items() for _ in range(k)]
        try:
            profs = [board.profile(n) for n in names]
            Layout.from_profiles(board.model, names)
        except PlacementError as err:
            if err.rule == "unknown_profile":
                text = t("mig.target.other_model", model=board.model.short_name)
                self.message.value = _bad(text)
                return text
            spec = board.spec
            need_c = sum(p.compute_slices for p in profs)
            need_u = sum(p.memory_slices for p in profs)
            reason = (t("mig.target.compute", need=need_c, have=spec.compute_slices)
                      if need_c > spec.compute_slices else
                      t("mig.target.memory", need=need_u, have=spec.memory_units)
                      if need_u > spec.memory_units else
                      t("mig.target.rule", rule=err.rule))
            gpus = mig.pack_profiles(board.model, names)
            plan = " / ".join(f"GPU {k + 1}: " + ", ".join(
                f"{gi.profile.name}@{gi.start}" for gi in g.sorted_instances())
                for k, g in enumerate(gpus))
            text = t("mig.target.impossible", reason=reason, n=len(gpus), plan=plan)
            self.message.value = _bad(text)
            return text
        text = t("mig.target.possible")
        self.message.value = _ok(text)
        return text


def challenge_panel(board: BoardApp) -> ChallengePanel:
    """Return the challenge for ``board``: seven students each need a 1g.10gb, one project a
    3g.40gb — find a layout (or find out why there is none on one GPU).

    Used in: notebooks/02_mig.ipynb
    """
    return ChallengePanel(board, CHALLENGE)


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


# --- sharing modes ------------------------------------------------------------------------------

_MODE_KEYS = ("time_slicing", "mps", "mig")
_ROW_KEYS = ("partition", "max", "compute", "memory", "bandwidth", "faults", "reconfigure",
             "fits")


def sharing_modes() -> pd.DataFrame:
    """Return MIG vs MPS vs time-slicing: partitioning, isolation, QoS, reconfiguration.

    From the CUDA concurrency comparison of NVIDIA's MIG user guide (MPS vs MIG), the MPS
    documentation (optional limits, a fatal fault reaches every client) and the GPU Operator's
    time-slicing notes (no memory or fault isolation).

    Used in: notebooks/02_mig.ipynb
    """
    rows = [[t(f"mig.modes.{row}.{mode}") for mode in _MODE_KEYS] for row in _ROW_KEYS]
    index = pd.Index([t(f"mig.modes.{row}") for row in _ROW_KEYS], name=t("mig.modes.col"))
    return pd.DataFrame(rows, index=index, columns=[t(f"mig.mode.{m}") for m in _MODE_KEYS])


@dataclass(frozen=True)
class WorkloadView:
    """What the workload app shows: the results per mode and the MIG layout used."""

    results: dict[str, share.ModeResult]
    layout: Layout


def _workload_table(results: Mapping[str, share.ModeResult]) -> pd.DataFrame:
    rows = []
    for mode, r in results.items():
        rows.append({
            t("mig.wl.mode"): t(f"mig.mode.{mode}"),
            t("mig.wl.makespan"): fmt.hours(r.makespan_h, 2),
            t("mig.wl.jct"): fmt.hours(r.mean_jct_h, 2),
            t("mig.wl.wait"): fmt.hours(r.mean_wait_h, 2),
            t("mig.wl.allocation"): fmt.pct(r.allocation_frac),
            t("mig.wl.useful"): fmt.pct(r.useful_frac),
            t("mig.wl.oom"): fmt.count(r.oom_jobs),
            t("mig.wl.interfering"): fmt.count(r.interfering_jobs),
        })
    return pd.DataFrame(rows).set_index(t("mig.wl.mode"))


def _table_html(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in [frame.index.name, *frame.columns])
    rows = "".join(
        f"<tr><th>{html.escape(str(i))}</th>"
        + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for i, row in zip(frame.index, frame.to_numpy().tolist(), strict=True))
    return (f'{_TABLE_CSS}<table class="lk-table lk-mig-table" style="font-size:13px">'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")


class WorkloadApp(LiveApp[WorkloadView]):
    """A class's jobs on one GPU under four sharing modes (see :func:`workload_app`)."""

    def __init__(self, board: BoardApp | None) -> None:
        self.board = board
        self._own = Layout.from_profiles(DEFAULT_MODEL, ["1g.10gb"] * 7)
        fields = [
            number_field("n_students", t("mig.wl.n_students"), 7, unit=t("mig.wl.people")),
            number_field("memory_gb", t("mig.wl.memory"), 8, unit="GB", step=0.5),
            number_field("duration_h", t("mig.wl.duration"), 1, unit="h", step=0.25),
            number_field("max_slices", t("mig.wl.slices"), 1, unit=t("mig.wl.slices_unit")),
        ]
        super().__init__("workload", fields, error_prefix="mig.wl",
                         field_map={"memory_mib": "memory_gb", "max_share": "max_slices"})
        self.layout_line = widgets.HTML()
        self.layout_line.add_class("lk-workload-layout")
        self.table = widgets.HTML()
        self.table.add_class("lk-workload-table")
        self.notes = widgets.HTML()
        self.notes.add_class("lk-workload-notes")
        self.chart = FigureOutput("lk-workload-chart")
        self.children = [*(f.box for f in self.fields.values()), self.status, self.layout_line,
                         self.table, self.notes, self.chart]
        self._shown: tuple[Any, ...] | None = None
        self._figure: go.Figure | None = None
        if board is not None:
            board.on_change.append(self._board_changed)
        self.update()

    def _board_changed(self, layout: Layout) -> None:
        if layout.key() != self._shown:
            self.update()

    @property
    def mig_layout(self) -> Layout:
        """The MIG layout compared: the board's, or 7 x 1g.10gb on an H100 without a board."""
        return self.board.mig_layout if self.board is not None else self._own

    def compute(self, values: dict[str, Any]) -> WorkloadView:
        lay = self.mig_layout.copy()
        slices = lay.spec.compute_slices
        n = values["max_slices"]
        validate.integer("max_slices", n, minimum=1)
        validate.at_most("max_slices", n, slices, "compute slices")
        gb = validate.non_negative("memory_mib", values["memory_gb"])
        jobs = share.class_jobs(values["n_students"], gb * 1e9 / 2**20, values["duration_h"],
                                n / slices)
        results = share.compare(jobs, gpu_memory_mib=lay.model.memory_total_mib,
                                slots=share.mig_slots(lay))
        return WorkloadView(results, lay)

    def render(self, result: WorkloadView) -> None:
        lay = result.layout
        self._shown = lay.key()
        parts = ", ".join(f"{gi.profile.name}@{gi.start}" for gi in lay.sorted_instances())
        self.layout_line.value = t("mig.wl.layout", model=lay.model.short_name,
                                   layout=parts or t("mig.board.empty"))
        self.table.value = _table_html(_workload_table(result.results))
        notes = []
        for mode, r in result.results.items():
            oom = sum(1 for run in r.runs if run.outcome == "oom")
            no_slot = sum(1 for run in r.runs if run.outcome == "no_slot")
            if oom:
                notes.append(t("mig.wl.note_oom", mode=t(f"mig.mode.{mode}"), n=oom))
            if no_slot:
                notes.append(t("mig.wl.note_no_slot", mode=t(f"mig.mode.{mode}"), n=no_slot))
        self.notes.value = "<br>".join(html.escape(n) for n in notes)
        modes = [t(f"mig.mode.{m}") for m in result.results]
        series = [[getattr(r, attr) for r in result.results.values()]
                  for attr in ("makespan_h", "mean_jct_h", "mean_wait_h")]
        fig = self._figure
        if fig is None:  # built once; later results only replace the bars' numbers
            fig = styled_figure(title=t("mig.wl.chart_title"), yaxis_title=t("mig.wl.hours"),
                                barmode="group", height=340)
            for key, color in (("mig.wl.makespan", "#3b6fb6"), ("mig.wl.jct", "#ffb703"),
                               ("mig.wl.wait", "#adb5bd")):
                fig.add_trace(go.Bar(x=modes, name=t(key), textposition="outside",
                                     marker={"color": color}))
            self._figure = fig
        with fig.batch_update():
            for trace, ys in zip(fig.data, series, strict=True):
                trace.y = ys
                trace.text = [fmt.hours(y, 2) for y in ys]
        self.chart.show(fig)


def workload_app(board: BoardApp | None = None) -> WorkloadApp:
    """Return the class-workload comparison, using ``board``'s layout for MIG.

    Used in: notebooks/02_mig.ipynb
    """
    return WorkloadApp(board)


# --- tables for nbval ---------------------------------------------------------------------------


def case1_numbers() -> pd.DataFrame:
    """Return the seven-students case (one A100-80GB) under every sharing mode.

    Seven 1-hour jobs of 8 GiB that use at most one compute slice: whole-GPU FIFO takes 7 h,
    seven 1g.10gb slices 1 h (course scheduling check case 1; NVIDIA MIG user guide profiles).

    Used in: notebooks/02_mig.ipynb
    """
    seven = Layout.from_profiles("A100-80GB", ["1g.10gb"] * 7)
    jobs = share.class_jobs(7, 8 * 1024, 1.0, 1 / 7)
    results = share.compare(jobs, gpu_memory_mib=seven.model.memory_total_mib,
                            slots=share.mig_slots(seven))
    return _workload_table(results)


def layout_counts(models: Sequence[str] = ("H100-80GB", "A30", "RTX-PRO-6000")) -> pd.DataFrame:
    """Return, per board, its memory units, compute slices, valid and maximal layouts.

    Used in: notebooks/02_mig.ipynb
    """
    rows = []
    for m in models:
        spec = Layout(m).spec
        rows.append({t("mig.count.model"): m, t("mig.count.units"): spec.memory_units,
                     t("mig.count.slices"): spec.compute_slices,
                     t("mig.count.profiles"): len(spec.profiles),
                     t("mig.count.valid"): len(mig.valid_layouts(m)),
                     t("mig.count.maximal"): len(mig.maximal_layouts(m))})
    return pd.DataFrame(rows).set_index(t("mig.count.model"))


def exercises() -> widgets.VBox:
    """Return the lesson's exercises; answers come from :mod:`labkit.mig`."""
    with_three = Layout(DEFAULT_MODEL)
    with_three.place("3g.40gb")
    seven = Layout(DEFAULT_MODEL, [("1g.10gb", None)] * 7)
    names = [n for n, k in CHALLENGE.items() for _ in range(k)]
    return exercise_set([
        Exercise("mig.ex1", with_three.free_capacity()["1g.10gb"][0], 0, "개"),
        Exercise("mig.ex2", len(mig.pack_profiles(DEFAULT_MODEL, names)), 0, "장"),
        Exercise("mig.ex3", seven.fragmentation().stranded_frac * 100, 0.051, "%"),
    ])
