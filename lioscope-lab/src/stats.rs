//! Statistics the lab reports: medians and spreads of samples, and the Kruskal-Wallis
//! test of whether sample sets differ (the test the source experiment used, because its
//! samples are far from normally distributed).

use statrs::distribution::{ChiSquared, ContinuousCDF};

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

    #[test]
    fn degenerate_inputs_have_no_test() {
        assert_eq!(kruskal_wallis(&[&[1.0, 2.0]]), None);
        assert_eq!(kruskal_wallis(&[&[1.0, 1.0], &[1.0]]), None);
    }
}
