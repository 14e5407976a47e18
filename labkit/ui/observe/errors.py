"""Korean messages for logs that cannot be read: one catalog key per reader error kind.

The readers (``labkit.data.observe``) raise ``ValueError`` with an English message that names the
file and line (``"f.csv, line 2: 2 of 2 data rows cannot be read (unknown layout?); first
problem: utilization.gpu: not a number: 'bar'"``) and keep each unreadable row's English reason.
A student sees none of that English: :func:`reader_error_text` reads the message's place and
kind with the patterns below and writes the catalog's Korean sentence (``observe.reader.*``)
with the file, the line and the values echoed from the file; a message no pattern knows gets
the generic Korean sentence with its place (never the English).

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from labkit.i18n import t

__all__ = ["READER_PATTERNS", "metric_label", "place_text", "reader_error_text", "row_reason_text"]

#: (catalog key under ``observe.reader.``, pattern over the message after its place). The
#: messages are the readers' own (labkit/data/observe/*.py); a named group becomes a
#: placeholder of the key. Order matters: the first match wins.
READER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (key, re.compile(p, re.S)) for key, p in (
        # file level
        ("too_large", r"(?P<size>[\d,]+) bytes, more than the (?P<limit>[\d,]+) allowed$"),
        ("too_large_stream", r"more than the (?P<limit>[\d,]+) bytes allowed$"),
        ("not_codec", r"not (?P<codec>[\w-]+) text \(byte (?P<byte>\d+)\)"),
        ("not_codec_line", r"not (?P<codec>[\w-]+) text; "),
        ("binary", r"not a log \(binary data"),
        ("nul", r"text holds NUL characters"),
        ("not_text", r"expected text, got"),
        ("too_many_lines", r"(?P<n>[\d,]+) lines, more than (?P<limit>[\d,]+)$"),
        ("interval", r"metadata interval_s must be > 0, got (?P<value>.*)$"),
        ("empty_smi", r"no data \(empty nvidia-smi log\)"),
        ("no_rows", r"no data rows$"),
        ("rows_unreadable", r"(?P<bad>\d+) of (?P<total>\d+) data rows cannot be read "
                            r"\(unknown layout\?\); first problem: (?P<first>.*)$"),
        ("tz_mixed", r"some timestamps carry a UTC offset and some do not"),
        ("empty_log", r"empty log$"),
        ("layout", r"unknown log layout: first line (?P<first>.*) is not an nvidia-smi CSV"),
        ("csv_header_field", r"not an nvidia-smi CSV header \(field (?P<field>.*)\)$"),
        ("no_header", r"no nvidia-smi CSV header \(a 'noheader' log.*line starts (?P<start>.*)$"),
        ("header_twice", r"a field appears twice in the header"),
        ("tidy_no_header", r"no header$"),
        ("tidy_header", r"header must be (?P<columns>.*)$"),
        ("dmon_header", r"no nvidia-smi dmon header"),
        ("dmon_empty", r"no nvidia-smi dmon data lines"),
        ("prom_text", r"not Prometheus text"),
        ("stamps_mixed", r"(?P<stamped>\d+) of (?P<n>\d+) samples carry a timestamp"),
        ("xml_entities", r"XML declares entities"),
        ("xml_bad", r"not well-formed XML"),
        ("xml_root", r"XML root is <(?P<root>[^>]*)>, not <nvidia_smi_log>"),
        ("not_query", r"not an nvidia-smi -q snapshot"),
        ("no_gpu", r"the snapshot lists no GPU"),
        ("no_trace", r"no such trace"),
        ("segments", r"(bad segments entry|segment starts must increase)"),
        ("csv_repeat", r"line \d+ repeats the moment and GPU of line (?P<first>\d+) \(time "
                       r"column (?P<time>[^,]*), GPU column (?P<gpu>[^)]*)\)"),
        ("csv_doubled", r"two readings of one moment, GPU and metric \(time column "
                        r"(?P<time>[^,]*), GPU column (?P<gpu>[^)]*)\)"),
        ("doubled", r"two readings of GPU (?P<gpu>\d+) (?P<metric>\S+) at (?P<t>\S+) s "
                    r"\(columns (?P<columns>[^)]*)\)"),
        ("dmon_repeat", r"GPU (?P<gpu>\d+)(?: GI (?P<gi>\d+) CI (?P<ci>\d+))? repeats within "
                        r"one dmon cycle"),
        ("two_uuids", r"gpu label (?P<gpu>\d+) names two devices \(UUID (?P<a>\S+) and "
                      r"(?P<b>[^)]*)\)"),
        ("mig_no_gi", r"a MIG device without a GPU_I_ID label on gpu (?P<gpu>\d+)"),
        # row level (also the reasons of unreadable rows)
        ("cells", r"(?P<n>\d+) cells, the header has (?P<width>\d+)$"),
        ("cells_expected", r"(?P<n>\d+) cells, expected (?P<width>\d+)$"),
        ("timestamp", r"timestamp not in a known format: (?P<value>.*)$"),
        ("index", r"index (?P<value>.*) is not an integer$"),
        ("gpu_time", r"bad gpu index or date/time$"),
        ("prom_sample", r"not a Prometheus sample"),
        ("no_gpu_label", r"(?P<name>\S+): no gpu label$"),
        ("gpu_label", r"(?P<name>\S+): gpu label (?P<value>.*) is not an integer$"),
        ("unit_mismatch", r"(?P<field>\S+): unit (?P<unit>.*) but the header says (?P<header>.*)$"),
        ("unit_unfit", r"(?P<field>\S+): unit (?P<unit>.*) does not fit (?P<want>\S+)$"),
        ("not_number", r"(?P<field>\S+): not a number: (?P<value>.*)$"),
        ("unknown_status", r"unknown status (?P<value>.*)$"),
        ("tidy_row", r"timestamp_s must be finite and gpu >= 0"),
    ))
#: Reader error kinds whose sentence nests another message (translated in turn).
_NESTED = {"rows_unreadable": "first"}
_PLACE = re.compile(r"^(?P<file>[^\n:]+?)(?:, line (?P<line>\d+))?: (?P<rest>.*)$", re.S)


#: Names the readers give text without a file (``"<text>"``, ``"<buffer>"``): not shown.
_NO_NAME = re.compile(r"^<[\w ]*>$")


def place_text(source: str, line: int | None) -> str:
    """Return a file and line in Korean: ``"f.csv 2번째 줄"``, or the file alone (plain text).

    Text without a file name (the readers' ``"<text>"``, ``"<buffer>"``) is "the log".
    """
    if _NO_NAME.match(source):
        source = t("observe.reader.no_name")
    return t("observe.reader.place_line", file=source, line=line) if line else source


def metric_label(metric: str) -> str:
    """Return a metric's Korean label as lesson 01 shows it (``power_usage_w`` -> ``전력``;
    ``…@mig:gi1:ci0`` -> ``… (MIG GI 1, CI 0)``); a name the catalog lacks is kept."""
    from labkit.i18n import KO

    base, _, mig = metric.partition("@mig:")
    label = KO.get(f"observe.metric.{base}", base)
    if mig:
        parts = dict(re.findall(r"(gi|ci)(\d+)", mig))
        label += t("observe.reader.metric_mig", gi=parts.get("gi", "-"), ci=parts.get("ci", "-"))
    return label


def _split_place(message: str, sources: Sequence[str]) -> tuple[str | None, int | None, str]:
    """Return (file, line, rest) of ``"<file>[, line <n>]: <rest>"``; the file is one of
    ``sources`` when given (a file name may hold ": "), else the text before the first ": "."""
    for source in sources:
        m = re.match(re.escape(source) + r"(?:, line (\d+))?: (.*)$", message, re.S)
        if m:
            return source, int(m.group(1)) if m.group(1) else None, m.group(2)
    m = _PLACE.match(message)
    if m:
        return m.group("file"), int(m.group("line")) if m.group("line") else None, m.group("rest")
    return None, None, message


def row_reason_text(reason: str) -> str:
    """Return one reader reason (a message without its place) in Korean (plain text).

    Parameters
    ----------
    reason : str
        The English reason a reader gives (an unreadable row's ``UnparsedRow.reason``, or the
        rest of an error message after ``"<file>, line <n>: "``).
    """
    for key, pattern in READER_PATTERNS:
        m = pattern.search(reason)
        if m is None:
            continue
        values = {k: v.strip()[:80] for k, v in m.groupdict().items() if v is not None}
        if "metric" in values:
            values["metric"] = metric_label(values["metric"])
        if key == "dmon_repeat":
            values["device"] = t("observe.reader.mig_device", gpu=values["gpu"],
                                 gi=values["gi"], ci=values["ci"]) if "gi" in values else \
                t("observe.reader.gpu_device", gpu=values["gpu"])
        nested = _NESTED.get(key)
        if nested is not None:
            values[nested] = row_reason_text(m.group(nested))
        return t(f"observe.reader.{key}", **values)
    return t("observe.reader.other")


def _detail(message: str, sources: Sequence[str]) -> str:
    source, line, rest = _split_place(message, sources)
    if source is not None:
        again, inner_line, inner = _split_place(rest, (source,))
        if again == source:  # "f.csv, line 1: f.csv: ..." (a reader wrapping another)
            line, rest = line or inner_line, inner
    text = row_reason_text(rest)
    if source is None:
        return text
    return t("observe.reader.at", place=place_text(source, line), reason=text)


def reader_error_text(err: ValueError, *, source: str | None = None) -> str:
    """Return a reader's error as Korean text: where (file and line) and what, no English.

    Parameters
    ----------
    err : ValueError
        A reader's error (``LogError`` or a plain ``ValueError``).
    source : str, optional
        The file's name as the reader was given it (helps read a name that holds ": ").

    Returns
    -------
    str
        Plain Korean text (the panel escapes it), e.g.
        ``"f.csv 2번째 줄: 데이터 행 2개 중 2개를 읽을 수 없습니다 …"``.
    """
    names = [s for s in (source, getattr(err, "source", None)) if s]
    return _detail(str(err), names)
