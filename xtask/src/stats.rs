//! Sample statistics for `bench` and `compare`: means, standard deviation,
//! mmtests' percentage difference and Welch's two-sample t-test (the
//! Student t distribution through the regularized incomplete beta function),
//! and the robust side: median, MAD, an outlier rule for the few boots a
//! benchmark has and the two-sided Mann-Whitney U test (hand-written: no
//! mainstream crate provides it; the normal tail comes from `libm::erfc`).
//! [`bootstrap`]: confidence intervals by resampling, for the experiments' claims.

pub mod bootstrap;

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

/// The least distance from the median, as a fraction of it, that an outlier must also have.
/// The MAD of 3 to 10 samples is itself noisy: for normal samples the z rule alone flags a
/// run in 13-29% of sets (simulated), and a tight metric trips it with a run 1.3% off (pipe,
/// 4 boots at 10.48-10.64 µs). A run within 10% moves a mean of 5 by at most 2%: not what the
/// warning is for. Runs the host slowed down are off by 2-4x.
pub const OUTLIER_MIN_FRACTION: f64 = 0.10;

/// Indices of the outliers of `x`: samples farther from the median than both
/// `3.5 × 1.4826 × MAD` (the modified z-score rule of Iglewicz and Hoaglin) and 10% of the
/// median ([`OUTLIER_MIN_FRACTION`]). Median and MAD are what one far-off sample cannot move,
/// so unlike a mean ± k·stddev rule this works for 3 to 10 boots, where that sample inflates
/// the very stddev that would judge it. When the MAD is 0 (more than half the samples
/// identical, e.g. quantized or `--icount` figures) only the 10% bound remains. Two samples
/// never flag each other (the MAD of two is half their distance: a modified z of 0.67).
pub fn outliers(x: &[f64]) -> Vec<usize> {
    let m = median(x);
    let cut = (OUTLIER_Z * MAD_TO_SIGMA * mad(x)).max(OUTLIER_MIN_FRACTION * m.abs());
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

/// The plain change versus the base in %, `new*100/base - 100`, for figures with no better
/// direction (scheduler counters): positive = more. From zero to anything else it is infinite
/// (`inf`; JSON has no infinity, so serde_json writes `null`); from zero to zero, 0.
pub fn change(base: f64, new: f64) -> f64 {
    if base == 0.0 {
        return if new == 0.0 { 0.0 } else { f64::INFINITY.copysign(new) };
    }
    new * 100.0 / base - 100.0
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

/// Largest sample, on either side, for which [`mann_whitney_p`] counts the exact distribution;
/// beyond it, the normal approximation. At 20 + 20 the count is C(40, 20) ≈ 1.4·10¹¹ subsets
/// (fits a u64) found by about 1.3 million additions.
pub const MANN_WHITNEY_EXACT_MAX: usize = 20;

/// Two-sided Mann-Whitney U (Wilcoxon rank-sum) test that `a` and `b` come from the same
/// distribution, against one being shifted. Ranks only: a far-off sample counts as the most
/// extreme rank, however far off it is. `None` when a side is empty. Exact up to
/// [`MANN_WHITNEY_EXACT_MAX`] samples per side, normal approximation beyond.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    Some(if a.len() <= MANN_WHITNEY_EXACT_MAX && b.len() <= MANN_WHITNEY_EXACT_MAX {
        mann_whitney_exact_p(a, b)
    } else {
        mann_whitney_normal_p(a, b)
    })
}

/// The smallest two-sided p-value [`mann_whitney_p`] can give for these sample sizes: that of
/// complete separation without ties, `2 / C(n1 + n2, n1)` on the exact path (0.1 for 3 + 3).
/// At or above the significance level no result can be significant, whatever the data.
pub fn mann_whitney_min_p(n1: usize, n2: usize) -> f64 {
    let a: Vec<f64> = (0..n1).map(|i| i as f64).collect();
    let b: Vec<f64> = (n1..n1 + n2).map(|i| i as f64).collect();
    mann_whitney_p(&a, &b).unwrap_or(1.0)
}

/// The fewest samples per side for which [`mann_whitney_min_p`] is below `alpha`.
pub fn mann_whitney_runs_needed(alpha: f64) -> usize {
    (1..).find(|&n| mann_whitney_min_p(n, n) < alpha).expect("p shrinks without bound as n grows")
}

/// The samples of `a` then `b` pooled, as mid-ranks doubled (tied values share the mean of the
/// 1-based positions they span; doubling keeps the halves integral), and the sizes of the
/// groups of tied values.
fn doubled_mid_ranks(a: &[f64], b: &[f64]) -> (Vec<usize>, Vec<usize>) {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let (mut ranks, mut tie_sizes) = (vec![0; pooled.len()], Vec::new());
    let mut start = 0;
    while start < order.len() {
        let end = (start..order.len()).find(|&k| pooled[order[k]] != pooled[order[start]]).unwrap_or(order.len());
        // Positions start+1 ..= end share (start+1 + end) / 2; doubled, start + 1 + end.
        for &i in &order[start..end] {
            ranks[i] = start + 1 + end;
        }
        tie_sizes.push(end - start);
        start = end;
    }
    (ranks, tie_sizes)
}

/// Exact two-sided p of the rank sum W of `a`: the share of all C(n1 + n2, n1) ways to deal
/// the pooled mid-ranks to `a` whose W lies at least as far from its mean `n1 (n1 + n2 + 1) / 2`
/// as the observed one. Ties need no correction here: dealing the observed mid-ranks (not
/// 1..N) gives the permutation distribution given those ties, which is exact; without ties
/// it is the textbook distribution of U = W - n1 (n1 + 1) / 2, symmetric, so the p-value is
/// twice the smaller tail. Sizes up to [`MANN_WHITNEY_EXACT_MAX`]: the counts overflow a u64
/// past about 33 + 33.
pub fn mann_whitney_exact_p(a: &[f64], b: &[f64]) -> f64 {
    let (ranks, _) = doubled_mid_ranks(a, b);
    let (n1, n) = (a.len(), ranks.len());
    let total: usize = ranks.iter().sum();
    // ways[k][s]: subsets of k pooled samples whose doubled ranks sum to s. Each sample is
    // taken or not (0/1 knapsack, k descending so none is taken twice).
    let mut ways = vec![vec![0u64; total + 1]; n1 + 1];
    ways[0][0] = 1;
    for &r in &ranks {
        for k in (1..=n1).rev() {
            for s in r..=total {
                ways[k][s] += ways[k - 1][s - r];
            }
        }
    }
    let mean = n1 * (n + 1); // doubled
    let observed = ranks[..n1].iter().sum::<usize>().abs_diff(mean);
    let as_extreme: u64 = ways[n1].iter().enumerate().filter(|&(s, _)| s.abs_diff(mean) >= observed).map(|(_, w)| w).sum();
    as_extreme as f64 / ways[n1].iter().sum::<u64>() as f64
}

/// Two-sided p of U by the normal approximation: mean `n1 n2 / 2`, variance
/// `n1 n2 / 12 · ((N + 1) - Σ(t³ - t) / (N (N - 1)))` with t the sizes of the groups of tied
/// values (the tie correction), and a continuity correction of 1/2 (U is discrete). 1 when
/// every sample is tied (no spread to test).
pub fn mann_whitney_normal_p(a: &[f64], b: &[f64]) -> f64 {
    let (ranks, tie_sizes) = doubled_mid_ranks(a, b);
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let n = n1 + n2;
    let u = ranks[..a.len()].iter().sum::<usize>() as f64 / 2.0 - n1 * (n1 + 1.0) / 2.0;
    let ties: f64 = tie_sizes.iter().map(|&t| (t * t * t - t) as f64).sum();
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let z = ((u - n1 * n2 / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    libm::erfc(z / std::f64::consts::SQRT_2).min(1.0)
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
        // pipe usecs_per_op, new side of a 4 + 4 compare: run 1 is 5 robust sigmas but 1.3% off.
        let pipe = [10.643, 10.476, 10.621, 10.606];
        assert!((pipe[1] - median(&pipe)).abs() > OUTLIER_Z * MAD_TO_SIGMA * mad(&pipe));
        assert!(outliers(&pipe).is_empty());
        assert!(outliers(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).is_empty());
        assert!(outliers(&[0.2, 0.59, 0.111]).is_empty());
        // Two samples: the MAD is half their distance, nothing is ever far off.
        assert!(outliers(&[1.0, 1000.0]).is_empty());
        // MAD 0: identical runs flag nothing; a run differing from the majority is flagged when
        // more than 10% off, not for a millisecond of quantized time.
        assert!(outliers(&[4.0, 4.0, 4.0]).is_empty());
        assert_eq!(outliers(&[4.0, 4.0, 4.5, 4.0]), vec![2]);
        assert!(outliers(&[0.057, 0.057, 0.057, 0.058, 0.059]).is_empty());
        // Three boots, one lost to the host.
        assert_eq!(outliers(&[25_000.0, 26_000.0, 6_356.0]), vec![2]);
        assert!(outliers(&[]).is_empty());
    }

    /// Sets of 5 normal samples, 3% spread (a tight wall-clock metric): the z rule alone flags
    /// a run in about a fifth of them, the 10% bound brings that under 2%.
    #[test]
    fn outlier_rule_rarely_flags_normal_noise() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut uniform = move || {
            // xorshift64*: deterministic, good enough for a rate.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            ((state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut normal = move || {
            let (u, v) = (uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos() // Box-Muller
        };
        let sets = 4000;
        let (mut z_only, mut flagged) = (0, 0);
        for _ in 0..sets {
            let x: Vec<f64> = (0..5).map(|_| 100.0 + 3.0 * normal()).collect();
            let (m, cut) = (median(&x), OUTLIER_Z * MAD_TO_SIGMA * mad(&x));
            z_only += x.iter().any(|v| (v - m).abs() > cut) as usize;
            flagged += !outliers(&x).is_empty() as usize;
        }
        let rate = |n: usize| n as f64 / sets as f64;
        assert!((0.15..0.27).contains(&rate(z_only)), "z rule alone: {}", rate(z_only));
        assert!(rate(flagged) < 0.02, "with the 10% bound: {}", rate(flagged));
    }

    #[test]
    fn mann_whitney_exact_matches_the_tables() {
        let p = |a: &[f64], b: &[f64]| mann_whitney_p(a, b).unwrap();
        // Complete separation, 5 + 5: only W = 15 and W = 40 of C(10, 5) = 252 are as extreme.
        assert!(close(p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]), 2.0 / 252.0, 1e-12));
        // Either direction, any scale: ranks only.
        assert!(close(p(&[60.0, 70.0, 80.0, 90.0, 1e9], &[1.0, 2.0, 3.0, 4.0, 5.0]), 2.0 / 252.0, 1e-12));
        // 3 + 3: the best possible is 2 / C(6, 3) = 0.1.
        assert!(close(p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 0.1, 1e-12));
        // U = 2 at 5 + 5: U <= 2 in 1 + 1 + 2 of 252 arrangements, doubled (tables: 0.0317).
        assert!(close(p(&[1.0, 2.0, 3.0, 4.0, 7.0], &[5.0, 6.0, 8.0, 9.0, 10.0]), 8.0 / 252.0, 1e-12));
        // Ties, mid-ranks 1, 2.5, 2.5, 4.5 | 4.5, 6, 7.5, 7.5: W = 10.5, |W - 18| = 7.5; of the
        // 70 ways to pick 4 of the pooled ranks, 4 are as far off (counted by enumeration).
        assert!(close(p(&[1.0, 2.0, 2.0, 3.0], &[3.0, 4.0, 5.0, 5.0]), 4.0 / 70.0, 1e-12));
        // Constant sides (deterministic runs): still 2 of 70; everything equal: 1.
        assert!(close(p(&[5.0; 4], &[6.0; 4]), 2.0 / 70.0, 1e-12));
        assert_eq!(p(&[5.0; 4], &[5.0; 4]), 1.0);
        assert!(p(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]) > 0.5);
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    }

    #[test]
    fn mann_whitney_normal_matches_hand_and_exact() {
        // By hand: mid-ranks 1, 2.5, 2.5, 4.5 | 4.5, 6, 7.5, 7.5, so U = 10.5 - 4·5/2 = 0.5,
        // mean 8; three pairs of ties, Σ(t³ - t) = 18, variance 16/12 · (9 - 18/56) = 11.5714;
        // z = (7.5 - 0.5) / 3.40168 = 2.05781, p = erfc(z / √2) = 0.039609.
        assert!(close(mann_whitney_normal_p(&[1.0, 2.0, 2.0, 3.0], &[3.0, 4.0, 5.0, 5.0]), 0.039609, 1e-5));
        // No ties: U = 1, variance 16·9/12 = 12, z = 6.5 / √12 = 1.87639, p = 0.060602.
        assert!(close(mann_whitney_normal_p(&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0]), 0.060602, 1e-5));
        assert_eq!(mann_whitney_normal_p(&[2.0; 3], &[2.0; 30]), 1.0);
        // At 20 + 20 both paths agree near the 5% level, with and without ties.
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let shifted: Vec<f64> = (0..20).map(|i| f64::from(i) + 4.5).collect();
        let (e, n) = (mann_whitney_exact_p(&a, &shifted), mann_whitney_normal_p(&a, &shifted));
        assert!(close(e, 0.030411, 1e-5) && close(n, 0.031517, 1e-5), "{e} {n}");
        let pairs: Vec<f64> = (0..20).map(|i| f64::from(i / 2)).collect();
        let pairs_up: Vec<f64> = pairs.iter().map(|v| v + 2.0).collect();
        let (e, n) = (mann_whitney_exact_p(&pairs, &pairs_up), mann_whitney_normal_p(&pairs, &pairs_up));
        assert!(close(e, 0.051829, 1e-5) && close(n, 0.052168, 1e-5), "{e} {n}");
        // 21 per side takes the normal path.
        let a21: Vec<f64> = (0..21).map(f64::from).collect();
        let b21: Vec<f64> = (0..21).map(|i| f64::from(i) + 4.5).collect();
        assert_eq!(mann_whitney_p(&a21, &b21), Some(mann_whitney_normal_p(&a21, &b21)));
    }

    #[test]
    fn mann_whitney_says_when_significance_is_out_of_reach() {
        assert!(close(mann_whitney_min_p(3, 3), 0.1, 1e-12));
        assert!(close(mann_whitney_min_p(4, 4), 2.0 / 70.0, 1e-12));
        assert!(close(mann_whitney_min_p(2, 5), 2.0 / 21.0, 1e-12));
        assert_eq!(mann_whitney_min_p(0, 5), 1.0);
        assert_eq!(mann_whitney_runs_needed(0.05), 4);
        assert_eq!(mann_whitney_runs_needed(0.01), 5);
    }

    #[test]
    fn pdiff_is_positive_when_better() {
        assert!(close(pdiff(100.0, 110.0, true), 10.0, 1e-9));
        assert!(close(pdiff(1.0, 0.9, false), 10.0, 1e-9));
        assert!(close(pdiff(1.0, 1.2, false), -20.0, 1e-9));
    }

    #[test]
    fn change_is_signed_by_direction_only() {
        assert!(close(change(100.0, 110.0), 10.0, 1e-9));
        assert!(close(change(100.0, 80.0), -20.0, 1e-9), "fewer is negative, whatever better means");
        assert_eq!(change(0.0, 0.0), 0.0);
        assert_eq!(change(0.0, 5.0), f64::INFINITY);
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
