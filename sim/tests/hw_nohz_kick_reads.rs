//! A busy CPU's tick decides whether to kick an idle CPU into balancing
//! for the tickless ones (`balance::nohz::balancer_kick`) from its own
//! state and the machine-wide NOHZ words; of the other CPUs it reads only
//! the idle candidates up to the first really idle one (fair.c:
//! nohz_balancer_kick(), find_new_ilb()). Reading every CPU's published
//! statistics at each such tick costs a big machine with costly remote
//! lines more than the tick itself: with 32 lines a CPU at 300 ns across
//! the sockets, the 160 CPUs of `avg-idle-2013` spent their whole run in
//! CPU 0's tick before the workload started.
//!
//! Here: 64 CPUs on 2 sockets, `dd-2024,only=remote` (remote lines priced,
//! nothing else), two hogs pinned to CPU 0 (two runnable tasks: every due
//! tick kicks), the other 63 CPUs idle and tickless, for 200 ms. CPU 0's
//! remote reads (`@fw hwcost remote_reads`) are its kicks' few reads plus
//! its own periodic balance passes; with every CPU read at each kick they
//! are over 60 a kick and this fails.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fairway_sim::hw::HwProfile;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::thread::Spawn;

#[test]
fn a_busy_tick_reads_few_other_cpus_to_decide_a_nohz_kick() {
    let machine = Machine::from_smp("64,sockets=2,cores=32", 2).unwrap();
    let hw = HwProfile::parse("dd-2024,only=remote").unwrap();
    let report = platform::run(&machine, SimConfig { hw, ..SimConfig::default() }, move || {
        let stop = Arc::new(AtomicBool::new(false));
        let hogs: Vec<_> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                mech::thread::spawn(Spawn::new("hog").pin(0), move || {
                    while !stop.load(Ordering::Relaxed) {
                        burn_ns(50_000);
                    }
                })
                .unwrap()
            })
            .collect();
        mech::thread::sleep_ns(200_000_000);
        mech::balance::nohz::print_counters(0);
        stop.store(true, Ordering::Relaxed);
        for t in &hogs {
            mech::thread::join(t);
        }
    });
    assert_eq!(report.end, "finished");
    let nohz = report.output.iter().find(|l| l.contains("@fw nohz cpu=0 ")).expect("CPU 0's @fw nohz line");
    let kicks: u64 = nohz.split_whitespace().find_map(|w| w.strip_prefix("kicks_sent=")).unwrap().parse().unwrap();
    let reads = report.hw[0].remote_reads;
    eprintln!("CPU 0: {kicks} kicks, {reads} remote reads");
    assert!(kicks >= 20, "the busy CPU kicked idle CPUs into balancing: {nohz}");
    assert!(reads < kicks * 8, "{reads} remote reads for {kicks} kicks: the kick read more than its candidates");
}
