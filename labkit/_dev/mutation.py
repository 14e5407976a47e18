"""Mutation testing of the pure model modules with mutmut (``make mutation``; not in ``make test``).

Each module is mutated in its own scratch copy of the project (``build/mutation/<name>/``) with
only the tests that own it, so a run of one module does not pay for every test file (mutmut
reads its settings from ``pyproject.toml`` only: the copy gets a ``[tool.mutmut]`` table of its
own). mutmut then runs, for each mutant, only the tests that reached the mutated function.

Usage::

    python -m labkit._dev.mutation [MODULE ...] [--max-children N]

With no MODULE, every entry of :data:`MODULES`. Prints, per module, killed / total and the
surviving mutants (``mutmut show NAME`` in the scratch folder shows a diff), writes
``build/mutation/summary.json``, and records each module's score (:func:`record`) in
``benchmarks/results/mutation.json`` and the table of ``docs/mutation.md`` (one row per module,
the other rows kept). Mutants listed in :data:`EQUIVALENT` (no input tells them from
the original; each with its reason) are counted apart: the score is killed / (total -
equivalent), and an equivalent that a test kills after all is reported, to be removed.

References
----------
.. [1] mutmut 3 documentation, "Configuration" (``source_paths``, ``only_mutate``,
   ``pytest_add_cli_args_test_selection``) and ``mutmut export-cicd-stats``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "mutation"
RESULTS = ROOT / "benchmarks" / "results" / "mutation.json"
DOC = ROOT / "docs" / "mutation.md"
_TABLE_HEAD = ("| module | mutants | killed | equivalent | survived | no test | score | date | "
               "commit | command |")

#: Model module -> (files to mutate, the tests that own it).
MODULES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "goodput": (("labkit/goodput.py",), ("tests/test_goodput.py",)),
    "tariff": (("labkit/tariff/*",), ("tests/test_tariff.py",)),
    "economics": (("labkit/economics/*",), ("tests/test_economics.py",)),
    "benchmarks": (("labkit/benchmarks/*",), ("tests/test_benchmarks.py",)),
    "opex": (("labkit/opex/*",), ("tests/test_opex.py",)),
    "reliability": (("labkit/reliability/*",), ("tests/test_reliability.py",)),
    "mig": (("labkit/mig/*",), ("tests/test_mig.py", "tests/test_mig_placement.py",
                                "tests/test_mig_oracle.py", "tests/test_mig_check.py")),
    # lesson 02's planning alone (the layouts a GPU allows and the plans built on them): the
    # part of "mig" a run fits in when time is short
    "mig_planning": (("labkit/mig/layout.py", "labkit/mig/planning.py"),
                     ("tests/test_mig.py", "tests/test_mig_placement.py",
                      "tests/test_mig_oracle.py", "tests/test_mig_check.py")),
    "scheduling": (("labkit/scheduling/*",), ("tests/test_scheduling.py",)),
    "sharing": (("labkit/sharing.py", "labkit/scheduling/one_gpu.py"),
                ("tests/test_sharing.py",)),
}

_ZIP_SAME_LENGTH = ("keys and demand hold one entry per month (demand is reduced over the same "
                    "month starts), so strict=True never fires")

_MIG_EQUIVALENT = {
    "labkit.mig.layout.xǁLayoutǁcheck__mutmut_105":
        "PlacementCheck.message defaults to \"\": dropping message=\"\" builds the same check",
}

#: Module -> {mutant name: why no input can tell it from the original}. Only true equivalents
#: (the same result for every input), never "hard to test"; a mutant name is mutmut's
#: (``labkit.tariff.bill.x_monthly_bill__mutmut_12``), so an entry follows the code it names.
EQUIVALENT: dict[str, dict[str, str]] = {
    "tariff": {
        "labkit.tariff.bill.x__holiday_days__mutmut_2":
            "holidays are int timestamps, so numpy picks int64 anyway; an empty set gives an "
            "empty float array, which np.isin matches against nothing either way",
        "labkit.tariff.bill.x__holiday_days__mutmut_4": "as _holiday_days__mutmut_2",
        "labkit.tariff.bill.x__bands__mutmut_10":
            "day_ns is a whole number of days in ns (< 2**53), so day_ns / 86.4e12 is that "
            "integer exactly; % 7 and the == tests give the same weekday",
        "labkit.tariff.bill.x__month_demand__mutmut_12":
            "step == window: the window branch puts each sample in its own window, so the "
            "window means are the samples themselves",
        "labkit.tariff.bill.x__demand_history__mutmut_34": "zip: " + _ZIP_SAME_LENGTH,
        "labkit.tariff.bill.x__demand_history__mutmut_37": "zip: " + _ZIP_SAME_LENGTH,
        "labkit.tariff.bill.x__demand_history__mutmut_38": "zip: " + _ZIP_SAME_LENGTH,
        "labkit.tariff.bill.x__demand_history__mutmut_57": "zip: " + _ZIP_SAME_LENGTH,
        "labkit.tariff.bill.x__demand_history__mutmut_60": "zip: " + _ZIP_SAME_LENGTH,
        "labkit.tariff.bill.x__demand_history__mutmut_61": "zip: " + _ZIP_SAME_LENGTH,
        "labkit.tariff.bill.x__billing_demand__mutmut_16":
            "back = 0 looks at the month itself, whose demand already starts the maximum",
        "labkit.tariff.bill.x__charges__mutmut_30":
            "a flat tariff's bands share one rate (Tariff refuses otherwise), so column 1 is "
            "column 0",
        "labkit.tariff.bill.x_monthly_bill__mutmut_94":
            "k is a month count >= 0 below 2**53: int(k / 12) == k // 12",
    },
    "reliability": {
        "labkit.reliability.checkpoint.x_young_interval__mutmut_4":
            "allow_zero=None: _cost_and_mtbf only tests `if allow_zero:`, and None is falsy "
            "like False",
        "labkit.reliability.checkpoint.x_daly_interval__mutmut_4": "as young_interval__mutmut_4",
        "labkit.reliability.checkpoint.x_optimal_interval__mutmut_4":
            "as young_interval__mutmut_4",
        "labkit.reliability.checkpoint.x_optimal_interval__mutmut_16":
            "lambertw(z) without k is k=0, the principal branch (scipy.special.lambertw's "
            "default)",
        "labkit.reliability.checkpoint.x__log_expm1__mutmut_2":
            "x + log(-expm1(-x)) and log(expm1(x)) are the same identity, log(e^x - 1), each "
            "to about 1 ulp for every x > 0; the switch at 30 only keeps expm1 from "
            "overflowing near 710, so moving or dropping it changes rounding, not the value",
        "labkit.reliability.checkpoint.x__log_expm1__mutmut_8": "as _log_expm1__mutmut_2 (x >= 30)",
        "labkit.reliability.checkpoint.x__log_expm1__mutmut_9": "as _log_expm1__mutmut_2 (x > 31)",
        "labkit.reliability.month.x_simulate_month__mutmut_62":
            "max(per_trial, 1.000000000001) vs max(per_trial, 1e-12): they differ only for "
            "per_trial < 1.000000000001, where MAX_EVENTS / either is > 1.99e7 > MAX_TRIALS, "
            "so min() gives MAX_TRIALS both ways",
        "labkit.reliability.month.x_simulate_month__mutmut_85":
            "validate.integer's minimum defaults to 0: dropping minimum=0 is the same check",
        "labkit.reliability.month.x_simulate_month__mutmut_105":
            "max(per_trial, 2.0) vs 1.0: they differ only for per_trial < 2, where "
            "floor(_CHUNK_EVENTS / either) >= 500,000 > _CHUNK_TRIALS, so min() gives "
            "_CHUNK_TRIALS both ways",
        "labkit.reliability.month.x__simulate_chunk__mutmut_140":
            "every trial owns >= 1 interval (counts + 1), so trial id size - 1 is present and "
            "bincount already returns size bins without minlength",
        "labkit.reliability.month.x_month_worksheet__mutmut_7": "as simulate_month__mutmut_85",
        "labkit.reliability.tables.x_interruption_shares__mutmut_17":
            "Series.astype(None) is astype(float64): pandas_dtype(None) is float64",
        "labkit.reliability.tables.x_interruption_shares__mutmut_66":
            "as interruption_shares__mutmut_17",
    },
    "economics": {
        "labkit.economics.scenario.x_sensitivity__mutmut_65":
            "numpy reads a sort kind case-insensitively: 'STABLE' is 'stable'",
    },
    "mig_planning": _MIG_EQUIVALENT,
    "mig": _MIG_EQUIVALENT,
    "opex": {
        "labkit.opex.whatif.x_sensitivity__mutmut_100":
            "numpy reads a sort kind case-insensitively: 'STABLE' is 'stable'",
    },
}

#: mutmut's exit codes (mutmut.stats.status_by_exit_code) that count as killed: a failing test
#: (1; 3 for an internal pytest error) or a run past its time limit (36 and SIGXCPU: the mutant
#: made the code loop). 0 is a survivor, 33 a mutant no selected test reaches.
KILLED = {1, 3, 24, -24, 36, 152, 255}
SURVIVED, NOT_REACHED = 0, 33
_TOOL_TABLE = re.compile(r"^\[tool\.mutmut\].*?(?=^\[|\Z)", re.S | re.M)


@dataclass(frozen=True)
class Score:
    """One module's mutation score."""

    module: str
    killed: int
    total: int
    survived: tuple[str, ...]
    not_covered: tuple[str, ...]
    equivalent: tuple[str, ...] = ()
    killed_equivalent: tuple[str, ...] = ()

    @property
    def fraction(self) -> float:
        """Killed / (total - equivalent) (1.0 when there is no other mutant). [fraction]"""
        scored = self.total - len(self.equivalent)
        return self.killed / scored if scored else 1.0


def _pyproject(only: tuple[str, ...], tests: tuple[str, ...]) -> str:
    text = _TOOL_TABLE.sub("", (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return text + (
        "\n[tool.mutmut]\n"
        'source_paths = ["labkit"]\n'
        f"only_mutate = {json.dumps(list(only))}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}\n"
        'pytest_add_cli_args = ["-q", "-x", "-p", "labkit._dev.hypothesis_fast"]\n'
    )


def _scratch(name: str) -> Path:
    only, tests = MODULES[name]
    work = BUILD / name
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    shutil.copytree(ROOT / "labkit", work / "labkit", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    (work / "pyproject.toml").write_text(_pyproject(only, tests), encoding="utf-8")
    # mutmut runs the tests inside work/mutants/; some find data/ beside tests/ (read only)
    (work / "mutants").mkdir()
    (work / "mutants" / "data").symlink_to(ROOT / "data", target_is_directory=True)
    return work


def score(name: str, codes: dict[str, int | None],
          equivalent: dict[str, str] | None = None) -> Score:
    """Score one module from mutmut's exit code per mutant, equivalents counted apart."""
    same = equivalent or {}
    killed = {k for k, c in codes.items() if c in KILLED}
    return Score(name, len(killed), len(codes),
                 tuple(k for k, c in codes.items() if c == SURVIVED and k not in same),
                 tuple(k for k, c in codes.items() if c == NOT_REACHED and k not in same),
                 tuple(k for k in codes if k in same and k not in killed),
                 tuple(sorted(killed & set(same))))


def _score(name: str, work: Path) -> Score:
    codes: dict[str, int | None] = {}
    for meta in sorted((work / "mutants").rglob("*.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return score(name, codes, EQUIVALENT.get(name))


def run(name: str, max_children: int) -> Score:
    """Mutate one module of :data:`MODULES` in its scratch copy and return its score."""
    work = _scratch(name)
    env = {**os.environ, "LABKIT_DATA": str(ROOT / "data"), "PYTHONHASHSEED": "0"}
    with (work / "mutmut.log").open("w", encoding="utf-8") as log:
        done = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)],
            cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"mutmut failed for {name}: see {work / 'mutmut.log'}")
    return _score(name, work)


def _row(s: Score, date: str, commit: str, command: str) -> dict[str, str | int | float]:
    return {"module": s.module, "mutants": s.total, "killed": s.killed,
            "equivalent": len(s.equivalent), "survived": len(s.survived),
            "not_covered": len(s.not_covered), "score": round(s.fraction, 4), "date": date,
            "commit": commit, "command": command}


def _doc_rows(text: str) -> dict[str, list[str]]:
    """The table rows of ``docs/mutation.md`` by module (cells as written)."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 10 and cells[1].isdigit():
            rows[cells[0]] = cells
    return rows


def record(scores: list[Score], command: str, *, doc: Path = DOC, results: Path = RESULTS,
           date: str | None = None, commit: str | None = None) -> None:
    """Record ``scores`` in ``results`` (JSON, by module) and the table of ``doc``.

    Rows of other modules are kept; a module's row is replaced by its newest run. The text
    around the table in ``doc`` is kept (the table is the lines starting with ``|``).
    """
    day = date or dt.date.today().isoformat()
    rev = commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                   capture_output=True, text=True, check=False).stdout.strip()
    old = json.loads(results.read_text(encoding="utf-8")) if results.is_file() else {}
    old.update({s.module: _row(s, day, rev, command) for s in scores})
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    text = doc.read_text(encoding="utf-8") if doc.is_file() else "# Mutation scores\n\n"
    rows = _doc_rows(text)
    for s in scores:
        r = _row(s, day, rev, command)
        rows[s.module] = [s.module, str(s.total), str(s.killed), str(len(s.equivalent)),
                          str(len(s.survived)), str(len(s.not_covered)),
                          f"{s.fraction:.1%}", day, rev, f"`{r['command']}`"]
    table = [_TABLE_HEAD, "|" + "---|" * 10] + [
        "| " + " | ".join(rows[m]) + " |" for m in MODULES if m in rows]
    lines = text.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith("|")]
    start, stop = (at[0], at[-1] + 1) if at else (len(lines), len(lines))
    lines[start:stop] = table
    doc.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the named modules (default: all) and print their scores; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"any of {', '.join(MODULES)}")
    parser.add_argument("--max-children", type=int, default=2)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.modules) - set(MODULES))
    if unknown:
        parser.error(f"unknown module(s) {unknown}; known: {', '.join(MODULES)}")
    scores = [run(m, args.max_children) for m in (args.modules or list(MODULES))]
    for s in scores:
        print(f"{s.module}: {s.killed}/{s.total - len(s.equivalent)} killed ({s.fraction:.1%}); "
              f"{len(s.equivalent)} equivalent of {s.total} mutants")
        for mutant in s.killed_equivalent:
            print(f"  listed as equivalent but killed: {mutant} (remove it from EQUIVALENT)")
        for mutant in s.survived:
            print(f"  survived: {mutant}")
        for mutant in s.not_covered:
            print(f"  no test reaches: {mutant}")
    BUILD.mkdir(parents=True, exist_ok=True)
    (BUILD / "summary.json").write_text(json.dumps(
        [{**asdict(s), "fraction": s.fraction} for s in scores], indent=1), encoding="utf-8")
    record(scores, f"make mutation MODULES={' '.join(s.module for s in scores)} "
                   f"(--max-children {args.max_children})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
