"""우리 학교: the school case's editor and the small card every lesson shows at its top.

- :func:`card` — "우리 학교" in three lines and a lesson-specific sentence (``card("02")``),
  with the 4,096/16,384-GPU clusters as contrast; says so when a saved copy was not usable.
- :func:`editor` — the case's figures as :class:`~labkit.ui.components.Field` controls (Korean
  labels, errors beside the control), a preview card, 저장 (save) and 기본값으로 (reset).

The case is read through :func:`labkit.data.school.load_case` (the teacher's saved copy, else
``data/school/case.yaml``); every lesson reads the same file. In one kernel the file is also
observed: :func:`on_case_changed` registers a callback that an editor's save or reset calls with
the new case, so lesson 09's card and decision follow the case just saved without a restart.

Used in: notebooks/01-09
"""

from __future__ import annotations

import errno
import html
import inspect
import weakref
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from labkit import school
from labkit.data import school as school_data
from labkit.i18n import t
from labkit.school import SchoolCase
from labkit.ui import format as fmt
from labkit.ui.components import Field, LiveApp, number_field
from labkit.validate import InputError

__all__ = ["LESSONS", "SchoolCard", "SchoolEditor", "card", "card_html", "current_case", "editor",
           "on_case_changed"]

LESSONS = ("01", "02", "03", "04", "05", "06", "07", "08", "09")
_BOX = ('<div class="lk-school-card" style="padding:8px 12px;margin:4px 0;'
        'border-left:4px solid #2a9d8f;background:#eef8f6;line-height:1.6">')
_WARN = ('<div style="padding:6px 10px;margin:4px 0;border-left:4px solid #d98e04;'
         'background:#fff6e0">⚠ {}</div>')
# Llama 3 405B's 16,384 H100 ran 466 interruptions in 54 days (Dubey et al. 2024, §3.3.4):
# the failure rate scales with the GPU count, so the school sees it n / 16,384 as often.
_BIG = school.CONTRAST_GPUS[-1]


def current_case() -> school_data.LoadedCase:
    """Return the case every lesson uses now (saved copy or default) and its origin."""
    return school_data.load_case()


# --- the case's change event (one kernel) -----------------------------------------------------

_LISTENERS: list[Callable[[], Callable[[SchoolCase], None] | None]] = []


def on_case_changed(callback: Callable[[SchoolCase], None]) -> None:
    """Call ``callback(case)`` each time an editor in this kernel saves or resets the case.

    The saved file stays the one source of truth (:func:`current_case`); this is its change
    event, for widgets built before the save (lesson 09's card and decision). A bound method is
    held weakly, so a widget that is gone is not kept alive by its subscription.
    """
    if inspect.ismethod(callback):
        _LISTENERS.append(weakref.WeakMethod(callback))
    else:
        _LISTENERS.append(lambda: callback)


def _case_changed(case: SchoolCase) -> None:
    alive = []
    for ref in list(_LISTENERS):
        callback = ref()
        if callback is not None:
            alive.append(ref)
            callback(case)
    _LISTENERS[:] = alive


def _num(x: float) -> str:
    return f"{x:,.1f}".rstrip("0").rstrip(".")


def _lesson_line(case: SchoolCase, lesson: str) -> str:
    per_lesson: dict[str, dict[str, Any]] = {
        "01": {"n": case.n_gpus},
        "02": {"students": case.students, "n": case.n_gpus, "per_gpu": _num(case.students_per_gpu)},
        "03": {"n": case.n_gpus, "gpu_h": f"{case.n_gpus * 8_760:,}"},
        "04": {"n": case.n_gpus, "ratio": f"{school.gpus_ratio(case, _BIG):,.0f}"},
        "05": {"price": fmt.krw(case.server_price_krw)},
        "06": {"gpu": case.gpu_model, "n": case.n_gpus},
        "07": {"tariff": case.tariff_class, "kw": _num(case.contract_kw)},
        "08": {"students": case.students, "n": case.n_gpus},
        "09": {},
    }
    return t(f"school.card.lesson.{lesson}", **per_lesson[lesson])


def card_html(case: SchoolCase, lesson: str | None = None, *, problem: str | None = None,
              detail: str = "") -> str:
    """Return the "우리 학교" card as HTML (see :func:`card`).

    Raises
    ------
    KeyError
        If ``lesson`` is not one of :data:`LESSONS`.
    """
    if lesson is not None and lesson not in LESSONS:
        raise KeyError(lesson)
    a, b = school.CONTRAST_GPUS
    contrast = t("school.card.contrast", big_a=f"{a:,}", big_b=f"{b:,}",
                 ratio_a=f"{school.gpus_ratio(case, a):,.0f}",
                 ratio_b=f"{school.gpus_ratio(case, b):,.0f}")
    lines = [
        f"<b>{html.escape(t('school.card.head', name=case.name))}</b>",
        html.escape(t("school.card.server", gpu=case.gpu_model, n=case.n_gpus,
                      price=fmt.krw(case.server_price_krw))),
        html.escape(t("school.card.power", tariff=case.tariff_class, kw=_num(case.contract_kw),
                      pue=_num(case.pue))),
        html.escape(t("school.card.class", students=case.students,
                      start=_num(case.class_start_h), end=_num(case.class_end_h),
                      per_gpu=_num(case.students_per_gpu))),
        f'<span style="color:#555">{html.escape(contrast)}</span>',
    ]
    if lesson is not None:
        lines.append(f"<i>{html.escape(_lesson_line(case, lesson))}</i>")
    warn = ""
    if problem is not None:
        warn = _WARN.format(html.escape(t(f"school.problem.{problem}", detail=detail)
                                        if problem == "invalid"
                                        else t("school.problem.unreadable")))
    return warn + _BOX + "<br>".join(lines) + "</div>"


class SchoolCard(widgets.HTML):
    """The "우리 학교" card (see :func:`card`); it follows the case saved in this kernel."""

    def __init__(self, lesson: str | None = None) -> None:
        loaded = current_case()
        super().__init__(card_html(loaded.case, lesson, problem=loaded.problem,
                                   detail=_short(loaded.detail)))
        self.lesson = lesson
        self.add_class("lk-school")
        on_case_changed(self.follow)

    def follow(self, case: SchoolCase) -> None:
        """Show ``case``, just saved or reset by an editor."""
        self.value = card_html(case, self.lesson)


def card(lesson: str | None = None) -> SchoolCard:
    """Return the small "우리 학교" card a lesson shows at its top.

    Parameters
    ----------
    lesson : str, optional
        ``"01"`` … ``"09"``: adds the sentence that reads the case for that lesson.

    Never raises over the saved copy: a broken one falls back to the default, and the card
    says so in Korean. Raises ``KeyError`` for an unknown ``lesson``.

    Used in: notebooks/01-09
    """
    if lesson is not None and lesson not in LESSONS:
        raise KeyError(lesson)
    return SchoolCard(lesson)


def _short(detail: str) -> str:
    """The field part of a problem's detail (no paths: the card is seen by the class)."""
    return detail.rsplit(": ", 2)[-2] if detail.count(": ") >= 2 else ""


# --- the editor -------------------------------------------------------------------------------

_PCT = ("idle_frac", "class_frac", "exam_frac", "after_school_frac", "vacation_frac",
        "always_on_frac")


def _fields(case: SchoolCase) -> list[Field]:
    models = school_data.case_gpu_models()
    classes = _tariff_classes()
    gpu = widgets.Dropdown(options=list(dict.fromkeys([*models, case.gpu_model])),
                           value=case.gpu_model, layout=widgets.Layout(width="200px"))
    cls = widgets.Dropdown(options=list(dict.fromkeys([*classes, case.tariff_class])),
                           value=case.tariff_class, layout=widgets.Layout(width="230px"))
    name = widgets.Text(value=case.name, continuous_update=False,
                        layout=widgets.Layout(width="200px"))
    f = [
        Field("name", t("school.f.name"), name),
        Field("gpu_model", t("school.f.gpu_model"), gpu),
        number_field("n_gpus", t("school.f.n_gpus"), case.n_gpus, unit=t("school.unit.gpus")),
        number_field("server_price_usd", t("school.f.server_price_usd"), case.server_price_usd,
                     unit="USD", step=5_000),
        number_field("fx_krw_per_usd", t("school.f.fx_krw_per_usd"), case.fx_krw_per_usd,
                     unit="원/USD", step=10),
        number_field("pue", t("school.f.pue"), case.pue, step=0.05),
        number_field("contract_kw", t("school.f.contract_kw"), case.contract_kw, unit="kW"),
        Field("tariff_class", t("school.f.tariff_class"), cls),
        Field("school_exception", t("school.f.school_exception"),
              widgets.Checkbox(value=case.school_exception, indent=False)),
        number_field("students", t("school.f.students"), case.students,
                     unit=t("school.unit.people")),
        number_field("class_start_h", t("school.f.class_start_h"), case.class_start_h,
                     unit=t("school.unit.hour"), step=0.5),
        number_field("class_end_h", t("school.f.class_end_h"), case.class_end_h,
                     unit=t("school.unit.hour"), step=0.5),
        number_field("job_memory_gb", t("school.f.job_memory_gb"), case.job_memory_gb,
                     unit="GB", step=0.5),
        number_field("job_duration_h", t("school.f.job_duration_h"), case.job_duration_h,
                     unit="h", step=0.25),
        number_field("api_usd_per_m_tokens", t("school.f.api_usd_per_m_tokens"),
                     case.api_usd_per_m_tokens, unit="USD", step=0.05),
        number_field("rent_usd_per_gpu_hour", t("school.f.rent_usd_per_gpu_hour"),
                     case.rent_usd_per_gpu_hour, unit="USD/GPU·h", step=0.1),
    ]
    f += [number_field(key, t(f"school.f.{key}"), round(getattr(case, key) * 100, 6),
                       unit="%", step=5, scale=100) for key in _PCT]
    return f


def _tariff_classes() -> list[str]:
    from labkit.data.tariff import tariff_classes

    return list(tariff_classes())


def _blame_changed(err: InputError, values: dict[str, Any], last: str | None) -> InputError:
    """The model's error about a pair of controls, named for the one the student just changed.

    The model checks "class end after class start" on ``class_end_h``; when the student moved
    the start past the end, the message belongs under the start, echoing the start.
    """
    if err.field == "class_end_h" and err.rule == "at_least" and last == "class_start_h":
        start, end = values["class_start_h"], values["class_end_h"]
        return InputError("class_start_h", "at_most", start,
                          f"class_start_h must be before class_end_h ({end})", limit=end)
    return err


class SchoolEditor(LiveApp[SchoolCase]):
    """The school case's editor (see :func:`editor`).

    Attributes
    ----------
    result : SchoolCase or None
        The last good case from the controls (not yet saved until :meth:`save`).
    saved : SchoolCase
        The case as loaded or last saved: "값을 바꿨습니다" shows only while the controls differ.
    saved_path : pathlib.Path or None
        Where the last :meth:`save` wrote.
    """

    def __init__(self, case: SchoolCase | None = None) -> None:
        loaded = current_case()
        start = case or loaded.case
        self._problem = (loaded.problem, _short(loaded.detail)) if case is None else (None, "")
        self.saved = start
        #: The case this kernel's card and decision last followed (see :meth:`render`).
        self._followed = start
        fields = _fields(start)
        last: dict[str, str | None] = {"key": None}
        for f in fields:  # observed before LiveApp's own recompute, so compute sees the key
            f.control.observe(lambda _c, key=f.key: last.__setitem__("key", key), names="value")
        self._last = last
        super().__init__("school", fields, error_prefix="school")
        self.saved_path: Any = None
        self.preview = widgets.HTML()
        self.preview.add_class("lk-school-preview")
        self.message = widgets.HTML()
        self.message.add_class("lk-school-message")
        self.save_button = widgets.Button(description=t("school.save"), icon="save",
                                          button_style="primary")
        self.save_button.add_class("lk-school-save")
        self.reset_button = widgets.Button(description=t("school.reset"), icon="undo")
        self.reset_button.add_class("lk-school-reset")
        self.save_button.on_click(lambda _b: self.save())
        self.reset_button.on_click(lambda _b: self.reset_to_default())
        self._origin = loaded.origin if case is None else "default"
        self.children = [*(f.box for f in self.fields.values()), self.status,
                         widgets.HBox([self.save_button, self.reset_button]), self.message,
                         self.preview]
        self.update()

    def compute(self, values: dict[str, Any]) -> SchoolCase:
        try:
            return school.school_case(values)
        except InputError as err:
            raise _blame_changed(err, values, self._last["key"]) from None

    def render(self, result: SchoolCase) -> None:
        problem, detail = self._problem
        self.preview.value = card_html(result, problem=problem, detail=detail)
        # a fresh load shows the case as it is: "changed" only once a control differs from it
        changed = result != self.saved
        self.message.value = html.escape(t("school.not_saved")) if changed else ""
        # this page's card and decision follow the controls at once, as the message says
        # ("저장을 눌러야 다른 차시에도"): issue 25's trial changed 서버의 GPU 수 in 09 and
        # waited, unsaved, for a chart that followed only a save; 저장 is for the other lessons
        if result != self._followed:
            self._followed = result
            _case_changed(result)

    def save(self) -> bool:
        """Save the case in the controls for every lesson; say what happened. True if saved.

        Refused (nothing written, the reason beside the control and in the message) while a
        control holds a value the model rejects: the last good case is not what is on screen.
        Where the file cannot be written (a voila page) the case still reaches this page's
        widgets (:func:`on_case_changed`), as the message says.
        """
        self.flush()  # a browser change still waiting for its recompute
        try:
            case = self.compute(self.values())
        except (ValueError, ArithmeticError):
            self.update()  # the message beside the control that is wrong
            self.message.value = _WARN.format(html.escape(t("school.save_invalid")))
            return False
        try:
            self.saved_path = school_data.save_case(case)
        except (OSError, RuntimeError) as err:
            self.message.value = _WARN.format(html.escape(t("school.save_failed",
                                                            reason=_why(err))))
            _case_changed(case)  # not written (a voila page): still this page's case
            return False
        self._problem = (None, "")
        self.saved = self._followed = case
        self.preview.value = card_html(case)
        saved = html.escape(t("school.saved"))
        self.message.value = f'<span style="color:#1b7f3b">✔ {saved}</span>'
        _case_changed(case)
        return True

    def reset_to_default(self) -> None:
        """Remove the saved copy and put the default case back in the controls."""
        try:
            school_data.reset_case()
        except OSError as err:
            self.message.value = _WARN.format(html.escape(t("school.save_failed",
                                                            reason=_why(err))))
            return
        default = school_data.load_default_case()
        self._problem = (None, "")
        self.saved = default
        for key, f in self.fields.items():
            value = getattr(default, key)
            f.control.value = value * f.scale if f.scale != 1 else value
        self.message.value = html.escape(t("school.reset_done"))
        _case_changed(default)


def editor() -> SchoolEditor:
    """Return the "우리 학교" editor, filled with the case every lesson uses now.

    Used in: notebooks/09_capstone.ipynb
    """
    return SchoolEditor()


def _why(err: BaseException) -> str:
    """Why the case file could not be written, in Korean (the OS's own text is English:
    the trial saw "(PermissionError)" on a voila page)."""
    if isinstance(err, PermissionError):
        return t("school.why.permission")
    if isinstance(err, OSError) and err.errno == errno.ENOSPC:
        return t("school.why.disk_full")
    return t("school.why.other")
