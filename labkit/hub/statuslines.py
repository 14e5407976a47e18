"""The isolation lines of ``python -m labkit.hub status`` and ``serve``, in Korean.

:func:`labkit.hub.disk.describe` and :func:`labkit.hub.isolation.describe` return facts
(:class:`~labkit.hub.disk.DiskFacts`, :class:`~labkit.hub.isolation.IsolationFacts`); ``status
--json`` prints them as they are, and :func:`isolation_lines` renders them with the catalog's
``hub.cli.isolation.*`` keys: Korean, the English term in parentheses, the kernel's own error (when
something did not apply) last, in parentheses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from labkit.hub.disk import DiskFacts
from labkit.hub.isolation import IsolationFacts
from labkit.i18n import t

__all__ = ["isolation_facts", "isolation_lines"]


def isolation_facts(disk: DiskFacts, namespace: IsolationFacts) -> dict[str, dict[str, Any]]:
    """Return the facts as ``status --json`` prints them (``{"disk": …, "namespace": …}``)."""
    return {"disk": asdict(disk), "namespace": asdict(namespace)}


def _why(why: str, reason: str) -> str:
    """Return why something did not apply (``hub.cli.why.*``), the English detail in brackets."""
    key = f"hub.cli.why.{why}" if why in ("off", "not_root", "no_loop", "refused") \
        else "hub.cli.why.failed"
    return t(key, reason=reason or "-")


def _disk_line(disk: Mapping[str, Any]) -> str:
    if disk["image_per_student"]:
        return t("hub.cli.isolation.disk.image", size=disk["size_mib"],
                 reserve=disk["reserve_mib"])
    return t("hub.cli.isolation.disk.shared", why=_why(disk["why"], disk["reason"]))


def _namespace_lines(ns: Mapping[str, Any]) -> list[str]:
    if not ns["private_namespace"]:
        why = _why(ns["why"], ns["reason"])
        return [t("hub.cli.isolation.tmp.shared", why=why),
                t("hub.cli.isolation.proc.shown", why=why),
                t("hub.cli.isolation.cgroups.shown", why=why)]
    partial = _why(ns["why"], ns["reason"])
    lines = [t("hub.cli.isolation.tmp.private", tmp=ns["tmp_mib"], shm=ns["shm_mib"])]
    lines.append(t("hub.cli.isolation.proc.hidden", option=ns["hidepid"]) if ns["hidepid"]
                 else t("hub.cli.isolation.proc.shown", why=partial))
    lines.append(t("hub.cli.isolation.cgroups.hidden") if ns["cgroups_hidden"]
                 else t("hub.cli.isolation.cgroups.shown", why=partial))
    if ns["reason"] and ns["hidepid"] and ns["cgroups_hidden"]:  # a weaker option was refused
        lines.append(t("hub.cli.isolation.partial", why=partial))
    return lines


def isolation_lines(facts: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Return the teacher's lines for :func:`isolation_facts`' document (disk, /tmp, /proc,
    cgroups), in Korean."""
    if not facts:  # nothing probed (a status of a hub that never ran its probes)
        return []
    return [_disk_line(facts["disk"]), *_namespace_lines(facts["namespace"])]
