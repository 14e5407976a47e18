"""Published tables of interruptions: the arithmetic behind their printed percentages.

Pure.

Used in: notebooks/04_reliability.ipynb
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from labkit import validate


# -- published tables -----------------------------------------------------------------------
def interruption_shares(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """Check a published table of interruption counts and printed percentages.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``interruptions`` (counts, >= 0) and ``printed_pct`` (the percentages as
        printed) [%], plus any others (kept).
    digits : int, default 1
        Decimals the source printed.

    Returns
    -------
    pandas.DataFrame
        The table with ``computed_pct`` = 100 x count / total [%] and ``pct_matches`` (bool:
        ``round(computed_pct, digits) == printed_pct``). ``.attrs`` holds ``total``
        (sum of counts) and ``printed_total_pct`` (sum of printed percentages).

    Raises
    ------
    ValueError
        If a column is missing, or the counts are negative or sum to 0.

    Examples
    --------
    Llama 3 Table 5 (arXiv 2407.21783): 419 interruptions, printed shares summing to 94.9 %, and
    one row that does not match its count (Faulty GPU, 148/419 = 35.3 % printed as 30.1 %).

    Used in: notebooks/04_reliability.ipynb
    """
    for column in ("interruptions", "printed_pct"):
        if column not in table.columns:
            raise validate.InputError(column, "other", None, f"table has no {column!r} column")
    counts = table["interruptions"].astype(float)
    if (counts < 0).any() or counts.sum() <= 0:
        raise validate.InputError("interruptions", "non_negative", counts.min(),
                                  "interruption counts must be >= 0 and sum to more than 0")
    total = float(counts.sum())
    out = table.copy()
    out["computed_pct"] = 100 * counts / total
    scale = 10**digits
    rounded = np.floor(out["computed_pct"] * scale + 0.5) / scale  # half up, as printed
    out["pct_matches"] = np.isclose(rounded, out["printed_pct"].astype(float))
    out.attrs["total"] = total
    out.attrs["printed_total_pct"] = round(float(out["printed_pct"].sum()), 6)
    return out
