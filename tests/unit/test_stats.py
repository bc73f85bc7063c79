"""Statistics against reference p-values computed independently here by enumerating every split."""
from __future__ import annotations

import itertools
import math

import pytest

from orchestrator import stats


def enumerated_p(xs, ys):
    """Two-sided exact Mann-Whitney p by brute force over every split of the pooled sample: twice the smaller
    tail, P(U <= u) or P(U >= u), capped at 1 (ties count 1/2 in U). Without ties U is symmetric about n*m/2 and
    this is the usual exact p; with ties it is the permutation-test convention scipy uses."""
    def u_of(a, b):
        return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)

    pooled = list(xs) + list(ys)
    n, m = len(xs), len(ys)
    observed = u_of(xs, ys)
    lower = upper = total = 0
    for chosen in itertools.combinations(range(n + m), n):
        a = [pooled[i] for i in chosen]
        b = [pooled[i] for i in range(n + m) if i not in chosen]
        u = u_of(a, b)
        total += 1
        lower += u <= observed + 1e-9
        upper += u >= observed - 1e-9
    return min(1.0, 2 * min(lower, upper) / total)


def test_complete_separation_four_per_side_is_two_of_seventy():
    # Only 2 of the C(8,4) = 70 splits separate completely (all old below, or all above): p = 2/70.
    assert stats.mann_whitney_p([1, 2, 3, 4], [5, 6, 7, 8]) == pytest.approx(2 / 70)


def test_three_per_side_can_never_be_significant():
    # C(6,3) = 20 splits, 2 fully separated: p = 0.1 >= 0.05, which is why benchstat asks for >= 4 per side.
    comparison = stats.compare([10, 11, 12], [20, 21, 22])
    assert comparison.p_value == pytest.approx(0.1)
    assert comparison.significant is False


@pytest.mark.parametrize(
    "xs, ys",
    [
        ([1.0, 2.0, 4.0, 7.0], [3.0, 5.0, 6.0, 8.0]),
        ([100.0, 101.5, 99.0, 102.0, 98.5], [103.0, 104.0, 100.5, 105.0, 106.0]),
        ([1.0, 2.0, 2.0, 4.0], [2.0, 6.0, 7.0, 8.0]),  # ties: exact enumeration, not the normal approximation
        ([5.0, 5.0, 5.0, 6.0, 7.0], [5.0, 6.0, 6.0, 8.0]),
    ],
)
def test_p_values_match_brute_force_enumeration(xs, ys):
    assert stats.mann_whitney_p(xs, ys) == pytest.approx(enumerated_p(xs, ys), rel=1e-9)


def test_hand_counted_p_value():
    # old [1,2,4,7] vs new [3,5,6,8]: U(old) = 0+0+1+3 = 4 of 16, |4-8| = 4; by hand 2*(#splits with U<=4) =
    # 2*(1+1+2+3+5) = 24 of 70 -> p = 24/70 (U<=k counts for n=m=4: 1,1,2,3,5).
    assert stats.mann_whitney_p([1, 2, 4, 7], [3, 5, 6, 8]) == pytest.approx(24 / 70)


def test_cached_p_value_depends_only_on_order():
    a = stats.mann_whitney_p([1, 2, 3, 4, 6], [5, 7, 8, 9, 10])
    b = stats.mann_whitney_p([10.0, 20.0, 30.0, 40.0, 60.0], [50.0, 70.0, 80.0, 90.0, 100.0])
    assert a == b == pytest.approx(enumerated_p([1, 2, 3, 4, 6], [5, 7, 8, 9, 10]))


def test_identical_samples_are_not_significant():
    comparison = stats.compare([5.0] * 5, [5.0] * 5)
    assert comparison.p_value == 1.0
    assert comparison.significant is False
    assert comparison.delta_pct == 0.0


def test_single_sample_gives_no_verdict():
    comparison = stats.compare([100.0], [120.0, 121.0, 119.0, 122.0])
    assert comparison.significant is None
    assert comparison.p_value is None
    assert comparison.delta_pct == pytest.approx(20.5)


def test_large_samples_use_normal_approximation_and_detect_a_shift():
    old = [100.0 + (i % 7) * 0.1 for i in range(60)]
    new = [103.0 + (i % 5) * 0.1 for i in range(60)]
    comparison = stats.compare(old, new)
    assert comparison.significant is True
    assert comparison.p_value < 1e-10


def test_summary_median_spread_and_quartiles():
    s = stats.summarize([10.0, 12.0, 11.0, 9.0, 13.0])
    assert s.median == 11.0
    assert (s.low, s.high) == (9.0, 13.0)
    assert s.spread_pct == pytest.approx(2 / 11 * 100)
    assert (s.q1, s.q3) == (pytest.approx(10.0), pytest.approx(12.0))  # inclusive quartiles
    assert stats.summarize([7.0]).spread_pct == 0.0


def test_median_is_the_summary_median():
    assert stats.median([3.0]) == 3.0
    assert stats.median([5.0, 1.0, 3.0]) == 3.0
    assert stats.median([4.0, 1.0, 3.0, 2.0]) == 2.5  # the mean of the two middle values
    assert stats.median([9.0, 1.0, 7.0, 2.0]) == stats.summarize([9.0, 1.0, 7.0, 2.0]).median
    with pytest.raises(ValueError):
        stats.median([])


def test_delta_pct():
    assert stats.delta_pct(200.0, 150.0) == pytest.approx(-25.0)
    assert stats.delta_pct(0.0, 1.0) is None
    assert math.isclose(stats.compare([2.0, 2.0], [3.0, 3.0]).delta_pct, 50.0)


def test_three_against_five_can_be_significant():
    # C(8,3) = 56 splits, 2 fully separated: p = 2/56 < 0.05; benchstat's verdict is p < alpha (diff.notes warns).
    comparison = stats.compare([1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0, 8.0])
    assert comparison.p_value == pytest.approx(2 / 56)
    assert comparison.significant is True


def test_exact_p_values_match_brute_force_on_random_samples():
    """Counted up to EXACT_MAX_PERMUTATIONS splits; must equal enumerating every split, ties or none."""
    import random

    rng = random.Random(7)
    for _ in range(120):
        n, m = rng.randint(2, 7), rng.randint(2, 7)
        top = rng.choice((3, 12, 10**6))  # many ties, some, none
        xs = [float(rng.randint(0, top)) for _ in range(n)]
        ys = [float(rng.randint(0, top)) for _ in range(m)]
        if len(set(xs + ys)) == 1:
            continue
        assert stats.mann_whitney_p(xs, ys) == pytest.approx(enumerated_p(xs, ys), rel=1e-12), (xs, ys)


@pytest.mark.parametrize("xs, ys, expected", [
    # p-values computed once with scipy 1.17.1's mannwhitneyu (two-sided; method="exact" without ties,
    # PermutationMethod() with them), written here as constants: scipy is not a dependency.
    ([1.0, 5.0, 9.0, 12.0, 20.0, 21.0, 30.0], [2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 10.0], 0.12820512820512822),
    ([3.0, 3.0, 4.0, 4.0, 5.0, 9.0, 9.0], [1.0, 2.0, 3.0, 4.0, 4.0, 6.0], 0.21678321678321677),
])
def test_exact_p_values_are_scipys(xs, ys, expected):
    assert stats.mann_whitney_p(xs, ys) == pytest.approx(expected, rel=1e-12)


# golang/perf's internal/stats/utest_test.go checks its normal approximation (tie and continuity corrections)
# against R's wilcox.test on these samples: l1 = 0, 2, ..., 998; l2 = -41, -39, ..., 1157; l3 = l2 with its
# first 30 values replaced by l1's (ties).
L1 = [float(2 * i) for i in range(500)]
L2 = [float(2 * i - 41) for i in range(600)]
L3 = L1[:30] + L2[30:]


@pytest.mark.parametrize("xs, ys, expected", [
    (L1, L2, 0.0049335360814172224),  # no ties
    (L1, L3, 0.0038703814239617884),  # ties: the variance is tie-corrected
    (L1, L1, 1.0),  # U at its mean: the continuity correction leaves z = 0
])
def test_large_samples_use_the_normal_approximation_as_r_computes_it(xs, ys, expected):
    assert math.comb(len(xs) + len(ys), len(xs)) > stats.EXACT_MAX_PERMUTATIONS
    assert stats.mann_whitney_p(xs, ys) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("xs, ys, expected", [
    # scipy 1.17.1, mannwhitneyu(method="asymptotic"), computed once: the sizes just past exact counting.
    ([float(v) for v in range(0, 24, 2)], [float(v) for v in range(1, 24, 2)], 0.7508318840891169),  # 12 vs 12
    ([float(v) for v in range(1, 12)], [float(v) for v in range(9, 19)], 0.0004245576887282777),  # 11 vs 10, ties
])
def test_normal_approximation_just_past_exact_counting_is_scipys(xs, ys, expected):
    assert math.comb(len(xs) + len(ys), len(xs)) > stats.EXACT_MAX_PERMUTATIONS
    assert stats.mann_whitney_p(xs, ys) == pytest.approx(expected, rel=1e-9)
    # 12 vs 12 interleaved: the exact p is 0.7553 (scipy, method="exact"); either way clearly not significant


def test_ten_against_ten_is_still_counted_exactly():
    # C(20, 10) = 184,756 splits: exact; fully separated samples give 2 / C(20, 10).
    assert math.comb(20, 10) <= stats.EXACT_MAX_PERMUTATIONS
    xs, ys = [float(v) for v in range(10)], [float(v) for v in range(10, 20)]
    assert stats.mann_whitney_p(xs, ys) == pytest.approx(2 / math.comb(20, 10), rel=1e-12)


def test_no_scipy_needed(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy", None)  # `import scipy` now fails
    monkeypatch.setattr(stats, "_P_CACHE", {})
    assert stats.mann_whitney_p(L1, L2) == pytest.approx(0.0049335360814172224, rel=1e-9)
