"""Read DCGM series from a Prometheus server (lesson 01's live source) into the tidy frame.

:func:`read_prometheus` asks Prometheus' HTTP API for a range query of every DCGM family
lesson 01 knows (``POST /api/v1/query_range``; one request, a ``__name__`` regex over the
families) and returns the same :class:`labkit.observe.LogImport` the dcgm-exporter file reader
gives: DCGM fields become :data:`labkit.observe.CATALOG` metrics in labkit's units (the
catalog's ``dcgm_field`` / ``dcgm_scale``: ``DCGM_FI_DEV_GPU_UTIL`` % -> fraction, energy mJ ->
J, profiling ratios as they are), the other families (``DCGM_FI_DEV_FB_FREE``,
``DCGM_FI_DEV_MEM_CLOCK``) keep their DCGM name, and DCGM's blank sentinels become missing
readings with the reason "DCGM blank".

Series are told apart by the ``gpu`` label and, when several servers report to one Prometheus,
the ``Hostname`` (else ``instance``) label: GPUs are then numbered host by host. A MIG device
(a ``GPU_I_ID`` label) is its own series: it is numbered after the GPUs, and its ``devices``
entry keeps ``GPU_I_PROFILE``, ``GPU_I_ID``, ``parent_gpu`` and a ``name`` such as
``"NVIDIA H100 80GB HBM3 MIG 1g.10gb (GPU 0, GI 9)"``; ``metadata["mig_devices"]`` counts them.

API reference: https://prometheus.io/docs/prometheus/latest/querying/api/ (range queries,
``resultType`` ``matrix``, error format ``{"status": "error", "errorType", "error"}``, 400 for
bad parameters, 422 for a query that cannot run, 503 for a timeout); Prometheus refuses more
than 11,000 points per series (``promql/engine.go`` / ``web/api/v1/api.go``: "exceeded maximum
resolution of 11,000 points per timeseries"), checked here before asking.

Used in: notebooks/01_observe.ipynb (through labkit.ui.observe_live)
"""

from __future__ import annotations

import io
import json
import math
import re
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from labkit.observe import CATALOG, DCGM_ALIASES, FRAME_COLUMNS, LogImport, Status
from labkit.observe.dcgm_blanks import (
    DCGM_BLANK_KINDS,
    DCGM_FP64_BLANK,
    DCGM_INT32_BLANK,
    blank_reason,
)
from labkit.observe.dcgm_blanks import DCGM_INT64_BLANK as _DCGM_INT64_BLANK

__all__ = [
    "MAX_POINTS_PER_SERIES",
    "MAX_RESPONSE_BYTES",
    "PrometheusError",
    "dcgm_families",
    "parse_step",
    "read_prometheus",
    "read_query_range",
    "to_unix_s",
]

#: Prometheus' own limit on points per series in a range query (``web/api/v1/api.go``).
MAX_POINTS_PER_SERIES = 11_000
#: Largest response read (24 h at 15 s of 8 GPUs x 27 families is about 40 MB). [bytes]
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
#: Seconds to wait for the server.
TIMEOUT_S = 30.0
#: DCGM blank sentinels as float64 (a Prometheus server stores float64, so the four int64
#: sentinels all read as 2**63 there); the one definition is :mod:`labkit.observe.dcgm_blanks`
#: (DCGM's ``dcgm_structs.h``).
DCGM_INT64_BLANK = float(_DCGM_INT64_BLANK)
_BLANK_REASONS = {offset: (status, blank_reason(kind))
                  for offset, (status, kind) in DCGM_BLANK_KINDS.items()}
#: Families the exporter serves that are not catalog metrics (they keep the DCGM name).
EXTRA_FAMILIES = ("DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_MEM_CLOCK")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)?$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0,
           "y": 31536000.0, None: 1.0}


class PrometheusError(ValueError):
    """A Prometheus source that cannot be read; ``kind`` says why (the UI words it in Korean).

    Attributes
    ----------
    kind : {"bad_url", "bad_window", "too_many_points", "unreachable", "unauthorized",
            "not_prometheus", "exporter", "query_failed", "empty"}
        The headline (catalog ``observe.live.error.<kind>``).
    detail : str
        The particular case (catalog ``observe.live.why.<detail>``, a Korean detail line).
    params : dict of str to str
        What the detail line echoes (the typed value, the HTTP status, ...).

    The message (``str(err)``) stays English, for logs and tracebacks.
    """

    def __init__(self, kind: str, message: str, *, detail: str | None = None,
                 **params: object) -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail or kind
        self.params = {k: str(v) for k, v in params.items()}


def dcgm_families() -> dict[str, tuple[str, str, float]]:
    """Return DCGM family name -> (labkit metric, unit, scale), aliases included.

    Built from :data:`labkit.observe.CATALOG` (``dcgm_field``, ``unit``, ``dcgm_scale``) and
    :data:`labkit.observe.DCGM_ALIASES`; :data:`EXTRA_FAMILIES` map to themselves, unit ``""``.
    """
    out = {m.dcgm_field: (m.key, m.unit, m.dcgm_scale) for m in CATALOG.values()
           if m.dcgm_field}
    for alias, name in DCGM_ALIASES.items():
        if name in out and alias not in out:
            out[alias] = out[name]
    for name in EXTRA_FAMILIES:
        out.setdefault(name, (name, "", 1.0))
    return out


def parse_step(step: str | float) -> float:
    """Return a query step in seconds: a number, or a Prometheus duration (``"15s"``, ``"1m"``).

    Raises
    ------
    PrometheusError
        ``kind="bad_window"`` for anything else or a step that is not > 0.
    """
    if isinstance(step, (int, float)) and not isinstance(step, bool):
        value = float(step)
    else:
        match = _DURATION.match(str(step).strip())
        if not match:
            raise PrometheusError("bad_window", f"step {step!r} is not a duration like 15s or 1m",
                                  detail="bad_step", value=step)
        value = float(match.group(1)) * _UNIT_S[match.group(2)]
    if not math.isfinite(value) or value <= 0:
        raise PrometheusError("bad_window", f"step must be > 0, got {step!r}",
                              detail="step_not_positive", value=step)
    return value


def to_unix_s(when: datetime | float | str, name: str = "time") -> float:
    """Return a time as Unix seconds: a datetime (naive = local time), a number, or ISO 8601.

    Raises
    ------
    PrometheusError
        ``kind="bad_window"`` for anything else (the message names ``name``).
    """
    if isinstance(when, datetime):
        return when.timestamp()  # naive: local time, as datetime.timestamp() reads it
    if isinstance(when, (int, float)) and not isinstance(when, bool):
        value = float(when)
    else:
        try:
            value = datetime.fromisoformat(str(when).strip().replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise PrometheusError("bad_window", f"{name} {when!r} is not a time (ISO 8601 or "
                                  "Unix seconds)", detail=f"bad_time.{_time_name(name)}",
                                  value=when) from None
    if not math.isfinite(value):
        raise PrometheusError("bad_window", f"{name} {when!r} is not a time",
                              detail=f"bad_time.{_time_name(name)}", value=when)
    return value


def _time_name(name: str) -> str:
    return name if name in ("start", "end") else "time"


def _window(start: datetime | float | str, end: datetime | float | str, step: str | float
            ) -> tuple[float, float, float]:
    t0, t1, dt = to_unix_s(start, "start"), to_unix_s(end, "end"), parse_step(step)
    if not t1 > t0:
        raise PrometheusError("bad_window", "end must be after start",
                              detail="end_before_start")
    points = math.floor((t1 - t0) / dt) + 1
    if points > MAX_POINTS_PER_SERIES:
        raise PrometheusError(
            "too_many_points", f"{points:,} points per series (window / step) is more than "
            f"Prometheus' {MAX_POINTS_PER_SERIES:,}: choose a larger step or a shorter window",
            detail="too_many_points", points=f"{points:,}", limit=f"{MAX_POINTS_PER_SERIES:,}")
    return t0, t1, dt


def _base_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise PrometheusError("bad_url", f"{url!r} is not an http(s) URL of a Prometheus server",
                              value=url)
    path = parts.path.rstrip("/")
    for suffix in ("/api/v1/query_range", "/api/v1/query", "/graph"):
        path = path.removesuffix(suffix)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _error_text(body: bytes) -> str:
    try:
        doc = json.loads(body)
        return f"{doc.get('errorType', '')}: {doc.get('error', '')}".strip(": ")
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace").strip()


#: HTTP statuses an exporter (not Prometheus) answers to ``POST /api/v1/query_range``:
#: prometheus_client's server (labkit's exporter) refuses any method but GET/HEAD with 405;
#: a Prometheus API never answers 405 or 501 there.
EXPORTER_STATUSES = (405, 501)
#: dcgm-exporter's default port (``--address :9400``, NVIDIA/dcgm-exporter README): a 404 there
#: is an exporter too.
DCGM_EXPORTER_PORT = 9400


def _http_error(url: str, err: urllib.error.HTTPError) -> PrometheusError:
    text = _error_text(err.read(4096))
    code = err.code
    if code in (401, 403):
        return PrometheusError("unauthorized", f"{url}: HTTP {code}: the server wants a "
                               "(different) bearer token", code=code)
    port = urllib.parse.urlsplit(url).port
    if code in EXPORTER_STATUSES or (code == 404 and port == DCGM_EXPORTER_PORT):
        return PrometheusError("exporter", f"{url}: HTTP {code}: this is a metrics exporter "
                               "(dcgm-exporter, labkit's exporter), not Prometheus; use the "
                               "Prometheus address (usually :9090)", code=code, url=url)
    if code == 404:
        return PrometheusError("not_prometheus", f"{url}: HTTP 404: no Prometheus API there",
                               detail="http_404", url=url)
    if "maximum resolution" in text:
        return PrometheusError("too_many_points", f"{url}: {text}", detail="server_points",
                               text=text[:200])
    return PrometheusError("query_failed", f"{url}: HTTP {code}: {text}", detail="http_error",
                           code=code, text=text[:200] or "-")


def _unreachable(url: str, err: OSError) -> PrometheusError:
    reason = getattr(err, "reason", err)
    if isinstance(reason, socket.timeout | TimeoutError):
        detail = "timeout"
    elif isinstance(reason, socket.gaierror):
        detail = "no_such_host"
    elif isinstance(reason, ConnectionRefusedError):
        detail = "refused"
    elif isinstance(reason, ssl.SSLError):
        detail = "tls"
    else:
        detail = "network"
    return PrometheusError("unreachable", f"cannot reach {url}: {reason}",
                           detail=f"unreachable.{detail}", url=url, reason=str(reason)[:200])


def _post(url: str, form: Mapping[str, str], token: str | None, timeout_s: float) -> bytes:
    data = urllib.parse.urlencode(form).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded",
               "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = bytes(response.read(MAX_RESPONSE_BYTES + 1))
    except urllib.error.HTTPError as err:
        raise _http_error(url, err) from None
    except (urllib.error.URLError, OSError) as err:
        raise _unreachable(url, err) from None
    if len(body) > MAX_RESPONSE_BYTES:
        raise PrometheusError("too_many_points", f"{url}: response larger than "
                              f"{MAX_RESPONSE_BYTES:,} bytes: choose a larger step",
                              detail="too_large", limit=f"{MAX_RESPONSE_BYTES // 2**20:,}")
    return body


def read_prometheus(url: str, start: datetime | float | str, end: datetime | float | str,
                    step: str | float = "15s", *, token: str | None = None,
                    timeout_s: float = TIMEOUT_S) -> LogImport:
    """Read the DCGM series of a Prometheus server between ``start`` and ``end``.

    Parameters
    ----------
    url : str
        The server (``http://prometheus.school:9090``; a trailing ``/api/v1/query_range`` or
        ``/graph`` is dropped).
    start, end : datetime, float or str
        The window: a datetime (naive = local time), Unix seconds, or ISO 8601 text.
    step : str or float, default "15s"
        Query resolution: a Prometheus duration or seconds (Prometheus' default scrape
        interval is 1 m; dcgm-exporter collects every 30 s by default). [s]
    token : str, optional
        Sent as ``Authorization: Bearer <token>`` (a Prometheus behind an auth proxy).
    timeout_s : float, default 30
        How long to wait for the server. [s]

    Returns
    -------
    LogImport
        ``format="prometheus"``, ``source`` the URL, ``start`` the first sample's local time,
        ``devices`` the identity labels (``UUID``, ``modelName``, ``Hostname``, ...) per GPU.

    Raises
    ------
    PrometheusError
        A ``ValueError`` whose ``kind`` is ``bad_url``, ``bad_window`` (end not after start,
        a bad step or time), ``too_many_points`` (more than 11,000 per series, or HTTP 422 from
        the server), ``unreachable``, ``unauthorized`` (HTTP 401/403), ``not_prometheus``,
        ``exporter`` (the address of dcgm-exporter or labkit's exporter: HTTP 405/501, or 404
        on port 9400), ``query_failed`` or ``empty`` (no DCGM series in the window); its
        ``detail`` and ``params`` name the case and the value (the panel's Korean detail line).

    Used in: notebooks/01_observe.ipynb
    """
    base = _base_url(url)
    t0, t1, dt = _window(start, end, step)
    names = sorted(dcgm_families())
    query = '{__name__=~"' + "|".join(names) + '"}'
    body = _post(base + "/api/v1/query_range",
                 {"query": query, "start": repr(t0), "end": repr(t1), "step": repr(dt)},
                 token, timeout_s)
    return read_query_range(body, source=base)


def _matrix(body: bytes | str | Mapping[str, Any], source: str) -> list[Any]:
    try:
        doc = json.loads(body) if isinstance(body, (bytes, str)) else body
    except ValueError:
        raise PrometheusError("not_prometheus", f"{source}: the answer is not JSON (not a "
                              "Prometheus API?)", detail="not_json", url=source) from None
    if not isinstance(doc, Mapping) or doc.get("status") != "success":
        text = doc.get("error", "") if isinstance(doc, Mapping) else ""
        raise PrometheusError("query_failed", f"{source}: query failed: {text or doc!r:.200}",
                              detail="server_error", text=str(text or doc)[:200])
    data = doc.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "matrix":
        raise PrometheusError("not_prometheus", f"{source}: not a range-query (matrix) answer",
                              detail="not_matrix", url=source)
    result = data.get("result")
    if not isinstance(result, list):
        raise PrometheusError("not_prometheus", f"{source}: answer has no result list",
                              detail="not_matrix", url=source)
    return result


Series = tuple[Mapping[str, str], np.ndarray, np.ndarray]  # labels, times [s], values

_FAST_HEAD = b'{"status":"success","data":{"resultType":"matrix","result":['
_METRIC, _VALUES = b'{"metric":', b',"values":['


def _series_fast(body: bytes) -> list[Series] | None:
    """Read Prometheus' compact matrix JSON without building a Python object per point.

    A day of 8 GPUs is ~1 million ``[t,"v"]`` pairs: ``json.loads`` alone takes seconds. Here
    only each series' ``metric`` object goes through ``json``; the ``values`` arrays (numbers
    and number strings only, per the API) are rewritten to two-column CSV and read by pandas'
    C parser in one call. Returns None whenever the answer is not exactly that layout (the
    caller then uses ``json``); tests check that both paths agree.
    """
    if not body.startswith(_FAST_HEAD):
        return None
    labels_of: list[dict[str, str]] = []
    chunks: list[bytes] = []
    counts: list[int] = []
    pos = len(_FAST_HEAD)
    while (start := body.find(_METRIC, pos)) >= 0:
        vals = body.find(_VALUES, start)
        if vals < 0 or body.find(_METRIC, start + 1, vals) >= 0:
            return None  # a series without "values" (e.g. native histograms)
        labels = json.loads(body[start + len(_METRIC):vals])
        first = vals + len(_VALUES)
        end = first if body[first:first + 1] == b"]" else body.find(b"]]", first)
        if end < 0 or not isinstance(labels, dict):
            return None
        chunk = body[first:end]
        labels_of.append(labels)
        counts.append(chunk.count(b"],[") + 1 if chunk else 0)
        if chunk:
            chunks.append(chunk.replace(b"],[", b"\n"))
        pos = end
    table = pd.read_csv(io.BytesIO(b"\n".join(chunks).translate(None, b'[]"')), header=None,
                        names=["t", "v"], dtype=float, engine="c") if chunks else pd.DataFrame(
                            {"t": [], "v": []}, dtype=float)
    if len(table) != sum(counts):
        return None
    t, v = table["t"].to_numpy(), table["v"].to_numpy()
    bounds = np.cumsum([0, *counts])
    return [(lab, t[a:b], v[a:b]) for lab, a, b in zip(labels_of, bounds[:-1], bounds[1:],
                                                       strict=True)]


def _series(body: bytes | str | Mapping[str, Any], source: str) -> list[Series]:
    if isinstance(body, str):
        body = body.encode()
    if isinstance(body, bytes):
        try:
            fast = _series_fast(body)
        except (ValueError, UnicodeDecodeError):
            fast = None
        if fast is not None:
            return fast
    out: list[Series] = []
    for s in _matrix(body, source):
        if not isinstance(s, Mapping) or not isinstance(s.get("metric"), Mapping):
            continue
        pairs = s.get("values") or []
        t = np.array([p[0] for p in pairs], dtype=float)
        v = np.array([p[1] for p in pairs], dtype=float)
        out.append((s["metric"], t, v))
    return out


Device = tuple[str, int, str]  # host, gpu label, GPU_I_ID ("" for a whole GPU)


def _host(labels: Mapping[str, str]) -> str:
    return labels.get("Hostname") or labels.get("instance") or ""


def read_query_range(body: bytes | str | Mapping[str, Any], *, source: str = "<prometheus>"
                     ) -> LogImport:
    """Turn a Prometheus ``query_range`` answer (JSON) of DCGM series into a :class:`LogImport`.

    The parsing half of :func:`read_prometheus` (also for a saved answer).

    Raises
    ------
    PrometheusError
        ``not_prometheus`` / ``query_failed`` for an answer that is not a successful matrix,
        ``empty`` when it holds no DCGM sample of a GPU.
    """
    families = dcgm_families()
    series = _series(body, source)
    keep: list[tuple[Device, Mapping[str, str], str, np.ndarray, np.ndarray]] = []
    seen: set[tuple[Device, str]] = set()
    for labels, t, v in series:
        name = str(labels.get("__name__", ""))
        if name not in families or not len(t):
            continue
        try:
            gpu = int(labels.get("gpu", ""))
        except ValueError:
            continue
        dev = (_host(labels), gpu, str(labels.get("GPU_I_ID", "")))
        if (dev, families[name][0]) in seen:  # the same GPU scraped twice (two jobs)
            continue
        seen.add((dev, families[name][0]))
        keep.append((dev, labels, name, t, v))
    if not keep:
        raise PrometheusError("empty", f"{source}: no DCGM samples of a GPU in this window "
                              "(is Prometheus scraping dcgm-exporter or labkit's exporter?)",
                              url=source)
    return _frame(keep, _numbering({k[0] for k in keep}), families, source, len(series))


def _numbering(found: set[Device]) -> dict[Device, int]:
    """Number the devices: one host's GPUs keep their index, several hosts' go host by host;
    MIG devices follow the GPUs (each is its own series, as dcgm-exporter's MIG rows)."""
    whole = sorted(d for d in found if not d[2])
    hosts = {d[0] for d in whole}
    index = {d: (d[1] if len(hosts) == 1 else i) for i, d in enumerate(whole)}
    after = max(index.values(), default=-1) + 1
    mig = sorted(found - set(whole), key=lambda d: (d[0], d[1], int(d[2]) if d[2].isdigit()
                                                    else 0, d[2]))
    index.update({d: after + i for i, d in enumerate(mig)})
    return index


_IDENTITY = ("UUID", "modelName", "pci_bus_id", "device", "Hostname", "instance",
             "DCGM_FI_DRIVER_VERSION", "GPU_I_PROFILE", "GPU_I_ID")


def _frame(keep: list[tuple[Device, Mapping[str, str], str, np.ndarray, np.ndarray]],
           index: Mapping[Device, int], families: Mapping[str, tuple[str, str, float]],
           source: str, n_series: int) -> LogImport:
    devices: dict[int, dict[str, str]] = {}
    metrics = sorted({families[name][0] for _, _, name, _, _ in keep})
    code = {m: i for i, m in enumerate(metrics)}
    units = {families[name][0]: families[name][1] for _, _, name, _, _ in keep}
    for dev, labels, *_ in keep:
        info = devices.setdefault(index[dev], {})
        for label in _IDENTITY:
            if labels.get(label) and label not in info:
                info[label] = str(labels[label])
        if dev[2] and "name" not in info:  # what the replay's GPU list shows
            info["name"] = (f"{labels.get('modelName', '')} MIG {labels.get('GPU_I_PROFILE', '')}"
                            f" (GPU {dev[1]}, GI {dev[2]})").strip()
            info["parent_gpu"] = str(dev[1])
    # series in (GPU, metric) order; then a stable sort by time alone gives the tidy order
    keep = sorted(keep, key=lambda k: (index[k[0]], code[families[k[2]][0]]))
    lengths = np.array([len(t) for *_, t, _ in keep])
    t = np.concatenate([k[3] for k in keep])
    first = float(t.min())
    stamp = np.round(t - first, 3)
    raw = np.concatenate([k[4] for k in keep])
    scale = np.repeat([families[k[2]][2] for k in keep], lengths)
    gpu = np.repeat([index[k[0]] for k in keep], lengths)
    mcode = np.repeat(np.array([code[families[k[2]][0]] for k in keep], dtype=np.int16),
                      lengths)
    grid = keep[0][3]
    if len(set(lengths.tolist())) == 1 and bool(np.all(np.diff(grid) > 0)) and all(
            np.array_equal(k[3], grid) for k in keep):
        # one time grid for every series (a range query's steps): a transpose, no sort
        order = np.arange(len(t)).reshape(len(keep), -1).T.ravel()
    else:
        order = np.argsort(stamp, kind="stable")
    raw, stamp, gpu, mcode = raw[order], stamp[order], gpu[order], mcode[order]
    value, status, reason = _blanks(raw, raw * scale[order])
    # text columns as categoricals (one code per row; the metric's categories sorted, so the
    # rows stay in the tidy order): a day of 8 GPUs is ~1 million rows
    unit_names = sorted({units[m] for m in metrics})
    unit_code = np.array([unit_names.index(units[m]) for m in metrics], dtype=np.int8)
    frame = pd.DataFrame({
        "timestamp_s": stamp, "gpu": gpu.astype(int),
        "metric": pd.Categorical.from_codes(mcode, metrics), "value": value,
        "unit": pd.Categorical.from_codes(unit_code[mcode], unit_names), "status": status,
        "reason": reason}, columns=list(FRAME_COLUMNS))
    meta = {"source": source, "series": str(n_series)}
    mig = sum(1 for d in index if d[2])
    if mig:
        meta["mig_devices"] = str(mig)
    start = datetime.fromtimestamp(first, tz=UTC).astimezone().replace(tzinfo=None)
    return LogImport(frame, source, "prometheus", len(frame), (), start,
                     MappingProxyType({g: MappingProxyType(v) for g, v in devices.items()}),
                     (), MappingProxyType(meta))


#: (status, reason) of a missing reading, by code; code 0 is a reading with a value.
_MISSING: tuple[tuple[str, str], ...] = (
    (str(Status.OK), ""), (str(Status.NOT_AVAILABLE), "no value"),
    (str(Status.NOT_AVAILABLE), blank_reason()),
    *((str(st), why) for st, why in _BLANK_REASONS.values()))


def _blanks(raw: np.ndarray, scaled: np.ndarray) -> tuple[np.ndarray, Any, Any]:
    """Return (value, status, reason): DCGM blank sentinels and NaN become missing readings.

    ``status`` and ``reason`` are categoricals (one int8 code per reading).
    """
    value = scaled.copy()
    code = np.zeros(len(raw), dtype=np.int8)
    code[~np.isfinite(raw)] = 1
    # int64 blanks: a float64 store (Prometheus) cannot tell 0x7ff...f0 from ...f3 apart
    code[raw >= DCGM_INT64_BLANK] = 2
    for base in (DCGM_INT32_BLANK, DCGM_FP64_BLANK):  # exact sentinels keep their kind
        hit = (raw >= base) & (raw < base + len(_BLANK_REASONS)) & (raw == np.floor(raw))
        code[hit] = 3 + (raw[hit] - base).astype(np.int8)
    value[code > 0] = np.nan
    statuses = sorted({st for st, _ in _MISSING})
    reasons = sorted({why for _, why in _MISSING})
    status_of = np.array([statuses.index(st) for st, _ in _MISSING], dtype=np.int8)
    reason_of = np.array([reasons.index(why) for _, why in _MISSING], dtype=np.int8)
    return (value, pd.Categorical.from_codes(status_of[code], statuses),
            pd.Categorical.from_codes(reason_of[code], reasons))
