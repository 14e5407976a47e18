"""The `nvidia-smi -q` snapshot panel of lesson 01: "what is on this GPU right now".

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import html
from typing import Any

from labkit.i18n import KO, t

__all__ = ["snapshot_html"]


def snapshot_html(snapshot: Any) -> str:
    """Return an ``nvidia-smi -q`` snapshot as "what is on this GPU right now" (Korean)."""
    when = snapshot.timestamp.strftime("%Y-%m-%d %H:%M:%S") if snapshot.timestamp else "-"
    parts = [f"<b>{t('observe.snapshot.title', time=when)}</b>"]
    for w in snapshot.warnings:
        key = f"observe.snapshot.warning.{getattr(w, 'code', '')}"
        text = t(key, **w.params) if key in KO else html.escape(str(w))
        parts.append(f'<span style="color:#a15c00">⚠ {text}</span>')
    for g in snapshot.gpus:
        parts.append(t("observe.snapshot.gpu", index=g.index, name=html.escape(g.name),
                       uuid=html.escape(g.uuid), bus=html.escape(g.pci_bus_id)))
        parts.append(t("observe.snapshot.mig", mode=html.escape(g.mig_mode),
                       pending=html.escape(g.mig_mode_pending)))
        for d in g.mig_devices:
            parts.append("&nbsp;&nbsp;" + t(
                "observe.snapshot.mig_device", index=_opt(d.index), gi=_opt(d.gi_id),
                ci=_opt(d.ci_id), used=_opt(d.memory_used_mib), total=_opt(d.memory_total_mib),
                sm=_opt(d.sm_count)))
        reasons = ", ".join(f"{n} ({t(f'observe.reason.{n}')})" if f"observe.reason.{n}" in KO
                            else n for n in g.clocks_event_reasons)
        parts.append(t("observe.snapshot.reasons",
                       reasons=reasons or t("observe.snapshot.no_reasons")))
        unc = g.ecc.get("volatile.dram_uncorrectable", g.ecc.get("volatile.double_bit.total"))
        cor = g.ecc.get("volatile.dram_correctable", g.ecc.get("volatile.single_bit.total"))
        parts.append(t("observe.snapshot.ecc", uncorrectable=_opt(unc), correctable=_opt(cor)))
        rows = ", ".join(f"{html.escape(k)} {_opt(v)}" for k, v in g.remapped_rows.items())
        parts.append(t("observe.snapshot.remapped",
                       rows=rows or t("observe.snapshot.remapped_na")))
        procs = [t("observe.snapshot.process", pid=_opt(p.pid), name=html.escape(p.name[:60]),
                   type=html.escape(p.type), mem=_opt(p.used_memory_mib),
                   gi=t("observe.snapshot.process_gi", gi=p.gi_id) if p.gi_id is not None
                   else "") for p in g.processes[:20]]
        parts.append(t("observe.snapshot.processes", n=len(g.processes), list="; ".join(procs))
                     if procs else t("observe.snapshot.no_processes"))
    return "<br>".join(parts)


def _opt(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)

