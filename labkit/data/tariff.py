"""Loader for the KEPCO tariff tables (``data/tariffs/kepco_<effective-date>.yaml``).

Each file is one tariff table as in effect from its ``effective_date``; :func:`load_tariff`
picks the file in effect on ``as_of`` and builds one class of it as a
:class:`labkit.tariff.Tariff`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from labkit.data import DataError, data_dir, get_field, load_yaml, parse_iso_date
from labkit.tariff import Band, Season, Tariff, TouSchedule, parse_hour_ranges
from labkit.validate import InputError

__all__ = ["TARIFF_DIR", "load_tariff", "tariff_classes", "tariff_files"]

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


def _read(path: Path) -> dict[str, Any]:
    try:
        return load_yaml(path)
    except DataError:
        raise
    except ValueError as err:  # PyYAML builds dates itself: 2026-02-30 raises here
        raise DataError(f"{path}: invalid value ({err})") from err


def _seasons(doc: Mapping[str, Any], where: str) -> tuple[Season, ...]:
    seasons = get_field(doc, "seasons", dict, where=where)
    by_month: dict[int, Season] = {}
    for name in Season:
        months = get_field(seasons, str(name), list, where=f"{where}: seasons")
        for m in months:
            if not isinstance(m, int) or not 1 <= m <= 12 or m in by_month:
                raise DataError(f"{where}: seasons.{name}: bad or repeated month {m!r}")
            by_month[m] = name
    if sorted(by_month) != list(range(1, 13)):
        raise DataError(f"{where}: seasons must cover months 1-12 once each")
    return tuple(by_month[m] for m in range(1, 13))


def _schedule(doc: Mapping[str, Any], name: str, where: str) -> TouSchedule:
    schedules = get_field(doc, "tou_schedules", dict, where=where)
    if name not in schedules:
        raise DataError(f"{where}: unknown tou schedule {name!r}; known: {sorted(schedules)}")
    entry = schedules[name]
    weekday = {}
    for season in Season:
        ranges = get_field(entry, str(season), dict, where=f"{where}: tou_schedules.{name}")
        weekday[season] = parse_hour_ranges(f"tou_schedules.{name}.{season}", ranges)
    return TouSchedule(name, weekday,
                       Band(get_field(doc, "saturday_peak_band", str, where=where)),
                       Band(get_field(doc, "sunday_holiday_band", str, where=where)))


def tariff_classes(as_of: date | str | None = None) -> list[str]:
    """Return the class names (KEPCO's own) of the table in effect on ``as_of``, file order."""
    _, path = _pick_file(as_of)
    doc = _read(path)
    return list(get_field(doc, "classes", dict, where=str(path)))


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
    classes = get_field(doc, "classes", dict, where=where)
    if class_name not in classes:
        raise InputError("class_name", "choice", class_name,
                         f"class_name must be one of {', '.join(classes)}; got {class_name!r}",
                         limit=tuple(classes))
    entry = get_field(classes, class_name, dict, where=f"{where}: classes")
    cwhere = f"{where}: classes.{class_name}"
    seasons = _seasons(doc, where)
    tou = entry.get("tou", False)
    if not (tou is False or isinstance(tou, str)):
        raise DataError(f"{cwhere}: tou must be false or a tou_schedules name, got {tou!r}")
    schedule_name = tou if isinstance(tou, str) else get_field(
        doc, "flat_class_schedule", str, where=where)
    try:
        schedule = _schedule(doc, schedule_name, where)
    except (InputError, ValueError) as err:
        if isinstance(err, DataError):
            raise
        raise DataError(f"{where}: tou_schedules.{schedule_name}: {err}") from err
    energy_doc = get_field(entry, "energy", dict, where=cwhere)
    energy: dict[Season, dict[Band, float]] = {}
    for season in Season:
        if season not in energy_doc:
            raise DataError(f"{cwhere}: energy: missing season {season!r}")
        value = energy_doc[season]
        if isinstance(tou, str):
            if not (isinstance(value, list) and len(value) == 3):
                raise DataError(f"{cwhere}: energy.{season} must be [light, mid, peak]")
            energy[season] = {b: get_field({"v": v}, "v", float, where=f"{cwhere}: energy")
                              for b, v in zip(Band, value, strict=True)}
        else:
            rate = get_field(energy_doc, str(season), float, where=f"{cwhere}: energy")
            energy[season] = dict.fromkeys(Band, rate)
    adders = get_field(doc, "adders", dict, where=where)
    demand = get_field(doc, "billing_demand", dict, where=where)
    school = get_field(demand, "school_exception", dict, where=f"{where}: billing_demand")
    try:
        return Tariff(
            class_name=class_name,
            tou=isinstance(tou, str),
            base_krw_per_kw_month=get_field(entry, "base_krw_per_kw_month", float, where=cwhere),
            energy_krw_per_kwh=energy,
            schedule=schedule,
            season_of_month=seasons,
            climate_krw_per_kwh=get_field(adders, "climate_krw_per_kwh", float, where=where),
            fuel_krw_per_kwh=get_field(adders, "fuel_krw_per_kwh", float, where=where),
            fund_levy_frac=get_field(adders, "fund_levy_frac", float, where=where),
            vat_frac=get_field(adders, "vat_frac", float, where=where),
            demand_bands=tuple(Band(b) for b in get_field(demand, "bands", list, where=where)),
            demand_interval_min=get_field(demand, "interval_min", int, where=where),
            ratchet_months=tuple(get_field(demand, "ratchet_months", list, where=where)),
            floor_frac=get_field(demand, "floor_frac", float, where=where),
            school_floor_frac=get_field(school, "floor_frac", float, where=where),
            base_basis=entry.get("base_basis", "billing_demand"),
            holiday_kinds=tuple(get_field(doc, "holiday_kinds", list, where=where)),
            effective_date=str(doc.get("effective_date", effective)),
            source=str(doc["source"]).strip(),
            as_of=str(doc["as_of"]),
            verified=get_field(doc, "verified", bool, where=where),
        )
    except (InputError, ValueError) as err:
        if isinstance(err, DataError):
            raise
        raise DataError(f"{cwhere}: {err}") from err
