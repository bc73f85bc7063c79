"""Summary statistics and the old-vs-new significance verdict, following Go's benchstat.

benchstat's rules, which sslbench follows (golang.org/x/perf/cmd/benchstat, benchmath.AssumeNothing):
- the summary of a sample is its **median** (benchmark timings are not normal, so no mean, no outlier rejection);
- two samples are compared with the **Mann-Whitney U test**, two-sided, on the full samples: exact where the
  pooled sample splits few enough ways to count them all, else its normal approximation with the tie and
  continuity corrections (as benchstat's and R's wilcox.test's large-sample method);
- a change is significant when **p < alpha = 0.05**; otherwise it is shown as `~`;
- with equal sample sizes the U test cannot reach p < 0.05 below **4 samples per side** (3 vs 3: p >= 0.1;
  benchstat's uTestSamples(0.05) = 4), so, like benchstat, sslbench warns "need >= 4 samples per side" (under
  the diff: diff.notes counts such cells from their sample sizes) and keeps the verdict p < alpha (3 vs 5 can
  reach p = 2/56 = 0.036, and then it is significant).
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
EXACT_MAX_PERMUTATIONS = 200_000  # exact p by counting splits up to this many ways to split the pooled sample


# Summary and Comparison are values nobody changes, but not frozen=True: a frozen dataclass's __init__ sets each
# field through object.__setattr__, 3x slower, and a 50,000-cell diff makes 150,000 of them.
@dataclass
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


@dataclass
class Comparison:
    old: Summary
    new: Summary
    delta_pct: float | None  # (new - old) / old of the medians; None when old is 0
    p_value: float | None  # None without repeats on either side
    significant: bool | None  # p < ALPHA; None when either side has a single sample


def summarize(values: Sequence[float]) -> Summary:
    if not values:
        raise ValueError("summarize() needs at least one value")
    ordered = sorted(values)
    if len(ordered) == 1:  # the common case without --repeat: no quantiles to interpolate
        value = ordered[0]
        return Summary(1, value, value, value, value, value)
    return Summary(len(ordered), _quantile(ordered, 0.5), ordered[0], ordered[-1],
                   _quantile(ordered, 0.25), _quantile(ordered, 0.75))


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count): sslbench's one median."""
    if not values:
        raise ValueError("median() needs at least one value")
    if len(values) == 1:
        return values[0]
    return _quantile(sorted(values), 0.5)


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


_FROM_X, _FROM_Y = (1, 0), (0, 1)  # a value only in xs / only in ys


def _rank_pattern(xs: Sequence[float], ys: Sequence[float]) -> tuple[tuple[int, int], ...]:
    """The order of the pooled sample as (count from xs, count from ys) per distinct value, ascending.

    The U test sees nothing but this pattern, so it is the cache key for p-values: a diff of 50,000 cells with
    5 repeats per side has only a few hundred distinct patterns.
    """
    in_x, in_y = set(xs), set(ys)
    if len(in_x) == len(xs) and len(in_y) == len(ys) and in_x.isdisjoint(in_y):  # no ties, the usual case
        return tuple([_FROM_X if v in in_x else _FROM_Y for v in sorted(in_x | in_y)])
    counts: dict[float, list[int]] = {}
    for x in xs:
        counts.setdefault(x, [0, 0])[0] += 1
    for y in ys:
        counts.setdefault(y, [0, 0])[1] += 1
    return tuple((c[0], c[1]) for _, c in sorted(counts.items()))


_P_CACHE: dict[tuple[tuple[int, int], ...], float] = {}


def mann_whitney_p(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value.

    Exact where small: every split of the pooled sample counted (with or without ties: what scipy's exact
    method and its permutation test with every permutation give) up to EXACT_MAX_PERMUTATIONS splits (10 vs 10,
    4 vs 40; see _exact_p); beyond that the normal approximation (see _normal_p), which is close there.
    """
    if len(xs) < 1 or len(ys) < 1:
        raise ValueError("mann_whitney_p() needs at least one value per side")
    pattern = _rank_pattern(xs, ys)
    cached = _P_CACHE.get(pattern)
    if cached is not None:
        return cached
    if len(pattern) == 1:
        p = 1.0  # all equal: no evidence of any difference (the approximation would divide by zero)
    elif math.comb(len(xs) + len(ys), len(xs)) <= EXACT_MAX_PERMUTATIONS:
        p = _exact_p(pattern)
    else:
        p = _normal_p(pattern)
    _P_CACHE[pattern] = p
    return p


def _exact_p(pattern: tuple[tuple[int, int], ...]) -> float:
    """The exact two-sided p-value of a rank pattern: 2 x the smaller tail of x's rank sum over all C(N, n) splits.

    The permutation convention scipy's PermutationMethod uses (statistic U1 = R1 - n(n+1)/2, ties at midranks);
    without ties the null distribution is symmetric and this equals scipy's method="exact" (the tests check both
    against brute-force enumeration). A null distribution is counted once per sample sizes and tie structure.
    """
    n = sum(cx for cx, _ in pattern)
    ranks = []  # (doubled midrank, tie group size): doubled so that midranks stay integers
    observed = position = 0
    for cx, cy in pattern:
        size = cx + cy
        doubled = 2 * position + size + 1  # 2 x the mean of ranks position+1 .. position+size
        ranks.append((doubled, size))
        observed += cx * doubled
        position += size
    lower, upper, total = _null_tails(n, tuple(ranks), observed)
    return min(1.0, min(lower, upper) / total * 2)


_NULL_CACHE: dict[tuple[int, tuple[tuple[int, int], ...]], dict[int, int]] = {}


def _null_tails(n: int, ranks: tuple[tuple[int, int], ...], observed: int) -> tuple[int, int, int]:
    """How many n-element splits have a doubled rank sum <= observed and >= observed, and how many there are.

    The null distribution depends only on n and the tie structure (without ties: on n and m alone), so it is
    counted once per structure: sums[s] = the number of splits whose doubled rank sum is s.
    """
    key = (n, ranks)
    sums = _NULL_CACHE.get(key)
    if sums is None:
        ways: list[dict[int, int]] = [{0: 1}] + [{} for _ in range(n)]  # ways[k][s]: k chosen so far, sum s
        for doubled, size in ranks:
            for k in range(n, 0, -1):  # downwards: each tie group is used once
                target = ways[k]
                for j in range(1, min(size, k) + 1):  # j of the group's `size` items go to x
                    weight = math.comb(size, j)
                    for total, count in ways[k - j].items():
                        s = total + j * doubled
                        target[s] = target.get(s, 0) + count * weight
        sums = _NULL_CACHE[key] = ways[n]
    lower = sum(count for s, count in sums.items() if s <= observed)
    upper = sum(count for s, count in sums.items() if s >= observed)
    return lower, upper, sum(sums.values())


def _normal_p(pattern: tuple[tuple[int, int], ...]) -> float:
    """The two-sided p-value of a rank pattern from the normal approximation of U.

    Under the null hypothesis U1 = R1 - n(n+1)/2 has mean nm/2 and variance nm/12 * ((N+1) - T/(N(N-1))),
    where N = n+m and T sums t^3 - t over the tie groups (t values each, tied at their midrank): the tie
    correction. Half a unit comes off |U1 - nm/2| because U moves in steps of at least 1/2 (the continuity
    correction). Then p = 2 P(Z >= z) = erfc(z / sqrt 2).
    """
    n = sum(cx for cx, _ in pattern)
    m = sum(cy for _, cy in pattern)
    total = n + m
    rank_sum = 0.0  # R1: x's ranks, a tie group at its midrank
    ties = 0  # T
    position = 0
    for cx, cy in pattern:
        size = cx + cy
        rank_sum += cx * (position + (size + 1) / 2)
        ties += size ** 3 - size
        position += size
    u = rank_sum - n * (n + 1) / 2
    variance = n * m / 12 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return 1.0  # every value tied: nothing to tell the sides apart
    distance = max(0.0, abs(u - n * m / 2) - 0.5)
    return min(1.0, math.erfc(distance / math.sqrt(2 * variance)))


def compare(old: Sequence[float], new: Sequence[float], alpha: float = ALPHA) -> Comparison:
    """Median, spread and the benchstat verdict for one cell (see the module docstring for the rules)."""
    old_summary, new_summary = summarize(old), summarize(new)
    delta = delta_pct(old_summary.median, new_summary.median)
    if old_summary.n < 2 or new_summary.n < 2:
        return Comparison(old_summary, new_summary, delta, None, None)
    p = mann_whitney_p(old, new)
    return Comparison(old_summary, new_summary, delta, p, p < alpha)
