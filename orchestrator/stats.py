"""Summary statistics and the old-vs-new significance verdict, following Go's benchstat.

benchstat's rules, which sslbench follows (golang.org/x/perf/cmd/benchstat, benchmath.AssumeNothing):
- the summary of a sample is its **median** (benchmark timings are not normal, so no mean, no outlier rejection);
- two samples are compared with the **Mann-Whitney U test**, two-sided, on the full samples;
- a change is significant when **p < alpha = 0.05**; otherwise it is shown as `~`;
- with equal sample sizes the U test cannot reach p < 0.05 below **4 samples per side** (3 vs 3: p >= 0.1;
  benchstat's uTestSamples(0.05) = 4), so, like benchstat, sslbench warns "need >= 4 samples per side" and
  keeps the verdict p < alpha (3 vs 5 can reach p = 2/56 = 0.036, and then it is significant).
sslbench adds one rule of its own: with a single sample on either side there is no test at all, so the verdict is
None (unknown), not `~`.

The spread printed next to a median is the largest deviation of any sample from the median, in percent of the
median (benchstat's old "± x%"); the IQR is available too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

ALPHA = 0.05
MIN_SAMPLES_TO_DETECT = 4  # benchstat's uTestSamples(0.05): n vs n below this can never give p < 0.05
EXACT_MAX_SIDE = 50  # scipy's exact null distribution (no ties) up to this many samples per side
EXACT_MAX_PERMUTATIONS = 200_000  # with ties: exact enumeration below this many ways to split the pooled sample


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    low: float  # min
    high: float  # max
    q1: float
    q3: float

    @property
    def spread_pct(self) -> float:
        """Largest deviation of a sample from the median, in % of the median (0 for one sample)."""
        if self.median == 0:
            return 0.0
        return max(self.high - self.median, self.median - self.low) / abs(self.median) * 100.0

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


@dataclass(frozen=True)
class Comparison:
    old: Summary
    new: Summary
    delta_pct: float | None  # (new - old) / old of the medians; None when old is 0
    p_value: float | None  # None without repeats on either side
    significant: bool | None  # p < ALPHA; None when either side has a single sample
    warning: str | None = None


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("summarize() needs at least one value")
    ordered = sorted(values)
    return Summary(n=len(ordered), median=_quantile(ordered, 0.5), low=ordered[0], high=ordered[-1],
                   q1=_quantile(ordered, 0.25), q3=_quantile(ordered, 0.75))


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default, statistics' 'inclusive' method).

    Hand-rolled because diff summarizes 100,000 cells at a time and statistics.quantiles is 20x slower.
    """
    position = (len(ordered) - 1) * q
    below = int(position)
    fraction = position - below
    if fraction == 0 or below + 1 >= len(ordered):
        return ordered[below]
    return ordered[below] + (ordered[below + 1] - ordered[below]) * fraction


def delta_pct(old: float, new: float) -> float | None:
    if old == 0:
        return None
    return (new - old) / old * 100.0


def _rank_pattern(xs: Sequence[float], ys: Sequence[float]) -> tuple[tuple[int, int], ...]:
    """The order of the pooled sample as (count from xs, count from ys) per distinct value, ascending.

    The U test sees nothing but this pattern, so it is the cache key for p-values: a diff of 50,000 cells with
    5 repeats per side has only a few hundred distinct patterns.
    """
    counts: dict[float, list[int]] = {}
    for x in xs:
        counts.setdefault(x, [0, 0])[0] += 1
    for y in ys:
        counts.setdefault(y, [0, 0])[1] += 1
    return tuple((c[0], c[1]) for _, c in sorted(counts.items()))


_P_CACHE: dict[tuple[tuple[int, int], ...], float] = {}


def mann_whitney_p(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value via scipy.stats.mannwhitneyu.

    Exact where small: the exact null distribution without ties, exact enumeration of all splits
    (a permutation test with every permutation) with ties, and the normal approximation (tie- and
    continuity-corrected) only when the samples are too large to enumerate.
    """
    if len(xs) < 1 or len(ys) < 1:
        raise ValueError("mann_whitney_p() needs at least one value per side")
    pattern = _rank_pattern(xs, ys)
    cached = _P_CACHE.get(pattern)
    if cached is not None:
        return cached
    # Every data set with this pattern has this p-value: compute it on the pattern itself (ranks as values).
    rx: list[float] = []
    ry: list[float] = []
    for rank, (cx, cy) in enumerate(pattern):
        rx.extend([float(rank)] * cx)
        ry.extend([float(rank)] * cy)
    p = _scipy_p(rx, ry, ties=any(cx + cy > 1 for cx, cy in pattern))
    _P_CACHE[pattern] = p
    return p


def _scipy_p(xs: list[float], ys: list[float], *, ties: bool) -> float:
    from scipy import stats  # imported late: scipy costs ~0.3 s to import and most commands never need it

    n, m = len(xs), len(ys)
    if len(set(xs) | set(ys)) == 1:
        return 1.0  # all equal: no evidence of any difference (scipy would divide by zero)
    if not ties and max(n, m) <= EXACT_MAX_SIDE:
        result = stats.mannwhitneyu(xs, ys, alternative="two-sided", method="exact")
    elif ties and math.comb(n + m, n) <= EXACT_MAX_PERMUTATIONS:
        # n_resamples >= the number of distinct splits makes scipy enumerate them all: exact with ties.
        method = stats.PermutationMethod(n_resamples=EXACT_MAX_PERMUTATIONS)
        result = stats.mannwhitneyu(xs, ys, alternative="two-sided", method=method)
    else:
        result = stats.mannwhitneyu(xs, ys, alternative="two-sided", method="asymptotic")
    return min(1.0, float(result.pvalue))


def compare(old: Sequence[float], new: Sequence[float], alpha: float = ALPHA) -> Comparison:
    """Median, spread and the benchstat verdict for one cell (see the module docstring for the rules)."""
    old_summary, new_summary = summarize(old), summarize(new)
    delta = delta_pct(old_summary.median, new_summary.median)
    if old_summary.n < 2 or new_summary.n < 2:
        return Comparison(old_summary, new_summary, delta, None, None, "no repeats: run with --repeat N (N >= 4)")
    p = mann_whitney_p(old, new)
    warning = None
    if min(old_summary.n, new_summary.n) < MIN_SAMPLES_TO_DETECT:
        warning = f"need >= {MIN_SAMPLES_TO_DETECT} samples per side to detect a change at alpha {alpha:g}"
    return Comparison(old_summary, new_summary, delta, p, p < alpha, warning)
