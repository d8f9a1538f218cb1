//! Remote cache lines (`Platform::remote_access`) by their effect on the
//! idle-CPU scan: the kernel's `wakeplace` workload on 2 sockets of 16 CPUs
//! (one LLC each), a waker on CPU 0 waking a task allowed on two CPUs of
//! one LLC, the first of which (its previous CPU) runs a hog, so every
//! wakeup scans that LLC for the other (`sis_util=off`: no depth limit; the
//! span of two LLCs, or one of 16 CPUs, is read as the scan goes, not copied
//! first). The scan's time per CPU examined
//! (`@fw sis time_ns / scanned`) is the loop's instructions (170 ns) plus
//! the examined CPU's published figures, `snapshot_lines` lines at the
//! distance: within CPU 0's LLC `line_same_llc_ns`, in the other socket's
//! `line_other_node_ns` (`sis-2021,only=remote`: 48 and 136 ns). With the
//! remote read removed both scans cost 170 ns a CPU and this fails.

use std::process::Command;

use fairway_sim::hw::HwProfile;

/// `@fw sis cpu=0` of one `fairway-sim` run: (scanned, time_ns).
fn scan(prev: usize, allowed: u64, hogs: u64, hw: &str) -> (u64, u64) {
    let line = format!("workload=wakeplace,waker=0,prev={prev},rounds=20,allowed_mask={allowed},hog_mask={hogs},home=1,busy_us=20,sleep_us=100,warm_ms=5 sis_util=off");
    let out = Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", "32,sockets=2,cores=16", "--numa", "2", "--hw", hw, "--", &line])
        .output()
        .expect("run fairway-sim");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let sis = text.lines().find(|l| l.starts_with("@fw sis cpu=0 ")).unwrap_or_else(|| panic!("no @fw sis line:\n{text}"));
    let f = |k: &str| -> u64 { sis.split_whitespace().find_map(|w| w.strip_prefix(&format!("{k}=")[..])).unwrap().parse().unwrap() };
    (f("scanned"), f("time_ns"))
}

#[test]
fn an_idle_cpu_scan_across_the_sockets_costs_more_than_one_within_the_llc() {
    let hw = "sis-2021,only=remote";
    let p = HwProfile::parse(hw).unwrap();
    let per_cpu = |line: u64| fairway_sim::platform::prices::BALANCE_INSTRUCTIONS_PER_CPU + p.snapshot_lines * line;
    // The wakee allowed on CPUs 1 and 2 (CPU 0's LLC), a hog on 1.
    let (near_n, near_ns) = scan(1, 0b110, 0b10, hw);
    // ... or on 16 and 17 (the other socket's), a hog on 16.
    let (far_n, far_ns) = scan(16, 0b11 << 16, 1 << 16, hw);
    assert!(near_n >= 20 && far_n >= 20, "every wakeup scanned: {near_n} and {far_n} CPUs");
    assert_eq!(near_ns, near_n * per_cpu(p.line_ns[1]), "within the LLC: {near_ns} ns for {near_n} CPUs");
    assert_eq!(far_ns, far_n * per_cpu(p.line_ns[3]), "across the sockets: {far_ns} ns for {far_n} CPUs");
    eprintln!("per CPU examined: within the LLC {} ns, across the sockets {} ns", near_ns / near_n, far_ns / far_n);
}
