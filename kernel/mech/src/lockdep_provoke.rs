//! `test_lockdep=`: locks taken wrongly on purpose, so that the lockdep
//! scenarios can show the checker (`sync/lockdep.rs`) catches each kind of
//! fault. It takes runqueue and task locks, so it sits in the scheduler layer,
//! above the checker.

/// What `test_lockdep=` provokes on purpose (the lockdep scenarios).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provoke {
    /// A runqueue lock, then a task's `pi_lock` (the table says pi_lock first).
    Inversion,
    /// CPU 1's runqueue, then CPU 0's (descending).
    RqDescending,
    /// A runqueue lock taken as if its guard had not turned interrupts off.
    IrqsOn,
}

impl Provoke {
    pub const ALL: [(&'static str, Provoke); 3] = [
        ("inversion", Provoke::Inversion),
        ("rq_descending", Provoke::RqDescending),
        ("irqs_on", Provoke::IrqsOn),
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
            crate::sync::lockdep::acquire(crate::sync::lockdep::LockClass::Runqueue, crate::platform::cpu_id() as u8, false);
            crate::sync::lockdep::release(crate::sync::lockdep::LockClass::Runqueue, crate::platform::cpu_id() as u8);
        }
    }
}
