//! Sorted latency samples, as the latency-measuring workloads (schbench, fserver, latency)
//! report them: nearest-rank percentiles, and the log-linear `@fw hist` buckets that
//! `cargo xtask bench`, `compare` and `trace` draw.

/// Percentile `p_milli`/1000 of sorted `v` by the nearest rank: the smallest sample with at
/// least that fraction of the samples at or below it (`v[ceil(n·p) - 1]`); 0 when empty.
pub(super) fn pct(v: &[u64], p_milli: u64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (v.len() as u64 * p_milli).div_ceil(1000).max(1) as usize;
    v[rank.min(v.len()) - 1]
}

/// The bucket `[lo, hi)` of a microsecond sample: one per microsecond below 16, above it 8 per
/// power of two (each an eighth of its power of two wide).
fn bucket(v: u64) -> (u64, u64) {
    if v < 16 {
        return (v, v + 1);
    }
    let shift = 63 - v.leading_zeros() - 3;
    let lo = (v >> shift) << shift;
    (lo, lo + (1 << shift))
}

/// Prints the non-empty buckets of sorted microsecond samples, ascending, as
/// `@fw hist workload= kind= lo_us= hi_us= count=`; their counts add up to `us.len()`.
pub(super) fn print_hist(workload: &str, kind: &str, us: impl IntoIterator<Item = u64>) {
    let mut open: Option<(u64, u64, usize)> = None;
    let flush = |b: (u64, u64, usize)| {
        mech::record!("hist", "workload={} kind={} lo_us={} hi_us={} count={}", workload, kind, b.0, b.1, b.2);
    };
    for v in us {
        match &mut open {
            Some((_, hi, n)) if v < *hi => *n += 1,
            _ => {
                if let Some(b) = open.take() {
                    flush(b);
                }
                let (lo, hi) = bucket(v);
                open = Some((lo, hi, 1));
            }
        }
    }
    if let Some(b) = open {
        flush(b);
    }
}
