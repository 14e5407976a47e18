"""Loader for the KEPCO tariff tables (``data/tariffs/kepco_<effective-date>.yaml``).

Each file is one tariff table as in effect from its ``effective_date``; :func:`load_tariff`
picks the file in effect on ``as_of`` and builds one class of it as a
:class:`labkit.tariff.Tariff`.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from labkit.data import DataError, data_dir, load_document, parse_iso_date
from labkit.data.schema import Document, IsoDate, Lax, Schema, Text
from labkit.tariff import Band, Season, Tariff, TouSchedule, parse_hour_ranges
from labkit.validate import InputError

__all__ = ["TARIFF_DIR", "TariffFile", "load_tariff", "tariff_classes", "tariff_files"]

TARIFF_DIR = "tariffs"
_FILE = re.compile(r"^kepco_(\d{4}-\d{2}-\d{2})\.yaml$")


def tariff_files() -> dict[str, Path]:
    """Return the tariff files under ``data/tariffs/``, effective date -> path, oldest first."""
    folder = data_dir() / TARIFF_DIR
    found = {}
    for path in sorted(folder.glob("kepco_*.yaml")):
        match = _FILE.match(path.name)
        if match:
            found[match.group(1)] = path
    return found


def _pick_file(as_of: date | str | None) -> tuple[str, Path]:
    files = tariff_files()
    if not files:
        raise DataError(f"{data_dir() / TARIFF_DIR}: no kepco_<YYYY-MM-DD>.yaml tariff file")
    if as_of is None:
        key = max(files)
        return key, files[key]
    try:
        day = parse_iso_date(as_of.date() if isinstance(as_of, datetime) else as_of)
    except ValueError:
        raise InputError("as_of", "other", as_of,
                         f"as_of must be a date such as '2026-06-01', got {as_of!r}") from None
    usable = [k for k in files if k <= day]
    if not usable:
        raise InputError("as_of", "at_least", as_of,
                         f"no tariff table in effect on {day}; the oldest is {min(files)}",
                         limit=min(files))
    key = max(usable)
    return key, files[key]


Month = Annotated[int, Field(ge=1, le=12)]
Rate = Annotated[float, Field(ge=0)]
LaxBand = Annotated[Band, Lax]
LaxSeason = Annotated[Season, Lax]


class TouScheduleEntry(Schema):
    """One of ``tou_schedules``: weekday hour ranges per season and band (``"22-08"``)."""

    note: str = ""
    summer: dict[LaxBand, list[str]]
    spring_fall: dict[LaxBand, list[str]]
    winter: dict[LaxBand, list[str]]


class ClassEntry(Schema):
    """One of ``classes``: a KEPCO tariff class.

    ``tou`` is false (one energy rate per season) or the name of a ``tou_schedules`` entry
    (``energy`` per season is then ``[light, mid, peak]``) [KRW/kWh]; the base charge is
    [KRW/kW per month].
    """

    tou: Literal[False] | Text = False
    base_krw_per_kw_month: Rate
    energy: dict[LaxSeason, Rate | Annotated[tuple[Rate, Rate, Rate], Lax]]
    base_basis: Literal["billing_demand", "contract"] = "billing_demand"

    @model_validator(mode="after")
    def _energy_shape(self) -> Self:
        missing = [str(s) for s in Season if s not in self.energy]
        if missing:
            raise ValueError(f"energy: missing season(s) {missing}")
        for season, value in self.energy.items():
            if isinstance(self.tou, str) != isinstance(value, tuple):
                shape = "[light, mid, peak]" if isinstance(self.tou, str) else "one rate"
                raise ValueError(f"energy.{season} must be {shape} (tou: {self.tou!r})")
        return self


class Adders(Schema):
    """``adders``: per-kWh adders [KRW/kWh] and the levy and VAT fractions."""

    climate_krw_per_kwh: Rate
    fuel_krw_per_kwh: float
    fund_levy_frac: Annotated[float, Field(ge=0, le=1)]
    vat_frac: Annotated[float, Field(ge=0, le=1)]


class SchoolException(Schema):
    """``billing_demand.school_exception``: the school rule's floor (and no ratchet)."""

    floor_frac: Annotated[float, Field(ge=0, le=1)]
    ratchet: bool = False


class BillingDemand(Schema):
    """``billing_demand``: how 요금적용전력 is measured (기본공급약관 제68조)."""

    interval_min: Annotated[int, Field(ge=1)]
    bands: list[LaxBand]
    ratchet_months: list[Month]
    floor_frac: Annotated[float, Field(ge=0, le=1)]
    school_exception: SchoolException


class TariffFile(Document):
    """``kepco_<effective-date>.yaml``: one KEPCO tariff table."""

    effective_date: IsoDate
    verified: bool
    seasons: dict[LaxSeason, list[Month]]
    tou_schedules: dict[str, TouScheduleEntry]
    flat_class_schedule: Text
    saturday_peak_band: LaxBand
    sunday_holiday_band: LaxBand
    holiday_kinds: list[str]
    adders: Adders
    billing_demand: BillingDemand
    classes: dict[str, ClassEntry]


def _read(path: Path) -> TariffFile:
    return load_document(path, TariffFile)


def _seasons(doc: TariffFile, where: str) -> tuple[Season, ...]:
    by_month: dict[int, Season] = {}
    for name in Season:
        for m in doc.seasons.get(name, []):
            if m in by_month:
                raise DataError(f"{where}: seasons.{name}: repeated month {m!r}")
            by_month[m] = name
    if sorted(by_month) != list(range(1, 13)):
        raise DataError(f"{where}: seasons must cover months 1-12 once each")
    return tuple(by_month[m] for m in range(1, 13))


def _schedule(doc: TariffFile, name: str, where: str) -> TouSchedule:
    if name not in doc.tou_schedules:
        raise DataError(f"{where}: unknown tou schedule {name!r}; "
                        f"known: {sorted(doc.tou_schedules)}")
    entry = doc.tou_schedules[name]
    weekday = {season: parse_hour_ranges(f"tou_schedules.{name}.{season}",
                                         {str(b): r for b, r in getattr(entry, season).items()})
               for season in Season}
    return TouSchedule(name, weekday, doc.saturday_peak_band, doc.sunday_holiday_band)


def tariff_classes(as_of: date | str | None = None) -> list[str]:
    """Return the class names (KEPCO's own) of the table in effect on ``as_of``, file order."""
    _, path = _pick_file(as_of)
    return list(_read(path).classes)


def load_tariff(class_name: str, as_of: date | str | None = None) -> Tariff:
    """Load one KEPCO tariff class from the table in effect on ``as_of``.

    Parameters
    ----------
    class_name : str
        KEPCO's own name of the class, e.g. ``"교육용(갑) 고압A 선택I"`` or
        ``"교육용(을) 고압A 선택I"`` (see :func:`tariff_classes`).
    as_of : date or str, optional
        The day whose table applies: the newest ``kepco_<effective-date>.yaml`` not after it.
        Default: the newest file.

    Returns
    -------
    labkit.tariff.Tariff
        Rates, schedule, adders and billing-demand rules, with ``source``, ``as_of``,
        ``effective_date`` and ``verified`` from the file.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        ``class_name`` not in the table (rule ``choice``), or ``as_of`` not a date or before
        the oldest table.
    labkit.data.DataError (a ValueError)
        Naming the file and key if the file does not match the schema.

    Used in: notebooks/07_opex_lab.ipynb
    """
    effective, path = _pick_file(as_of)
    doc = _read(path)
    where = str(path)
    if class_name not in doc.classes:
        raise InputError("class_name", "choice", class_name,
                         f"class_name must be one of {', '.join(doc.classes)}; got {class_name!r}",
                         limit=tuple(doc.classes))
    entry = doc.classes[class_name]
    cwhere = f"{where}: classes.{class_name}"
    seasons = _seasons(doc, where)
    schedule_name = entry.tou if isinstance(entry.tou, str) else doc.flat_class_schedule
    try:
        schedule = _schedule(doc, schedule_name, where)
    except (InputError, ValueError) as err:
        if isinstance(err, DataError):
            raise
        raise DataError(f"{where}: tou_schedules.{schedule_name}: {err}") from err
    energy: dict[Season, dict[Band, float]] = {}
    for season, value in entry.energy.items():
        rates = value if isinstance(value, tuple) else (value,) * len(Band)
        energy[season] = dict(zip(Band, rates, strict=True))
    demand = doc.billing_demand
    try:
        return Tariff(
            class_name=class_name,
            tou=isinstance(entry.tou, str),
            base_krw_per_kw_month=entry.base_krw_per_kw_month,
            energy_krw_per_kwh=energy,
            schedule=schedule,
            season_of_month=seasons,
            climate_krw_per_kwh=doc.adders.climate_krw_per_kwh,
            fuel_krw_per_kwh=doc.adders.fuel_krw_per_kwh,
            fund_levy_frac=doc.adders.fund_levy_frac,
            vat_frac=doc.adders.vat_frac,
            demand_bands=tuple(demand.bands),
            demand_interval_min=demand.interval_min,
            ratchet_months=tuple(demand.ratchet_months),
            floor_frac=demand.floor_frac,
            school_floor_frac=demand.school_exception.floor_frac,
            base_basis=entry.base_basis,
            holiday_kinds=tuple(doc.holiday_kinds),
            effective_date=doc.effective_date or effective,
            source=doc.source,
            as_of=doc.as_of,
            verified=doc.verified,
        )
    except (InputError, ValueError) as err:
        if isinstance(err, DataError):
            raise
        raise DataError(f"{cwhere}: {err}") from err
