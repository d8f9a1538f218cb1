//! The bound of `CpuMask`'s word loops (`nr_cpu_words`) in a fresh process:
//! it starts at one word, and each way a CPU gets into a mask raises it before
//! the mask is read, so no operation misses a CPU. One test, so that the
//! steps run in this order (the bound is global and only grows): a path that
//! forgot to raise it leaves its CPU outside the loops and fails here.

use sched::cpumask::{cover_cpu, nr_cpu_words, CpuMask};

fn list(m: &CpuMask) -> Vec<usize> {
    m.iter().collect()
}

#[test]
fn every_way_in_raises_the_loops_bound() {
    assert_eq!(nr_cpu_words(), 1, "a fresh process loops over one word");
    let low = CpuMask::first_n(8);
    assert_eq!((low.weight(), nr_cpu_words()), (8, 1));

    // Raw words (the kernel's atomically published masks come back this way).
    let mut bits = [0u64; 16];
    bits[3] = 1 << 5;
    let raw = CpuMask::from_bits(bits);
    assert_eq!(nr_cpu_words(), 4);
    assert_eq!((raw.weight(), list(&raw), raw.first()), (1, vec![197], Some(197)));
    assert!(!raw.is_empty() && raw.intersects(&raw) && !raw.is_subset(&low));

    // A CPU's bit kept outside a mask (an atomic word), covered first, then read back.
    let mut kept = [0u64; 16];
    cover_cpu(300);
    kept[300 / 64] |= 1 << (300 % 64);
    assert_eq!(nr_cpu_words(), 5);
    let back = CpuMask::from_words_in_use(|i| kept[i]);
    assert_eq!((list(&back), back.words_in_use().len()), (vec![300], 5));

    // `set`, one CPU at a time.
    let mut one = CpuMask::new();
    assert!(one.set(500));
    assert_eq!(nr_cpu_words(), 8);
    assert_eq!(list(&one.union(&raw)), [197, 500]);

    // A cpulist (the command line's masks).
    let parsed: CpuMask = "700-701".parse().unwrap();
    assert_eq!(nr_cpu_words(), 11);
    assert_eq!(parsed.weight(), 2);
    assert_eq!(parsed.iter_wrap(701).collect::<Vec<_>>(), [701, 700]);

    // A prefix (the machine's CPUs).
    let all = CpuMask::first_n(1024);
    assert_eq!(nr_cpu_words(), 16);
    assert_eq!((all.weight(), all.iter().last()), (1024, Some(1023)));
    assert_eq!(all.difference(&parsed).weight(), 1022);
}
