//! The seam of fault injection: where the paths below `fault.rs` (the
//! reschedule IPI, the wakeup, the waits, the exit, the idle loop, the
//! timer interrupt and the reschedule IPI's preemption) let it act, without
//! naming it. `fault.rs` installs itself here when `fault=` is given and
//! arms the seam when the workload starts.
//!
//! Each hook is one relaxed load of a flag that is false unless injection is
//! armed, inlined where it stands; only an armed hook calls through the
//! installed [`Injector`] (out of line, cold).

use core::sync::atomic::{AtomicBool, Ordering};

/// What fault injection does at each hook (`fault.rs` implements it; every
/// method is called only while armed).
pub trait Injector: Sync {
    /// `resched::send_resched_ipi` to `target`: true if the injector took the IPI
    /// (held it back, or sent it itself ahead of held ones).
    fn take_ipi(&self, target: usize) -> bool;
    /// The idle loop of `cpu`, before it waits: sends its held IPIs that are
    /// due; true if any is left (the loop then waits awake). `halts`: the
    /// loop is about to halt, interrupts off since its last look for work
    /// (the injector may keep them off a while longer there); false: it is
    /// about to poll, interrupts on.
    fn idle_before_wait(&self, cpu: usize, halts: bool) -> bool;
    /// A preemption point: after a wakeup in thread context, before the
    /// switch of a wait, a timed sleep or an exit.
    fn preempt_point(&self);
    /// The running task is back from `schedule()` in a wait and found its
    /// condition false: it sleeps again.
    fn after_wait(&self);
    /// A preemption (tick or reschedule IPI) is about to switch.
    fn note_preemption(&self);
    /// A tick of `cpu` (interrupts off, no lock held).
    fn tick(&self, cpu: usize);
}

static ARMED: AtomicBool = AtomicBool::new(false);
static INJECTOR: spin::Once<&'static dyn Injector> = spin::Once::new();

/// Installs `injector` (at boot, before any CPU schedules; once).
pub fn install(injector: &'static dyn Injector) {
    INJECTOR.call_once(|| injector);
}

/// From now on the hooks call the installed injector (when the workload
/// starts); nothing without one.
pub fn arm() {
    if INJECTOR.is_completed() {
        ARMED.store(true, Ordering::Release);
    }
}

/// Whether injection is armed: the one test every hook makes.
#[inline(always)]
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed)
}

#[cold]
#[inline(never)]
fn injector() -> &'static dyn Injector {
    *INJECTOR.get().expect("armed only once installed")
}

/// See [`Injector::take_ipi`]; false when not armed.
#[inline(always)]
pub fn take_ipi(target: usize) -> bool {
    armed() && injector().take_ipi(target)
}

/// See [`Injector::idle_before_wait`]; false when not armed.
#[inline(always)]
pub fn idle_before_wait(cpu: usize, halts: bool) -> bool {
    armed() && injector().idle_before_wait(cpu, halts)
}

/// See [`Injector::preempt_point`].
#[inline(always)]
pub fn preempt_point() {
    if armed() {
        injector().preempt_point();
    }
}

/// See [`Injector::after_wait`].
#[inline(always)]
pub fn after_wait() {
    if armed() {
        injector().after_wait();
    }
}

/// See [`Injector::note_preemption`].
#[inline(always)]
pub fn note_preemption() {
    if armed() {
        injector().note_preemption();
    }
}

/// See [`Injector::tick`].
#[inline(always)]
pub fn tick(cpu: usize) {
    if armed() {
        injector().tick(cpu);
    }
}
