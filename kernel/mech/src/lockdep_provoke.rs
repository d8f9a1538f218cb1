//! `test_lockdep=`: locks taken wrongly on purpose, so that the lockdep
//! scenarios can show the checker (`lock/lockdep.rs`) catches each kind of
//! fault. It takes runqueue and task locks, so it sits above them, and takes
//! them with `lock()`, which presents no held lock: the order is the
//! runtime checker's to see (`lock_inside` would not compile here).

/// What `test_lockdep=` provokes on purpose (the lockdep scenarios).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provoke {
    /// A runqueue lock, then a task's `pi_lock` (the table says pi_lock first).
    Inversion,
    /// CPU 1's runqueue, then CPU 0's (descending).
    RqDescending,
    /// A runqueue lock taken as if its guard had not turned interrupts off.
    IrqsOn,
    /// `schedule()` with a runqueue lock held: its test of held guards
    /// (`Platform::give_up_cpu_unheld`) must panic instead of switching.
    ScheduleHeld,
}

impl Provoke {
    pub const ALL: [(&'static str, Provoke); 4] = [
        ("inversion", Provoke::Inversion),
        ("rq_descending", Provoke::RqDescending),
        ("irqs_on", Provoke::IrqsOn),
        ("schedule_held", Provoke::ScheduleHeld),
    ];
}

/// Takes locks in a wrong way, as `test_lockdep=` asked: the checker must
/// panic before this returns.
pub fn provoke(what: Provoke) {
    crate::kprintln!("test_lockdep: taking locks wrongly on purpose ({:?})", what);
    match what {
        Provoke::Inversion => {
            let me = crate::task::current();
            let _rq = crate::rq::lock(crate::platform::cpu_id());
            let _pi = me.pi_lock.lock();
        }
        Provoke::RqDescending => {
            let _b = crate::rq::lock(1);
            let _a = crate::rq::lock(0);
        }
        Provoke::IrqsOn => {
            // What an IrqMutex would do if its guard came after the spin.
            crate::platform::irq_enable();
            crate::lock::lockdep::acquire(crate::lock::level::LockClass::Runqueue, crate::platform::cpu_id() as u32, false);
            crate::lock::lockdep::release(crate::lock::level::LockClass::Runqueue, crate::platform::cpu_id() as u32);
        }
        Provoke::ScheduleHeld => {
            let _rq = crate::rq::lock(crate::platform::cpu_id());
            crate::schedule::schedule();
        }
    }
}
