"""The "what goes on the wall" exercise of lesson 01: at most three panels per situation.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from labkit import observe as model
from labkit.i18n import error_text, t
from labkit.observe import PANELS
from labkit.ui.observe.common import css, error_html, no_null_tooltips

__all__ = ["wall_exercise"]



def _wall_one(situation: str) -> widgets.Widget:
    toggles = {p: css(widgets.ToggleButton(value=False, description=t(f"observe.panel.{p}"),
                                            layout=widgets.Layout(width="auto")),
                       f"lk-wall-{situation}-{p}") for p in PANELS}
    check = css(widgets.Button(description=t("common.check"), button_style="primary"),
                 f"lk-wall-{situation}-check")
    feedback = css(widgets.HTML(""), f"lk-wall-{situation}-feedback")

    def on_check(*_: Any) -> None:
        chosen = [p for p, b in toggles.items() if b.value is True]
        try:
            verdict = model.check_wall(situation, chosen)
        except ValueError as err:
            feedback.value = error_html(error_text(err, prefix="observe.wall"))
            return
        explain = t(f"observe.wall.{situation}.explain")
        if verdict.ok:
            feedback.value = (f'<span style="color:#1b7f3b">✔ '
                              f'{t("observe.wall.ok", explanation=explain)}</span>')
            return
        parts = []
        if verdict.missing:
            parts.append(t("observe.wall.missing", panels=", ".join(
                t(f"observe.panel.{p}") for p in verdict.missing)))
        for p in verdict.misleading:
            parts.append(t("observe.wall.misleading", panel=t(f"observe.panel.{p}"),
                           why=t(f"observe.wall.{situation}.why.{p}")))
        feedback.value = ('<span style="color:#b00020">✘ ' + " ".join(parts)
                          + f"<br>{t('observe.wall.hint')}</span>")

    check.on_click(on_check)
    question = widgets.HTML(f"<b>{t(f'observe.wall.{situation}.title')}</b> — "
                            f"{t(f'observe.wall.{situation}.q')}")
    box = widgets.VBox([question, widgets.HBox(list(toggles.values()), layout=widgets.Layout(
        flex_flow="row wrap")), check, feedback])
    box.add_class(f"lk-wall-{situation}")
    return box


def wall_exercise() -> widgets.VBox:
    """Return the "what goes on the wall" exercise: per situation, pick at most three panels."""
    box = widgets.VBox([_wall_one(s) for s in model.SITUATIONS])
    box.add_class("lk-wall")
    return no_null_tooltips(box)

