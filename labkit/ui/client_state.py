"""What a browser may set on a lesson's control, and what it is told when it may not.

A browser's changes reach the kernel as comm "update" messages, which ipywidgets applies with
``Widget.set_state(state)``. :func:`guarded_set_state` stands in front of it for every
:class:`labkit.ui.components.Field` (and every control :func:`labkit.ui.components.guard`
watches): only ``value``/``index`` are taken, a value only within the server's bounds, an
index only of a listed option, a value of the wrong type refused; the rest is put back with
the server's state and the Korean reason shown beside the control. Nothing a browser sends
raises out of it (issue 17: a client could widen a slider's ``max``, send a dropdown an index
past its list, or set a read-only ``_options_labels``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
from traitlets import TraitError

from labkit.i18n import error_text, t
from labkit.validate import InputError

if TYPE_CHECKING:
    from labkit.ui.components import Field

__all__ = ["CLIENT_TRAITS", "SELECTIONS", "guarded_set_state"]

#: The only traits a browser may change on a Field's control.
CLIENT_TRAITS = frozenset({"value", "index"})


#: Controls that pick one of a list (``options``); a browser sends the option's ``index``.
SELECTIONS: tuple[type[widgets.Widget], ...] = (
    widgets.Dropdown, widgets.Select, widgets.RadioButtons, widgets.ToggleButtons,
    widgets.SelectionSlider)


def _option_values(options: Any) -> list[Any]:
    """The values of a selection's ``options`` as ipywidgets reads them (labels, (label,
    value) pairs or a mapping label -> value)."""
    if isinstance(options, Mapping):
        return list(options.values())
    return [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]


def _choice_message(control: widgets.Widget, sync_data: dict[str, Any]) -> str | None:
    """The Korean message if a browser picks what a selection control does not list."""
    if not isinstance(control, SELECTIONS):
        return None
    values = _option_values(control.options)
    if "index" in sync_data:
        index = sync_data["index"]
        if index is None and getattr(control, "allow_none", False):
            return None
        if not (isinstance(index, int) and not isinstance(index, bool)
                and 0 <= index < len(values)):
            return t("error.option", value=_shown(index))
    # ipywidgets' views send only the index; a client sending these gets the same answer
    if "value" in sync_data and sync_data["value"] not in values:
        return t("error.option", value=_shown(sync_data["value"]))
    return None


def _shown(value: Any) -> str:
    """What a browser sent, short and escaped, for a message beside the control."""
    return html.escape(repr(value) if not isinstance(value, str) else value)[:40]


def guarded_set_state(field: Field, original: Callable[[dict[str, Any]], None],
                       sync_data: dict[str, Any]) -> None:
    """Apply a browser's state update to ``field.control``: ``value``/``index`` only, a value
    only within the server's bounds, an index only of a listed option; send the server's
    state back for the rest. Nothing a browser sends raises out of here."""
    control = field.control
    allowed = {k: v for k, v in sync_data.items() if k in CLIENT_TRAITS}
    restore = [k for k in sync_data if k not in CLIENT_TRAITS and k in control.keys]
    choice = _choice_message(control, allowed)
    if choice is not None:
        restore += list(allowed)
        allowed = {}
        field.set_error(choice)
    if "value" in allowed:
        value = allowed["value"]
        from_json = control.trait_metadata("value", "from_json")
        if from_json is not None:
            try:
                value = from_json(value, control)
            except (TypeError, ValueError):
                pass
        message = field.refuse(value)
        if message is not None:
            del allowed["value"]
            restore.append("value")
            field.set_error(message)
    if control.disabled if hasattr(control, "disabled") else False:
        restore += list(allowed)  # a disabled control takes nothing from the browser
        allowed = {}
    if "value" in allowed:
        field.client_value(value)  # before the recompute that shows the bound note
    field.from_client = True
    try:
        if allowed:
            original(allowed)
    except TraitError:  # a value of the wrong type ("abc" to a slider): refused, in Korean
        restore += list(allowed)
        field.set_error(error_text(InputError(field.key, "number", allowed.get(
            "value", allowed.get("index")), "")))
    finally:
        field.from_client = False
    if restore:
        control.send_state(sorted(set(restore)))
