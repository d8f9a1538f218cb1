//! The failure report: what failed, the command line that reruns the seed,
//! and each failing or stuck thread's last operations.

use super::*;

/// The failure report: what failed, how to rerun it, and the operations of
/// every thread involved.
pub(super) fn report_failure(w: &World, books: &[(&str, bool)], stuck: u64) {
    mech::kprintln!(
        "torture: FAILED with seed {}: rerun with workload=torture,ms={},seed={},threads={} on {} CPUs",
        w.seed,
        w.ms,
        w.seed,
        w.threads,
        w.cpus.len()
    );
    for (what, held) in books {
        if !held {
            mech::kprintln!("torture: books do not balance: {}", what);
        }
    }
    if stuck > 0 {
        mech::kprintln!("torture: {} thread(s) still not done {} s after the stop (a lost wakeup or a hung CPU)", stuck, GRACE_NS / 1_000_000_000);
    }
    for (i, s) in w.slots.iter().enumerate() {
        if !s.bad.load(Ordering::Relaxed) {
            continue;
        }
        let task = s.task.lock().clone();
        let (id, state, cpu) = match &task {
            Some(t) => (t.id, t.state(), t.cpu.load(Ordering::Relaxed)),
            None => (0, TaskState::Dead, 0),
        };
        let blocked = task.as_ref().and_then(|t| *t.blocked_at.lock());
        let mut ops = String::new();
        let next = s.next.load(Ordering::Relaxed);
        for k in next.saturating_sub(RING)..next {
            let code = s.ring[k % RING].load(Ordering::Relaxed);
            let _ = write!(ops, "{}{}", if ops.is_empty() { "" } else { "," }, describe(code));
            let _ = write!(ops, "@{}us", s.ring_us[k % RING].load(Ordering::Relaxed));
        }
        let doing = s.doing.load(Ordering::Relaxed);
        mech::kprintln!(
            "torture: thread {} (task {}, {:?} on CPU {}, done {}){}{}: last operations, oldest first: {}",
            i,
            id,
            state,
            cpu,
            s.done.load(Ordering::Relaxed),
            if doing == u64::MAX { "" } else { " in " },
            if doing == u64::MAX { String::new() } else { describe(doing) },
            ops
        );
        if let Some(at) = blocked {
            mech::kprintln!("torture: thread {} last blocked at {}:{}", i, at.file(), at.line());
        }
        mech::record!(
            "torture_thread",
            "thread={} task={} state={:?} cpu={} done={} doing={} ops={}",
            i,
            id,
            state,
            cpu,
            s.done.load(Ordering::Relaxed) as u8,
            if doing == u64::MAX { String::from("-") } else { describe(doing) },
            if ops.is_empty() { String::from("-") } else { ops }
        );
    }
    if stuck > 0 {
        mech::debug::dump_all();
    }
}

/// `name(arg)` of an encoded operation.
pub(super) fn describe(code: u64) -> String {
    let mut s = String::new();
    match OPS.get((code >> 56) as usize) {
        Some((_, name, _)) => {
            let _ = write!(s, "{}({})", name, code & ((1 << 56) - 1));
        }
        None => s.push('-'),
    }
    s
}

