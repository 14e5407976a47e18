"""Derive the small job-size and duration distributions in ``data/scheduling/`` from trace slices.

Run once by hand (the raw traces are not shipped)::

    python -m labkit._dev.derive_traces PHILLY_CSV OPENB_CSV data/scheduling

``PHILLY_CSV`` is the 5,000-job random sample (seed 0) of the Pollux artifact's Philly-derived
``simulator/traces/philly.csv`` (petuum/adaptdl, branch osdi21-artifact, commit de25dcc);
``OPENB_CSV`` is Alibaba's ``cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv``
(alibaba/clusterdata @7a6c496) with columns renamed (``num_gpu``, ``gpu_milli``, ...).
Only aggregates are written: job counts per GPU count, duration quantiles per GPU count, and
pod counts per requested GPU share.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

AS_OF = "2026-11-30"
QUANTILES = np.round(np.linspace(0, 1, 21), 2)
PHILLY_SOURCE = (
    "Microsoft Philly trace (Jeon et al., USENIX ATC'19; CC-BY-4.0) as derived by the Pollux "
    "artifact (Qiao et al., OSDI'21; petuum/adaptdl osdi21-artifact de25dcc "
    "simulator/traces/philly.csv); random 5,000-job sample (pandas random_state=0)"
)
OPENB_SOURCE = (
    "Alibaba GPU cluster trace v2023 'openb' (Weng, Yang et al., USENIX ATC'23; "
    "alibaba/clusterdata @7a6c496 cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv), "
    "all 8,152 pods"
)


def _header(title: str, source: str, license_: str, note: str) -> str:
    return (f"# title: {title}\n# source: {source}\n# license: {license_}\n"
            f"# derived_by: labkit/_dev/derive_traces.py\n# note: {note}\n# as_of: {AS_OF}\n")


def derive(philly_csv: Path, openb_csv: Path, out: Path) -> None:
    """Write philly_job_sizes.csv, philly_durations.csv and alibaba_gpu_shares.csv to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    philly = pd.read_csv(philly_csv)
    philly["duration_h"] = philly["duration_s"] / 3600
    kept = philly[philly["num_gpu"] <= 8]
    dropped = len(philly) - len(kept)
    sizes = kept.groupby("num_gpu").agg(jobs=("job_id", "size"),
                                        gpu_h=("duration_h", "sum"))
    sizes["gpu_h"] *= sizes.index
    sizes["job_frac"] = (sizes["jobs"] / sizes["jobs"].sum()).round(5)
    sizes["gpu_time_frac"] = (sizes["gpu_h"] / sizes["gpu_h"].sum()).round(5)
    note = (f"jobs of 1-8 GPUs ({len(kept)} of {len(philly)}); {dropped} jobs wider than one "
            "8-GPU node dropped")
    lic = "CC-BY-4.0 (Philly trace data); attribute Jeon et al. ATC'19 and Qiao et al. OSDI'21"
    text = _header("Philly job sizes: jobs per GPU count", PHILLY_SOURCE, lic, note)
    text += sizes[["jobs", "job_frac", "gpu_time_frac"]].reset_index().to_csv(index=False)
    (out / "philly_job_sizes.csv").write_text(text, encoding="utf-8")

    rows = []
    for gpus, group in kept.groupby("num_gpu"):
        hours = np.quantile(group["duration_h"], QUANTILES)
        rows += [(int(gpus), float(q), round(float(h), 5)) for q, h in zip(QUANTILES, hours,
                                                                           strict=True)]
    durations = pd.DataFrame(rows, columns=["num_gpu", "quantile", "duration_h"])
    text = _header("Philly job durations: quantiles per GPU count", PHILLY_SOURCE, lic,
                   note + "; duration as given by the Pollux CSV")
    text += durations.to_csv(index=False)
    (out / "philly_durations.csv").write_text(text, encoding="utf-8")

    openb = pd.read_csv(openb_csv)
    one = openb[openb["num_gpu"] == 1]
    shares = (one["gpu_milli"] / 1000).value_counts().sort_index()
    table = pd.DataFrame({"gpu_share": shares.index.round(3), "pods": shares.to_numpy()})
    table["pod_frac"] = (table["pods"] / table["pods"].sum()).round(5)
    note = (f"pods asking for one GPU ({len(one)} of {len(openb)}): requested share of that GPU "
            "(gpu_milli / 1000); share 1.0 = the whole GPU")
    lic = ("no LICENSE file in the trace folder; the alibaba/clusterdata README allows use for "
           "research or study purposes with attribution to Weng, Yang et al. ATC'23")
    text = _header("Alibaba openb: requested GPU share of single-GPU pods", OPENB_SOURCE, lic,
                   note)
    text += table.to_csv(index=False)
    (out / "alibaba_gpu_shares.csv").write_text(text, encoding="utf-8")


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("philly_csv", type=Path)
    parser.add_argument("openb_csv", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    derive(args.philly_csv, args.openb_csv, args.out)


if __name__ == "__main__":
    main()
