"""Lesson 02's board, our server: paste or upload what ``nvidia-smi mig -lgi`` (``-L``, ``-lci``,
``-lgip``, ``-lgipp``) prints, and see that layout with its free placements.

The course's lab GPU can be a server the lesson's kernel cannot reach: the operator runs
nvidia-smi there and pastes the text here. Reading is :func:`labkit.mig.parse_nvidia_smi_mig`
(uploads decoded by :mod:`labkit.data.mig`); this module only words the result in Korean.

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from labkit.data.gpus import mig_models
from labkit.data.mig import decode_nvidia_smi_listing
from labkit.i18n import error_text, t
from labkit.mig import Layout, SmiListingError, SmiMigGpu, parse_nvidia_smi_mig
from labkit.mig.smi_listing import MAX_LISTING_CHARS
from labkit.ui.components import guard
from labkit.ui.files import read_upload
from labkit.validate import InputError

if TYPE_CHECKING:
    from labkit.ui.mig.board import BoardApp

__all__ = ["LISTING_SUFFIXES", "ServerPanel", "free_placements_text", "listing_error_text"]

#: File endings accepted for an uploaded listing (``nvidia-smi mig -lgi > lgi.txt``).
LISTING_SUFFIXES = (".txt", ".log", ".out")
_GREEN, _AMBER, _RED = "#1b7f3b", "#8a5a00", "#b00020"


def listing_error_text(err: ValueError) -> str:
    """Return why a pasted listing cannot be shown, in Korean (HTML; what was read is escaped).

    A :class:`~labkit.mig.SmiListingError` gets its rule's sentence with the GPU, the line and
    what was read; an unknown ``model`` the catalog's choice message; anything else the
    generic sentence (never the English).
    """
    if isinstance(err, SmiListingError):
        if err.line and err.gpu is not None:
            where = t("mig.server.where_line", gpu=err.gpu, line=err.line)
        elif err.line:
            where = t("mig.server.where_line_only", line=err.line)
        else:
            where = t("mig.server.where_gpu", gpu=err.gpu) if err.gpu is not None else ""
        return t(f"mig.server.error.{err.rule}", where=where,
                 detail=html.escape(err.detail[:200]))
    if isinstance(err, InputError):
        return html.escape(error_text(err, prefix="mig.server"))
    return t("mig.server.error.other")


def free_placements_text(layout: Layout) -> str:
    """Return where GIs can still go, per profile: ``1g.10gb: 유닛 1, 5 · 2g.20gb: 없음``."""
    parts = []
    for prof in layout.spec.profiles:
        starts = layout.open_starts(prof)
        if starts:
            parts.append(t("mig.server.free_at", profile=prof.name,
                           starts=", ".join(str(s) for s in starts)))
    return " · ".join(parts) if parts else t("mig.server.free_none")


class ServerPanel(widgets.VBox):
    """The paste/upload box beside the board (see the module docstring).

    Attributes
    ----------
    found : dict of int to SmiMigGpu
        The GPUs of the last listing read.
    """

    def __init__(self, board: BoardApp) -> None:
        super().__init__()
        self.add_class("lk-board-server")
        self.board = board
        self.found: dict[int, SmiMigGpu] = {}
        self.text = widgets.Textarea(
            value="", placeholder=t("mig.server.placeholder"),
            layout=widgets.Layout(width="760px", height="150px"))
        self.upload = widgets.FileUpload(accept=",".join(LISTING_SUFFIXES), multiple=False,
                                         description=t("mig.server.upload"))
        self.model_select = widgets.Dropdown(
            options=[(t("mig.server.model_auto"), "")] + [(m, m) for m in mig_models()],
            value="", description=t("mig.server.model"), layout=widgets.Layout(width="360px"),
            style={"description_width": "initial"})
        self.read_button = widgets.Button(description=t("mig.server.read"),
                                          button_style="primary")
        # as wide as its longest option ("GPU 3: NVIDIA RTX PRO 6000 Blackwell Server
        # Edition (GPU 인스턴스 4개)"): a fixed width cut the board names of multi-GPU listings
        self.gpu_select = widgets.Dropdown(options=[(" ", -1)], value=-1,
                                           description=t("mig.server.gpu"),
                                           layout=widgets.Layout(width="auto",
                                                                 min_width="360px",
                                                                 max_width="100%",
                                                                 display="none"),
                                           style={"description_width": "initial"})
        self.message = widgets.HTML("")
        for w, key in [(self.text, "text"), (self.upload, "upload"),
                       (self.model_select, "model"), (self.read_button, "read"),
                       (self.gpu_select, "gpu"), (self.message, "message")]:
            w.add_class(f"lk-server-{key}")
        self.read_button.on_click(lambda _b: self.read(self.text.value))
        self.upload.observe(self._on_upload, names="value")
        self.gpu_select.observe(self._on_gpu, names="value")
        notes = {k: guard(w, f"server-{k}") for k, w in [("model", self.model_select),
                                                          ("gpu", self.gpu_select)]}
        self.children = [
            widgets.HTML(t("mig.server.intro")),
            self.text,
            widgets.HBox([self.read_button, self.upload, self.model_select, notes["model"]],
                         layout=widgets.Layout(flex_flow="row wrap", align_items="center")),
            widgets.HBox([self.gpu_select, notes["gpu"]]),
            self.message]

    def _on_upload(self, change: dict[str, Any]) -> None:
        value = change["new"]
        if not value:
            return
        try:
            upload = read_upload(value, max_bytes=4 * MAX_LISTING_CHARS,
                                 suffixes=LISTING_SUFFIXES)
            text = decode_nvidia_smi_listing(upload.data, name=upload.name)
        except InputError as err:
            self._bad(html.escape(error_text(err, prefix="mig.server")))
            return
        except ValueError:
            self._bad(t("mig.server.error.not_text"))
            return
        finally:
            self.upload.unobserve(self._on_upload, names="value")
            self.upload.value = ()  # drop the bytes from the widget
            self.upload.observe(self._on_upload, names="value")
        self.text.value = text[:MAX_LISTING_CHARS]
        self.read(text)

    def read(self, text: str) -> bool:
        """Read ``text`` and show its first GPU on the board; return whether it could.

        On a listing that cannot be shown the board keeps its last layout and the reason is
        shown in Korean below the box.
        """
        model = str(self.model_select.value or "") or None
        try:
            found = parse_nvidia_smi_mig(str(text), model)
        except (SmiListingError, InputError) as err:
            self._bad(listing_error_text(err))
            return False
        self.found = found
        self.gpu_select.unobserve(self._on_gpu, names="value")
        self.gpu_select.options = [(self._gpu_label(g), i) for i, g in found.items()]
        self.gpu_select.value = next(iter(found))
        self.gpu_select.layout.display = None if len(found) > 1 else "none"
        self.gpu_select.observe(self._on_gpu, names="value")
        self.show(next(iter(found)))
        return True

    def _gpu_label(self, g: SmiMigGpu) -> str:
        name = g.name or g.layout.model.name
        return t("mig.server.gpu_option", gpu=g.gpu, name=name, n=len(g.layout))

    def _on_gpu(self, change: dict[str, Any]) -> None:
        if change["new"] in self.found:
            self.show(int(change["new"]))

    def show(self, gpu: int) -> None:
        """Put GPU ``gpu`` of the last listing on the board, saying how it was read."""
        g = self.found[gpu]
        notes = [t("mig.server.shown", gpu=g.gpu, name=html.escape(g.name or g.layout.model.name),
                   model=g.layout.model.short_name,
                   listings=html.escape(", ".join(f"nvidia-smi {x if x == '-L' else 'mig ' + x}"
                                                  for x in g.listings)))]
        if not g.instances_listed:  # which GIs it has is unknown: no "free" list, no ✔
            notes.append(t("mig.server.no_instances"))
        elif g.placements_inferred:
            notes.append(t("mig.server.inferred"))
        else:
            notes.append(t("mig.server.exact"))
        if g.instances_listed:
            notes.append(t("mig.server.free", free=html.escape(free_placements_text(g.layout))))
        self.board.set_layout(g.layout, note=t("mig.board.loaded", layout=", ".join(
            f"{gi.profile.name}@{gi.start}" for gi in g.layout.sorted_instances())
            or t("mig.board.empty")))
        color, mark = (_GREEN, "✔") if g.instances_listed else (_AMBER, "⚠")
        self.message.value = (f'<div style="color:{color}">{mark} ' + "<br>".join(notes)
                              + "</div>")

    def _bad(self, text_html: str) -> None:
        self.message.value = f'<div style="color:{_RED}">✘ {text_html}</div>'
