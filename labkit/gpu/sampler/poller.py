"""The :class:`Sampler`: probe every GPU, poll it at a rate (on its own thread), degrade per metric.

Used in: notebooks/01_observe.ipynb
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from types import MappingProxyType
from typing import Any

from labkit import validate
from labkit.gpu.sampler.readers import (
    _FIELD_METRICS,
    _FIELD_VALUE_MEMBERS,
    _READERS,
    GPM_METRIC_IDS,
    GPM_MIN_INTERVAL_S,
    MAX_EVENTS_PER_TICK,
    MAX_RATE_HZ,
    REPROBE_S,
    SLOW_INTERVAL_S,
    _address,
    _Device,
    _Gpm,
)
from labkit.observe.catalog import CATALOG
from labkit.observe.history import History, Snapshot
from labkit.observe.readings import (
    STATUS_OF_NVML,
    STICKY_STATUSES,
    Reading,
    Status,
    nvml_error_name,
    status_of_nvml_error,
)

_RUNNING: weakref.WeakSet[Sampler] = weakref.WeakSet()

class Sampler:
    """Poll a connected NVML at a chosen rate into a :class:`History` of :class:`Snapshot`.

    Every NVML call is wrapped: an NVML error becomes a missing :class:`Reading` with its status
    and reason, never an exception out of :meth:`poll`. ``NotSupported``, ``NoPermission`` and
    ``FunctionNotFound`` are remembered per (GPU, metric) and not asked again (capability probe
    once; :meth:`reprobe` clears it). ``GpuIsLost`` marks the GPU lost: its handle is never
    used again; every :data:`REPROBE_S` the sampler asks ``nvmlDeviceGetHandleByIndex`` whether
    it is back. GPM samples are taken at least :data:`GPM_MIN_INTERVAL_S` apart; the slow tier
    (temperature, limits, ECC, row remapping) is read every ``slow_interval_s``.

    Parameters
    ----------
    nv : module
        The NVML module returned by ``labkit.gpu.connect()`` (or any object with its calls).
    metrics : sequence of str, optional
        Keys of :data:`CATALOG` to read (default: all).
    capacity : int, default 3600
        Ticks kept in :attr:`history`.
    clock : callable, default time.monotonic
        Returns seconds; tests pass the simulated lab's virtual clock (``lab.now``).
    slow_interval_s : float, default SLOW_INTERVAL_S
    gpm_min_interval_s : float, default GPM_MIN_INTERVAL_S

    Raises
    ------
    labkit.validate.InputError
        For an unknown metric or a bad interval.

    Notes
    -----
    One lock serialises :meth:`poll`, so a background thread (:meth:`start`) and a direct call
    never interleave their NVML calls; the :class:`History` has its own lock. If NVML cannot
    list the GPUs (not initialised, driver gone), the sampler has no GPUs, :attr:`error` says
    why and :meth:`poll` returns empty snapshots.

    Used in: notebooks/01_observe.ipynb
    """

    def __init__(self, nv: Any, *, metrics: Sequence[str] | None = None, capacity: int = 3600,
                 clock: Callable[[], float] = time.monotonic,
                 slow_interval_s: float = SLOW_INTERVAL_S,
                 gpm_min_interval_s: float = GPM_MIN_INTERVAL_S) -> None:
        keys = tuple(CATALOG) if metrics is None else tuple(metrics)
        for k in keys:
            validate.one_of("metrics", k, CATALOG)
        self.nv = nv
        self.metrics = keys
        self.clock = clock
        self.slow_interval_s = validate.non_negative("slow_interval_s", slow_interval_s)
        self.gpm_min_interval_s = validate.at_most(
            "gpm_min_interval_s", validate.positive("gpm_min_interval_s", gpm_min_interval_s),
            60.0, "60 s")
        if self.gpm_min_interval_s < GPM_MIN_INTERVAL_S:
            raise validate.InputError(
                "gpm_min_interval_s", "at_least", gpm_min_interval_s,
                f"gpm_min_interval_s must be >= {GPM_MIN_INTERVAL_S}", limit=GPM_MIN_INTERVAL_S)
        self._wanted = set(keys)
        self._readers = [(c, tuple(m for m in ms if m in self._wanted), f, CATALOG[ms[0]].tier)
                         for c, ms, f in _READERS if any(m in self._wanted for m in ms)]
        self._gpm_keys = tuple(k for k in GPM_METRIC_IDS if k in self._wanted)
        self._field_keys = tuple(k for k in _FIELD_METRICS if k in self._wanted)
        self._lock = threading.RLock()
        self.error: str | None = None
        self.devices: list[_Device] = []
        self._by_address: dict[int | None, int] = {}
        self._events: Any = None
        self._t0 = clock()
        self._last_start: float | None = None
        self.ticks = 0
        self.last_duration_s = 0.0
        self.last_interval_s: float | None = None
        self._enumerate()
        self.history = History([d.index for d in self.devices], keys, capacity,
                               lock=threading.Lock())
        # background thread state
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._rate_hz = 1.0
        self.stopped_reason: str | None = None
        self.callback_error: BaseException | None = None

    # -- setup ----------------------------------------------------------------------------------
    def _call(self, name: str, *args: Any) -> Any:
        return getattr(self.nv, name)(*args)

    def _is_nvml_error(self, err: BaseException) -> bool:
        base = getattr(self.nv, "NVMLError", None)
        return isinstance(base, type) and isinstance(err, base)

    def _enumerate(self) -> None:
        try:
            count = int(self._call("nvmlDeviceGetCount"))
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            self.error = nvml_error_name(err)
            return
        for i in range(count):
            dev = _Device(i, None)
            try:
                dev.handle = self._call("nvmlDeviceGetHandleByIndex", i)
                name = self._call("nvmlDeviceGetName", dev.handle)
                dev.name = name.decode() if isinstance(name, bytes) else str(name)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                if dev.handle is None:  # no handle: unreachable until a reprobe finds it
                    status = status_of_nvml_error(err)
                    dev.lost = Reading.missing(
                        status if status is not Status.ERROR else Status.GPU_LOST,
                        nvml_error_name(err))
            self.devices.append(dev)
            self._probe(dev)
        self._by_address = {_address(d.handle): d.index for d in self.devices
                             if d.handle is not None}
        self._register_events()

    def _probe(self, dev: _Device) -> None:
        dev.gpm = _Gpm()
        if not self._gpm_keys or dev.lost:
            return
        try:
            support = self._call("nvmlGpmQueryDeviceSupport", dev.handle)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            dev.gpm.supported = Reading.missing(status_of_nvml_error(err), nvml_error_name(err))
            return
        if not getattr(support, "isSupportedDevice", 0):
            dev.gpm.supported = Reading.missing(Status.NOT_SUPPORTED, "GpmNotSupported")

    def _register_events(self) -> None:
        if "xid" not in self._wanted or not self.devices:
            return
        try:
            self._events = self._call("nvmlEventSetCreate")
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            for dev in self.devices:
                dev.xid_registered = Reading.missing(status_of_nvml_error(err),
                                                     nvml_error_name(err))
            return
        mask = getattr(self.nv, "nvmlEventTypeXidCriticalError", 0x8)
        for dev in self.devices:
            if dev.lost:
                continue
            try:
                self._call("nvmlDeviceRegisterEvents", dev.handle, mask, self._events)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                dev.xid_registered = Reading.missing(status_of_nvml_error(err),
                                                     nvml_error_name(err))

    @property
    def gpus(self) -> tuple[int, ...]:
        """Indices of the GPUs sampled."""
        return tuple(d.index for d in self.devices)

    def reprobe(self) -> None:
        """Forget every sticky "not supported" and ask every call again on the next tick."""
        with self._lock:
            for dev in self.devices:
                dev.disabled.clear()
                dev.last_slow_t = -math.inf
                if not dev.lost:
                    self._free_gpm(dev)
                    self._probe(dev)

    def close(self) -> None:
        """Stop the thread and free the GPM samples and the event set (errors ignored)."""
        self.stop()
        with self._lock:
            for dev in self.devices:
                self._free_gpm(dev)
            if self._events is not None:
                with contextlib.suppress(Exception):
                    self._call("nvmlEventSetFree", self._events)
                self._events = None

    def _free_gpm(self, dev: _Device) -> None:
        for sample in dev.gpm.samples:
            with contextlib.suppress(Exception):
                self._call("nvmlGpmSampleFree", sample)
        dev.gpm = _Gpm(supported=dev.gpm.supported)

    # -- one tick -------------------------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the sampler was created (on its clock). [s]"""
        return self.clock() - self._t0

    def poll(self) -> Snapshot:
        """Read every due metric of every GPU once; record and return the snapshot.

        Never raises an NVML error: each failure is a missing reading with its reason.
        """
        with self._lock:
            start = self.now()
            readings: dict[tuple[int, str], Reading] = {}
            xids = self._drain_events()
            for dev in self.devices:
                self._poll_device(dev, start, readings, xids.get(dev.index))
                if dev.xid and "xid" in self._wanted:  # the last Xid shows even on a lost GPU
                    readings[(dev.index, "xid")] = Reading(dev.xid)
            end = self.now()
            interval = None if self._last_start is None else start - self._last_start
            self._last_start = start
            snap = Snapshot(start, MappingProxyType(readings), end - start, interval)
            self.ticks += 1
            self.last_duration_s = end - start
            self.last_interval_s = interval
            self.history.append(snap)
            return snap

    def _poll_device(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading],
                     xid: float | None) -> None:
        g = dev.index
        if xid is not None:
            dev.xid = xid
        if dev.lost and t - dev.lost_t >= REPROBE_S:
            self._try_revive(dev, t)
        if dev.lost:
            for m in self.metrics:
                out[(g, m)] = dev.lost
            return
        slow_due = t - dev.last_slow_t >= self.slow_interval_s
        if slow_due:
            dev.last_slow_t = t
        if self._read_calls(dev, t, out, slow_due):
            return
        if slow_due and self._field_keys and self._read_fields(dev, t, out):
            return
        if self._gpm_keys and self._read_gpm(dev, t, out):
            return
        if "xid" in self._wanted:
            out[(g, "xid")] = dev.xid_registered or Reading(dev.xid)

    def _read_calls(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading],
                    slow_due: bool) -> bool:
        """Run the reader table's calls due now; return True if the GPU is now lost."""
        for call, metrics, read, tier in self._readers:
            if tier == "slow" and not slow_due:
                continue
            if any(m in dev.disabled for m in metrics):
                for m in metrics:
                    out[(dev.index, m)] = dev.disabled[m]
                continue
            try:
                values = read(self.nv, dev.handle)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                if self._fail(dev, t, metrics, err, out, call):
                    return True
                continue
            for m in metrics:
                out[(dev.index, m)] = Reading(values[m])
        return False

    def _fail(self, dev: _Device, t: float, metrics: Iterable[str], err: BaseException,
              out: dict[tuple[int, str], Reading], call: str) -> bool:
        """Record a failed call; return True if the GPU is now lost."""
        status, name = status_of_nvml_error(err), nvml_error_name(err)
        if status is Status.GPU_LOST:
            self._lose(dev, t, name)
            for m in self.metrics:
                out[(dev.index, m)] = Reading.missing(Status.GPU_LOST, name)
            return True
        reading = Reading.missing(status, name)
        for m in metrics:
            out[(dev.index, m)] = reading
            if status in STICKY_STATUSES:
                dev.disabled[m] = reading
        return False

    def _lose(self, dev: _Device, t: float, reason: str) -> None:
        dev.lost, dev.lost_t = Reading.missing(Status.GPU_LOST, reason), t
        dev.handle = None
        dev.gpm = _Gpm(supported=dev.gpm.supported)  # its samples died with the GPU

    def _try_revive(self, dev: _Device, t: float) -> None:
        dev.lost_t = t
        try:
            handle = self._call("nvmlDeviceGetHandleByIndex", dev.index)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return
        dev.handle, dev.lost = handle, None
        self._by_address[_address(handle)] = dev.index
        dev.disabled.clear()
        dev.last_slow_t = -math.inf
        self._probe(dev)

    def _read_fields(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading]) -> bool:
        keys = [k for k in self._field_keys if k not in dev.disabled]
        for k in self._field_keys:
            if k in dev.disabled:
                out[(dev.index, k)] = dev.disabled[k]
        if not keys:
            return False
        ids = [getattr(self.nv, _FIELD_METRICS[k]) for k in keys]
        try:
            values = self._call("nvmlDeviceGetFieldValues", dev.handle, ids)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return self._fail(dev, t, keys, err, out, "nvmlDeviceGetFieldValues")
        success = getattr(self.nv, "NVML_SUCCESS", 0)
        for k, entry in zip(keys, values, strict=False):
            code = int(entry.nvmlReturn)
            if code != success:
                err_cls = self._error_class(code)
                reading = Reading.missing(STATUS_OF_NVML.get(err_cls, Status.ERROR), err_cls)
                out[(dev.index, k)] = reading
                if reading.status in STICKY_STATUSES:
                    dev.disabled[k] = reading
                continue
            out[(dev.index, k)] = Reading(self._field_value(entry) * CATALOG[k].nvml_scale)
        return False

    def _error_class(self, code: int) -> str:
        mapping = getattr(getattr(self.nv, "NVMLError", None), "_valClassMapping", {})
        cls = mapping.get(code)
        return cls.__name__.removeprefix("NVMLError_") if isinstance(cls, type) else f"code {code}"

    def _field_value(self, entry: Any) -> float:
        kind = int(entry.valueType)
        for const, member in _FIELD_VALUE_MEMBERS.items():
            if getattr(self.nv, const, None) == kind:
                return float(getattr(entry.value, member))
        return float(entry.value.ullVal)

    def _read_gpm(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading]) -> bool:
        g, gpm = dev.index, dev.gpm
        if gpm.supported is not None:
            for k in self._gpm_keys:
                out[(g, k)] = gpm.supported
            return False
        if round(t - gpm.prev_t, 6) < self.gpm_min_interval_s:  # 1 us: float noise
            return False  # too soon: the GPM metrics keep their last reading
        try:
            if gpm.spare is None:
                gpm.spare = self._call("nvmlGpmSampleAlloc")
                gpm.samples.append(gpm.spare)
            self._call("nvmlGpmSampleGet", dev.handle, gpm.spare)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return self._gpm_failed(dev, t, err, out)
        if gpm.prev is None:
            gpm.prev, gpm.prev_t, gpm.spare = gpm.spare, t, None
            for k in self._gpm_keys:
                out[(g, k)] = Reading.missing(Status.PENDING, "GpmWarmup")
            return False
        return self._gpm_metrics(dev, t, out)

    def _gpm_metrics(self, dev: _Device, t: float, out: dict[tuple[int, str], Reading]) -> bool:
        """Get the GPM metrics between the previous and the new sample; True if the GPU is lost."""
        g, gpm = dev.index, dev.gpm
        mg = self.nv.c_nvmlGpmMetricsGet_t()
        mg.version = self.nv.NVML_GPM_METRICS_GET_VERSION
        mg.numMetrics = len(self._gpm_keys)
        mg.sample1, mg.sample2 = gpm.prev, gpm.spare
        for i, k in enumerate(self._gpm_keys):
            mg.metrics[i].metricId = GPM_METRIC_IDS[k]
        try:
            self._call("nvmlGpmMetricsGet", mg)
        except Exception as err:
            if not self._is_nvml_error(err):
                raise
            return self._gpm_failed(dev, t, err, out)
        success = getattr(self.nv, "NVML_SUCCESS", 0)
        for i, k in enumerate(self._gpm_keys):
            metric = mg.metrics[i]
            if int(metric.nvmlReturn) != success:
                name = self._error_class(int(metric.nvmlReturn))
                out[(g, k)] = Reading.missing(STATUS_OF_NVML.get(name, Status.ERROR), name)
            else:
                out[(g, k)] = Reading(float(metric.value) * CATALOG[k].nvml_scale)
        # swap: the new sample starts the next interval
        gpm.prev, gpm.spare, gpm.prev_t = gpm.spare, gpm.prev, t
        return False

    def _gpm_failed(self, dev: _Device, t: float, err: BaseException,
                    out: dict[tuple[int, str], Reading]) -> bool:
        status = status_of_nvml_error(err)
        if status is Status.GPU_LOST:
            return self._fail(dev, t, self._gpm_keys, err, out, "nvmlGpmSampleGet")
        reading = Reading.missing(status, nvml_error_name(err))
        for k in self._gpm_keys:
            out[(dev.index, k)] = reading
        if status in STICKY_STATUSES:
            dev.gpm.supported = reading
        return False

    def _drain_events(self) -> dict[int, float]:
        if self._events is None:
            return {}
        found: dict[int, float] = {}
        for _ in range(MAX_EVENTS_PER_TICK):
            try:
                data = self._call("nvmlEventSetWait", self._events, 0)
            except Exception as err:
                if not self._is_nvml_error(err):
                    raise
                break  # NVMLError_Timeout: nothing (more) queued; other errors: next tick
            index = self._by_address.get(_address(data.device))
            if index is not None:
                found[index] = float(data.eventData)
        return found

    # -- the loop -------------------------------------------------------------------------------
    @property
    def rate_hz(self) -> float:
        """Requested sampling rate. [Hz]"""
        return self._rate_hz

    def set_rate(self, rate_hz: float) -> None:
        """Set the sampling rate (takes effect at the next tick).

        Raises
        ------
        labkit.validate.InputError
            Unless 0 < rate_hz <= :data:`MAX_RATE_HZ`.
        """
        rate = validate.positive("rate_hz", rate_hz)
        self._rate_hz = validate.at_most("rate_hz", rate, MAX_RATE_HZ, "MAX_RATE_HZ")

    def run(self, ticks: int, *, rate_hz: float | None = None,
            sleep: Callable[[float], Any] = time.sleep,
            on_snapshot: Callable[[Snapshot], Any] | None = None) -> list[Snapshot]:
        """Sample ``ticks`` times in the calling thread, pacing with ``sleep``.

        The next tick starts one period after the previous one *started*, or at once if that
        one took longer (never two polls at once, no catch-up burst). Tests pass the virtual
        clock's ``lab.advance`` as ``sleep``.

        Raises
        ------
        labkit.validate.InputError
            For a bad ``ticks`` (0..100,000) or rate.
        """
        n = validate.integer("ticks", ticks, minimum=0)
        validate.at_most("ticks", n, 100_000, "100,000")
        if rate_hz is not None:
            self.set_rate(rate_hz)
        out: list[Snapshot] = []
        for i in range(n):
            tick_start = self.now()
            snap = self.poll()
            out.append(snap)
            if on_snapshot is not None:
                on_snapshot(snap)
            if i < n - 1:
                wait = tick_start + 1.0 / self._rate_hz - self.now()
                if wait > 0:
                    sleep(wait)
        return out

    @property
    def running(self) -> bool:
        """Whether the background thread is sampling."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, rate_hz: float | None = None, *, max_run_s: float | None = 600.0,
              on_snapshot: Callable[[Snapshot], Any] | None = None) -> None:
        """Sample on a background (daemon) thread until :meth:`stop` or ``max_run_s``.

        Parameters
        ----------
        rate_hz : float, optional
            New rate (0 < rate <= :data:`MAX_RATE_HZ`). [Hz]
        max_run_s : float or None, default 600
            Stop by itself after this long (a forgotten dashboard does not poll forever);
            :attr:`stopped_reason` is then ``"max_run"``. None: until stopped. [s]
        on_snapshot : callable, optional
            Called on the sampler thread after each tick (a widget refresh). If it raises, the
            thread stops and :attr:`callback_error` keeps the exception.

        Starting a running sampler only changes its rate.
        """
        if rate_hz is not None:
            self.set_rate(rate_hz)
        if max_run_s is not None:
            validate.positive("max_run_s", max_run_s)
        if self.running:
            return
        self._stop.clear()
        self.stopped_reason = None
        self.callback_error = None
        thread = threading.Thread(target=self._loop, args=(max_run_s, on_snapshot),
                                  name="labkit-observe-sampler", daemon=True)
        self._thread = thread
        _RUNNING.add(self)
        thread.start()

    def _loop(self, max_run_s: float | None, on_snapshot: Callable[[Snapshot], Any] | None
              ) -> None:
        began = time.monotonic()
        try:
            while not self._stop.is_set():
                tick_start = time.monotonic()
                snap = self.poll()
                if on_snapshot is not None:
                    try:
                        on_snapshot(snap)
                    except Exception as err:  # a broken widget must not leave a zombie loop
                        self.callback_error = err
                        self.stopped_reason = "callback_error"
                        return
                now = time.monotonic()
                if max_run_s is not None and now - began >= max_run_s:
                    self.stopped_reason = "max_run"
                    return
                wait = tick_start + 1.0 / self._rate_hz - now
                if wait > 0 and self._stop.wait(wait):
                    break
            self.stopped_reason = "stopped"
        finally:
            _RUNNING.discard(self)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the background thread and wait (up to ``timeout_s``) for it to end."""
        thread = self._thread
        self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
        if thread is not None and not thread.is_alive():
            self._thread = None
        _RUNNING.discard(self)


def stop_all() -> None:
    """Stop every running sampler (at interpreter exit, and for tests)."""
    for sampler in list(_RUNNING):
        sampler.stop()


