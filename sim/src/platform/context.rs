//! The contexts: each is a stackful coroutine (`corosensei`), created for a
//! thread or a CPU's boot flow, suspended at the points listed in the
//! module docs of `platform`, and resumed by the CPU loop (`cpu_loop`).

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::{cpu_id, with, with_ctx, Act, Req, Resumed, CPU, CTXS, YIELDER};
use crate::hw::cache::Footprint;

pub(super) type Co = Coroutine<Resumed, Req, (), DefaultStack>;

/// One mechanism context.
pub(super) struct Ctx {
    /// `Platform::context_on_cpu`: claimed by `switch_frames`.
    pub(super) on_cpu: bool,
    /// The coroutine; `None` while it runs (the engine took it out to resume it).
    pub(super) co: Option<Co>,
    /// A boot flow's (idle task's) context: the CPU; its coroutine is shared
    /// by every handle of that CPU (`context_running_here`).
    pub(super) boot_of: Option<usize>,
    /// The CPU it last ran on (the migration penalty of `switch_frames`).
    pub(super) last_cpu: Option<usize>,
    /// `context_free` came while its coroutine was out: drop it when back.
    pub(super) freed: bool,
    /// Its working set and where it left it (the hardware model's caches).
    pub(super) fp: Footprint,
    /// The refill of its last arrival, not yet run (ns; paid as a burn
    /// when it next runs with interrupts on: `hw::pay_refill`).
    pub(super) refill_owed: u64,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // At the end of the process (the thread-local's destructor) every
        // context still suspended is dropped without unwinding its stack.
        if let Some(co) = self.co.take() {
            discard(co);
        }
    }
}

/// Suspends the running coroutine with `req`; returns what the engine
/// resumed it with.
pub(super) fn suspend(req: Req) -> Resumed {
    let y = YIELDER.with(|y| y.get());
    assert!(!y.is_null(), "sim: {req:?} outside a simulated context");
    charge_wakeups();
    // SAFETY: `YIELDER` holds the yielder of the coroutine running now: each
    // coroutine stores its own when it starts and again after every return
    // from `suspend` (below), and only the running coroutine's code calls
    // this. A coroutine's yielder lives on its own stack for as long as its
    // body runs, which is at least as long as this call.
    let r = unsafe { &*y }.suspend(req);
    YIELDER.with(|c| c.set(y));
    r
}

/// The kernel work this context did since its last suspension (its
/// wakeups) elapses now, on its own clock, before it goes on: called where
/// interrupts come back on (`irqs_on_again`), the first point after a wakeup
/// where a real CPU's code may be interrupted. The waker is still current
/// then, so the wakeup's time is in its runtime at its next `update_curr`, as
/// in the kernel, where `try_to_wake_up()` runs in the waker's context; paid
/// only at the next switch, it went to whichever task ran next, and a pipe
/// partner that woke the other and then slept had run 0 ns since the wakee
/// was placed: lag 0, eligible, never a delayed dequeue.
pub(super) fn pay_own_work() {
    charge_wakeups();
    let c = cpu_id();
    // Never inside a section: a coroutine suspends only where no lock is held.
    if with(|s| s.cpus[c].charge_ns + s.cpus[c].section_ns > 0 && s.cpus[c].guards == 0) {
        match suspend(Req::Pay) {
            Resumed::Done => {}
            r => unreachable!("sim: a payment resumed with {r:?}"),
        }
    }
}

/// Charges `wakeup_ns` per wakeup this CPU made since the last charge.
fn charge_wakeups() {
    let c = cpu_id();
    let n = mech::wakeup::ttwu_stats(c).0;
    with(|s| {
        let cpu = &mut s.cpus[c];
        if n > cpu.ttwu_seen {
            cpu.charge_ns += (n - cpu.ttwu_seen) * s.cost.wakeup_ns;
            cpu.ttwu_seen = n;
        }
    });
}

pub(super) fn new_coroutine(stack_bytes: usize, body: impl FnOnce() + 'static) -> Co {
    let stack = DefaultStack::new(stack_bytes).unwrap_or_else(|e| panic!("sim: no stack of {stack_bytes} bytes for a context: {e}"));
    Coroutine::with_stack(stack, move |y: &Yielder<Resumed, Req>, _first: Resumed| {
        YIELDER.with(|c| c.set(y as *const _));
        body();
    })
}

/// A new context; `wss`: its working set until it declares one (an idle
/// task's is 0).
pub(super) fn new_ctx(co: Option<Co>, boot_of: Option<usize>, on_cpu: bool, wss: u64) -> usize {
    CTXS.with(|c| {
        let mut c = c.borrow_mut();
        let ctx = Ctx { on_cpu, co, boot_of, last_cpu: boot_of, freed: false, fp: Footprint::new(wss), refill_owed: 0 };
        match c.iter().position(Option::is_none) {
            Some(i) if boot_of.is_none() => {
                c[i] = Some(ctx);
                i + 1
            }
            _ => {
                c.push(Some(ctx));
                c.len()
            }
        }
    })
}

/// Drops a coroutine that can no longer run: a thread's body never returns
/// (its entry is `-> !`), so its stack is given back without unwinding it
/// (what it still holds is leaked, as an exited kernel thread's stack holds
/// nothing anyone reads).
fn discard(co: Co) {
    if co.started() && !co.done() {
        let mut co = co;
        // SAFETY: the coroutine is suspended and will never be resumed (its
        // context was freed); resetting it without unwinding skips the
        // destructors of what its stack holds, which only leaks them.
        unsafe { co.force_reset() };
        drop(co);
    }
}

/// Resumes context `h` on CPU `c`; returns what it asks next.
pub(super) fn resume_ctx(c: usize, h: usize, msg: Resumed) -> Req {
    CPU.with(|x| x.set(c));
    // An idle task's context (`context_running_here`) names its CPU's boot
    // flow, whose coroutine the engine's own handle owns.
    let owner = match with_ctx(h, |x| (x.co.is_none(), x.boot_of)) {
        (true, Some(b)) => with(|s| s.boot_ctx[b]),
        _ => h,
    };
    let mut co = with_ctx(owner, |x| x.co.take()).unwrap_or_else(|| panic!("sim: context {h} resumed on CPU {c} while it runs"));
    with(|s| s.cpus[c].act = Act::Running);
    let r = co.resume(msg);
    if with_ctx(owner, |x| x.freed) {
        CTXS.with(|cs| cs.borrow_mut()[owner - 1] = None);
        discard(co);
    } else {
        with_ctx(owner, |x| x.co = Some(co));
    }
    match r {
        CoroutineResult::Yield(req) => req,
        CoroutineResult::Return(()) => panic!("sim: context {h} returned (a thread's entry never does)"),
    }
}
