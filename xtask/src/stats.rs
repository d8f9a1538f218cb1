//! Sample statistics for `bench` and `compare`: means, standard deviation,
//! mmtests' percentage difference and Welch's two-sample t-test (the
//! Student t distribution through the regularized incomplete beta function),
//! and the robust side: median, MAD and an outlier rule for the few boots a
//! benchmark has.

/// Arithmetic mean (0 for no samples).
pub fn amean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Harmonic mean `n / Σ 1/x` (mmtests' Hmean); 0 when a sample is not positive.
pub fn hmean(x: &[f64]) -> f64 {
    if x.is_empty() || x.iter().any(|&v| v <= 0.0) {
        return 0.0;
    }
    x.len() as f64 / x.iter().map(|v| 1.0 / v).sum::<f64>()
}

/// Sample standard deviation (n - 1); 0 for fewer than two samples.
pub fn stddev(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = amean(x);
    (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// Median (the mean of the two middle samples for an even count; 0 for no
/// samples): unlike the mean, one far-off boot does not move it.
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median absolute deviation from the median (0 for no samples). It is 0 when more than half
/// the samples equal the median exactly.
pub fn mad(x: &[f64]) -> f64 {
    let m = median(x);
    median(&x.iter().map(|v| (v - m).abs()).collect::<Vec<_>>())
}

/// `1.4826 × MAD` estimates the standard deviation of normal samples (1 / Φ⁻¹(3/4)), so the
/// outlier cut-off below is in the units of a z-score.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// Iglewicz and Hoaglin's cut-off for the modified z-score `|x - median| / (1.4826 × MAD)`.
pub const OUTLIER_Z: f64 = 3.5;

/// Indices of the outliers of `x`: samples with `|x - median| > 3.5 × 1.4826 × MAD`, the
/// modified z-score rule of Iglewicz and Hoaglin. Median and MAD are what one far-off sample
/// cannot move, so unlike a mean ± k·stddev rule it still works for 3 to 10 boots, where that
/// sample inflates the very stddev that would judge it. When the MAD is 0 (more than half the
/// samples identical) the cut-off is 0 and every sample differing from that majority is
/// flagged: the limit of the rule as the spread vanishes, and what deterministic (`--icount`)
/// runs call a difference. Fewer than 3 samples never flag anything (the MAD of two is half
/// their distance, so neither is more than 0.7 modified z off).
pub fn outliers(x: &[f64]) -> Vec<usize> {
    let m = median(x);
    let cut = OUTLIER_Z * MAD_TO_SIGMA * mad(x);
    (0..x.len()).filter(|&i| (x[i] - m).abs() > cut).collect()
}

pub fn min(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn max(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// mmtests' change versus the base, signed so that positive is better:
/// `new*100/base - 100` when higher is better, `100 - new*100/base` otherwise.
pub fn pdiff(base: f64, new: f64, higher_is_better: bool) -> f64 {
    if base == 0.0 {
        return 0.0;
    }
    if higher_is_better {
        new * 100.0 / base - 100.0
    } else {
        100.0 - new * 100.0 / base
    }
}

/// Welch's two-sided t-test of equal means. `None` when either side has
/// fewer than two samples. With zero variance on both sides the p-value is
/// 0 when the means differ (deterministic runs) and 1 when they are equal.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (va, vb) = (stddev(a).powi(2) / a.len() as f64, stddev(b).powi(2) / b.len() as f64);
    let diff = amean(a) - amean(b);
    if va + vb == 0.0 {
        return Some(if diff == 0.0 { 1.0 } else { 0.0 });
    }
    let t = diff / (va + vb).sqrt();
    let df = (va + vb).powi(2)
        / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    Some(t_two_sided_p(t, df))
}

/// Two-sided p-value of Student's t with `df` degrees of freedom:
/// `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    inc_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1-x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta I_x(a, b), by its continued fraction (Lentz).
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast for x < (a+1)/(a+b+2); use symmetry otherwise.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - inc_beta(b, a, 1.0 - x);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + num / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f / a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    #[test]
    fn means_and_spread() {
        let x = [1.0, 2.0, 4.0];
        assert!(close(amean(&x), 7.0 / 3.0, 1e-12));
        assert!(close(hmean(&x), 3.0 / 1.75, 1e-12));
        assert!(close(stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), 2.138_089_935, 1e-8));
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0]), 3.0);
        assert_eq!(median(&[9.0, 1.0, 5.0]), 5.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 100.0]), 3.5);
        // One outlier moves the mean, not the median.
        assert_eq!(median(&[22.0, 24.0, 6.0, 26.0, 23.0]), 23.0);
        assert_eq!((min(&x), max(&x)), (1.0, 4.0));
        assert_eq!(hmean(&[1.0, 0.0]), 0.0);
    }

    #[test]
    fn outlier_rule_flags_a_lost_host_and_not_noise() {
        // schbench rps at -smp 2, five boots (target/bench/20261130-131537-schbench): the host
        // took the cores away during the first one.
        let rps = [6_355.939, 25_051.261, 26_131.253, 26_495.912, 26_495.107];
        assert!(close(mad(&rps), 364.659, 1e-3));
        assert_eq!(outliers(&rps), vec![0]);
        // The same boot among values spread over 20-26k: the MAD grows, 6,356 is still far off.
        assert_eq!(outliers(&[20_000.0, 22_000.0, 6_356.0, 24_000.0, 26_000.0]), vec![2]);
        // Wall-clock noise of a few percent, and a wide but even spread, flag nothing.
        assert!(outliers(&[0.059, 0.055, 0.057, 0.061, 0.056]).is_empty());
        assert!(outliers(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).is_empty());
        assert!(outliers(&[0.2, 0.59, 0.111]).is_empty());
        // Two samples: the MAD is half their distance, nothing is ever far off.
        assert!(outliers(&[1.0, 1000.0]).is_empty());
        // MAD 0: identical runs flag nothing, a run differing from the majority is flagged.
        assert!(outliers(&[4.0, 4.0, 4.0]).is_empty());
        assert_eq!(outliers(&[4.0, 4.0, 4.5, 4.0]), vec![2]);
        assert!(outliers(&[]).is_empty());
    }

    #[test]
    fn pdiff_is_positive_when_better() {
        assert!(close(pdiff(100.0, 110.0, true), 10.0, 1e-9));
        assert!(close(pdiff(1.0, 0.9, false), 10.0, 1e-9));
        assert!(close(pdiff(1.0, 1.2, false), -20.0, 1e-9));
    }

    #[test]
    fn t_distribution_matches_tables() {
        // Two-sided 5% critical values: df 1 → 12.706, 4 → 2.776, 10 → 2.228, 30 → 2.042.
        for (t, df) in [(12.706, 1.0), (2.776, 4.0), (2.228, 10.0), (2.042, 30.0)] {
            assert!(close(t_two_sided_p(t, df), 0.05, 2e-4), "df {df}: {}", t_two_sided_p(t, df));
        }
        assert!(close(t_two_sided_p(0.0, 5.0), 1.0, 1e-12));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12));
    }

    #[test]
    fn welch_detects_a_shift_and_not_noise() {
        let a = [10.0, 10.2, 9.9, 10.1, 9.8];
        let b = [11.0, 11.1, 10.9, 11.2, 10.8];
        assert!(welch_p(&a, &b).unwrap() < 0.001);
        let c = [10.1, 9.9, 10.0, 10.2, 9.8];
        assert!(welch_p(&a, &c).unwrap() > 0.5);
        assert_eq!(welch_p(&[1.0], &c), None);
        assert_eq!(welch_p(&[2.0, 2.0], &[2.0, 2.0]), Some(1.0));
        assert_eq!(welch_p(&[2.0, 2.0], &[3.0, 3.0]), Some(0.0));
    }
}
