"""Lesson 02's MIG board: the GPU drawn as memory units, placement explained, and the
challenge target for it.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from labkit import mig
from labkit.data.gpus import load_gpu_model, mig_models
from labkit.i18n import error_text, t
from labkit.mig import Layout, PlacementError
from labkit.ui import format as fmt
from labkit.ui.components import guard
from labkit.ui.mig.server import ServerPanel
from labkit.ui.mig_explain import explain
from labkit.validate import InputError

DEFAULT_MODEL = "H100-80GB"
#: The challenge: seven students each need a 1g.10gb, one project needs a 3g.40gb.
CHALLENGE = {"1g.10gb": 7, "3g.40gb": 1}
_COLORS = {1: "#8ecae6", 2: "#57b3d9", 3: "#ffb703", 4: "#fb8500", 7: "#2a9d8f"}
_GREEN, _RED = "#1b7f3b", "#b00020"
_BOARD_PX = 760
_TABLE_CSS = ("<style>.lk-mig-table td,.lk-mig-table th{padding:3px 12px;text-align:left}"
              "</style>")


@functools.cache
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


def preset_label(key: str) -> str:
    """A mig-parted preset name for people: ``all-1g.10gb`` -> "전부 1g.10gb (all-1g.10gb)"."""
    if key == "all-balanced":
        return t("mig.preset.balanced", key=key)
    if key.startswith("all-"):
        return t("mig.preset.all", profile=key.removeprefix("all-"), key=key)
    return t("mig.preset.mixed", profiles=key.replace("+", " + "), key=key)


class BoardApp(widgets.VBox):
    """The MIG board (see :func:`board_app`).

    Attributes
    ----------
    layout : Layout
        The board's current layout (only changed through the rules).
    on_change : list of callables
        Called with the layout after every change (linked panels).
    """

    # long: the board's widget tree built in reading order (controls, board, server panel, steps)
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
        # a browser may pick from these lists, not send an index or a list of its own
        notes = {k: guard(w, f"board-{k}") for k, w in [
            ("model", self.model_select), ("profile", self.profile_select),
            ("preset", self.preset_select), ("remove", self.remove_select)]}
        controls = widgets.HBox([self.model_select, notes["model"], self.profile_select,
                                 notes["profile"]],
                                layout=widgets.Layout(flex_flow="row wrap"))
        presets = widgets.HBox([widgets.HTML(f"<b>{t('mig.board.presets')}</b>&nbsp;"),
                                self.preset_select, self.preset_button, self.clear_button,
                                notes["preset"]],
                               layout=widgets.Layout(align_items="center"))
        click = widgets.HBox([widgets.HTML(f"<b>{t('mig.board.click')}</b>&nbsp;"),
                              self.auto_button], layout=widgets.Layout(align_items="center"))
        self.removes = widgets.HBox([widgets.HTML(f"<b>{t('mig.board.remove')}</b>&nbsp;"),
                                     self.remove_select, self.remove_button, notes["remove"]],
                                    layout=widgets.Layout(align_items="center"))
        # our server's layout, pasted from nvidia-smi (issue 26): folded until opened
        self.server = ServerPanel(self)
        self.server_box = widgets.Accordion(children=[self.server], selected_index=None,
                                            titles=(t("mig.server.title"),))
        self.server_box.add_class("lk-board-server-box")
        self.children = [controls, self.server_box, presets, click, self.starts, self.grid,
                         self.message, self.removes, self.fragmentation, self.capacity]
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
        self.preset_select.options = [(preset_label(k), k) for k in choices]
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
            with b.hold_sync():  # style and tooltip in one message per button
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


