"""The capstone: 우리 학교 decides buy / rent / API and how the class shares the GPUs (pure).

From the school case (:class:`labkit.school.SchoolCase`), its server, tariff and calendar:

- **buy**: lesson 07's room model (:func:`labkit.opex.evaluate`): a year of the school's own
  server, capital + electricity (the 12 KEPCO bills) + staff + maintenance + facility;
- **rent**: renting the GPU-hours that make the same output tokens (lesson 05's
  :func:`labkit.economics.rent_cost_krw`, at the case's USD/GPU-h);
- **API**: buying the same output tokens at the case's blended price
  (:func:`labkit.economics.api_cost_krw`);

and, for one class period, the class's lab jobs on one GPU under each sharing mode of lesson
02 (:func:`labkit.sharing.compare`: whole-GPU FIFO, time-slicing, MPS, MIG with the smallest
profile that holds a job). The decision is the cheapest option and the sharing mode that
finishes every job soonest without an out-of-memory failure.

Used in: notebooks/09_capstone.ipynb
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from labkit import sharing, validate
from labkit.loadprofile import SchoolCalendar
from labkit.mig import Layout
from labkit.opex import OpexResult, RoomDesign, ServerSpec, evaluate
from labkit.school import SchoolCase, class_hours_per_year
from labkit.tariff import Tariff

__all__ = ["ISOLATION", "OPTIONS", "Decision", "ShareChoice", "class_sharing", "decide",
           "mig_layout_for", "room_design", "students_per_gpu"]

#: The three ways to get the school's compute, in the order the lesson shows them.
OPTIONS = ("buy", "rent", "api")
#: Tie-break between sharing modes that finish the class equally soon: the more isolated
#: first (MIG: own memory and fault domain; MPS: shared memory; time-slicing; whole GPU).
ISOLATION = ("mig", "mps", "time_slicing", "fifo")
#: Memory the sharing modes count per GB a student asks for (decimal GB -> MiB).
_MIB_PER_GB = 1e9 / 2**20


def room_design(case: SchoolCase, server: ServerSpec) -> RoomDesign:
    """Return lesson 07's room for the school: its server, PUE, contract and prices.

    Staff, maintenance, facility and depreciation keep lesson 07's teaching defaults
    (:class:`labkit.opex.RoomDesign`); the rent and API prices are the case's, in won.

    Raises
    ------
    labkit.validate.InputError
        From :class:`~labkit.opex.RoomDesign` (e.g. a server with fewer GPUs than 1).
    """
    fx = case.fx_krw_per_usd
    spec = replace(server, server_capex_krw=case.server_price_krw,
                   gpus_per_server=case.n_gpus)
    return RoomDesign(spec, n_servers=1, pue=case.pue, idle_frac=case.idle_frac,
                      contract_kw=case.contract_kw, school_exception=case.school_exception,
                      rent_krw_per_gpu_hour=case.rent_usd_per_gpu_hour * fx,
                      api_krw_per_m_tokens=case.api_usd_per_m_tokens * fx)


def students_per_gpu(case: SchoolCase) -> int:
    """The most students of one class on one GPU: ceil(students / GPUs). [students]

    The same number as :attr:`labkit.school.SchoolCase.students_per_gpu` (one rounding rule).
    """
    return case.students_per_gpu


def mig_layout_for(case: SchoolCase, gpu_model: str) -> Layout | None:
    """The MIG layout a teacher would set for the class: as many GIs as fit of the smallest
    profile that holds one student's job (None if the GPU has no MIG or no profile fits).

    Raises
    ------
    labkit.validate.InputError
        If ``gpu_model`` is not a known GPU model.
    """
    try:
        empty = Layout(gpu_model)
    except (ValueError, LookupError):
        return None
    need_mib = case.job_memory_gb * _MIB_PER_GB
    fits = [p for p in empty.spec.profiles if "+" not in p.name and p.memory_mib >= need_mib]
    if not fits:
        return None
    best = min(fits, key=lambda p: (p.compute_slices, p.memory_slices))
    return Layout.from_profiles(gpu_model, [best.name] * best.max_count)


@dataclass(frozen=True)
class ShareChoice:
    """One sharing mode for one class period on one GPU.

    Attributes
    ----------
    mode : {"fifo", "time_slicing", "mps", "mig"}
    makespan_h, mean_wait_h, mean_jct_h : float
        When the last job ends, the mean wait and the mean job completion time. [h]
    oom_jobs : int
        Jobs killed for running out of GPU memory.
    done_jobs : int
        Jobs that finished.
    jobs : int
        Jobs submitted.
    """

    mode: str
    makespan_h: float
    mean_wait_h: float
    mean_jct_h: float
    oom_jobs: int
    done_jobs: int
    jobs: int

    @property
    def ok(self) -> bool:
        """True if every job finished (none ran out of memory or found no slot)."""
        return self.oom_jobs == 0 and self.done_jobs == self.jobs


def class_sharing(case: SchoolCase, gpu_model: str, gpu_memory_mib: float,
                  ) -> tuple[ShareChoice, ...]:
    """Return the class's jobs on one GPU under every sharing mode (lesson 02's model).

    ``students_per_gpu(case)`` identical jobs of ``case.job_memory_gb`` for
    ``case.job_duration_h`` on a whole GPU, all submitted at once; MIG uses
    :func:`mig_layout_for` (no MIG slots when it is None: every MIG job finds no slot).

    Raises
    ------
    labkit.validate.InputError
        For a non-positive ``gpu_memory_mib`` or more jobs than :data:`labkit.sharing.MAX_JOBS`.
    """
    validate.positive("gpu_memory_mib", gpu_memory_mib)
    lay = mig_layout_for(case, gpu_model)
    share = 1.0 / lay.spec.compute_slices if lay is not None else 1.0
    jobs = sharing.class_jobs(students_per_gpu(case), case.job_memory_gb * _MIB_PER_GB,
                              case.job_duration_h, share)
    slots = sharing.mig_slots(lay) if lay is not None else []
    results = sharing.compare(jobs, gpu_memory_mib=gpu_memory_mib, slots=slots)
    out = []
    for mode, r in results.items():
        oom = sum(1 for run in r.runs if run.outcome == "oom")
        done = sum(1 for run in r.runs if run.outcome == "done")
        out.append(ShareChoice(mode, float(r.makespan_h), float(r.mean_wait_h),
                               float(r.mean_jct_h), oom, done, len(jobs)))
    return tuple(out)


@dataclass(frozen=True)
class Decision:
    """What the class decides (see :func:`decide`).

    Attributes
    ----------
    case : SchoolCase
    room : labkit.opex.OpexResult
        The year of the school's own server.
    costs_krw : dict
        Yearly cost of the same work per option (``"buy"``, ``"rent"``, ``"api"``). [KRW/yr]
    cheapest : str
        The option with the lowest yearly cost (ties: the earlier in :data:`OPTIONS`).
    sharing : tuple of ShareChoice
    share_mode : str or None
        The sharing mode that finishes the class soonest with no job lost, the more isolated
        on a tie (:data:`ISOLATION`); None if none does.
    class_share : float
        The class hours' share of the same year: class hours a day x school days / the
        year's hours (lesson 01's figure, 8 h x 190 days / 8,760 h = 17.4 %). [fraction]
    """

    case: SchoolCase
    room: OpexResult
    costs_krw: dict[str, float]
    cheapest: str
    sharing: tuple[ShareChoice, ...]
    share_mode: str | None
    class_share: float = 0.0

    @property
    def utilization(self) -> float:
        """The server's mean utilization over the whole year (8,760 h): class hours, after
        school, vacations and the always-on chatbot together. [fraction]"""
        return self.room.mean_utilization

    @property
    def saving_krw(self) -> float:
        """How much the cheapest option saves a year against the next cheapest. [KRW/yr]"""
        ranked = sorted(self.costs_krw.values())
        return ranked[1] - ranked[0]

    def ranked(self) -> list[tuple[str, float]]:
        """The options cheapest first, ``(option, KRW per year)``."""
        return sorted(self.costs_krw.items(), key=lambda kv: (kv[1], OPTIONS.index(kv[0])))


def _pick_share(choices: tuple[ShareChoice, ...]) -> str | None:
    good = [c for c in choices if c.ok]
    if not good:
        return None
    return min(good, key=lambda c: (round(c.makespan_h, 9), round(c.mean_jct_h, 9),
                                    ISOLATION.index(c.mode))).mode


def decide(case: SchoolCase, server: ServerSpec, tariff: Tariff, calendar: SchoolCalendar,
           *, gpu_model: str | None = None, gpu_memory_mib: float | None = None,
           ) -> Decision:
    """Compare buy / rent / API for the school's year and pick a sharing mode for its class.

    Parameters
    ----------
    case : SchoolCase
    server : labkit.opex.ServerSpec
        The school's server type (``labkit.data.school.server_for_case``).
    tariff : labkit.tariff.Tariff
        The KEPCO class ``case.tariff_class``.
    calendar : labkit.loadprofile.SchoolCalendar
        The school year (the data folder's 2026 school calendar); the case's class hours apply.
    gpu_model : str, optional
        The GPU model for the sharing comparison (default ``case.gpu_model``).
    gpu_memory_mib : float, optional
        One GPU's memory [MiB] (default: the MIG board's full memory, 81,559 MiB for an
        H100-80GB via its GPU model).

    Returns
    -------
    Decision

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        From the models, naming the field.

    Used in: notebooks/09_capstone.ipynb
    """
    cal = replace(calendar, class_start_h=case.class_start_h, class_end_h=case.class_end_h)
    room = evaluate(room_design(case, server), tariff, cal, case.usage)
    costs = {"buy": room.tco_krw, "rent": room.rent_same_work_krw,
             "api": room.api_same_work_krw}
    cheapest = min(OPTIONS, key=lambda k: (costs[k], OPTIONS.index(k)))
    model = gpu_model or case.gpu_model
    memory = gpu_memory_mib
    if memory is None:
        memory = float(Layout(model).model.memory_total_mib)
    choices = class_sharing(case, model, memory)
    share = class_hours_per_year(case, cal.school_days) / (cal.days_in_year * 24)
    return Decision(case, room, costs, cheapest, choices, _pick_share(choices), share)
