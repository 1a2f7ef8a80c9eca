"""The statistics of the review report, each from a well-kept library (statsmodels), imported
only when a report is computed so ``import assay`` stays light.

Every rate comes with a 95 % interval: a proportion with Wilson's score interval, a count per
hour with the exact (Garwood) Poisson interval, Cohen's kappa with statsmodels' asymptotic
interval, and Fleiss' kappa (for which statsmodels gives none) with a percentile bootstrap over
the rated items, seeded so the same ledger always gives the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import Field

from assay._wire import WireModel

ALPHA = 0.05
BOOTSTRAP = 1000
"""Resamples for Fleiss' kappa's interval (seed 0: the report is a function of the ledger)."""


class Rate(WireModel):
    """``k`` of ``n``, with its 95 % interval."""

    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None
    method: str = "wilson"

    def text(self, digits: int = 3) -> str:
        """``0.750 [0.301, 0.954] (3/4)``: the terminal's table and the page print this."""
        if self.n == 0:
            return "0 of 0 (no estimate)"
        numbers = (_shown(v, digits) for v in (self.rate, self.low, self.high))
        return "{} [{}, {}] ({}/{})".format(*numbers, self.k, self.n)


class PerHour(WireModel):
    """A count over hours of exposure, with its 95 % interval."""

    count: int
    hours: float
    rate: float | None
    low: float | None
    high: float | None
    method: str = "poisson exact (Garwood)"


class Kappa(WireModel):
    """Chance-corrected agreement, with its 95 % interval (None and a note when undefined)."""

    method: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    categories: list[str] = Field(default_factory=list)

    def text(self, digits: int = 3) -> str:
        """``fleiss -0.310 [-0.500, 0.125]``, or why it is undefined."""
        if self.value is None:
            return f"{self.method}: undefined ({self.note})"
        interval = ""
        if self.low is not None:
            interval = f" [{_shown(self.low, digits)}, {_shown(self.high, digits)}]"
        return f"{self.method} {_shown(self.value, digits)}{interval}"


def _shown(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else float(value)


def _kappa_bound(value: float | None) -> float | None:
    """An interval end on kappa's own scale: an asymptotic interval (estimate ± 1.96 se) runs
    past 1 or below -1 on a few items, and no kappa lies there."""
    return None if value is None else min(1.0, max(-1.0, value))


def wilson(k: int, n: int) -> Rate:
    """``k`` of ``n`` with Wilson's score interval (no interval when ``n`` is 0)."""
    if n == 0:
        return Rate(k=0, n=0, rate=None, low=None, high=None)
    from statsmodels.stats.proportion import proportion_confint  # type: ignore[import-untyped]

    low, high = proportion_confint(k, n, alpha=ALPHA, method="wilson")
    return Rate(k=k, n=n, rate=k / n, low=float(low), high=float(high))


def per_hour(count: int, hours: float) -> PerHour:
    """``count`` events over ``hours`` with the exact Poisson interval."""
    if hours <= 0:
        return PerHour(count=count, hours=hours, rate=None, low=None, high=None)
    from statsmodels.stats.rates import confint_poisson  # type: ignore[import-untyped]

    low, high = confint_poisson(count, hours, method="exact-c", alpha=ALPHA)
    return PerHour(
        count=count, hours=hours, rate=count / hours, low=_finite(low), high=_finite(high)
    )


def cohen(pairs: Sequence[tuple[str, str]]) -> Kappa:
    """Cohen's kappa of two raters (seat 1 and seat 2) over the items they both rated."""
    categories = sorted({c for pair in pairs for c in pair})
    if len(pairs) < 2 or len(categories) < 2:
        return Kappa(
            method="cohen",
            value=None,
            note="undefined: fewer than 2 items or a single category",
            categories=categories,
        )
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa  # type: ignore[import-untyped]

    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in pairs:
        table[index[a], index[b]] += 1
    with np.errstate(all="ignore"):  # a degenerate table divides by 0 in its z value
        result = cohens_kappa(table)  # its interval is the 95 % one
    if not result.std_kappa > 0:  # one rater used one category, or every pair disagrees
        return Kappa(
            method="cohen",
            value=_finite(result.kappa),
            note="no interval: the asymptotic standard error is 0 on this table (too few or "
            "too uniform ratings)",
            categories=categories,
        )
    return Kappa(
        method="cohen",
        value=_finite(result.kappa),
        low=_kappa_bound(_finite(result.kappa_low)),
        high=_kappa_bound(_finite(result.kappa_upp)),
        note="asymptotic 95 % interval (statsmodels), within [-1, 1]",
        categories=categories,
    )


def fleiss(ratings: Sequence[Sequence[str]]) -> Kappa:
    """Fleiss' kappa of a fixed number of raters per item (each row: one item's ratings)."""
    categories = sorted({c for row in ratings for c in row})
    if len(ratings) < 2 or len(categories) < 2:
        return Kappa(
            method="fleiss",
            value=None,
            note="undefined: fewer than 2 items or a single category",
            categories=categories,
        )
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa

    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(ratings), len(categories)))
    for row, found in enumerate(ratings):
        for c in found:
            table[row, index[c]] += 1
    value = _finite(fleiss_kappa(table, method="fleiss"))
    rng = np.random.default_rng(0)
    samples = []
    for _ in range(BOOTSTRAP):
        resampled = table[rng.integers(0, len(table), len(table))]
        if (resampled.sum(axis=0) > 0).sum() < 2:
            continue  # one category only: kappa undefined for this resample
        found_value = _finite(fleiss_kappa(resampled, method="fleiss"))
        if found_value is not None:
            samples.append(found_value)
    low = high = None
    if samples:
        low = float(np.percentile(samples, 100 * ALPHA / 2))
        high = float(np.percentile(samples, 100 * (1 - ALPHA / 2)))
    return Kappa(
        method="fleiss",
        value=value,
        low=low,
        high=high,
        note=f"percentile bootstrap over items, {BOOTSTRAP} resamples, seed 0",
        categories=categories,
    )
