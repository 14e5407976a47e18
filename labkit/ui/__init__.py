"""Widgets for the lessons. Notebooks do ``import labkit.ui as ui`` then ``ui.setup()``.

Lesson apps live in submodules (``ui.goodput``, ...), imported on first use so that opening one
lesson does not import the others. Only ``labkit.ui`` imports ipywidgets and plotly.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import json
import os
from types import ModuleType
from typing import Any

import ipywidgets as widgets

from labkit import i18n as messages
from labkit.i18n import t

__all__ = ["gpu_banner", "gpu_share_text", "setup"]

def _reason_text(status: Any) -> str:
    """Return the Korean explanation of why the real GPU was not used."""
    code = status.reason_code or "other"
    if f"common.banner.reason.{code}" not in messages.KO:
        code = "other"
    return t(f"common.banner.reason.{code}", reason=status.reason or code)


def gpu_share_text(raw: str | None) -> str | None:
    """Return the Korean line for the student's GPU share on the class hub, or None.

    ``raw`` is ``$LABKIT_GPU_SHARE`` as the hub sets it (JSON, ``labkit.hub.gpushare``);
    anything unreadable gives None (the banner never fails over it).
    """
    if not raw:
        return None
    try:
        doc = json.loads(raw)
        policy, gpu = str(doc["policy"]), int(doc["gpu_index"])
        values = {"gpu": gpu, "uuid": str(doc["uuid"]), "profile": str(doc.get("profile", "")),
                  "mig_index": doc.get("mig_index"), "sharers": int(doc.get("sharers", 1))}
        if policy == "shared":
            unit_key = "mig" if doc.get("kind") == "mig" else "gpu"
            values["unit"] = t(f"common.banner.share.unit_{unit_key}", **values)
        if policy not in ("mig", "whole", "shared"):
            return None
        return t(f"common.banner.share.{policy}", **values)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def gpu_banner() -> widgets.HTML:
    """Return the banner that says which lab GPU this lesson runs on (real or simulated).

    Real: the GPU's name and NVML version. Simulated: the model, and why the real GPU was not
    used (in Korean: no driver, driver not loaded, version mismatch, ...). If a real GPU was
    demanded (``LABKIT_GPU=real``) and is missing, says so and that the lesson computes
    without one. On the class hub (``$LABKIT_GPU_SHARE`` set), also which slice of the lab GPU
    is the student's (MIG device, whole GPU or shared). Never raises.
    """
    try:
        gpu = importlib.import_module("labkit.gpu")
        status = gpu.status()
    except (ImportError, AttributeError):
        text, css = t("common.banner.none"), "lk-banner-none"
    else:
        if status.kind == "real":
            text = t("common.banner.real", name=status.name, nvml_version=status.nvml_version)
            css = "lk-banner-real"
        elif status.kind == "sim":
            text = t("common.banner.sim", name=status.name)
            if status.reason:
                text += " " + t("common.banner.fallback", reason=_reason_text(status))
            css = "lk-banner-sim"
        else:
            text, css = t("common.banner.missing", reason=_reason_text(status)), "lk-banner-none"
    share = gpu_share_text(os.environ.get("LABKIT_GPU_SHARE"))
    if share:
        text += " " + share
    banner = widgets.HTML(
        f'<div style="padding:6px 10px;border-left:4px solid #3b6fb6;background:#eef3fb">'
        f"{html.escape(text)}</div>"
    )
    banner.add_class("lk-banner")
    banner.add_class(css)
    return banner


def setup(seed: int = 0, theme: str | None = None) -> widgets.HTML:
    """Prepare a lesson page and return its lab-GPU banner (the cell's last expression shows it).

    Under voila (a class), also switches on the classroom guards of
    :func:`labkit.serve.harden_kernel` (writes only to the session folder, no programs started,
    a memory cap, tracebacks to the server log).

    Parameters
    ----------
    seed : int, default 0
        Seed for numpy's global generator, so simulated numbers repeat between runs.
    theme : {"light", "dark"}, optional
        Plot template (plotly stays white on voila's dark theme unless told). Default:
        ``$LABKIT_THEME`` (set by ``make present THEME=dark``), else "light".
    """
    import numpy as np

    from labkit.runtime.kernel import harden_kernel

    harden_kernel()
    theme = theme or os.environ.get("LABKIT_THEME", "light")
    np.random.seed(seed)
    from labkit.ui.components import set_plot_template

    set_plot_template("plotly_dark" if theme == "dark" else "plotly_white")
    return gpu_banner()


def __getattr__(name: str) -> ModuleType:
    if not name.startswith("_") and importlib.util.find_spec(f"labkit.ui.{name}") is not None:
        return importlib.import_module(f"labkit.ui.{name}")
    raise AttributeError(f"module 'labkit.ui' has no attribute {name!r}")
