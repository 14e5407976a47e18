"""Exit tickets (나가기 전 확인): two short questions at the end of every lesson.

Each ticket question is an :class:`~labkit.ui.exercises.Exercise` (catalog ``exit.NN.<name>.q``,
``.hint``, ``.explain``) shown, checked and recorded exactly as the lesson's exercises are
(:func:`labkit.ui.exercises.exercise_set`: the typed answer read in its unit, ✔/✘, the record in
the student's progress file), so the class page lists them per student
(:func:`labkit.hub.results.known_exercises` knows ``exit.NN.*``) and sums them up per question
(:func:`labkit.hub.tickets.ticket_summary`). Answers come from the models, never typed by hand;
the inputs of each question are the literals of its catalog text, named here.

Used in: notebooks/01-09 (``ui.exit_ticket.lesson("03")``), docs/answer-key.md
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets

from labkit.ui.exercises import Exercise, exercise_set

__all__ = ["TICKETS", "lesson", "questions"]

# The inputs the ticket questions state (each is in the question's catalog text).
#: 01: a 1 s window in which a one-thread kernel ran for 0.5 s. [s]
BUSY_S, WINDOW_S = 0.5, 1.0
#: 06: an 8-GPU system's and a 1-GPU result's throughput [tokens/s]; a claim measured at FP4
#: against FP8 and the theoretical gain of one precision step.
SYSTEM_TOKENS_S, SYSTEM_GPUS, ONE_GPU_TOKENS_S = 40_000.0, 8, 10_000.0
CLAIMED_X, PRECISION_GAIN = 3.0, 2.0
#: 07: a 20 kW load for a 720 h month; a utilization of 25 %.
LOAD_KW, MONTH_H, UTIL_07 = 20.0, 720.0, 0.25
#: 09: a server's and the rented equivalent's yearly cost [KRW]; a utilization of 20 %.
BUY_KRW, RENT_KRW, UTIL_09 = 100_000_000.0, 80_000_000.0, 0.20


def _tickets_01() -> list[Exercise]:
    from labkit.observe.signals import POWER_LOW_FRAC

    return [Exercise("exit.01.util_share", BUSY_S / WINDOW_S * 100, 0.5, "%"),
            Exercise("exit.01.power_rule", POWER_LOW_FRAC * 100, 0.5, "%")]


def _tickets_02() -> list[Exercise]:
    from labkit import mig
    from labkit.mig import Layout
    from labkit.ui.mig.board import DEFAULT_MODEL

    after_4g = Layout(DEFAULT_MODEL)
    after_4g.place("4g.40gb")
    return [Exercise("exit.02.class_gpus",
                     len(mig.pack_profiles(DEFAULT_MODEL, ["1g.10gb"] * 28)), 0, "장"),
            Exercise("exit.02.beside_4g", after_4g.free_capacity()["3g.40gb"][0], 0, "개")]


def _tickets_03() -> list[Exercise]:
    from labkit import goodput

    return [Exercise("exit.03.ledger", goodput.Worksheet(720, {"all": 72}).goodput * 100,
                     0.051, "%"),
            Exercise("exit.03.factor", goodput.hardware_factor(0.60, 0.90), 0.0006, "배")]


def _tickets_04() -> list[Exercise]:
    from labkit import reliability

    return [Exercise("exit.04.cluster_mtbf", reliability.job_mtbf_h(8_000, 80_000), 0.05, "h"),
            Exercise("exit.04.young", reliability.young_interval(2, 100), 0.5, "분")]


def _tickets_05() -> list[Exercise]:
    from labkit.ui.economics.tables import lesson_defaults, scenario_from_defaults

    c = scenario_from_defaults(lesson_defaults()).cluster()
    return [Exercise("exit.05.full", c.cost_per_gpu_hour(1.0), 30.0, "원"),
            Exercise("exit.05.half", c.cost_per_gpu_hour(0.5), 30.0, "원")]


def _tickets_06() -> list[Exercise]:
    return [Exercise("exit.06.per_chip", ONE_GPU_TOKENS_S / (SYSTEM_TOKENS_S / SYSTEM_GPUS),
                     0.01, "배"),
            Exercise("exit.06.precision", CLAIMED_X / PRECISION_GAIN, 0.01, "배")]


def _tickets_07() -> list[Exercise]:
    return [Exercise("exit.07.energy", LOAD_KW * MONTH_H, 1.0, "kWh"),
            Exercise("exit.07.idle_ratio", 1 / UTIL_07, 0.06, "배")]


def _tickets_08() -> list[Exercise]:
    from labkit import scheduling as model
    from labkit.data.scheduling import load_cluster

    one = load_cluster(1, 1, "A100-80GB")
    four = [model.Job(f"S{k}", 0, 1, 1, "class_lab") for k in range(1, 5)]
    return [Exercise("exit.08.fifo", model.simulate(four, one).mean_jct_h, 0.01, "h"),
            Exercise("exit.08.fair_share", model.fair_share_factor(0.5, 0.25), 0.0006)]


def _tickets_09() -> list[Exercise]:
    return [Exercise("exit.09.buy_vs_rent", (BUY_KRW / RENT_KRW - 1) * 100, 0.5, "%"),
            Exercise("exit.09.idle_ratio", 1 / UTIL_09, 0.06, "배")]


#: Each lesson's exit-ticket questions, built when asked (the models compute the answers).
TICKETS: dict[str, Callable[[], list[Exercise]]] = {
    "01": _tickets_01, "02": _tickets_02, "03": _tickets_03, "04": _tickets_04,
    "05": _tickets_05, "06": _tickets_06, "07": _tickets_07, "08": _tickets_08,
    "09": _tickets_09,
}


def questions(lesson_id: str) -> list[Exercise]:
    """Return lesson ``lesson_id``'s exit-ticket questions (answers from the models).

    Raises
    ------
    KeyError
        If the lesson has no exit ticket.
    """
    return TICKETS[lesson_id]()


def lesson(lesson_id: str) -> widgets.VBox:
    """Return lesson ``lesson_id``'s exit ticket: its questions as the lesson's exercises are
    shown (answer box, 확인, feedback, the record for the class page).

    Raises
    ------
    KeyError
        If the lesson has no exit ticket.

    Used in: notebooks/01-09
    """
    box = exercise_set(questions(lesson_id))
    box.add_class("lk-exit-ticket")
    return box
