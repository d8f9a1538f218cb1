use super::*;

#[test]
fn weights_are_linuxs() {
    assert_eq!(nice_weight(-5), Some(3121));
    assert_eq!(nice_weight(0), Some(1024));
    assert_eq!(nice_weight(5), Some(335));
    assert_eq!(nice_weight(-20), Some(88761));
    assert_eq!(nice_weight(19), Some(15));
    assert_eq!(nice_weight(20), None);
    // Each nice step is ~1.25x.
    for w in PRIO_TO_WEIGHT.windows(2) {
        let r = w[0] as f64 / w[1] as f64;
        assert!((1.2..1.3).contains(&r), "{w:?}");
    }
}

#[test]
fn base_slice_scales_with_log_cpus() {
    let want = [(1, 700_000), (2, 1_400_000), (3, 1_400_000), (4, 2_100_000)];
    for (n, s) in want {
        assert_eq!(base_slice_ns(n), s, "{n}");
    }
    assert_eq!(base_slice_ns(8), 2_800_000);
    assert_eq!(base_slice_ns(64), 2_800_000);
}
