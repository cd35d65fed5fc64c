//! Statistics the lab reports: medians and spreads of samples, and the rank tests of
//! whether sample sets differ: Kruskal-Wallis for two sets or more (the test the source
//! experiment used, because its samples are far from normally distributed), and
//! Mann-Whitney U for two, one-sided or two-sided, with its exact distribution for small
//! samples without ties. Both compute what SciPy's `kruskal` and `mannwhitneyu`
//! (method "auto") compute, to 1e-9 on the inputs the tests write in.

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

/// Median, minimum and maximum of a set of figures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// The spread of `values` (which must not be empty).
pub fn spread(values: impl IntoIterator<Item = f64>) -> Spread {
    let mut v: Vec<f64> = values.into_iter().collect();
    assert!(!v.is_empty(), "a spread of no values");
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    Spread { median, min: v[0], max: v[n - 1] }
}

/// The Kruskal-Wallis H statistic of `groups` (ties get their average rank, and H is
/// corrected for them) and its p-value from the chi-squared distribution with
/// `groups - 1` degrees of freedom. `None` with fewer than two non-empty groups or when
/// every value is the same (no ranking is possible).
pub fn kruskal_wallis(groups: &[&[f64]]) -> Option<(f64, f64)> {
    let groups: Vec<&[f64]> = groups.iter().copied().filter(|g| !g.is_empty()).collect();
    if groups.len() < 2 {
        return None;
    }
    let mut all: Vec<(f64, usize)> =
        groups.iter().enumerate().flat_map(|(g, values)| values.iter().map(move |&v| (v, g))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = all.len() as f64;
    let mut rank_sums = vec![0.0; groups.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let j = (i..all.len()).find(|&j| all[j].0 != all[i].0).unwrap_or(all.len());
        let average_rank = (i + j + 1) as f64 / 2.0;
        for &(_, g) in &all[i..j] {
            rank_sums[g] += average_rank;
        }
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let correction = 1.0 - tie_term / (n * n * n - n);
    if correction <= 0.0 {
        return None;
    }
    let h = (12.0 / (n * (n + 1.0)) * groups.iter().zip(&rank_sums).map(|(g, r)| r * r / g.len() as f64).sum::<f64>()
        - 3.0 * (n + 1.0))
        / correction;
    let chi2 = ChiSquared::new((groups.len() - 1) as f64).ok()?;
    Some((h, 1.0 - chi2.cdf(h)))
}

/// Which difference a Mann-Whitney test looks for, as SciPy names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Alternative {
    /// The sets differ either way.
    TwoSided,
    /// The first set is stochastically greater than the second.
    Greater,
    /// The first set is stochastically less than the second.
    Less,
}

/// How a Mann-Whitney p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// From the exact distribution of U (small samples, no ties).
    Exact,
    /// From the normal approximation, corrected for ties and for continuity.
    Asymptotic,
}

/// A Mann-Whitney U test's outcome.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MannWhitney {
    /// U of the first set: how many pairs (x, y) have x > y, ties counting a half.
    pub u: f64,
    pub p_value: f64,
    pub method: Method,
}

/// Largest sample at or under which the exact distribution is used when there are no
/// ties (SciPy's rule: when either sample has at most 8 values).
const EXACT_AT_MOST: usize = 8;

/// The Mann-Whitney U test of `x` against `y`: U of `x` with average ranks for ties, and
/// the p-value of `alternative`, exact when either sample has at most 8 values and no
/// value repeats, otherwise from the normal approximation with SciPy's tie and continuity
/// corrections. `None` when a sample is empty or a value is not a number.
pub fn mann_whitney(x: &[f64], y: &[f64], alternative: Alternative) -> Option<MannWhitney> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    let mut all: Vec<(f64, bool)> = x.iter().map(|&v| (v, true)).chain(y.iter().map(|&v| (v, false))).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rank_sum_x, mut tie_term, mut ties) = (0.0, 0.0, false);
    let mut i = 0;
    while i < all.len() {
        let j = (i..all.len()).find(|&j| all[j].0 != all[i].0).unwrap_or(all.len());
        let average_rank = (i + j + 1) as f64 / 2.0;
        rank_sum_x += average_rank * all[i..j].iter().filter(|(_, from_x)| *from_x).count() as f64;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        ties |= j - i > 1;
        i = j;
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let u1 = rank_sum_x - n1f * (n1f + 1.0) / 2.0;
    let u2 = n1f * n2f - u1;
    let (u, factor) = match alternative {
        Alternative::Greater => (u1, 1.0),
        Alternative::Less => (u2, 1.0),
        Alternative::TwoSided => (u1.max(u2), 2.0),
    };
    let exact = (n1 <= EXACT_AT_MOST || n2 <= EXACT_AT_MOST) && !ties;
    let exact_sf = if exact { u_survival(n1, n2, u as u64) } else { None };
    let (p, method) = match exact_sf {
        Some(sf) => (sf, Method::Exact),
        None => {
            let n = n1f + n2f;
            let sigma = (n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
            let z = (u - n1f * n2f / 2.0 - 0.5) / sigma;
            let normal = Normal::standard();
            let sf = if z.is_nan() { 1.0 } else { normal.sf(z) };
            (sf, Method::Asymptotic)
        }
    };
    Some(MannWhitney { u: u1, p_value: (p * factor).clamp(0.0, 1.0), method })
}

/// P(U >= k) under the null hypothesis for samples of `n1` and `n2` values without ties:
/// the count of arrangements with U at least `k` over all C(n1 + n2, n1) of them. The
/// counts are the coefficients of the Gaussian binomial [n1 + n2 choose m]_q (m the
/// smaller size), built exactly in integers as the product over i = 1..=m of
/// (1 - q^(n+i)) / (1 - q^i). `None` when the counts would not fit (then the caller
/// approximates).
fn u_survival(n1: usize, n2: usize, k: u64) -> Option<f64> {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let degree = m.checked_mul(n)?;
    if degree > 1 << 20 {
        return None;
    }
    // C(m + n, m) bounds every coefficient; keep it well inside i128.
    let mut total: i128 = 1;
    for i in 1..=m as i128 {
        total = total.checked_mul(n as i128 + i)? / i;
        if total > 1 << 120 {
            return None;
        }
    }
    let mut counts = vec![0i128; degree + 1];
    counts[0] = 1;
    for i in 1..=m {
        // Times (1 - q^(n+i)): from the top down, so each term subtracts an old value.
        for d in (n + i..=degree).rev() {
            counts[d] -= counts[d - n - i];
        }
        // Over (1 - q^i), i.e. times 1 + q^i + q^2i + …: from the bottom up.
        for d in i..=degree {
            counts[d] += counts[d - i];
        }
    }
    let k = usize::try_from(k).ok()?.min(degree + 1);
    let at_least: i128 = counts[k..].iter().sum();
    Some(at_least as f64 / total as f64)
}

/// One coefficient of a least-squares fit: its estimate, standard error and confidence
/// interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Coefficient {
    pub estimate: f64,
    pub standard_error: f64,
    /// The interval at the fit's confidence: estimate ± t(1 - (1 - confidence) / 2, n - 2)
    /// × standard error.
    pub low: f64,
    pub high: f64,
}

impl Coefficient {
    /// Whether the interval leaves zero out: the coefficient differs from zero at the
    /// fit's confidence.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// The ordinary least-squares fit of y = a × x1 + b × x2, with no intercept.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ThroughOriginFit {
    /// Observations fitted.
    pub n: usize,
    pub a: Coefficient,
    pub b: Coefficient,
    /// The confidence of the intervals (0.95).
    pub confidence: f64,
    /// n - 2.
    pub degrees_of_freedom: usize,
    /// √(SSE / (n - 2)), in y's unit.
    pub residual_standard_error: f64,
    /// 1 - SSE / Σ(y - ȳ)²: the share of y's variation around its mean the fit explains
    /// (what a model with an intercept would report; can be negative without one).
    pub r_squared_centered: f64,
    /// 1 - SSE / Σy²: what R and NumPy report for a fit through the origin; high as soon
    /// as y is far from zero, so it flatters such a fit.
    pub r_squared_uncentered: f64,
}

/// Fits y = a × x1 + b × x2 by least squares, without an intercept: the normal equations
/// of the two columns, each scaled to unit length first so that columns of different
/// magnitudes stay well conditioned. Standard errors from σ² (X'X)⁻¹ with σ² = SSE /
/// (n - 2), intervals from Student's t with n - 2 degrees of freedom at `confidence`.
/// `None` with fewer than three observations, lengths that differ, a value that is not
/// finite, a column of zeros, or columns (nearly) proportional to each other.
pub fn fit_through_origin(x1: &[f64], x2: &[f64], y: &[f64], confidence: f64) -> Option<ThroughOriginFit> {
    let n = y.len();
    if n < 3 || x1.len() != n || x2.len() != n || x1.iter().chain(x2).chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let dot = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(a, b)| a * b).sum::<f64>();
    let (s1, s2) = (dot(x1, x1).sqrt(), dot(x2, x2).sqrt());
    if s1 == 0.0 || s2 == 0.0 {
        return None;
    }
    // Scaled, X'X is [[1, r], [r, 1]].
    let r = dot(x1, x2) / (s1 * s2);
    let det = 1.0 - r * r;
    if det < 1e-12 {
        return None;
    }
    let (q1, q2) = (dot(x1, y) / s1, dot(x2, y) / s2);
    let a = (q1 - r * q2) / det / s1;
    let b = (q2 - r * q1) / det / s2;
    let sse: f64 = (0..n).map(|i| (y[i] - a * x1[i] - b * x2[i]).powi(2)).sum();
    let df = n - 2;
    let sigma2 = sse / df as f64;
    let t = StudentsT::new(0.0, 1.0, df as f64).ok()?.inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    let coefficient = |estimate: f64, scale: f64| {
        // The diagonal of the scaled (X'X)⁻¹ is 1 / det for both columns.
        let standard_error = (sigma2 / det).sqrt() / scale;
        Coefficient {
            estimate,
            standard_error,
            low: estimate - t * standard_error,
            high: estimate + t * standard_error,
        }
    };
    let mean = y.iter().sum::<f64>() / n as f64;
    let total_centered: f64 = y.iter().map(|v| (v - mean).powi(2)).sum();
    let total: f64 = dot(y, y);
    let share = |total: f64| if total > 0.0 { 1.0 - sse / total } else { f64::NAN };
    Some(ThroughOriginFit {
        n,
        a: coefficient(a, s1),
        b: coefficient(b, s2),
        confidence,
        degrees_of_freedom: df,
        residual_standard_error: sigma2.sqrt(),
        r_squared_centered: share(total_centered),
        r_squared_uncentered: share(total),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_odd_and_even_counts() {
        assert_eq!(spread([3.0, 1.0, 2.0]), Spread { median: 2.0, min: 1.0, max: 3.0 });
        assert_eq!(spread([4.0, 1.0, 2.0, 3.0]).median, 2.5);
    }

    #[test]
    fn identical_sets_do_not_differ() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let (h, p) = kruskal_wallis(&[&a, &a]).unwrap();
        assert!(h.abs() < 1e-9 && (p - 1.0).abs() < 1e-9, "h {h}, p {p}");
    }

    #[test]
    fn separated_sets_differ() {
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (100..160).map(f64::from).collect();
        let (h, p) = kruskal_wallis(&[&a, &b]).unwrap();
        // Completely separated groups of 60: H = 12/(120*121) * (1830² + 5430²)/60 - 3*121.
        assert!((h - 89.256_198).abs() < 1e-3, "h {h}");
        assert!(p < 1e-15, "p {p}");
    }

    #[test]
    fn a_textbook_example_with_ties() {
        // Three groups; H with tie correction computed by hand: ranks 1..9 with one tie.
        let (a, b, c) = ([1.0, 2.0, 3.0], [3.0, 5.0, 6.0], [7.0, 8.0, 9.0]);
        let (h, p) = kruskal_wallis(&[&a, &b, &c]).unwrap();
        // Rank sums 6.5, 14.5, 24; H = 12/90 * (6.5²+14.5²+24²)/3 - 30 = 6.8222..; C = 1 - 6/720.
        assert!((h - 6.822_222 / (1.0 - 6.0 / 720.0)).abs() < 1e-4, "h {h}");
        assert!(p > 0.02 && p < 0.04, "p {p}");
    }

    /// (name, x, y, [(alternative, U, p)]) as SciPy 1.17.1's `mannwhitneyu(x, y,
    /// alternative=...)` (method "auto") gives them.
    #[allow(clippy::type_complexity)]
    fn scipy_cases() -> Vec<(&'static str, Vec<f64>, Vec<f64>, [(Alternative, f64, f64); 3])> {
        use Alternative::*;
        vec![
            (
                "exact, equal sizes",
                vec![1.2, 2.3, 3.1, 4.8, 5.5],
                vec![2.0, 6.1, 7.2, 8.4, 9.9],
                [
                    (TwoSided, 4.0, 0.09523809523809523),
                    (Greater, 4.0, 0.9722222222222222),
                    (Less, 4.0, 0.047619047619047616),
                ],
            ),
            (
                "exact, one sample of 3 against 10",
                vec![10.5, 11.2, 9.8],
                vec![12.1, 13.4, 12.9, 14.2, 11.9, 13.1, 12.6, 15.0, 14.8, 13.3],
                [(TwoSided, 0.0, 0.006993006993006993), (Greater, 0.0, 1.0), (Less, 0.0, 0.0034965034965034965)],
            ),
            (
                "ties: asymptotic",
                vec![1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0],
                vec![3.0, 4.0, 4.0, 5.0, 7.0, 8.0, 8.0, 9.0, 9.0],
                [
                    (TwoSided, 13.5, 0.03295011419483441),
                    (Greater, 13.5, 0.9871140282477708),
                    (Less, 13.5, 0.016475057097417204),
                ],
            ),
            (
                "large: asymptotic",
                (0..30).map(|i| (f64::from(i) * 0.37) % 11.0).collect(),
                (0..25).map(|i| (f64::from(i) * 0.41) % 13.0).collect(),
                [
                    (TwoSided, 404.5, 0.623993576744555),
                    (Greater, 404.5, 0.3119967883722775),
                    (Less, 404.5, 0.6939582687872105),
                ],
            ),
            (
                "separated",
                vec![1.0, 1.1, 1.2, 1.3, 1.4],
                vec![2.0, 2.1, 2.2, 2.3, 2.4],
                [(TwoSided, 0.0, 0.007936507936507936), (Greater, 0.0, 1.0), (Less, 0.0, 0.003968253968253968)],
            ),
        ]
    }

    #[test]
    fn mann_whitney_agrees_with_scipy() {
        for (name, x, y, expected) in scipy_cases() {
            for (alternative, u, p) in expected {
                let got = mann_whitney(&x, &y, alternative).unwrap();
                assert!((got.u - u).abs() < 1e-9, "{name} {alternative:?}: U {} against {u}", got.u);
                assert!((got.p_value - p).abs() < 1e-9, "{name} {alternative:?}: p {} against {p}", got.p_value);
            }
        }
        let method = |x: &[f64], y: &[f64]| mann_whitney(x, y, Alternative::TwoSided).unwrap().method;
        assert_eq!(method(&[1.0, 2.0], &[3.0, 4.0]), Method::Exact);
        assert_eq!(method(&[1.0, 2.0], &[2.0, 4.0]), Method::Asymptotic, "ties");
    }

    #[test]
    fn the_exact_distribution_sums_to_one_and_is_symmetric() {
        for (n1, n2) in [(1, 1), (3, 5), (8, 8), (2, 40)] {
            assert_eq!(u_survival(n1, n2, 0), Some(1.0));
            let top = (n1 * n2) as u64;
            // P(U >= k) = P(U <= top - k) by symmetry.
            for k in 1..=top {
                let (upper, lower) = (u_survival(n1, n2, k).unwrap(), 1.0 - u_survival(n1, n2, top - k + 1).unwrap());
                assert!((upper - lower).abs() < 1e-12, "{n1}x{n2} k {k}: {upper} against {lower}");
            }
        }
    }

    #[test]
    fn kruskal_wallis_agrees_with_scipy() {
        // SciPy 1.17.1's `kruskal` on the same groups.
        let (h, p) = kruskal_wallis(&[&[1.0, 2.0, 3.0], &[3.0, 5.0, 6.0], &[7.0, 8.0, 9.0]]).unwrap();
        assert!((h - 6.879551820728285).abs() < 1e-9 && (p - 0.0320718714966627).abs() < 1e-9, "{h} {p}");
        let groups: [&[f64]; 3] = [&[2.9, 3.0, 2.5, 2.6, 3.2], &[3.8, 2.7, 4.0, 2.4], &[2.8, 3.4, 3.7, 2.2, 2.0]];
        let (h, p) = kruskal_wallis(&groups).unwrap();
        assert!((h - 0.7714285714285722).abs() < 1e-9 && (p - 0.6799647735788936).abs() < 1e-9, "{h} {p}");
    }

    #[test]
    fn degenerate_inputs_have_no_test() {
        assert_eq!(mann_whitney(&[], &[1.0], Alternative::TwoSided), None);
        assert_eq!(mann_whitney(&[f64::NAN], &[1.0], Alternative::TwoSided), None);
        assert_eq!(kruskal_wallis(&[&[1.0, 2.0]]), None);
        assert_eq!(kruskal_wallis(&[&[1.0, 1.0], &[1.0]]), None);
    }

    #[test]
    fn a_fit_through_the_origin_recovers_known_coefficients() {
        // y = 3 x1 + 0.5 x2 exactly: the estimates are exact and the errors zero.
        let x1 = [100.0, 50.0, 25.0, 13.0, 7.0];
        let x2 = [100.0, 101.0, 100.0, 102.0, 100.0];
        let y: Vec<f64> = x1.iter().zip(&x2).map(|(a, b)| 3.0 * a + 0.5 * b).collect();
        let fit = fit_through_origin(&x1, &x2, &y, 0.95).unwrap();
        assert!((fit.a.estimate - 3.0).abs() < 1e-9 && (fit.b.estimate - 0.5).abs() < 1e-9, "{fit:?}");
        assert!(fit.a.standard_error < 1e-6 && fit.r_squared_centered > 1.0 - 1e-12, "{fit:?}");
        assert_eq!((fit.n, fit.degrees_of_freedom), (5, 3));
        // Too few observations, proportional columns, a column of zeros: no fit.
        assert_eq!(fit_through_origin(&x1[..2], &x2[..2], &y[..2], 0.95), None);
        assert_eq!(fit_through_origin(&x1, &x1.map(|v| 2.0 * v), &y, 0.95), None);
        assert_eq!(fit_through_origin(&x1, &[0.0; 5], &y, 0.95), None);
    }

    #[test]
    fn a_fit_through_the_origin_agrees_with_numpy() {
        // Read calls and blocks of 24 cold scans at MBRC 1..128, three rounds, and CPU =
        // 3 × calls + 0.5 × blocks + noise. Expected values from NumPy:
        // coef = numpy.linalg.lstsq(X, y); σ² = SSE / (n - 2); se = sqrt(diag(σ² (X'X)⁻¹));
        // t = scipy.stats.t.ppf(0.975, 22).
        let calls: Vec<f64> = [14286.0, 7143.0, 3572.0, 1786.0, 893.0, 447.0, 224.0, 112.0].repeat(3);
        let blocks: Vec<f64> = (0..24).map(|k| 14286.0 + (k % 3) as f64).collect();
        let y = [
            50033.0, 28528.5, 17872.0, 12485.0, 9890.5, 8449.0, 7823.0, 7419.5, 50050.0, 28596.0, 17831.5, 12506.0,
            9770.0, 8520.5, 7832.0, 7471.0, 50045.5, 28549.0, 17879.0, 12461.5, 9851.0, 8472.0, 7871.5, 7448.0,
        ];
        let fit = fit_through_origin(&calls, &blocks, &y, 0.95).unwrap();
        let close = |got: f64, want: f64| (got - want).abs() <= 1e-8 * want.abs();
        assert!(close(fit.a.estimate, 3.002463485199752), "{fit:?}");
        assert!(close(fit.b.estimate, 0.4995148470132985), "{fit:?}");
        assert!(close(fit.a.standard_error, 0.0015574585544602837), "{fit:?}");
        assert!(close(fit.b.standard_error, 0.0006357870103139234), "{fit:?}");
        assert!(close(fit.residual_standard_error, (27352.72357383166_f64 / 22.0).sqrt()), "{fit:?}");
        assert!(close(fit.r_squared_centered, 0.9999940803281351), "{fit:?}");
        assert!(close(fit.r_squared_uncentered, 0.9999977654857014), "{fit:?}");
        let t = 2.0738730679040254;
        assert!(close(fit.a.low, fit.a.estimate - t * fit.a.standard_error), "{fit:?}");
        assert!(close(fit.b.high, fit.b.estimate + t * fit.b.standard_error), "{fit:?}");
        assert!(fit.a.excludes_zero() && fit.b.excludes_zero());
    }
}
