"""Number formatting for the Korean UI (units as the course writes them)."""

from __future__ import annotations

import math

__all__ = ["count", "hours", "krw", "pct", "ratio"]


def _bad(x: float) -> bool:
    return x is None or not math.isfinite(x)


def pct(fraction: float, digits: int = 1) -> str:
    """0.8889 -> '88.9 %'."""
    return "n/a" if _bad(fraction) else f"{fraction * 100:,.{digits}f} %"


def hours(h: float, digits: int = 0) -> str:
    """640 -> '640 h'."""
    return "n/a" if _bad(h) else f"{h:,.{digits}f} h"


def count(n: float, digits: int = 0) -> str:
    """5201.3 -> '5,201.3' (digits=1)."""
    return "n/a" if _bad(n) else f"{n:,.{digits}f}"


def ratio(x: float, digits: int = 3) -> str:
    """1.26984 -> '1.270'."""
    return "n/a" if _bad(x) else f"{x:,.{digits}f}"


def krw(amount: float) -> str:
    """Won with the Korean large units: 58,030,000,000 -> '580억 3,000만 원'."""
    if _bad(amount):
        return "n/a"
    sign = "−" if amount < 0 else ""
    won = round(abs(amount))
    if won < 10_000:
        return f"{sign}{won:,} 원"
    jo, rest = divmod(won, 10**12)
    eok, rest = divmod(rest, 10**8)
    man = rest // 10**4
    parts = [f"{jo:,}조" if jo else "", f"{eok:,}억" if eok else "", f"{man:,}만" if man else ""]
    return sign + " ".join(p for p in parts if p) + " 원"
