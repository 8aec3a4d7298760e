#!/usr/bin/env python3
"""Reference values for `irqlab compare`, computed with scipy/numpy/pandas.

Writes crates/irqlab/tests/fixtures/compare/reference.json, which the Rust
test `stats_reference` compares against (>= 6 significant digits). CI does
not need scipy: only the committed JSON is read there.

Conventions (same as irqlab): x is the baseline, y the variant.
  describe  : pandas Series.describe(percentiles=[.5, .9, .99])
  mwu       : scipy.stats.mannwhitneyu(y, x, method=exact|asymptotic), two-sided,
              exact when there are no ties and both sides have <= 50 values
  welch     : scipy.stats.ttest_ind(y, x, equal_var=False)
  hl        : median of y_j - x_i (numpy); interval = order statistics
              d_(k), d_(mn+1-k) with k the smallest integer such that
              P(U <= k) >= alpha/2 (R's qwilcox), from the exact null
              distribution computed here with exact integer arithmetic
              (checked against scipy's exact p); above 50 per side
              k = floor(mn/2 + 0.5 - z_{0.975} sqrt(mn(m+n+1)/12)).
  spearman  : scipy.stats.spearmanr(order, values)
  skew/kurt : pandas Series.skew() / Series.kurt() (bias-corrected)
The "pandas_table" entry is what the replaced pandas script prints for two
sets of 20 per-iteration irqs/sec values: describe() per column and a
relative delta row (patch - tip) / tip.

Usage: pip install scipy numpy pandas; python3 tools/reference/compare_reference.py
"""
import json
import math
import os

import numpy as np
import pandas as pd
import scipy
from scipy import stats

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "irqlab",
                   "tests", "fixtures", "compare", "reference.json")


def describe(v):
    d = pd.Series(v).describe(percentiles=[.5, .9, .99])
    return {k: float(d[k]) for k in ["count", "mean", "std", "min", "50%", "90%", "99%", "max"]}


def u_null_counts(m, n):
    """Coefficients of the Gaussian binomial [m+n choose m]_q, exact ints."""
    # counts[k] = number of arrangements with U = k; built by polynomial
    # products: prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)
    size = m * n + 1
    c = [0] * size
    c[0] = 1
    for i in range(1, m + 1):
        a = n + i
        for k in range(size - 1, a - 1, -1):  # multiply by (1 - q^a)
            c[k] -= c[k - a]
        for k in range(i, size):  # divide by (1 - q^i)
            c[k] += c[k - i]
    return c


def u_cdf(m, n):
    c = u_null_counts(m, n)
    total = sum(c)
    acc, out = 0, []
    for v in c:
        acc += v
        out.append(acc / total)
    return out


def hodges_lehmann(x, y, alpha=0.05):
    m, n = len(x), len(y)
    d = np.sort(np.subtract.outer(np.asarray(y), np.asarray(x)).ravel())
    mn = m * n
    if max(m, n) <= 50:
        cdf = u_cdf(m, n)
        k = next(i for i, c in enumerate(cdf) if c >= alpha / 2)
        k = max(k, 1)
    else:
        sigma = math.sqrt(mn * (m + n + 1) / 12)
        z = stats.norm.ppf(1 - alpha / 2)
        k = max(int(math.floor(mn / 2 + 0.5 - z * sigma)), 1)
    return {"shift": float(np.median(d)), "lo": float(d[k - 1]), "hi": float(d[mn - k]), "k": k}


def mwu(x, y):
    ties = len(np.unique(np.concatenate([x, y]))) < len(x) + len(y)
    method = "exact" if (not ties and max(len(x), len(y)) <= 50) else "asymptotic"
    r = stats.mannwhitneyu(y, x, alternative="two-sided", method=method)
    if method == "exact":
        # cross-check our integer null distribution against scipy
        m, n = len(y), len(x)
        u = max(r.statistic, m * n - r.statistic)
        p = min(1.0, 2 * u_cdf(min(m, n), max(m, n))[int(round(m * n - u))])
        assert math.isclose(p, r.pvalue, rel_tol=1e-9), (p, r.pvalue)
    return {"u": float(r.statistic), "p": float(r.pvalue), "method": method}


def entry(name, x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    w = stats.ttest_ind(y, x, equal_var=False)
    sp = stats.spearmanr(np.arange(len(y)), y)
    sy = pd.Series(y)
    return {
        "name": name, "x": x, "y": y,
        "describe_x": describe(x), "describe_y": describe(y),
        "mwu": mwu(np.array(x), np.array(y)),
        "welch": {"t": float(w.statistic), "df": float(w.df), "p": float(w.pvalue)},
        "hl": hodges_lehmann(x, y),
        "spearman_y": {"rho": float(sp.statistic), "p": float(sp.pvalue)},
        "skew_y": float(sy.skew()), "kurt_y": float(sy.kurt()),
    }


def main():
    rng = np.random.default_rng(20240611)
    r6 = lambda a: np.round(a, 6)
    sets = [
        entry("small_exact", r6(rng.normal(100, 2, 7)), r6(rng.normal(103, 2, 9))),
        entry("medium_exact", r6(rng.normal(5000, 50, 20)), r6(rng.normal(5050, 60, 20))),
        entry("ties_asymptotic", np.round(rng.normal(50, 3, 15)), np.round(rng.normal(52, 3, 18))),
        entry("large_asymptotic", r6(rng.normal(10, 1, 60)), r6(rng.normal(10.3, 1.2, 70))),
        entry("skewed_exact", r6(rng.lognormal(3, 0.5, 12)), r6(rng.lognormal(3.2, 0.5, 11))),
    ]
    tip = np.round(rng.normal(120000, 900, 20), 1)
    patch = np.round(rng.normal(122400, 900, 20), 1)
    df = pd.DataFrame({"tip": tip, "patch": patch})
    d = df.describe(percentiles=[.5, .9, .99])
    d["delta"] = (d["patch"] - d["tip"]) / d["tip"]
    table = {col: {row: float(d.loc[row, col]) for row in d.index} for col in d.columns}
    out = {
        "generated_by": "tools/reference/compare_reference.py",
        "versions": {"scipy": scipy.__version__, "numpy": np.__version__, "pandas": pd.__version__},
        "datasets": sets,
        "pandas_table": {"tip": [float(v) for v in tip], "patch": [float(v) for v in patch],
                         "describe": table, "printed": d.to_string()},
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(d.to_string())


if __name__ == "__main__":
    main()
