"""Read dcgm-exporter scrapes (Prometheus text exposition format) into the tidy frame.

The text is parsed by ``prometheus_client``'s own parser
(:func:`prometheus_client.parser.text_string_to_metric_families`): label escapes (``\\n``,
``\\"``, ``\\\\``) are decoded as Prometheus defines them, and no exposition grammar is written
here. This module only maps DCGM field names to the catalog, DCGM's blank sentinels to missing
readings, and repeated series to successive scrapes.

DCGM blank values (the sentinels of ``dcgm_structs.h``, defined once in
:mod:`labkit.observe.dcgm_blanks`): each becomes a missing reading with the reason "DCGM blank"
(and the kind), never the raw number.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from labkit import validate
from labkit.data.observe.common import (
    check_lines,
    check_single_readings,
    finish_log,
    meta_interval,
    split_meta,
    where,
)
from labkit.observe.catalog import CATALOG, DCGM_ALIASES, Metric
from labkit.observe.dcgm_blanks import (
    DCGM_BLANK_KINDS,
    DCGM_FP64_BLANK,
    DCGM_INT32_BLANK,
    DCGM_INT64_BLANK,
    blank_reason,
)
from labkit.observe.logs import LogError, LogImport, UnparsedRow
from labkit.observe.readings import Status

__all__ = ["DCGM_BLANKS", "DCGM_IDENTITY_LABELS", "dcgm_blank", "read_dcgm_exporter"]

#: Every sentinel value -> (status, reason).
DCGM_BLANKS: Mapping[float, tuple[Status, str]] = MappingProxyType({
    **{float(base + offset): (status, blank_reason(kind))
       for base in (DCGM_INT32_BLANK, DCGM_FP64_BLANK)
       for offset, (status, kind) in DCGM_BLANK_KINDS.items()},
    # the four int64 sentinels are one float64 (2**63): printed as a float, the kind is lost
    float(DCGM_INT64_BLANK): (Status.NOT_AVAILABLE, blank_reason()),
})
_INT_BLANKS: Mapping[int, tuple[Status, str]] = MappingProxyType({
    base + offset: (status, blank_reason(kind))
    for base in (DCGM_INT32_BLANK, DCGM_INT64_BLANK)
    for offset, (status, kind) in DCGM_BLANK_KINDS.items()})
#: Labels that say which GPU a series is (kept as the device's identity, not a series key).
DCGM_IDENTITY_LABELS = ("UUID", "modelName", "pci_bus_id", "device", "Hostname", "hostname",
                        "DCGM_FI_DRIVER_VERSION")
#: Labels of a MIG device (dcgm-exporter): kept in the series key, so each MIG device is its own
#: series (and its own ``metric`` name in the tidy frame, see :func:`read_dcgm_exporter`).
MIG_LABELS = ("GPU_I_PROFILE", "GPU_I_ID")
_DCGM_BY_FIELD: Mapping[str, Metric] = MappingProxyType(
    {m.dcgm_field: m for m in CATALOG.values() if m.dcgm_field})


def dcgm_blank(value: float | int) -> tuple[Status, str] | None:
    """Return (status, reason) if ``value`` is one of DCGM's blank sentinels, else None.

    Integer sentinels are compared exactly (``prometheus_client`` keeps an integer sample as
    ``int``); a float equal to one (``9.223372036854776e18`` after a float round trip, or
    ``140737488355328.0``) also matches.

    Examples
    --------
    >>> dcgm_blank(9223372036854775794)[1]
    'DCGM blank (not supported)'
    >>> dcgm_blank(140737488355328.0)[1]
    'DCGM blank (blank)'
    >>> dcgm_blank(71.4) is None
    True
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return _INT_BLANKS.get(value) or DCGM_BLANKS.get(float(value))
    return DCGM_BLANKS.get(float(value))


@dataclass(frozen=True)
class _Sample:
    line: int
    name: str
    labels: Mapping[str, str]
    value: float | int
    timestamp: float | None


def _sample_lines(lines: list[str]) -> list[int]:
    return [n for n, raw in enumerate(lines, start=1)
            if raw.strip() and not raw.lstrip().startswith("#")]


def _samples(text: str, lines: list[str], source: str, strict: bool,
             unparsed: list[UnparsedRow]) -> Iterator[_Sample]:
    """Yield every sample with its line number; a line the parser rejects is set aside."""
    numbers = _sample_lines(lines)
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError:
        bad = []
        for n in numbers:  # find the lines prometheus_client rejects, one at a time
            try:
                list(text_string_to_metric_families(lines[n - 1] + "\n"))
            except ValueError as err:
                if strict:
                    raise ValueError(f"{where(source, n)}: not a Prometheus sample "
                                     f"({err or 'unparsable'})") from None
                bad.append(n)
                unparsed.append(UnparsedRow(n, f"not a Prometheus sample ({err or 'unparsable'})",
                                            lines[n - 1][:120]))
        skip = set(bad)
        kept = [ln if k not in skip else "" for k, ln in enumerate(lines, start=1)]
        numbers = [n for n in numbers if n not in skip]
        try:
            families = list(text_string_to_metric_families("\n".join(kept) + "\n"))
        except ValueError as err:  # a HELP/TYPE line the parser rejects
            raise ValueError(f"{source}: not Prometheus text ({err or 'bad comment line'})") \
                from None
    k = 0
    for family in families:
        for s in family.samples:
            name = family.name if s.name in (family.name, family.name + "_total") else s.name
            stamp = None if s.timestamp is None else float(s.timestamp)
            yield _Sample(numbers[k] if k < len(numbers) else 0, name, s.labels, s.value, stamp)
            k += 1


def _row(sample: _Sample) -> tuple[int, str, float | None, Status, str | None, str]:
    """Return (gpu, metric, value, status, reason, unit) for one sample; raise if unusable."""
    if "gpu" not in sample.labels:
        raise ValueError(f"{sample.name}: no gpu label")
    try:
        gpu = int(sample.labels["gpu"])
    except ValueError:
        raise ValueError(f"{sample.name}: gpu label {sample.labels['gpu']!r} is not an "
                         "integer") from None
    metric = _DCGM_BY_FIELD.get(DCGM_ALIASES.get(sample.name, sample.name))
    key = metric.key if metric else sample.name
    mig = [sample.labels[k] for k in MIG_LABELS if sample.labels.get(k)]
    if mig:  # a MIG device: its own series, named after the GPU instance
        key = f"{key}@mig:{':'.join(mig)}"
    unit = metric.unit if metric else ""
    blank = dcgm_blank(sample.value)
    if blank is not None:
        return gpu, key, None, blank[0], blank[1], unit
    value = float(sample.value)
    if value != value or value in (float("inf"), float("-inf")):
        return gpu, key, None, Status.NOT_AVAILABLE, repr(value), unit
    return gpu, key, value * (metric.dcgm_scale if metric else 1.0), Status.OK, None, unit


def read_dcgm_exporter(text: str, *, source: str = "<text>", interval_s: float | None = None,
                       strict: bool = False) -> LogImport:
    """Read dcgm-exporter's Prometheus text (one scrape, or several concatenated).

    Each sample ``DCGM_FI_...{gpu="0",UUID="GPU-...",modelName="...",...} value [ms]`` becomes
    a row. Known fields become :data:`~labkit.observe.CATALOG` metrics (DCGM profiling fields
    are already 0-1 ratios; ``DCGM_FI_DEV_GPU_UTIL`` is percent -> /100; power stays in W;
    energy mJ -> J); unknown ones keep their DCGM name. DCGM blank sentinels (integer and
    floating-point, see the module docstring) become missing readings with the reason
    ``"DCGM blank (...)"``, never huge numbers.

    MIG: a sample with ``GPU_I_PROFILE`` / ``GPU_I_ID`` labels is a MIG device's series; its
    metric is ``<key>@mig:<profile>:<gi id>`` (``gr_engine_active_frac@mig:1g.10gb:7``), so
    each MIG device stays its own series on its parent ``gpu``.

    Time: the sample's own timestamp when present; otherwise each repeated series starts a new
    scrape, ``interval_s`` apart (argument, else a ``# interval_s: N`` metadata line, else
    dcgm-exporter's default collect interval of 30 s).

    Parameters
    ----------
    text : str
        The scrape(s).
    source : str
        File name for messages.
    interval_s : float, optional
        Seconds between concatenated scrapes. [s]
    strict : bool, default False
        Raise at the first bad line instead of counting it.

    Returns
    -------
    LogImport

    Raises
    ------
    ValueError
        Naming the file and line: no samples, a line that is not Prometheus text, a sample
        without a ``gpu`` label (when ``strict``), more than half the lines unreadable, some
        samples with a timestamp and some without; kind ``"duplicate"`` for one ``gpu`` label
        on two UUIDs, a MIG device without ``GPU_I_ID``, or two readings of one moment, GPU
        and metric.

    References
    ----------
    .. [1] dcgm-exporter README and ``pkg/cmd/app.go`` (collect interval 30000 ms), d5e5f51.
    .. [2] DCGM 4.6.0 ``dcgm_structs.h`` (blank values), ``dcgm_fields.h`` (fields, units).
    .. [3] Prometheus text exposition format,
       https://prometheus.io/docs/instrumenting/exposition_formats/

    Used in: notebooks/01_observe.ipynb
    """
    lines = check_lines(text, source)
    meta, _ = split_meta(lines)
    if interval_s is None:
        interval_s = meta_interval(meta, source) if "interval_s" in meta else 30.0
    interval = validate.positive("interval_s", interval_s)
    rows: list[tuple[Any, ...]] = []
    unparsed: list[UnparsedRow] = []
    devices: dict[int, dict[str, str]] = {}
    seen: set[tuple[str, int, tuple[tuple[str, str], ...]]] = set()
    scrape = stamped = 0
    for sample in _samples(text, lines, source, strict, unparsed):
        try:
            gpu, key, value, status, reason, unit = _row(sample)
        except ValueError as err:
            if strict:
                raise ValueError(f"{where(source, sample.line)}: {err}") from None
            unparsed.append(UnparsedRow(sample.line, str(err), lines[sample.line - 1][:120]))
            continue
        _check_device(sample, devices.get(gpu, {}), gpu, source)
        series = (sample.name, gpu, tuple(sorted(
            (k, v) for k, v in sample.labels.items() if k not in ("gpu", *DCGM_IDENTITY_LABELS))))
        if series in seen:
            scrape += 1
            seen.clear()
        seen.add(series)
        info = devices.setdefault(gpu, {})
        for label in DCGM_IDENTITY_LABELS:
            if label in sample.labels and label not in info:
                info[label] = sample.labels[label]
        if sample.timestamp is not None:
            stamped += 1
        t = float(sample.timestamp) if sample.timestamp is not None else float(scrape)
        rows.append((t, None, gpu, key, value, unit, status, reason))
    if 0 < stamped < len(rows):
        raise ValueError(f"{source}: {stamped} of {len(rows)} samples carry a timestamp; "
                         "a scrape file needs all or none")
    data_lines = len(_sample_lines(lines))
    unparsed.sort(key=lambda u: u.line)
    return check_single_readings(
        finish_log(rows, unparsed, data_lines, source, "dcgm-exporter", devices, (), meta,
                   time_mode="epoch" if stamped else "seq", interval_s=interval),
        "timestamp, gpu, GPU_I_ID")


def _check_device(sample: _Sample, known: Mapping[str, str], gpu: int, source: str) -> None:
    """Refuse a sample that names a second device under one ``gpu`` label (another UUID: two
    hosts' scrapes merged), or a MIG device without its GPU-instance id (its series could not
    be told from its neighbours'): either would make two readings look like one series."""
    uuid = sample.labels.get("UUID")
    if uuid and known.get("UUID") and uuid != known["UUID"]:
        raise LogError(f"{where(source, sample.line)}: gpu label {gpu} names two devices "
                       f"(UUID {known['UUID'][:48]} and {uuid[:48]}); one scrape file per "
                       "host", kind="duplicate", source=source, line=sample.line)
    if sample.labels.get("GPU_I_PROFILE") and not sample.labels.get("GPU_I_ID"):
        raise LogError(f"{where(source, sample.line)}: a MIG device without a GPU_I_ID label "
                       f"on gpu {gpu}; MIG devices cannot be told apart", kind="duplicate",
                       source=source, line=sample.line)
