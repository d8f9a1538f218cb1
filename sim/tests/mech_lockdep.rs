//! The mechanism's lock-order checker runs in the simulator's tests (this
//! crate's tests build `kernel/mech` with its `lockdep` feature and
//! `platform::run` turns it on): each wrong order `test_lockdep=` provokes
//! in the kernel panics here too, naming the fault; the same run without
//! the provocation finishes.

mod common;

use fairway_sim::platform::{self, SimConfig};
use fairway_sim::Machine;
use mech::lockdep_provoke::Provoke;

#[test]
fn the_lock_order_checker_catches_each_provoked_fault() {
    if let Some(arg) = common::child_arg() {
        let what = Provoke::ALL.iter().find(|(n, _)| *n == arg).map(|&(_, p)| p);
        let report = platform::run(&Machine::from_smp("2", 1).unwrap(), SimConfig::default(), move || {
            assert!(mech::lock::lockdep::enabled(), "the checker is on");
            if let Some(p) = what {
                mech::lockdep_provoke::provoke(p);
            }
        });
        common::child_result(&format!("end={}\n", report.end));
        return;
    }
    let name = "the_lock_order_checker_catches_each_provoked_fault";
    let (ok, out, _) = common::run_child(name, "none");
    assert!(ok && out.contains("end=finished"), "{out}");
    for (what, _) in Provoke::ALL {
        let (ok, out, err) = common::run_child(name, what);
        assert!(!ok, "{what}: the run finished: {out}");
        assert!(err.contains("lockdep"), "{what}: the panic does not name the checker:\n{err}");
        eprintln!("{what}: {}", err.lines().find(|l| l.contains("lockdep")).unwrap_or(""));
    }
}
