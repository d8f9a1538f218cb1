//! Fault injection (`fault=MODE,...`, `fault_seed=N`): perturbations a
//! correct scheduler must survive, so that stress runs reach the windows
//! ordinary timing rarely opens.
//!
//! | mode | what it does | where |
//! |---|---|---|
//! | `ipi_delay` | holds one in 4 remote reschedule IPIs back for 50 us..1 ms | `resched::send_resched_ipi`; sent at the sender's first tick once due (an idle sender waits awake until then) |
//! | `ipi_reorder` | holds one in 2 back until the sender's next IPI, which overtakes it | the same |
//! | `spurious_wake` | at one in 8 ticks, wakes a sleeping task that nothing woke | the tick (`entry::timer_interrupt`) |
//! | `preempt_points` | at one in 8 passes, preempts the task by a reschedule IPI to itself | after every wakeup in thread context, and before the switch of a blocking wait or an exit (the task then sits preempted between `Sleeping`/`Dead` and its switch) |
//! | `cpu_stall` | at one in 32 ticks, spins 10..300 us with interrupts off | the tick |
//! | `idle_irqs_off` | CPU 1's idle loop, after its last look for work, keeps interrupts off until a wakeup for it comes (need-resched or its wake list), until 10 us before its own timer fires, or for 2 ms; then halts as usual | `idle_loop::idle_loop`, before the wait |
//!
//! Every decision comes from a per-CPU xorshift generator seeded from
//! `fault_seed` (default 1) and the CPU number, so under `-icount` a run
//! repeats exactly. Nothing is injected before the workload starts
//! ([`arm`]); `@fw faults` ([`report`]) gives the counts after it.
//!
//! Held IPIs are never lost: a CPU holds only IPIs it sends from a task
//! (never from an interrupt taken in its idle loop), sends them at its
//! first tick after they are due, and does not halt while it holds any
//! (`idle_loop::idle_loop` waits awake until they are due), so every held IPI
//! goes out within its delay plus one tick.
//!
//! `idle_irqs_off` widens a window a few instructions wide to a whole wait
//! for another CPU's wakeup: the wakee's CPU reaches its wait with the
//! reschedule IPI pending (`idle=last_polls` must not count it as waiting
//! then, kernel/src/arch/wait.rs). It acts on CPU 1 alone: under `-icount`
//! QEMU runs the vCPUs in turn, and a vCPU holding its interrupts off keeps
//! its turn, so the wakeup must come from a CPU that does not hold and that
//! QEMU runs before the holder once a timer of its own fires (the round
//! robin's pass after a timer starts at the first vCPU): CPU 0. Measured
//! with `idle-ipi-coming-smp3`'s workload: with the waker on CPU 0, 175..199
//! of 200 wakeups came during a hold, if hundreds of microseconds after the
//! waker's timer was due; with CPU 0 holding and the waker on CPU 1, 11.
//! At 3+ CPUs CPU 1 is not `idle=last_polls`' poller, which would poll with
//! interrupts on and take the IPI at once.
//! The hold ends before the CPU's own timer fires, so the only interrupt it
//! can find pending at its wait is another CPU's.
//!
//! The paths below this module reach it only through the seam `inject.rs`
//! (this module installs itself there as its [`Injector`]). When off (the
//! default) each hook is one test of `inject::armed`, a relaxed load of one
//! flag set only when the workload starts; a wait's fast path (its
//! condition holds once woken) passes one hook, a wakeup one. The mark of a
//! spurious wakeup lives here, beside the task, not in it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use crate::inject::Injector;
use crate::lock::{level, IrqMutex};
use crate::task::TaskId;
use crate::{platform::cpu_id, MAX_CPUS};

pub const IPI_DELAY: u8 = 1 << 0;
pub const IPI_REORDER: u8 = 1 << 1;
pub const SPURIOUS_WAKE: u8 = 1 << 2;
pub const PREEMPT_POINTS: u8 = 1 << 3;
pub const CPU_STALL: u8 = 1 << 4;
pub const IDLE_IRQS_OFF: u8 = 1 << 5;

/// The modes by their `fault=` names.
pub const MODES: [(&str, u8); 6] = [
    ("ipi_delay", IPI_DELAY),
    ("ipi_reorder", IPI_REORDER),
    ("spurious_wake", SPURIOUS_WAKE),
    ("preempt_points", PREEMPT_POINTS),
    ("cpu_stall", CPU_STALL),
    ("idle_irqs_off", IDLE_IRQS_OFF),
];

/// `fault_seed=` when not given.
pub const DEFAULT_SEED: u64 = 1;

/// Held-back IPIs: one in `IPI_DELAY_ONE_IN` is held for
/// `IPI_DELAY_MIN_NS..IPI_DELAY_MAX_NS`.
const IPI_DELAY_ONE_IN: u64 = 4;
const IPI_DELAY_MIN_NS: u64 = 50_000;
const IPI_DELAY_MAX_NS: u64 = 1_000_000;
/// One in `IPI_REORDER_ONE_IN` IPIs waits for the next one.
const IPI_REORDER_ONE_IN: u64 = 2;
/// One tick in `SPURIOUS_ONE_IN` wakes a sleeping task.
const SPURIOUS_ONE_IN: u64 = 8;
/// One preemption point pass in `PREEMPT_ONE_IN` preempts.
const PREEMPT_ONE_IN: u64 = 8;
/// One tick in `STALL_ONE_IN` stalls its CPU for `STALL_MIN_NS..STALL_MAX_NS`.
const STALL_ONE_IN: u64 = 32;
pub const STALL_MIN_NS: u64 = 10_000;
pub const STALL_MAX_NS: u64 = 300_000;
/// The CPU whose idle loop `idle_irqs_off` holds with interrupts off, at
/// most `IDLE_HOLD_MAX_NS` and ending `IDLE_HOLD_MARGIN_NS` before the
/// CPU's own timer fires (so that no tick or sleep deadline of its own is
/// pending when it waits).
pub const IDLE_HOLD_CPU: usize = 1;
pub const IDLE_HOLD_MAX_NS: u64 = 2_000_000;
const IDLE_HOLD_MARGIN_NS: u64 = 10_000;

static MODES_ON: AtomicU8 = AtomicU8::new(0);
static SEED: AtomicU64 = AtomicU64::new(DEFAULT_SEED);

/// Each CPU's generator (touched by that CPU only; a tick interrupting a
/// thread-context draw may repeat a value, which harms nothing).
static RNG: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

/// A reschedule IPI held back by its sender.
struct Held {
    target: usize,
    /// When it was asked for (ns).
    at: u64,
    /// When it goes out at the earliest (ns); 0: with the sender's next IPI
    /// (`ipi_reorder`), after it.
    due: u64,
}

/// Each CPU's held IPIs, in the order they were asked for.
static HELD: [IrqMutex<level::HeldIpis, Vec<Held>>; MAX_CPUS] = [const { IrqMutex::new(Vec::new()) }; MAX_CPUS];

/// The tasks a spurious wakeup woke that have not re-slept since, by id
/// (0: a free slot; idle tasks, id 0, are never woken). A mark is made
/// under the task's `pi_lock` while it is `Sleeping`, before the wakeup
/// lets it run, and taken by its wait while it is `Running`, so the two
/// never meet on one task; slots are claimed and freed by compare-exchange.
/// No lock: the wait reads it with interrupts on, and a lock there would
/// add a point where a pending interrupt is taken (another interleaving).
/// Slots past `SPURIOUS_SLOTS_USED` have never been used.
static SPURIOUSLY_WOKEN: [AtomicU32; SPURIOUS_SLOTS] = [const { AtomicU32::new(0) }; SPURIOUS_SLOTS];
static SPURIOUS_SLOTS_USED: AtomicUsize = AtomicUsize::new(0);
/// More than the threads a workload may have at once (`MAX_THREADS`): a
/// mark that finds no slot is not kept, so its task's re-sleep is not
/// counted (re-sleeps still never exceed spurious wakeups).
const SPURIOUS_SLOTS: usize = 2048;

/// What was injected, and what it did.
struct Counts {
    ipi_held: AtomicU64,
    ipi_late_ns: AtomicU64,
    ipi_reordered: AtomicU64,
    spurious_wakeups: AtomicU64,
    spurious_resleeps: AtomicU64,
    preempt_injected: AtomicU64,
    preempted_blocking: AtomicU64,
    stalls: AtomicU64,
    stall_ns: AtomicU64,
    idle_holds: AtomicU64,
    idle_holds_woken: AtomicU64,
}

static COUNTS: Counts = Counts {
    ipi_held: AtomicU64::new(0),
    ipi_late_ns: AtomicU64::new(0),
    ipi_reordered: AtomicU64::new(0),
    spurious_wakeups: AtomicU64::new(0),
    spurious_resleeps: AtomicU64::new(0),
    preempt_injected: AtomicU64::new(0),
    preempted_blocking: AtomicU64::new(0),
    stalls: AtomicU64::new(0),
    stall_ns: AtomicU64::new(0),
    idle_holds: AtomicU64::new(0),
    idle_holds_woken: AtomicU64::new(0),
};

#[inline]
fn has(mode: u8) -> bool {
    MODES_ON.load(Ordering::Relaxed) & mode != 0
}

/// The `fault=` value's modes, or the first name that is none.
pub fn parse_modes(value: &str) -> Result<u8, &str> {
    let mut modes = 0;
    for name in value.split(',') {
        match MODES.iter().find(|(n, _)| *n == name) {
            Some(&(_, m)) => modes |= m,
            None => return Err(name),
        }
    }
    Ok(modes)
}

/// The names of `modes`, comma-separated (`none` for none).
pub fn names(modes: u8) -> alloc::string::String {
    let v: Vec<&str> = MODES.iter().filter(|(_, m)| modes & m != 0).map(|(n, _)| *n).collect();
    if v.is_empty() { alloc::string::String::from("none") } else { v.join(",") }
}

/// Sets the modes and the seed (at boot, before any CPU schedules), and
/// installs the injector in the seam.
pub fn configure(modes: u8, seed: u64) {
    crate::inject::install(&Faults);
    MODES_ON.store(modes, Ordering::Relaxed);
    SEED.store(seed, Ordering::Relaxed);
    for (cpu, r) in RNG.iter().enumerate() {
        // Never zero: xorshift would stay there.
        r.store((seed ^ (cpu as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1, Ordering::Relaxed);
    }
}

/// Starts injecting (when the workload starts), if any mode is set.
pub fn arm() {
    if MODES_ON.load(Ordering::Relaxed) != 0 {
        crate::inject::arm();
    }
}

/// The injector `configure` installs.
struct Faults;

impl Injector for Faults {
    fn take_ipi(&self, target: usize) -> bool {
        take_ipi(target)
    }
    fn idle_before_wait(&self, cpu: usize, halts: bool) -> bool {
        if halts && cpu == IDLE_HOLD_CPU && has(IDLE_IRQS_OFF) {
            hold_irqs_off(cpu);
        }
        idle_holds_ipis(cpu)
    }
    fn preempt_point(&self) {
        preempt_point()
    }
    fn after_wait(&self) {
        after_wait()
    }
    fn note_preemption(&self) {
        note_preemption()
    }
    fn tick(&self, cpu: usize) {
        tick(cpu)
    }
}

/// A draw from this CPU's generator.
fn draw(cpu: usize) -> u64 {
    let mut x = RNG[cpu].load(Ordering::Relaxed);
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    RNG[cpu].store(x, Ordering::Relaxed);
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// True one time in `n`.
fn one_in(cpu: usize, n: u64) -> bool {
    draw(cpu).is_multiple_of(n)
}

// ---------------------------------------------------------------------------
// Reschedule IPIs

/// Called by `send_resched_ipi` for `target`: returns true if it took the
/// IPI (held it back, or sent it itself ahead of held ones).
fn take_ipi(target: usize) -> bool {
    let this = cpu_id();
    if target == this || !has(IPI_DELAY | IPI_REORDER) {
        return false;
    }
    // From an interrupt in the idle loop nothing would send it before the
    // halt: such IPIs go out at once.
    if crate::task::with_current(|t| t.is_idle) {
        return false;
    }
    let now = crate::rq::now_ns();
    let mut held = HELD[this].lock();
    if has(IPI_DELAY) && one_in(this, IPI_DELAY_ONE_IN) {
        let due = now + IPI_DELAY_MIN_NS + draw(this) % (IPI_DELAY_MAX_NS - IPI_DELAY_MIN_NS);
        held.push(Held { target, at: now, due });
        COUNTS.ipi_held.fetch_add(1, Ordering::Relaxed);
        return true;
    }
    if has(IPI_REORDER) {
        if one_in(this, IPI_REORDER_ONE_IN) {
            held.push(Held { target, at: now, due: 0 });
            COUNTS.ipi_held.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        if held.iter().any(|h| h.due == 0) {
            // This one overtakes every IPI waiting for it.
            crate::resched::send_resched_ipi_now(target);
            let mut n = 0;
            held.retain(|h| {
                if h.due != 0 {
                    return true;
                }
                crate::resched::send_resched_ipi_now(h.target);
                COUNTS.ipi_late_ns.fetch_add(now - h.at, Ordering::Relaxed);
                n += 1;
                false
            });
            COUNTS.ipi_reordered.fetch_add(n, Ordering::Relaxed);
            return true;
        }
    }
    false
}

/// Sends this CPU's held IPIs that are due by `now`, in the order they
/// were asked for.
fn flush(cpu: usize, now: u64) {
    let mut held = HELD[cpu].lock();
    if held.is_empty() {
        return;
    }
    held.retain(|h| {
        if h.due <= now {
            crate::resched::send_resched_ipi_now(h.target);
            COUNTS.ipi_late_ns.fetch_add(now.saturating_sub(h.at), Ordering::Relaxed);
            false
        } else {
            true
        }
    });
}

/// The idle loop, before it halts or polls: sends the held IPIs that are
/// due and says whether any is left (the loop then waits awake: a halted
/// CPU would send it only at its next interrupt, maybe never).
fn idle_holds_ipis(cpu: usize) -> bool {
    flush(cpu, crate::rq::now_ns());
    !HELD[cpu].lock().is_empty()
}

/// `idle_irqs_off`: the idle loop of `cpu`, interrupts off since its last
/// look for work, spins on with them off until a wakeup for `cpu` comes,
/// its own timer is about to fire, or `IDLE_HOLD_MAX_NS` passed.
fn hold_irqs_off(cpu: usize) {
    let start = crate::rq::now_ns();
    let end = crate::timer::next_event(cpu).saturating_sub(IDLE_HOLD_MARGIN_NS).min(start + IDLE_HOLD_MAX_NS);
    COUNTS.idle_holds.fetch_add(1, Ordering::Relaxed);
    while crate::rq::now_ns() < end {
        if crate::resched::need_resched(cpu) || crate::rq::wake_list_pending(cpu) {
            COUNTS.idle_holds_woken.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // No `pause`: QEMU's TCG would end this vCPU's turn at each one
        // (kernel/src/arch/wait.rs).
    }
}

// ---------------------------------------------------------------------------
// The tick: held IPIs due, spurious wakeups, stalls

/// At every tick of `cpu` (interrupts off, no lock held).
fn tick(cpu: usize) {
    let now = crate::rq::now_ns();
    flush(cpu, now);
    if has(SPURIOUS_WAKE) && one_in(cpu, SPURIOUS_ONE_IN) {
        if let Some(t) = crate::task::pick_sleeping(draw(cpu)) {
            let id = t.id;
            if crate::wakeup::wake_spurious(&t, || mark_spurious(id)) {
                COUNTS.spurious_wakeups.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    if has(CPU_STALL) && one_in(cpu, STALL_ONE_IN) {
        let ns = STALL_MIN_NS + draw(cpu) % (STALL_MAX_NS - STALL_MIN_NS);
        let start = crate::rq::now_ns();
        while crate::rq::now_ns() - start < ns {
            core::hint::spin_loop();
        }
        COUNTS.stalls.fetch_add(1, Ordering::Relaxed);
        COUNTS.stall_ns.fetch_add(crate::rq::now_ns() - start, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------
// Spurious wakeups

/// Marks task `id` as woken by fault injection (under its `pi_lock`, found
/// asleep, before the wakeup lets it run).
fn mark_spurious(id: TaskId) {
    let used = SPURIOUS_SLOTS_USED.load(Ordering::Acquire);
    if SPURIOUSLY_WOKEN[..used].iter().any(|s| s.load(Ordering::Relaxed) == id) {
        return;
    }
    for (i, slot) in SPURIOUSLY_WOKEN.iter().enumerate() {
        if slot.compare_exchange(0, id, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            SPURIOUS_SLOTS_USED.fetch_max(i + 1, Ordering::AcqRel);
            return;
        }
    }
}

/// The running task, back from `schedule()` in a wait (`WaitQueue`,
/// `thread::sleep_ns`), found its condition false and sleeps again: if a
/// spurious wakeup marked it, count a re-sleep. The mark is taken once, so
/// re-sleeps never exceed spurious wakeups; the mark of a spurious wakeup
/// whose condition happened to hold stays until the task's next re-sleep
/// (the wait's fast path, a condition that holds, makes no extra test).
fn after_wait() {
    let id = crate::task::with_current(|me| me.id);
    let used = SPURIOUS_SLOTS_USED.load(Ordering::Acquire);
    if let Some(slot) = SPURIOUSLY_WOKEN[..used].iter().find(|s| s.load(Ordering::Relaxed) == id) {
        slot.store(0, Ordering::Release);
        COUNTS.spurious_resleeps.fetch_add(1, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------
// Extra preemption points

/// A preemption point (after a wakeup; before the switch of a wait, a
/// timed sleep or an exit): one
/// time in 8 the running task is preempted here, by a reschedule IPI to
/// its own CPU, as if a tick had come at this instruction.
fn preempt_point() {
    if !has(PREEMPT_POINTS)
        || !crate::platform::irqs_enabled()
        || crate::platform::irq_guards_held() != 0
    {
        return;
    }
    let cpu = cpu_id();
    if crate::task::with_current(|t| t.is_idle) || !one_in(cpu, PREEMPT_ONE_IN) {
        return;
    }
    COUNTS.preempt_injected.fetch_add(1, Ordering::Relaxed);
    crate::resched::set_need_resched(cpu);
    crate::resched::send_resched_ipi_now(cpu);
}

/// A preemption (tick or reschedule IPI, not a voluntary switch) is about
/// to switch: if it finds the task `Sleeping` or `Dead`, the task had not
/// reached its own switch yet and stays queued (`schedule_irq`).
fn note_preemption() {
    let blocking = crate::task::with_current(|t| !t.is_idle && t.state() != crate::task::TaskState::Running);
    if blocking && crate::resched::need_resched(cpu_id()) {
        COUNTS.preempted_blocking.fetch_add(1, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------

/// `@fw faults ...`: the modes, the seed and what was injected so far.
pub fn report() {
    let modes = MODES_ON.load(Ordering::Relaxed);
    if modes == 0 {
        return;
    }
    let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
    crate::kprintln!(
        "faults injected ({}, seed {}): {} IPIs held back, {} spurious wakeups ({} re-slept), {} preemptions, {} stalls, {} idle holds ({} ended by a wakeup)",
        names(modes),
        SEED.load(Ordering::Relaxed),
        c(&COUNTS.ipi_held),
        c(&COUNTS.spurious_wakeups),
        c(&COUNTS.spurious_resleeps),
        c(&COUNTS.preempt_injected),
        c(&COUNTS.stalls),
        c(&COUNTS.idle_holds),
        c(&COUNTS.idle_holds_woken)
    );
    crate::record!(
        "faults",
        "modes={} seed={} ipi_held={} ipi_late_ns={} ipi_reordered={} spurious_wakeups={} spurious_resleeps={} preempt_injected={} preempted_blocking={} stalls={} stall_ns={} idle_holds={} idle_holds_woken={}",
        names(modes),
        SEED.load(Ordering::Relaxed),
        c(&COUNTS.ipi_held),
        c(&COUNTS.ipi_late_ns),
        c(&COUNTS.ipi_reordered),
        c(&COUNTS.spurious_wakeups),
        c(&COUNTS.spurious_resleeps),
        c(&COUNTS.preempt_injected),
        c(&COUNTS.preempted_blocking),
        c(&COUNTS.stalls),
        c(&COUNTS.stall_ns),
        c(&COUNTS.idle_holds),
        c(&COUNTS.idle_holds_woken)
    );
}
