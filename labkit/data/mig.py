"""mig-parted config text -> layouts (the YAML half of :mod:`labkit.mig.mig_parted`), and saved
nvidia-smi MIG listings (:func:`read_nvidia_smi_mig_file`).

``labkit.mig`` stays free of file formats: it writes the config text itself and checks parsed
configs as mig-parted does (the whole file's format first, then only the chosen label against a
board). Parsing the text (PyYAML's safe loader) happens here.

Used in: notebooks/02_mig.ipynb
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from labkit.data.observe import decode_log
from labkit.gpumodels import GpuModel
from labkit.mig import (
    Layout,
    MigPartedEntry,
    MigPartedSpec,
    from_mig_parted,
    labels_for,
    layout_from_mig_parted,
    parse_mig_parted_spec,
    read_nvidia_smi_mig,
    select_config,
)
from labkit.mig.smi_listing import MAX_LISTING_CHARS
from labkit.validate import InputError

__all__ = ["MAX_CONFIG_CHARS", "decode_nvidia_smi_listing", "parse_mig_parted",
           "read_mig_parted", "read_mig_parted_entries", "read_mig_parted_spec",
           "read_nvidia_smi_mig_file"]

#: Longest config text accepted (NVIDIA's config-default.yaml at mig-parted bd7160f4 has
#: 11,593 characters).
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


def read_mig_parted_spec(text: str) -> MigPartedSpec:
    """Parse mig-parted config text and check the format of every label (no board yet).

    Raises
    ------
    InputError
        See :func:`parse_mig_parted` and :func:`labkit.mig.parse_mig_parted_spec`.
    """
    return parse_mig_parted_spec(parse_mig_parted(text))


def read_mig_parted_entries(text: str, model: GpuModel | str,
                            label: str | None = None) -> list[MigPartedEntry]:
    """Parse mig-parted config text and return the entries of ``label`` that apply to ``model``.

    Raises
    ------
    InputError
        See :func:`parse_mig_parted` and :func:`labkit.mig.from_mig_parted`.
    """
    return from_mig_parted(read_mig_parted_spec(text), model, label)


def read_mig_parted(text: str, model: GpuModel | str, label: str | None = None, *,
                    gpu: int = 0) -> Layout:
    """Parse mig-parted config text and return the layout ``label`` gives GPU ``gpu``.

    Nothing is created on any GPU: the result is a plan (:class:`labkit.mig.Layout`). Without
    ``label`` a file with one config uses it; a file with several needs one, and the error's
    ``limit`` lists the labels that apply to ``model`` (:func:`labkit.mig.labels_for`).

    Raises
    ------
    InputError
        Naming the field for a bad config: invalid YAML, a wrong ``version``, unknown keys,
        malformed profile names or counts (any label); ``label`` (rule ``choice``) for a
        missing or unknown label; unknown profiles or counts that do not fit (the chosen
        label, on this board).

    Used in: notebooks/02_mig.ipynb
    """
    spec = read_mig_parted_spec(text)
    if label is None and len(spec.labels) > 1:
        try:
            select_config(spec, None)
        except InputError as err:
            usable = labels_for(spec, model)
            raise InputError(err.field, err.rule, err.value, str(err), limit=usable) from err
    return layout_from_mig_parted(spec, model, label, gpu=gpu)


def decode_nvidia_smi_listing(data: bytes, *, name: str = "<upload>") -> str:
    """Return an uploaded or saved nvidia-smi listing as text (UTF-8, UTF-16 with a BOM, CRLF,
    and Korean CP949: a listing saved with Korean Windows Notepad, notes in Hangul).

    The checks of lesson 01's log decoder (:func:`labkit.data.observe.decode_log`: no binary
    files, no unknown encodings), with the listing's own size cap.

    Raises
    ------
    ValueError
        (``labkit.observe.LogError``) naming the file: too large, binary, not text.
    """
    return decode_log(data, name=name, max_bytes=4 * MAX_LISTING_CHARS)


def read_nvidia_smi_mig_file(path: str | Any, model: GpuModel | str | None = None
                             ) -> dict[int, Layout]:
    """Read ``nvidia-smi -L`` / ``mig -lgi`` / ``-lci`` / ``-lgip`` / ``-lgipp`` output saved in a
    file (``nvidia-smi mig -lgi > lgi.txt``): ``{gpu index: Layout}``.

    Raises
    ------
    labkit.mig.SmiListingError, InputError, ValueError
        As :func:`labkit.mig.read_nvidia_smi_mig`, and for a file that is not text.

    Used in: notebooks/02_mig.ipynb
    """
    file = Path(path)
    return read_nvidia_smi_mig(decode_nvidia_smi_listing(file.read_bytes(), name=file.name),
                               model)
