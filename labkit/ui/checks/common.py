"""What every lesson's checks share: the school case now, control values as the model takes
them, and the Korean text of targets (won, numbers, field labels).
"""

from __future__ import annotations

import re
from typing import Any

from labkit.data.school import load_case
from labkit.school import SchoolCase

JULY = 7


def case() -> SchoolCase:
    """The school case the lessons use now (the saved copy, else the default)."""
    return load_case().case


def _model_value(f: Any, control_value: Any) -> Any:
    """A control value as the model takes it (``Field.value``'s rule: divided by ``scale``)."""
    if isinstance(control_value, bool) or not isinstance(control_value, (int, float)):
        return control_value
    return round(control_value / f.scale, 9) if f.scale != 1 else control_value


def _options(app: Any, key: str) -> list[tuple[str, Any]]:
    opts = list(app.fields[key].control.options)
    return [o if isinstance(o, tuple) else (str(o), o) for o in opts]


def _won(x: float) -> str:
    """Exact won, as a bill prints it (fmt.krw rounds to 만, too coarse for a target)."""
    return f"{x:,.0f}원"


def _num(x: float) -> str:
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def _labels(app: Any, keys: list[str]) -> str:
    """The Korean labels of fields ``keys`` (their label HTML without tags)."""
    return ", ".join(re.sub(r"<[^>]+>", "", app.fields[k].label.value) for k in keys[:4])
