"""우리 학교: the one school case every lesson reads (pure).

The school's own mini AI datacenter, as a handful of figures a teacher can check and change:
one server of ``n_gpus`` GPUs (the model is a ``data/gpus/`` short name), what it cost, how it
is used over the school year (the usage plan of lesson 07), the KEPCO contract it is billed on
and the class that shares it (students, class hours, one student's lab job). The default lives
in the data folder's ``school/case`` file with a source for every figure; a teacher's edited
copy is kept by :mod:`labkit.data.school`, so editing it once changes every lesson.

The lessons contrast this case with the published large clusters (Meta's 16,384-GPU Llama 3
pre-training run, the 4,096-GPU goodput worksheet): :data:`CONTRAST_GPUS`.

Bad input raises :class:`labkit.validate.InputError` naming the field (the editor shows it in
Korean beside the control).

Used in: every lesson (the "우리 학교" card) and notebooks/09_capstone.ipynb.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from labkit import validate
from labkit.loadprofile import Usage
from labkit.validate import InputError

__all__ = ["CONTRAST_GPUS", "MAX_GPUS", "MAX_NAME_CHARS", "MAX_STUDENTS", "SchoolCase",
           "class_hours_per_year", "clean_name", "gpus_ratio", "school_case"]

#: The large clusters the lessons contrast the school with [GPUs]: the 4,096-GPU goodput
#: worksheet (course notes 01, lesson 03) and Meta's Llama 3 405B pre-training on 16,384 H100
#: (Dubey et al., "The Llama 3 Herd of Models", arXiv:2407.21783, 2024, §3.3.4).
CONTRAST_GPUS = (4_096, 16_384)
#: Most GPUs the case accepts: one school room (lesson 07's room holds up to 4 servers of 8).
MAX_GPUS = 64
#: Most students in one class sharing the lab (the scheduling models' class size bound).
MAX_STUDENTS = 200
#: Longest school name [characters]: the longest official Korean school names (e.g.
#: "한국과학기술원부설한국과학영재학교", 17) with room; a card and a report title keep one line.
MAX_NAME_CHARS = 40


def clean_name(name: Any) -> str:
    """Return a school name as the case keeps it: trimmed, 1-40 printable characters.

    Markup is kept as text (``<b>`` stays ``<b>``); every place that shows the name escapes
    it (the card, the 09 report).

    Raises
    ------
    labkit.validate.InputError
        Field ``name``: rule ``other`` for a non-string, an empty or blank name, or one with
        control characters (a line break, a tab, NUL); rule ``at_most`` past
        :data:`MAX_NAME_CHARS` characters (after trimming).
    """
    if not isinstance(name, str):
        raise InputError("name", "other", name, "name must be text")
    text = name.strip()
    if not text or not text.isprintable():
        raise InputError("name", "other", name,
                         "name must be printable text, not empty and without control characters")
    if len(text) > MAX_NAME_CHARS:
        raise InputError("name", "at_most", len(text),
                         f"name must be at most {MAX_NAME_CHARS} characters, got {len(text)}",
                         limit=MAX_NAME_CHARS)
    return text


@dataclass(frozen=True)
class SchoolCase:
    """The school's mini AI datacenter and the class that uses it.

    Parameters
    ----------
    name : str
        The school's name as the lessons show it ("우리 학교"); trimmed, 1-40 printable
        characters (:func:`clean_name`).
    gpu_model : str
        GPU model, a ``data/gpus/`` short name ("H100-80GB").
    n_gpus : int
        GPUs in the school's one server. [GPUs, 1-64]
    server_price_usd : float
        What the server cost, all-in. [USD, >= 0]
    fx_krw_per_usd : float
        Exchange rate for the price. [KRW/USD, > 0]
    pue : float
        Power usage effectiveness of the room. [1-3]
    idle_frac : float
        Idle power as a share of the server's maximum IT power. [fraction]
    contract_kw : float
        KEPCO contract power of the room. [kW, > 0]
    tariff_class : str
        KEPCO contract class ("교육용(갑) 고압A 선택I"), a class of ``data/tariffs/``.
    school_exception : bool
        Whether the K-12 rule (15 % floor, no ratchet) is applied for.
    class_frac, exam_frac, after_school_frac, vacation_frac, always_on_frac : float
        The usage plan (:class:`labkit.loadprofile.Usage`): share of the GPUs busy in class
        hours, exam weeks, after school, vacation weekdays, and around the clock. [fraction]
    students : int
        Students in one class using the lab at once. [1-200]
    class_start_h, class_end_h : float
        Class hours on school days. [h, local time, 0-24, start < end]
    job_memory_gb : float
        GPU memory one student's lab job needs. [GB, > 0]
    job_duration_h : float
        How long one student's lab job runs on a whole GPU. [h, > 0]
    api_usd_per_m_tokens : float
        Blended API price the school would pay instead. [USD per 1M tokens, >= 0]
    rent_usd_per_gpu_hour : float
        Cloud rental price of the same GPU. [USD/GPU-h, >= 0]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        Naming the field and the rule it breaks.

    Used in: every lesson's "우리 학교" card, notebooks/09_capstone.ipynb
    """

    name: str = "우리 학교"
    gpu_model: str = "H100-80GB"
    n_gpus: int = 8
    server_price_usd: float = 300_000.0
    fx_krw_per_usd: float = 1_400.0
    pue: float = 1.5
    idle_frac: float = 0.3
    contract_kw: float = 20.0
    tariff_class: str = "교육용(갑) 고압A 선택I"
    school_exception: bool = False
    class_frac: float = 0.8
    exam_frac: float = 0.2
    after_school_frac: float = 0.2
    vacation_frac: float = 0.1
    always_on_frac: float = 0.05
    students: int = 28
    class_start_h: float = 9.0
    class_end_h: float = 17.0
    job_memory_gb: float = 8.0
    job_duration_h: float = 1.0
    api_usd_per_m_tokens: float = 0.6
    rent_usd_per_gpu_hour: float = 2.99

    def __post_init__(self) -> None:
        clean: dict[str, Any] = {
            "name": clean_name(self.name),
            "n_gpus": validate.integer("n_gpus", self.n_gpus, minimum=1),
            "server_price_usd": validate.non_negative("server_price_usd", self.server_price_usd),
            "fx_krw_per_usd": validate.positive("fx_krw_per_usd", self.fx_krw_per_usd),
            "pue": validate.at_least("pue", self.pue, 1.0),
            "idle_frac": validate.fraction("idle_frac", self.idle_frac, allow_zero=True),
            "contract_kw": validate.positive("contract_kw", self.contract_kw),
            "students": validate.integer("students", self.students, minimum=1),
            "class_start_h": validate.non_negative("class_start_h", self.class_start_h),
            "class_end_h": validate.positive("class_end_h", self.class_end_h),
            "job_memory_gb": validate.positive("job_memory_gb", self.job_memory_gb),
            "job_duration_h": validate.positive("job_duration_h", self.job_duration_h),
            "api_usd_per_m_tokens": validate.non_negative("api_usd_per_m_tokens",
                                                          self.api_usd_per_m_tokens),
            "rent_usd_per_gpu_hour": validate.non_negative("rent_usd_per_gpu_hour",
                                                           self.rent_usd_per_gpu_hour),
        }
        for key in ("class_frac", "exam_frac", "after_school_frac", "vacation_frac",
                    "always_on_frac"):
            clean[key] = validate.fraction(key, getattr(self, key), allow_zero=True)
        validate.at_most("n_gpus", clean["n_gpus"], MAX_GPUS, "GPUs in one school room")
        validate.at_most("students", clean["students"], MAX_STUDENTS, "students in one class")
        validate.at_most("pue", clean["pue"], 3.0, "PUE of a school room")
        validate.at_most("class_end_h", clean["class_end_h"], 24.0, "hours in a day")
        if clean["class_end_h"] <= clean["class_start_h"]:
            raise InputError("class_end_h", "at_least", self.class_end_h,
                             f"class_end_h must be after class_start_h ({self.class_start_h})",
                             limit=clean["class_start_h"])
        validate.at_most("job_duration_h", clean["job_duration_h"], 24.0, "hours in a day")
        for key in ("gpu_model", "tariff_class"):
            # printable too: a control character (NEL, a line break) would not read back
            # from the saved YAML file as it was written
            value = getattr(self, key)
            if (not isinstance(value, str) or not value.strip() or len(value) > 80
                    or not value.isprintable()):
                raise InputError(key, "other", value,
                                 f"{key} must be 1-80 printable characters of text")
        if not isinstance(self.school_exception, bool):
            raise InputError("school_exception", "choice", self.school_exception,
                             "school_exception must be true or false", limit=(True, False))
        for key, value in clean.items():
            object.__setattr__(self, key, value)

    # -- derived figures ------------------------------------------------------------------------
    @property
    def server_price_krw(self) -> float:
        """The server's price in won. [KRW]"""
        return self.server_price_usd * self.fx_krw_per_usd

    @property
    def usage(self) -> Usage:
        """The usage plan as lesson 07's model takes it."""
        return Usage(class_frac=self.class_frac, exam_frac=self.exam_frac,
                     after_school_frac=self.after_school_frac,
                     vacation_frac=self.vacation_frac, always_on_frac=self.always_on_frac)

    @property
    def students_per_gpu(self) -> int:
        """The most students of one class on one GPU: ceil(students / GPUs). [students]

        The class spread evenly over the GPUs (28 on 8: four GPUs of 4, four of 3); the busiest
        GPU is the one a sharing mode must hold, so every lesson says "GPU 1장에 최대 4명".
        """
        return -(-self.students // self.n_gpus)

    @property
    def class_hours_per_day(self) -> float:
        """Class hours on one school day. [h]"""
        return self.class_end_h - self.class_start_h

    def to_dict(self) -> dict[str, Any]:
        """Return the case as plain values, by field name (what the saved file holds)."""
        return asdict(self)

    def changed(self, **changes: Any) -> SchoolCase:
        """Return a copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)


def school_case(values: dict[str, Any]) -> SchoolCase:
    """Build a :class:`SchoolCase` from plain values (a saved file, an editor's controls).

    Keys the case does not have are an error; missing keys take the defaults.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For an unknown key or a bad value, naming the field.
    """
    known = {f.name for f in fields(SchoolCase)}
    for key in values:
        if key not in known:
            raise InputError(str(key), "choice", key, f"unknown school-case field {key!r}",
                             limit=tuple(sorted(known)))
    return SchoolCase(**values)


def class_hours_per_year(case: SchoolCase, school_days: int) -> float:
    """Return the class hours of a school year: class hours a day x school days. [h]

    The reference year: 8 h x 190 days = 1,520 h, 17 % of the year's 8,760 h (초·중등교육법
    시행령 제45조: at least 190 school days).

    Raises
    ------
    labkit.validate.InputError
        If ``school_days`` is not an integer in 0-366.
    """
    days = validate.integer("school_days", school_days, minimum=0)
    validate.at_most("school_days", days, 366, "days in a year")
    return case.class_hours_per_day * days


def gpus_ratio(case: SchoolCase, cluster_gpus: int) -> float:
    """Return how many times the school's GPUs a large cluster has (16,384 / 8 = 2,048).

    Raises
    ------
    labkit.validate.InputError
        If ``cluster_gpus`` is not a positive integer.
    """
    n = validate.integer("cluster_gpus", cluster_gpus, minimum=1)
    ratio = n / case.n_gpus
    return float(ratio) if math.isfinite(ratio) else math.inf
