"""mig-parted config text -> layouts (the YAML parsing half of ``labkit.mig.from_mig_parted``).

``labkit.mig`` stays free of file formats: it writes the config text itself and checks parsed
configs field by field. Parsing the text (PyYAML's safe loader) happens here.

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from typing import Any

import yaml

from labkit.gpu.models import GpuModel
from labkit.mig import Layout, MigPartedEntry, from_mig_parted, layout_from_mig_parted
from labkit.validate import InputError

__all__ = ["MAX_CONFIG_CHARS", "parse_mig_parted", "read_mig_parted", "read_mig_parted_entries"]

#: Longest config text accepted (the largest NVIDIA default config is ~25,000 characters).
MAX_CONFIG_CHARS = 100_000


def parse_mig_parted(text: str) -> Any:
    """Return the parsed mig-parted config text (mappings and lists; not yet checked).

    Raises
    ------
    InputError
        ``config`` (rule ``other``) for text that is too long or not valid YAML (with the line).
    """
    if not isinstance(text, str):
        raise InputError("config", "other", type(text).__name__, "the config must be text")
    if len(text) > MAX_CONFIG_CHARS:
        raise InputError("config", "other", len(text),
                         f"the config is longer than {MAX_CONFIG_CHARS:,} characters")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise InputError("config", "other", where.strip(" ()"),
                         f"not valid YAML{where}: {problem}") from err


def read_mig_parted_entries(text: str, model: GpuModel | str) -> list[MigPartedEntry]:
    """Parse mig-parted config text and return the entries that apply to ``model``.

    Raises
    ------
    InputError
        See :func:`parse_mig_parted` and :func:`labkit.mig.from_mig_parted`.
    """
    return from_mig_parted(parse_mig_parted(text), model)


def read_mig_parted(text: str, model: GpuModel | str, label: str | None = None) -> Layout:
    """Parse mig-parted config text and return the layout of ``label`` (or the first config).

    Nothing is created on any GPU: the result is a plan (:class:`labkit.mig.Layout`).

    Raises
    ------
    InputError
        Naming the field for a bad config: unknown profile names, unknown keys, a wrong
        ``version``, invalid YAML.

    Used in: notebooks/02_mig.ipynb
    """
    return layout_from_mig_parted(parse_mig_parted(text), model, label)
