"""The Korean catalog: every string the lessons, the hub and the class page show.

Register: 합니다체 for every widget label, message and lesson text;
the English technical term in parentheses the first time a lesson uses it: 가동률(utilization).
No 해라체 (…한다, …이다., …인가?) and no 해요체 questions (…까요?): statements end in …니다, questions
in …니까?, requests in …세요 (tests/test_catalog_register.py checks every string).
Keys are dotted (``"goodput.loss.rewind"``); placeholders are ``str.format`` fields, and a
particle after a value is a format spec that picks its form: ``"{profile:을/를}"`` (never
"을(를)"; see :mod:`labkit.i18n.josa`).
One module per lesson or part of the product; :data:`KO` is their union (a key defined twice
is an error at import).
"""

from __future__ import annotations

from labkit.i18n.ko import (
    accounts,
    answers,
    capstone,
    common,
    economics,
    errors,
    exit_ticket,
    goodput,
    hub,
    hubops,
    mig,
    observe,
    opex,
    orchestration,
    predict,
    reliability,
    school,
    serve,
    teacher,
)

__all__ = ["KO"]

_PARTS = (common, errors, goodput, serve, reliability, economics, opex, observe, mig, orchestration, hub, answers,
          school, predict, capstone, accounts, hubops, teacher, exit_ticket)


def _union() -> dict[str, str]:
    merged: dict[str, str] = {}
    for part in _PARTS:
        clash = merged.keys() & part.STRINGS.keys()
        if clash:
            raise RuntimeError(f"UI string keys defined twice in the Korean catalog: {sorted(clash)}")
        merged.update(part.STRINGS)
    return merged


KO: dict[str, str] = _union()
