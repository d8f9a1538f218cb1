//! Bootstrap confidence intervals for the experiments' claims: a statistic of one or more
//! independent samples (the runs of each cell a claim compares), its sampling distribution
//! estimated by resampling each sample with replacement, and an interval from that
//! distribution, by percentiles or bias-corrected and accelerated (BCa, Efron 1987; Efron and
//! Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 14, whose k-sample jackknife gives
//! the acceleration here).
//!
//! The resampling draws from a seeded generator ([`Rng`], SplitMix64), so a report read twice
//! from the same logs prints the same intervals.
//!
//! Why hand-written: the few mainstream bootstrap crates resample one sample only; the claims
//! compare two (a variant's runs against the baseline's), or two per point when a claim pools
//! several points, and need BCa's jackknife over all of them.

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
/// a 64-bit state stepped by a constant, mixed on output. Good enough to resample, and the
/// same sequence from the same seed on every machine.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0), by Lemire's multiply-shift (its bias, under 2^-32 for the
    /// sample sizes here, is below anything a resample can show).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in (0, 1).
    #[cfg(test)]
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller; one of the pair is dropped).
    #[cfg(test)]
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// How the interval is read off the resampled statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The α/2 and 1 - α/2 quantiles of the resampled statistics (the reports use BCa; the
    /// tests hold BCa's coverage against this one's).
    #[cfg_attr(not(test), allow(dead_code))]
    Percentile,
    /// Percentiles moved for the resamples' median bias and for a statistic whose spread
    /// changes with its value (the acceleration, from the jackknife): second-order accurate,
    /// where the percentile interval is first-order (Efron and Tibshirani, ch. 14, 22).
    Bca,
}

/// A statistic with its interval at `level` (e.g. 0.95). `lo == hi == estimate` when every
/// resample gave the same value (runs that do not vary: exact -icount figures).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
    pub level: f64,
}

/// The resampling plan: how many resamples, from which seed, read how.
#[derive(Clone, Copy, Debug)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub method: Method,
}

impl Default for Bootstrap {
    /// 4,000 BCa resamples from seed 1: the tail quantiles of a 99.9% interval (what a
    /// Bonferroni correction over 50 comparisons asks) still rest on 2 resamples each side.
    fn default() -> Bootstrap {
        Bootstrap { resamples: 4000, seed: 1, method: Method::Bca }
    }
}

impl Bootstrap {
    /// The interval of `stat` over the independent `samples` (each resampled on its own, with
    /// its own size), at `level` in (0, 1). `None` when a sample has fewer than two values (one
    /// run has no spread to resample) or the statistic of the data is not finite.
    pub fn interval(&self, samples: &[&[f64]], stat: impl Fn(&[Vec<f64>]) -> f64, level: f64) -> Option<Interval> {
        assert!(level > 0.0 && level < 1.0, "a confidence level is in (0, 1): {level}");
        if samples.is_empty() || samples.iter().any(|s| s.len() < 2) {
            return None;
        }
        let data: Vec<Vec<f64>> = samples.iter().map(|s| s.to_vec()).collect();
        let estimate = stat(&data);
        if !estimate.is_finite() {
            return None;
        }
        let mut rng = Rng::new(self.seed);
        let mut resample: Vec<Vec<f64>> = data.clone();
        let mut thetas: Vec<f64> = Vec::with_capacity(self.resamples);
        for _ in 0..self.resamples {
            for (r, s) in resample.iter_mut().zip(&data) {
                for x in r.iter_mut() {
                    *x = s[rng.below(s.len())];
                }
            }
            let t = stat(&resample);
            if t.is_finite() {
                thetas.push(t);
            }
        }
        if thetas.len() < self.resamples / 2 {
            return None;
        }
        thetas.sort_by(f64::total_cmp);
        let alpha = 1.0 - level;
        let (p_lo, p_hi) = match self.method {
            Method::Percentile => (alpha / 2.0, 1.0 - alpha / 2.0),
            Method::Bca => bca_levels(&data, &stat, estimate, &thetas, alpha),
        };
        Some(Interval { estimate, lo: quantile(&thetas, p_lo), hi: quantile(&thetas, p_hi), level })
    }
}

/// The BCa interval's two percentile levels: Φ(z0 + (z0 + z) / (1 - a (z0 + z))) for z at
/// α/2 and 1 - α/2, with z0 = Φ⁻¹(share of resamples below the estimate, ties counted half) and
/// the acceleration a from the k-sample jackknife: leaving out each value of each sample in
/// turn, U = (n_g - 1)(mean of that sample's leave-one-out statistics - each), then
/// a = Σ_g Σ U³ / n_g³ / (6 (Σ_g Σ U² / n_g²)^{3/2}). Falls back to the percentile levels
/// where the resamples are all on one side of the estimate (z0 infinite).
fn bca_levels(data: &[Vec<f64>], stat: &impl Fn(&[Vec<f64>]) -> f64, estimate: f64, sorted: &[f64], alpha: f64) -> (f64, f64) {
    let below = sorted.iter().filter(|&&t| t < estimate).count() as f64;
    let equal = sorted.iter().filter(|&&t| t == estimate).count() as f64;
    let share = (below + equal / 2.0) / sorted.len() as f64;
    if share <= 0.0 || share >= 1.0 {
        return (alpha / 2.0, 1.0 - alpha / 2.0);
    }
    let z0 = normal_quantile(share);
    let (mut num, mut den) = (0.0, 0.0);
    let mut held: Vec<Vec<f64>> = data.to_vec();
    for g in 0..data.len() {
        let n = data[g].len();
        let jack: Vec<f64> = (0..n)
            .map(|i| {
                held[g] = data[g].iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &x)| x).collect();
                stat(&held)
            })
            .collect();
        held[g] = data[g].clone();
        if jack.iter().any(|t| !t.is_finite()) {
            return (alpha / 2.0, 1.0 - alpha / 2.0);
        }
        let mean = jack.iter().sum::<f64>() / n as f64;
        let nf = n as f64;
        for t in &jack {
            let u = (nf - 1.0) * (mean - t);
            num += u.powi(3) / nf.powi(3);
            den += u * u / (nf * nf);
        }
    }
    let a = if den > 0.0 { num / (6.0 * den.powf(1.5)) } else { 0.0 };
    let adjust = |z: f64| {
        let w = z0 + z;
        normal_cdf(z0 + w / (1.0 - a * w))
    };
    (adjust(normal_quantile(alpha / 2.0)), adjust(normal_quantile(1.0 - alpha / 2.0)))
}

/// The `p` quantile of sorted values, interpolated between the two nearest ranks (Hyndman
/// and Fan's type 7, R's default).
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    let h = (sorted.len() - 1) as f64 * p;
    let (i, frac) = (h.floor() as usize, h.fract());
    if i + 1 < sorted.len() { sorted[i] + frac * (sorted[i + 1] - sorted[i]) } else { sorted[i] }
}

/// Φ, the standard normal distribution function.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Φ⁻¹ for p in (0, 1): Acklam's rational approximation (relative error 1.15e-9), then one
/// Halley step on Φ, which leaves it at double precision.
pub fn normal_quantile(p: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "a probability in (0, 1): {p}");
    const A: [f64; 6] = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
    const B: [f64; 5] = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    const LOW: f64 = 0.02425;
    let x = if p < LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let e = normal_cdf(x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// The relative difference of two samples' centres in %, `100 (centre(b) / centre(a) - 1)`:
/// NaN when the baseline's centre is 0.
pub fn relative_change(a: &[f64], b: &[f64], centre: fn(&[f64]) -> f64) -> f64 {
    let (ca, cb) = (centre(a), centre(b));
    if ca == 0.0 { f64::NAN } else { 100.0 * (cb / ca - 1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{amean, median};
    use proptest::prelude::{any, prop_assert, prop_assert_eq, proptest, ProptestConfig};

    fn mean_of(s: &[Vec<f64>]) -> f64 {
        amean(&s[0])
    }
    fn diff_of(s: &[Vec<f64>]) -> f64 {
        amean(&s[1]) - amean(&s[0])
    }

    #[test]
    fn the_normal_quantile_inverts_the_distribution_function() {
        for (p, z) in [(0.5, 0.0), (0.975, 1.959_963_984_540_054), (0.025, -1.959_963_984_540_054), (0.999, 3.090_232_306_167_813), (1e-6, -4.753_424_308_822_899)] {
            assert!((normal_quantile(p) - z).abs() < 1e-12, "{p}: {}", normal_quantile(p));
            assert!((normal_cdf(z) - p).abs() < 1e-12 * p.max(1e-3), "{z}: {}", normal_cdf(z));
        }
    }

    #[test]
    fn quantiles_interpolate_between_ranks() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!((quantile(&v, 0.0), quantile(&v, 1.0), quantile(&v, 0.5)), (1.0, 4.0, 2.5));
        assert!((quantile(&v, 0.25) - 1.75).abs() < 1e-12);
    }

    #[test]
    fn the_generator_is_the_same_sequence_from_the_same_seed() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..5).map(|_| c.next_u64()).collect::<Vec<_>>());
        // SplitMix64's published first output from seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
        let mut r = Rng::new(3);
        let counts = (0..60_000).fold([0usize; 3], |mut c, _| {
            c[r.below(3)] += 1;
            c
        });
        assert!(counts.iter().all(|&n| (19_000..21_000).contains(&n)), "{counts:?}");
    }

    #[test]
    fn one_run_or_a_non_finite_statistic_has_no_interval() {
        let b = Bootstrap::default();
        assert!(b.interval(&[&[1.0]], mean_of, 0.95).is_none());
        assert!(b.interval(&[&[1.0, 2.0], &[3.0]], diff_of, 0.95).is_none());
        assert!(b.interval(&[&[0.0, 0.0], &[1.0, 2.0]], |s| relative_change(&s[0], &s[1], amean), 0.95).is_none());
    }

    #[test]
    fn runs_that_do_not_vary_give_a_point_interval() {
        for method in [Method::Percentile, Method::Bca] {
            let b = Bootstrap { method, ..Bootstrap::default() };
            let i = b.interval(&[&[5.0; 4], &[6.0; 4]], |s| relative_change(&s[0], &s[1], amean), 0.95).unwrap();
            assert!((i.estimate - 20.0).abs() < 1e-9 && i.lo == i.estimate && i.hi == i.estimate, "{method:?} {i:?}");
        }
    }

    /// The textbook case: the 95% interval of the mean of normal data covers the true mean in
    /// about 95% of data sets (the bootstrap's coverage falls short at small n: about 93% at
    /// n = 20 for the percentile interval, by simulation), and the difference of two means
    /// likewise; BCa covers at least as often here.
    #[test]
    fn intervals_cover_the_true_value_at_about_their_level_on_normal_data() {
        let mut rng = Rng::new(42);
        let sets = 400;
        for method in [Method::Percentile, Method::Bca] {
            let b = Bootstrap { resamples: 1000, seed: 9, method };
            let (mut one, mut two) = (0, 0);
            for _ in 0..sets {
                let x: Vec<f64> = (0..20).map(|_| 10.0 + 2.0 * rng.normal()).collect();
                let y: Vec<f64> = (0..20).map(|_| 13.0 + 1.0 * rng.normal()).collect();
                let i = b.interval(&[&x], mean_of, 0.95).unwrap();
                one += (i.lo <= 10.0 && 10.0 <= i.hi) as usize;
                let d = b.interval(&[&x, &y], diff_of, 0.95).unwrap();
                two += (d.lo <= 3.0 && 3.0 <= d.hi) as usize;
            }
            let (c1, c2) = (one as f64 / sets as f64, two as f64 / sets as f64);
            assert!((0.89..=0.985).contains(&c1), "{method:?} one-sample coverage {c1}");
            assert!((0.89..=0.985).contains(&c2), "{method:?} two-sample coverage {c2}");
        }
    }

    /// A skewed statistic: the relative change of two exponential samples' means. BCa's
    /// correction brings its coverage near the level where the percentile interval's lags.
    #[test]
    fn bca_covers_a_skewed_ratio_at_about_its_level() {
        let mut rng = Rng::new(5);
        let sets = 300;
        let b = Bootstrap { resamples: 1000, seed: 3, method: Method::Bca };
        let mut covered = 0;
        for _ in 0..sets {
            let x: Vec<f64> = (0..15).map(|_| -100.0 * rng.uniform().ln()).collect();
            let y: Vec<f64> = (0..15).map(|_| -120.0 * rng.uniform().ln()).collect();
            let i = b.interval(&[&x, &y], |s| relative_change(&s[0], &s[1], amean), 0.9).unwrap();
            covered += (i.lo <= 20.0 && 20.0 <= i.hi) as usize;
        }
        let c = covered as f64 / sets as f64;
        assert!((0.82..=0.96).contains(&c), "coverage {c}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any data: the interval holds the estimate, is ordered, is the same on a rerun, and a
        /// shift of both samples moves a difference of medians by nothing.
        #[test]
        fn intervals_are_ordered_hold_the_estimate_and_repeat(
            a in proptest::collection::vec(-1e3f64..1e3, 2..12),
            b in proptest::collection::vec(-1e3f64..1e3, 2..12),
            shift in -1e3f64..1e3,
            bca in any::<bool>(),
        ) {
            let boot = Bootstrap { resamples: 300, seed: 11, method: if bca { Method::Bca } else { Method::Percentile } };
            let med = |s: &[Vec<f64>]| median(&s[1]) - median(&s[0]);
            let i = boot.interval(&[&a, &b], med, 0.9).unwrap();
            prop_assert!(i.lo <= i.hi);
            prop_assert!(i.lo <= i.estimate + 1e-9 && i.estimate <= i.hi + 1e-9 || bca, "{i:?}");
            prop_assert_eq!(boot.interval(&[&a, &b], med, 0.9).unwrap(), i);
            let (sa, sb): (Vec<f64>, Vec<f64>) = (a.iter().map(|x| x + shift).collect(), b.iter().map(|x| x + shift).collect());
            let j = boot.interval(&[&sa, &sb], med, 0.9).unwrap();
            prop_assert!((j.estimate - i.estimate).abs() < 1e-6 && (j.lo - i.lo).abs() < 1e-6 && (j.hi - i.hi).abs() < 1e-6);
        }

        /// A higher level never gives a narrower interval (the same resamples, read further out).
        #[test]
        fn a_higher_level_is_no_narrower(a in proptest::collection::vec(0f64..100.0, 3..10)) {
            let boot = Bootstrap { resamples: 500, seed: 2, method: Method::Percentile };
            let narrow = boot.interval(&[&a], mean_of, 0.8).unwrap();
            let wide = boot.interval(&[&a], mean_of, 0.99).unwrap();
            prop_assert!(wide.lo <= narrow.lo && narrow.hi <= wide.hi);
        }
    }
}
