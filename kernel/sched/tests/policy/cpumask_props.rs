//! Property tests of `CpuMask` at its full size (1024 CPUs): every operation
//! agrees with a `BTreeSet` model for sets anywhere in `0..1024`, CPUs above
//! 255 and the word boundaries (63/64, 255/256, 1023) included.

use std::collections::BTreeSet;

use proptest::prelude::*;
use sched::cpumask::{nr_cpu_words, CpuMask, MAX_CPUS};

/// CPUs near the word boundaries are drawn often: that is where an
/// off-by-one in a word loop shows.
fn cpu() -> impl Strategy<Value = usize> {
    prop_oneof![
        0..MAX_CPUS,
        prop::sample::select(vec![0, 1, 62, 63, 64, 65, 127, 128, 255, 256, 511, 512, 767, 768, 1022, 1023]),
    ]
}

fn set() -> impl Strategy<Value = BTreeSet<usize>> {
    prop::collection::btree_set(cpu(), 0..40)
}

fn mask(s: &BTreeSet<usize>) -> CpuMask {
    s.iter().copied().collect()
}

fn list(m: &CpuMask) -> Vec<usize> {
    m.iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn queries_agree_with_a_set(s in set(), probe in cpu()) {
        let m = mask(&s);
        prop_assert_eq!(list(&m), s.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(m.weight() as usize, s.len());
        prop_assert_eq!(m.is_empty(), s.is_empty());
        prop_assert_eq!(m.first(), s.iter().next().copied());
        prop_assert_eq!(m.next(probe), s.range(probe + 1..).next().copied());
        prop_assert_eq!(m.contains(probe), s.contains(&probe));
        let wrapped: Vec<usize> = s.range(probe..).chain(s.range(..probe)).copied().collect();
        prop_assert_eq!(m.iter_wrap(probe).collect::<Vec<_>>(), wrapped);
        prop_assert_eq!(CpuMask::from_bits(m.bits()), m);
        prop_assert_eq!(CpuMask::from_words_in_use(|i| m.bits()[i]), m);
        prop_assert!(s.iter().all(|&c| c < 64 * nr_cpu_words()));
    }

    #[test]
    fn algebra_agrees_with_a_set(a in set(), b in set()) {
        let (ma, mb) = (mask(&a), mask(&b));
        prop_assert_eq!(list(&ma.union(&mb)), a.union(&b).copied().collect::<Vec<_>>());
        prop_assert_eq!(list(&ma.intersection(&mb)), a.intersection(&b).copied().collect::<Vec<_>>());
        let (mut u, mut i, mut w) = (ma, ma, ma);
        u.union_with(&mb);
        i.intersect_with(&mb);
        w.union_with_words(|k| mb.bits()[k]);
        prop_assert_eq!((u, i, w), (ma.union(&mb), ma.intersection(&mb), ma.union(&mb)));
        prop_assert_eq!(list(&ma.difference(&mb)), a.difference(&b).copied().collect::<Vec<_>>());
        prop_assert_eq!(ma.is_subset(&mb), a.is_subset(&b));
        prop_assert_eq!(ma.intersects(&mb), !a.is_disjoint(&b));
        prop_assert_eq!(ma == mb, a == b);
    }

    #[test]
    fn set_and_clear_agree_with_a_set(s in set(), ops in prop::collection::vec((cpu(), any::<bool>()), 0..40)) {
        let (mut m, mut model) = (mask(&s), s.clone());
        for (c, add) in ops {
            if add {
                prop_assert!(m.set(c));
                model.insert(c);
            } else {
                m.clear(c);
                model.remove(&c);
            }
        }
        prop_assert_eq!(list(&m), model.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn cpulists_round_trip(s in set()) {
        let m = mask(&s);
        let text = m.to_string();
        prop_assert_eq!(text.parse::<CpuMask>(), Ok(m), "{}", text);
    }

    #[test]
    fn first_n_is_a_prefix(n in 0usize..1100) {
        let m = CpuMask::first_n(n);
        prop_assert_eq!(m.weight() as usize, n.min(MAX_CPUS));
        prop_assert_eq!(m.iter().last(), n.min(MAX_CPUS).checked_sub(1));
        prop_assert_eq!(m, (0..n).collect::<CpuMask>());
    }
}

#[test]
fn out_of_range_cpus_are_refused_not_stored() {
    let mut m = CpuMask::new();
    assert!(!m.set(MAX_CPUS) && !m.set(usize::MAX));
    assert!(m.is_empty() && !m.contains(MAX_CPUS));
    assert_eq!(CpuMask::first_n(MAX_CPUS).weight() as usize, MAX_CPUS);
    assert!("0-1024".parse::<CpuMask>().is_err());
}
