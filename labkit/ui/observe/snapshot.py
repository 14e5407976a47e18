"""The `nvidia-smi -q` snapshot panel of lesson 01: "what is on this GPU right now".

Every value nvidia-smi writes as a word (MIG mode ``Enabled``/``Disabled``/``N/A``, process
types ``C``/``G``, clocks-event reason identifiers, remapped-row counter names) is shown through
the catalog in Korean, with nvidia-smi's own term in parentheses (the course's rule for a term's
first use); a term the catalog does not know is kept as nvidia-smi wrote it (escaped).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import html
from typing import Any

from labkit.i18n import KO, t
from labkit.ui.observe.panels import reasons_text

__all__ = ["mig_mode_text", "process_type_text", "snapshot_html"]

#: nvidia-smi's remapped-row counters (``-q`` text keys and ``-q -x`` element names) -> the
#: catalog word (``observe.snapshot.remap.<word>``).
_REMAP_WORDS = {"correctable_error": "correctable", "remapped_row_corr": "correctable",
                "uncorrectable_error": "uncorrectable", "remapped_row_unc": "uncorrectable",
                "pending": "pending", "remapped_row_pending": "pending",
                "remapping_failure_occurred": "failure", "remapped_row_failure": "failure"}


def _remap_raw(key: str) -> str:
    """Return nvidia-smi's own words for a remapped-row counter: the ``-q -x`` element name
    (``remapped_row_corr``) as it is, a ``-q`` text key as the text writes it (the reader's
    ``correctable_error`` is nvidia-smi's "Correctable Error")."""
    return key if key.startswith("remapped_row") else key.replace("_", " ").title()


def _term(key: str, raw: str) -> str:
    """Return the catalog's Korean for ``key`` with nvidia-smi's ``raw`` term after it."""
    return t("observe.snapshot.term", words=t(key), raw=html.escape(raw)) if key in KO \
        else html.escape(raw)


def mig_mode_text(mode: str) -> str:
    """Return a MIG mode as nvidia-smi writes it (``Enabled``, ``Disabled``, ``N/A``) in Korean."""
    return _term(f"observe.snapshot.mode.{mode.strip().lower().replace('/', '')}", mode)


def process_type_text(kind: str) -> str:
    """Return an nvidia-smi process type (``C``, ``G``, ``C+G``) in Korean."""
    return _term(f"observe.snapshot.ptype.{kind.strip().lower().replace('+', '_')}", kind)


def _opt(value: float | int | None) -> str:
    if value is None:
        return t("observe.snapshot.none")
    return f"{value:g}" if isinstance(value, float) else str(value)


def _warning(w: Any) -> str:
    key = f"observe.snapshot.warning.{getattr(w, 'code', '')}"
    if key not in KO:
        return t("observe.snapshot.warning.other")
    params = dict(w.params)
    for name in ("now", "pending"):  # MIG modes
        if name in params:
            params[name] = mig_mode_text(str(params[name]))
    return t(key, **params)


def _gpu_lines(g: Any) -> list[str]:
    parts = [t("observe.snapshot.gpu", index=g.index, name=html.escape(g.name),
               uuid=html.escape(g.uuid), bus=html.escape(g.pci_bus_id)),
             t("observe.snapshot.mig", mode=mig_mode_text(g.mig_mode),
               pending=mig_mode_text(g.mig_mode_pending))]
    for d in g.mig_devices:
        parts.append("&nbsp;&nbsp;" + t(
            "observe.snapshot.mig_device", index=_opt(d.index), gi=_opt(d.gi_id),
            ci=_opt(d.ci_id), used=_opt(d.memory_used_mib), total=_opt(d.memory_total_mib),
            sm=_opt(d.sm_count)))
    parts.append(t("observe.snapshot.reasons", reasons=reasons_text(g.clocks_event_reasons)
                   or t("observe.snapshot.no_reasons")))
    unc = g.ecc.get("volatile.dram_uncorrectable", g.ecc.get("volatile.double_bit.total"))
    cor = g.ecc.get("volatile.dram_correctable", g.ecc.get("volatile.single_bit.total"))
    parts.append(t("observe.snapshot.ecc", uncorrectable=_opt(unc), correctable=_opt(cor)))
    rows = ", ".join(
        f"{_term(f'observe.snapshot.remap.{_REMAP_WORDS.get(k, k)}', _remap_raw(k))} {_opt(v)}"
        for k, v in g.remapped_rows.items())
    parts.append(t("observe.snapshot.remapped", rows=rows or t("observe.snapshot.remapped_na")))
    procs = [t("observe.snapshot.process", pid=_opt(p.pid), name=html.escape(p.name[:60]),
               type=process_type_text(p.type), mem=_opt(p.used_memory_mib),
               gi=t("observe.snapshot.process_gi", gi=p.gi_id) if p.gi_id is not None else "")
             for p in g.processes[:20]]
    parts.append(t("observe.snapshot.processes", n=len(g.processes), list="; ".join(procs))
                 if procs else t("observe.snapshot.no_processes"))
    return parts


def snapshot_html(snapshot: Any) -> str:
    """Return an ``nvidia-smi -q`` snapshot as "what is on this GPU right now" (Korean HTML).

    Parameters
    ----------
    snapshot : labkit.data.observe.smi_query.SmiSnapshot
        From :func:`labkit.data.observe.read_nvidia_smi_query`.
    """
    when = snapshot.timestamp.strftime("%Y-%m-%d %H:%M:%S") if snapshot.timestamp else "-"
    parts = [f"<b>{t('observe.snapshot.title', time=when)}</b>"]
    parts += [f'<span style="color:#a15c00">⚠ {_warning(w)}</span>' for w in snapshot.warnings]
    for g in snapshot.gpus:
        parts += _gpu_lines(g)
    return "<br>".join(parts)
