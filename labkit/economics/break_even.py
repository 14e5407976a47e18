"""API cost, demand and capacity per month, and the owned-vs-API and rent-vs-own break-even points.

Pure; money in KRW.

Used in: notebooks/05_break_even.ipynb
"""

from __future__ import annotations

import math

from labkit import validate
from labkit.economics.cost import HOURS_PER_YEAR, SECONDS_PER_MONTH, TOKENS_PER_M, OwnedCluster

# -- API, demand, break-even --------------------------------------------------------------------

def api_cost_krw(tokens_in: float, tokens_out: float, price_in_krw_per_m: float,
                 price_out_krw_per_m: float) -> float:
    """Return what an API bills for ``tokens_in`` input and ``tokens_out`` output tokens.

    Parameters
    ----------
    tokens_in, tokens_out : float
        Input (prompt) and output (generated) tokens; each >= 0. [tokens]
    price_in_krw_per_m, price_out_krw_per_m : float
        List prices per 1M tokens; each >= 0. [KRW per 1M tokens]

    Returns
    -------
    float
        ``(tokens_in x price_in + tokens_out x price_out) / 1e6``. [KRW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers or negative values.

    Used in: notebooks/05_break_even.ipynb
    """
    t_in = validate.non_negative("tokens_in", tokens_in)
    t_out = validate.non_negative("tokens_out", tokens_out)
    p_in = validate.non_negative("price_in_krw_per_m", price_in_krw_per_m)
    p_out = validate.non_negative("price_out_krw_per_m", price_out_krw_per_m)
    return (t_in * p_in + t_out * p_out) / TOKENS_PER_M


def blended_price(price_in: float, price_out: float, input_per_output: float = 3.0) -> float:
    """Return the price per token of a mix with ``input_per_output`` input tokens per output token.

    ``(r x price_in + price_out) / (r + 1)``; the common 3:1 mix gives (3 P_in + P_out) / 4
    (Llama-3.3-70B on Groq: (3 x 0.59 + 0.79) / 4 = 0.64 USD per 1M).

    Parameters
    ----------
    price_in, price_out : float
        Prices per 1M tokens, >= 0, in any one currency. [currency per 1M tokens]
    input_per_output : float, default 3.0
        Input tokens per output token r, >= 0. [unitless]

    Returns
    -------
    float
        Blended price, same unit as the inputs.

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers or negative values.

    Used in: notebooks/05_break_even.ipynb
    """
    p_in = validate.non_negative("price_in", price_in)
    p_out = validate.non_negative("price_out", price_out)
    r = validate.non_negative("input_per_output", input_per_output)
    return (r * p_in + p_out) / (r + 1.0)


def monthly_demand_tokens(students: float, requests_per_day: float, tokens_per_request: float,
                          days_per_month: float = 30.0) -> float:
    """Return a school's monthly token demand: students x requests x tokens x days.

    Parameters
    ----------
    students : float
        Active users, >= 0. [people]
    requests_per_day : float
        Requests per user per day, >= 0. [1/day]
    tokens_per_request : float
        Tokens per request (input + output), >= 0. [tokens]
    days_per_month : float, default 30
        Days of use per month, in [0, 31]. [days]

    Returns
    -------
    float
        [tokens per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For NaN/inf, non-numbers, negative values or more than 31 days.

    Used in: notebooks/05_break_even.ipynb
    """
    n = validate.non_negative("students", students)
    r = validate.non_negative("requests_per_day", requests_per_day)
    tok = validate.non_negative("tokens_per_request", tokens_per_request)
    days = validate.at_most("days_per_month", validate.non_negative("days_per_month",
                                                                     days_per_month),
                            31.0, "31 days")
    return n * r * tok * days


def monthly_capacity_tokens(cluster: OwnedCluster, tokens_per_s_per_gpu: float,
                            derate: float = 1.0,
                            seconds_per_month: float = SECONDS_PER_MONTH) -> float:
    """Return the tokens the cluster makes in a month at 100 % utilization.

    Parameters
    ----------
    cluster : OwnedCluster
    tokens_per_s_per_gpu : float
        Benchmark throughput per GPU, > 0. [tokens/s]
    derate : float, default 1.0
        Share of that throughput reached on the real workload, in (0, 1]. [fraction]
    seconds_per_month : float, default SECONDS_PER_MONTH
        Length of the month, in (0, 2,678,400] (31 days); a twelfth of a year by default, a
        30-day month is 2,592,000 s. [s]

    Returns
    -------
    float
        tokens/s/GPU x derate x GPUs x seconds. [tokens per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad throughput, derate or month length.

    Used in: notebooks/05_break_even.ipynb
    """
    tps = validate.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu)
    d = validate.fraction("derate", derate)
    s = validate.at_most("seconds_per_month", validate.positive("seconds_per_month",
                                                                seconds_per_month),
                         31 * 86_400.0, "31 days")
    return tps * d * cluster.gpus * s


def fixed_cost_krw_per_month(cluster: OwnedCluster) -> float:
    """Return F, the owned cost that does not scale with tokens: annual cost at u = 0 / 12.

    It includes idle power and the base charge. [KRW per month]

    Used in: notebooks/05_break_even.ipynb
    """
    return cluster.annual_cost_krw(0.0) / 12.0


def marginal_cost_krw_per_token(cluster: OwnedCluster, tokens_per_s_per_gpu: float,
                                derate: float = 1.0) -> float:
    """Return m, the energy cost of one more output token (busy minus idle power).

    ``m = (annual cost at u=1 - annual cost at u=0) / tokens a year at u=1``. A derated
    throughput means more busy GPU time, so more energy, per token.

    Returns
    -------
    float
        [KRW per token]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a bad throughput or derate.

    Used in: notebooks/05_break_even.ipynb
    """
    tokens = cluster.tokens_per_year(tokens_per_s_per_gpu, 1.0, derate)
    return (cluster.annual_cost_krw(1.0) - cluster.annual_cost_krw(0.0)) / tokens


def owned_cost_krw_per_month(cluster: OwnedCluster, tokens_per_month: float,
                             tokens_per_s_per_gpu: float, derate: float = 1.0) -> float:
    """Return the owned monthly cost of making ``tokens_per_month``: F + m x N.

    Parameters
    ----------
    cluster : OwnedCluster
    tokens_per_month : float
        Output tokens N, in [0, monthly capacity] (a month = a twelfth of a year). [tokens]
    tokens_per_s_per_gpu, derate : float
        As in :func:`monthly_capacity_tokens`.

    Returns
    -------
    float
        [KRW per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For negative tokens or more than the cluster makes in a month.

    Used in: notebooks/05_break_even.ipynb
    """
    cap = monthly_capacity_tokens(cluster, tokens_per_s_per_gpu, derate)
    n = validate.at_most("tokens_per_month", validate.non_negative("tokens_per_month",
                                                                    tokens_per_month),
                         cap, "monthly capacity")
    return (fixed_cost_krw_per_month(cluster)
            + marginal_cost_krw_per_token(cluster, tokens_per_s_per_gpu, derate) * n)


def break_even_tokens_per_month(cluster: OwnedCluster, api_price_krw_per_m: float,
                                tokens_per_s_per_gpu: float, derate: float = 1.0) -> float:
    """Return the monthly output tokens at which owning costs the same as the API.

    Owned monthly cost is ``F + m N`` (fixed plus marginal energy per token), the API's is
    ``P N``, so ``N* = F / (P - m)``. A month is a twelfth of a year.

    Parameters
    ----------
    cluster : OwnedCluster
    api_price_krw_per_m : float
        API price per 1M tokens P, >= 0 (a blended price when input tokens ride along). [KRW]
    tokens_per_s_per_gpu : float
        Benchmark throughput per GPU, > 0. [tokens/s]
    derate : float, default 1.0
        Share of that throughput reached on the real workload, in (0, 1]. [fraction]

    Returns
    -------
    float
        N* in tokens (not millions) per month; ``math.inf`` when ``P <= m`` (owning never
        breaks even). N* may exceed what the cluster can make (see
        :func:`break_even_utilization`). [tokens per month]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a negative or non-finite price, a bad throughput or derate.

    Used in: notebooks/05_break_even.ipynb
    """
    price = validate.non_negative("api_price_krw_per_m", api_price_krw_per_m) / TOKENS_PER_M
    m = marginal_cost_krw_per_token(cluster, tokens_per_s_per_gpu, derate)
    if price <= m:
        return math.inf
    return fixed_cost_krw_per_month(cluster) / (price - m)


def break_even_utilization(cluster: OwnedCluster, api_price_krw_per_m: float,
                           tokens_per_s_per_gpu: float, derate: float = 1.0) -> float:
    """Return the utilization at which owning costs the same as the API.

    ``N* / monthly capacity``; above 1 the cluster cannot make enough tokens to break even,
    ``math.inf`` when it never breaks even. Parameters as in :func:`break_even_tokens_per_month`.

    Returns
    -------
    float
        [fraction; may exceed 1]

    Used in: notebooks/05_break_even.ipynb
    """
    n_star = break_even_tokens_per_month(cluster, api_price_krw_per_m, tokens_per_s_per_gpu,
                                         derate)
    return n_star / monthly_capacity_tokens(cluster, tokens_per_s_per_gpu, derate)


def rent_cost_krw(tokens: float, rent_krw_per_gpu_hour: float, tokens_per_s_per_gpu: float,
                  derate: float = 1.0) -> float:
    """Return the cost of renting exactly the GPU-hours that make ``tokens``.

    GPU-hours = tokens / (tokens/s/GPU x derate x 3,600); cost = GPU-hours x rent.

    Parameters
    ----------
    tokens : float
        Output tokens, >= 0. [tokens]
    rent_krw_per_gpu_hour : float
        Rental price, >= 0. [KRW per GPU-hour]
    tokens_per_s_per_gpu, derate : float
        As in :func:`break_even_tokens_per_month`.

    Returns
    -------
    float
        [KRW]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For negative or non-finite values, a bad throughput or derate.

    Used in: notebooks/05_break_even.ipynb
    """
    n = validate.non_negative("tokens", tokens)
    rent = validate.non_negative("rent_krw_per_gpu_hour", rent_krw_per_gpu_hour)
    tps = validate.positive("tokens_per_s_per_gpu", tokens_per_s_per_gpu)
    d = validate.fraction("derate", derate)
    return n / (tps * d * 3_600.0) * rent


def rent_vs_own_break_even_utilization(cluster: OwnedCluster,
                                       rent_krw_per_gpu_hour: float) -> float:
    """Return the utilization above which owning costs less per used GPU-hour than renting.

    Renting bills only the used hours: ``R x GPUs x 8,760 x u`` a year. Owning costs
    ``C(0) + (C(1) - C(0)) u``. They are equal at
    ``u* = C(0) / (R x GPUs x 8,760 - (C(1) - C(0)))``.

    Parameters
    ----------
    cluster : OwnedCluster
    rent_krw_per_gpu_hour : float
        Rental price per GPU-hour, >= 0. [KRW per GPU-hour]

    Returns
    -------
    float
        u*; above 1 owning never wins within the year's hours; ``math.inf`` when renting at
        full utilization costs no more than the owned energy alone. [fraction]

    Raises
    ------
    labkit.validate.InputError (a ValueError)
        For a negative or non-finite rent.

    Used in: notebooks/05_break_even.ipynb
    """
    rent = validate.non_negative("rent_krw_per_gpu_hour", rent_krw_per_gpu_hour)
    fixed = cluster.annual_cost_krw(0.0)
    variable = cluster.annual_cost_krw(1.0) - fixed
    denominator = rent * cluster.gpus * HOURS_PER_YEAR - variable
    if denominator <= 0:
        return math.inf
    return fixed / denominator


