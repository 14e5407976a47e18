"""The Korean sentence for a MIG placement check: whether and why a GPU instance fits.

:class:`labkit.mig.PlacementCheck` (pure, structured: the rule, the units in the way, who holds
them, caps, compute slices, legal and open starts) is worded here with the catalog keys
``mig.why.*`` of :mod:`labkit.i18n`.

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labkit.i18n import t
from labkit.mig import Layout, PlacementCheck

__all__ = ["explain", "explain_check"]

#: Rules whose sentence ends with the starts that are open now.
_WITH_OPEN = ("invalid_placement", "overlap", "compute_slices", "profile_cap", "media_engines")
#: Rules with their own catalog key (``mig.why.<rule>``).
_RULES = ("invalid_placement", "overlap", "no_free_placement", "profile_cap", "media_engines",
          "compute_slices")


def _units_text(units: Sequence[int]) -> str:
    units = sorted(units)
    if not units:
        return t("mig.why.none")
    if len(units) > 2 and units[-1] - units[0] == len(units) - 1:
        return f"{units[0]}–{units[-1]}"
    return ", ".join(str(u) for u in units)


def _list_text(items: Sequence[Any]) -> str:
    return ", ".join(str(i) for i in items) if items else t("mig.why.none")


def explain_check(check: PlacementCheck, model: str, profiles: Sequence[str]) -> str:
    """Return the Korean sentence for ``check`` on board ``model`` (with its ``profiles``).

    Names the memory units in the way and who holds them, the cap reached (with why ``+me``
    profiles are capped at 1), the compute slices left, and which start positions exist at all
    and which are open now. A rule without a sentence shows the check's English message.
    """
    values = {
        "profile": check.profile, "start": check.start, "model": model,
        "profiles": ", ".join(profiles), "legal": _list_text(check.legal_starts),
        "units": _units_text(check.units), "blocked": _units_text(check.blocked_units),
        "blockers": _list_text(check.blockers), "max_count": check.max_count,
        "count": check.count, "left": check.compute_left, "need": check.compute_needed,
        "compute": check.compute_needed,
    }
    if check.ok:
        values["start"] = check.chosen_start
        return t("mig.why.ok_start" if check.start is not None else "mig.why.ok_default",
                 **values)
    rule = check.rule or "unknown_profile"
    if rule == "unknown_profile":
        return t("mig.why.unknown_profile", **values)
    if rule not in _RULES:
        return check.message
    if rule == "media_engines" and check.profile.endswith("+me.all"):
        text = t("mig.why.media_engines_all", **values)
    elif rule == "invalid_placement" and check.start is None:
        text = t("mig.why.invalid_placement", **{**values, "start": "?"})
    else:
        text = t(f"mig.why.{rule}", **values)
    if rule == "profile_cap" and check.profile.endswith("+me"):
        text += t("mig.why.profile_cap_me")
    if rule in _WITH_OPEN:
        text += (t("mig.why.open", open=_list_text(check.open_starts)) if check.open_starts
                 else t("mig.why.open_none"))
    return text


def explain(layout: Layout, profile: Any, start: Any = None) -> str:
    """Return, in plain Korean, whether and why ``profile`` fits at ``start`` on ``layout``.

    ``start`` None: where the driver would put it. Never raises for a bad profile or start.

    Used in: notebooks/02_mig.ipynb
    """
    return explain_check(layout.check(profile, start), layout.model.short_name,
                         [p.name for p in layout.spec.profiles])
