"""The school: its calendar (``data/school/calendar_<year>.yaml``) and 우리 학교, its case.

- :func:`load_school_calendar` reads a school year's terms, exams, closures and holidays.
- :func:`load_default_case` reads ``data/school/case.yaml`` (every figure with its source).
- :func:`load_case` returns the case every lesson uses: the teacher's saved copy
  (``school.yaml`` in :func:`case_home`) if there is one and it is good, else the default,
  with the reason the saved copy was not used (the UI says it in Korean).
- :func:`save_case` writes that copy (mode 0600, never through a symbolic link, replaced
  atomically so that a lesson reading it meanwhile sees the old or the new file, never half).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import Field

from labkit.data import DataError, load_csv, load_document
from labkit.data.opex import SERVERS_PATH, ServerRow, load_servers
from labkit.data.schema import Day, Document, IsoDate, Schema, Text, one_of
from labkit.loadprofile import HOLIDAY_KINDS, ClosedDay, Holiday, SchoolCalendar, Term
from labkit.opex import ServerSpec
from labkit.school import SchoolCase, school_case
from labkit.validate import InputError

__all__ = ["CASE_FILE", "DEFAULT_CALENDAR", "DEFAULT_CASE", "MAX_SAVED_BYTES", "CalendarFile",
           "CaseFile", "LoadedCase", "case_gpu_models", "case_home", "case_sources", "load_case",
           "load_default_case", "load_school_calendar", "reset_case", "save_case",
           "saved_case_path", "server_for_case"]

DEFAULT_CALENDAR = "school/calendar_2026.yaml"
DEFAULT_CASE = "school/case.yaml"
#: The saved copy's file name in :func:`case_home`.
CASE_FILE = "school.yaml"
#: Largest saved copy read back (a case is ~1 kB; the student owns the file). [bytes]
MAX_SAVED_BYTES = 64_000
_HOME_ENV = "LABKIT_HOME"
_VERSION = 1


class TermEntry(Schema):
    """A term or exam week: ``name``, ``start``, ``end`` (inclusive)."""

    name: Text
    start: Day
    end: Day


class HolidayEntry(Schema):
    """A public holiday: ``date``, ``name``, ``kind`` (public | substitute | temporary)."""

    date: Day
    name: Text
    kind: Annotated[str, one_of(HOLIDAY_KINDS)] = "public"


class ClosureEntry(Schema):
    """A school-specific day off (개교기념일, 재량휴업일)."""

    date: Day
    name: Text


class CalendarFile(Document):
    """``calendar_<year>.yaml``: one school year's terms, exams, closures and holidays."""

    name: str = ""
    year: int
    class_start_h: float
    class_end_h: float
    terms: list[TermEntry] = Field(default_factory=list)
    exams: list[TermEntry] = Field(default_factory=list)
    closures: list[ClosureEntry] = Field(default_factory=list)
    holidays: list[HolidayEntry] = Field(default_factory=list)


def load_school_calendar(path: str = DEFAULT_CALENDAR) -> SchoolCalendar:
    """Load and validate a school calendar file.

    Returns
    -------
    labkit.loadprofile.SchoolCalendar
        The default: the calendar year 2026 of an example middle/high school (190 school days,
        classes 09:00-17:00, the 2026 public holidays).

    Raises
    ------
    labkit.data.DataError (a ValueError)
        Naming the file and the entry if a key is missing or mistyped or a date is invalid.

    Used in: notebooks/07_opex_lab.ipynb
    """
    doc = load_document(path, CalendarFile)
    try:
        return SchoolCalendar(
            year=doc.year,
            terms=[Term(e.name, e.start, e.end) for e in doc.terms],
            exams=[Term(e.name, e.start, e.end) for e in doc.exams],
            holidays=[Holiday(e.date, e.name, e.kind) for e in doc.holidays],
            closures=[ClosedDay(e.date, e.name) for e in doc.closures],
            class_start_h=doc.class_start_h,
            class_end_h=doc.class_end_h,
            name=doc.name,
            source=doc.source,
            as_of=doc.as_of,
        )
    except InputError as err:
        raise DataError(f"{path}: {err}") from err


# --- 우리 학교 ---------------------------------------------------------------------------------

class FigureEntry(Schema):
    """One figure of the case: its ``value``, ``source`` and ``as_of``."""

    value: bool | int | float | str
    source: Text
    as_of: IsoDate


class CaseFile(Document):
    """``data/school/case.yaml``: the default school case, a source for every figure."""

    calendar: Text = DEFAULT_CALENDAR
    figures: dict[str, FigureEntry]


@dataclass(frozen=True)
class LoadedCase:
    """The case a lesson uses and where it came from.

    Attributes
    ----------
    case : labkit.school.SchoolCase
    origin : {"default", "saved"}
        The default file, or the teacher's saved copy.
    problem : str or None
        Why a saved copy exists but was not used: ``"unreadable"`` (not YAML, too large, not
        a mapping, wrong version) or ``"invalid"`` (a figure the model refuses); None otherwise.
    detail : str
        The English detail of the problem (the field and value; for logs and the teacher).
    path : pathlib.Path
        The saved copy's path (whether or not it exists).
    """

    case: SchoolCase
    origin: str
    problem: str | None
    detail: str
    path: Path


def case_home() -> Path:
    """Return the folder of the saved case: ``$LABKIT_HOME``, else ``~/.labkit``."""
    env = os.environ.get(_HOME_ENV)
    return Path(env) if env else Path.home() / ".labkit"


def saved_case_path() -> Path:
    """Return the saved case's path (``school.yaml`` in :func:`case_home`)."""
    return case_home() / CASE_FILE


def _default_doc(path: str) -> CaseFile:
    return load_document(path, CaseFile)


def load_default_case(path: str = DEFAULT_CASE) -> SchoolCase:
    """Load and validate the default school case.

    Returns
    -------
    labkit.school.SchoolCase
        The default: one 8 x H100-80GB server, 교육용(갑) 고압A 선택I at 20 kW, 28 students in
        class hours 09-17.

    Raises
    ------
    labkit.data.DataError (a ValueError)
        Naming the file and the figure (``case.yaml: figures.pue.value: pue must be >= 1``).

    Used in: every lesson, notebooks/09_capstone.ipynb
    """
    doc = _default_doc(path)
    try:
        return school_case({k: e.value for k, e in doc.figures.items()})
    except InputError as err:
        raise DataError(f"{path}: figures.{err.field}.value: {err}") from err


def case_sources(path: str = DEFAULT_CASE) -> dict[str, tuple[str, str]]:
    """Return each default figure's (source, as_of), by field name (the report's footnotes)."""
    doc = _default_doc(path)
    return {k: (e.source, str(e.as_of)) for k, e in doc.figures.items()}


def _read_saved(path: Path) -> dict[str, Any]:
    """The saved copy's values; ValueError("unreadable: ...") when it is not a case file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        raw = f.read(MAX_SAVED_BYTES + 1)
    if len(raw) > MAX_SAVED_BYTES:
        raise ValueError(f"unreadable: larger than {MAX_SAVED_BYTES} bytes")
    try:
        doc = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"unreadable: {err}") from err
    if not isinstance(doc, dict) or doc.get("v") != _VERSION or not isinstance(
            doc.get("case"), dict):
        raise ValueError(f"unreadable: not a version-{_VERSION} school case")
    return {str(k): v for k, v in doc["case"].items()}


def load_case(default_path: str = DEFAULT_CASE) -> LoadedCase:
    """Return the school case every lesson uses: the saved copy if good, else the default.

    A missing saved copy is the normal case (origin ``"default"``, no problem). A saved copy
    that cannot be read or that the model refuses never stops a lesson: the default is used
    and :attr:`LoadedCase.problem` says why.

    Raises
    ------
    labkit.data.DataError
        Only if the default file itself is broken (a bug of the checkout, not of a user).

    Used in: every lesson, notebooks/09_capstone.ipynb
    """
    path = saved_case_path()
    default = load_default_case(default_path)
    try:
        values = _read_saved(path)
    except FileNotFoundError:
        return LoadedCase(default, "default", None, "", path)
    except OSError as err:  # a symbolic link (ELOOP), a folder, no permission
        return LoadedCase(default, "default", "unreadable", f"{path}: {err.strerror}", path)
    except ValueError as err:
        return LoadedCase(default, "default", "unreadable", f"{path}: {err}", path)
    try:
        return LoadedCase(school_case(values), "saved", None, "", path)
    except InputError as err:
        return LoadedCase(default, "default", "invalid", f"{path}: {err.field}: {err}", path)
    except (TypeError, ValueError) as err:
        return LoadedCase(default, "default", "invalid", f"{path}: {err}", path)


def save_case(case: SchoolCase) -> Path:
    """Write ``case`` as the saved copy every lesson reads; return its path.

    Raises
    ------
    OSError
        If it cannot be written (read-only home; on a voila page, the classroom guards refuse
        writes outside the session folder). The UI catches it and says so in Korean.

    Used in: labkit.ui.school (the editor's 저장 button)
    """
    if not isinstance(case, SchoolCase):
        raise TypeError("case must be a SchoolCase")
    path = saved_case_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.is_symlink():
        raise OSError(40, "refusing to write through a symbolic link", str(path))
    text = yaml.safe_dump({"v": _VERSION, "case": json.loads(json.dumps(case.to_dict()))},
                          allow_unicode=True, sort_keys=False)
    fd, tmp = tempfile.mkstemp(prefix=".school-", suffix=".yaml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def reset_case() -> bool:
    """Remove the saved copy (back to the default); True if there was one.

    Raises
    ------
    OSError
        If it exists and cannot be removed.
    """
    path = saved_case_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def _server_rows() -> dict[str, str]:
    """gpu_model -> server name of ``data/opex/servers.csv`` (the first row of each model)."""
    frame = load_csv(SERVERS_PATH, ServerRow)
    rows: dict[str, str] = {}
    for gpu_model, server in zip(frame["gpu_model"], frame["server"], strict=True):
        rows.setdefault(str(gpu_model), str(server))
    return rows


def case_gpu_models() -> tuple[str, ...]:
    """Return the GPU models a school case can name: those with a server row in ``opex/``."""
    return tuple(_server_rows())


def server_for_case(case: SchoolCase) -> ServerSpec:
    """Return the school's server as lesson 07's model takes it.

    The server row of ``data/opex/servers.csv`` for ``case.gpu_model`` gives the throughput per
    GPU and the MIG slices; the case gives the GPU count and the price (USD x fx). The
    row's maximum IT power is scaled by GPU count / the row's GPU count (a teaching
    approximation: the host's share scales with the GPUs).

    Raises
    ------
    labkit.data.DataError
        If no server row has ``case.gpu_model`` (naming it and the models there are).

    Used in: notebooks/09_capstone.ipynb
    """
    rows = _server_rows()
    if case.gpu_model not in rows:
        raise DataError(f"opex/servers.csv: no server row for gpu_model {case.gpu_model!r} "
                        f"(rows: {', '.join(rows)})")
    spec = load_servers(1.0)[rows[case.gpu_model]]
    scale = case.n_gpus / spec.gpus_per_server
    return replace(spec, gpus_per_server=case.n_gpus,
                   max_it_power_kw=spec.max_it_power_kw * scale,
                   server_capex_krw=case.server_price_krw)
