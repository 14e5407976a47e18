"""One dashboard panel as HTML (a card), and the derived signals as badges.

The live dashboard and the replay draw the same cards from one GPU's readings; a missing reading
says "n/a — reason" in Korean (the NVML or DCGM name after it), never a raw sentinel.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import html
import math
import threading
from collections.abc import Callable, Mapping

from labkit import observe as model
from labkit.i18n import KO, t
from labkit.observe import CATALOG, PANELS, Reading
from labkit.ui import format as fmt

__all__ = ["panel_html", "reasons_text", "signals_html", "value_text"]


def _reason_text(reading: Reading) -> str:
    """Korean 'why n/a' for a missing reading: the status in words, the NVML name after it."""
    status = reading.status.value
    raw = reading.reason or ""
    if raw.startswith("DCGM blank"):  # "DCGM blank (not supported)": say it in Korean
        kind = raw.partition("(")[2].rstrip(")") or "blank"
        key = f"observe.dcgm_blank.{kind}"
        return t("observe.dcgm_blank", kind=t(key) if key in KO else html.escape(kind))
    words = t(f"observe.status.{status}")
    said = f"observe.reading_reason.{raw}"  # a reader's own words ("not in file"): Korean
    if said in KO:
        return f"{words} ({t(said)})"
    return f"{words} ({html.escape(raw)})" if raw and raw.lower() != status else words


_ABSENT = threading.local()


def _na(reading: Reading | None) -> str:
    if reading is None:
        absent = getattr(_ABSENT, "key", "observe.status.not_read")
        return t("common.na_reason", reason=t(absent))
    return t("common.na_reason", reason=_reason_text(reading))


def _num(value: float, digits: int = 0) -> str:
    return fmt.count(value, digits)


#: How a value in each catalog unit is written: (scale, digits, suffix).
_UNIT_TEXT: dict[str, tuple[float, int, str]] = {
    "W": (1.0, 1, " W"), "J": (1e-3, 1, " kJ"), "MiB": (1.0, 0, " MiB"),
    "degC": (1.0, 0, " °C"), "MHz": (1.0, 0, " MHz"), "KB/s": (1e-3, 1, " MB/s")}


def value_text(metric: str, reading: Reading | None) -> str:
    """Return one reading formatted in its unit ("n/a — reason" if missing).

    Parameters
    ----------
    metric : str
        A key of :data:`labkit.observe.CATALOG` (its unit picks the format).
    reading : Reading or None
        The reading; None when the metric was not read.
    """
    if reading is None or not reading.ok or reading.value is None:
        return _na(reading)
    unit = CATALOG[metric].unit if metric in CATALOG else ""
    if unit == "frac":
        return fmt.pct(reading.value, 1)
    scale, digits, suffix = _UNIT_TEXT.get(unit, (1.0, 0, ""))
    value = reading.value * scale
    # at most 4 significant digits (6,048 kJ, not 6,048.0 kJ; 70.4 W keeps its decimal)
    return _num(value, digits if abs(value) < 1_000 else 0) + suffix


_value_text = value_text  # the old private name (tests and notebooks of earlier sessions)


def reasons_text(names: list[str] | tuple[str, ...]) -> str:
    """Return clocks-event reasons in Korean, the NVML identifier in parentheses.

    ``names`` are :func:`labkit.observe.decode_clocks_event_reasons` names (``sw_power_cap``);
    an unknown one keeps its identifier (escaped).
    """
    words = [f"{t(f'observe.reason.{n}')} ({html.escape(n)})" if f"observe.reason.{n}" in KO
             else html.escape(n) for n in names]
    return ", ".join(words)


_CARD = ('<div style="border:1px solid #d0d7e2;border-radius:6px;padding:6px 10px;'
         'min-height:86px;background:{bg}">'
         '<div style="color:#555;font-size:0.85em">{title}</div>'
         '<div style="font-size:1.6em;font-weight:700;line-height:1.2">{big}</div>'
         '<div style="color:#555;font-size:0.85em">{detail}</div></div>')


def _card(title: str, big: str, detail: str = "", *, alarm: bool = False, na: bool = False
          ) -> str:
    bg = "#fdecee" if alarm else ("#f3f3f3" if na else "#ffffff")
    if na:
        big = f'<span style="font-size:0.6em;font-weight:600;color:#777">{big}</span>'
    return _CARD.format(bg=bg, title=title, big=big, detail=detail)


def panel_html(panel: str, view: Mapping[str, Reading], *, replay: bool = False) -> str:
    """Return one dashboard panel as HTML for one GPU's readings ("n/a — reason" if missing).

    Parameters
    ----------
    panel : str
        A key of :data:`labkit.observe.PANELS`.
    view : mapping of str to Reading
        The GPU's latest readings.
    replay : bool, default False
        A metric absent from ``view`` reads "not in this log" instead of "not read yet".
    """
    _ABSENT.key = "observe.status.not_in_log" if replay else "observe.status.not_read"
    try:
        title = t(f"observe.panel.{panel}")
        return _PANELS.get(panel, _activity)(panel, title, view)
    finally:
        _ABSENT.key = "observe.status.not_read"


def _ok(r: Reading | None) -> bool:
    return r is not None and r.ok


def _missing(title: str, r: Reading | None) -> str:
    return _card(title, _na(r), na=True)


def _memory(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    used, total = view.get("fb_used_mib"), view.get("fb_total_mib")
    if used is None or not used.ok:
        return _missing(title, view.get(PANELS[panel][0]))
    detail = ""
    if total is not None and total.ok and total.value:
        detail = t("observe.detail.of_total", total=value_text("fb_total_mib", total),
                   pct=fmt.pct((used.value or 0) / total.value))
    return _card(title, value_text("fb_used_mib", used), detail)


def _power(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    r = view.get(PANELS[panel][0])
    if r is None or not r.ok:
        return _missing(title, r)
    pf = model.power_frac(view)
    limit = view.get("power_limit_w")
    detail = (t("observe.detail.power_of_limit", limit=value_text("power_limit_w", limit),
                pct=fmt.pct(pf)) if pf is not None
              else t("observe.detail.limit_na", reason=_na(limit)))
    energy = view.get("energy_j")
    if energy is not None and energy.ok:
        detail += "<br>" + t("observe.detail.energy", energy=value_text("energy_j", energy))
    return _card(title, value_text("power_usage_w", r), detail)


def _temperature(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    r = view.get(PANELS[panel][0])
    if r is None or not r.ok:
        return _missing(title, r)
    hbm = value_text("memory_temp_c", view.get("memory_temp_c"))
    fan = value_text("fan_speed_frac", view.get("fan_speed_frac"))
    parts = [f"HBM {hbm}", f"{t('observe.detail.fan')} {fan}"]
    return _card(title, value_text("gpu_temp_c", r), " · ".join(parts))


def _clocks(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    r = view.get(PANELS[panel][0])
    if r is None or not r.ok:
        return _missing(title, r)
    frac = model.sm_clock_frac(view)
    reasons_r = view.get("clocks_event_reasons")
    if reasons_r is not None and reasons_r.ok and reasons_r.value is not None:
        names = model.decode_clocks_event_reasons(reasons_r.value)
        reasons = reasons_text(names) or t("observe.detail.no_reason")
    else:
        reasons = _na(reasons_r)
    sig = model.throttle(view)
    detail = t("observe.detail.clock_of_max", pct=fmt.pct(frac)) if frac is not None else ""
    detail += "<br>" + t("observe.detail.reasons", reasons=reasons)
    return _card(title, value_text("sm_clock_mhz", r), detail, alarm=bool(sig.on))


def _pcie(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    rx, tx = view.get("pcie_rx_kb_per_s"), view.get("pcie_tx_kb_per_s")
    if not _ok(rx) and not _ok(tx):
        return _missing(title, rx)
    return _card(title, f"RX {value_text('pcie_rx_kb_per_s', rx)}",
                 f"TX {value_text('pcie_tx_kb_per_s', tx)}")


def _errors(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    found = model.alerts(view)
    counters = [view.get(m) for m in PANELS[panel]]
    if not found and not any(_ok(c) for c in counters):
        return _missing(title, next((c for c in counters if c is not None), None))
    if not found:
        return _card(title, t("observe.detail.no_errors"), t("observe.detail.errors_checked"))
    lines = [t(f"observe.alert.{a.key}", value=_num(a.value or 0)) for a in found]
    return _card(title, t("observe.detail.n_alerts", n=len(found)), "<br>".join(lines),
                 alarm=True)


def _activity(panel: str, title: str, view: Mapping[str, Reading]) -> str:
    primary = PANELS[panel][0]
    r = view.get(primary)
    if r is None or not r.ok:
        return _missing(title, r)
    detail = ""
    if panel == "gpu_util":
        busy = model.busy_not_working(view)
        detail = ("<b>" + t("observe.signal.busy_not_working_short") + "</b>" if busy.on
                  else t("observe.detail.gpu_util"))
        return _card(title, value_text(primary, r), detail, alarm=bool(busy.on))
    if panel == "sm_active":
        occ = view.get("sm_occupancy_frac")
        detail = t("observe.detail.occupancy", occ=value_text("sm_occupancy_frac", occ))
    elif panel == "dram_active":
        detail = t("observe.detail.mem_copy",
                   util=value_text("mem_copy_util_frac", view.get("mem_copy_util_frac")))
    elif panel == "tensor_active":
        detail = t("observe.detail.tensor")
    return _card(title, value_text(primary, r), detail)


_PANELS: dict[str, Callable[[str, str, Mapping[str, Reading]], str]] = {
    "memory": _memory, "power": _power, "temperature": _temperature, "clocks": _clocks,
    "pcie": _pcie, "errors": _errors}


def signals_html(view: Mapping[str, Reading]) -> str:
    """Return the derived signals as a line of badges (busy-but-not-working, throttle, alerts)."""
    badges = []
    busy = model.busy_not_working(view)
    if busy.on is None:
        badges.append(("#777", t("observe.signal.busy_unknown")))
    elif busy.on:
        basis = t(f"observe.signal.basis.{busy.basis}")
        value = fmt.pct(busy.value if busy.value is not None else math.nan)
        badges.append(("#b00020", t("observe.signal.busy_on", basis=basis, value=value)))
    else:
        badges.append(("#1b7f3b", t("observe.signal.busy_off")))
    thr = model.throttle(view)
    if thr.on:
        names = [n for n in str(thr.basis).split(",") if n]
        badges.append(("#b00020", t("observe.signal.throttle_on", reasons=reasons_text(names))))
    for a in model.alerts(view):
        badges.append(("#b00020" if a.severity == "critical" else "#a15c00",
                       t(f"observe.alert.{a.key}", value=_num(a.value or 0))))
    return " ".join(f'<span style="display:inline-block;margin:2px 4px;padding:2px 8px;'
                    f'border-radius:10px;color:white;background:{c}">{text}</span>'
                    for c, text in badges)
