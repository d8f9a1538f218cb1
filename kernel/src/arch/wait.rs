//! Waiting for an interrupt, and `idle=last_polls`: halt, except one CPU while all wait.
//!
//! With `hlt` a waiting CPU costs nothing. Under QEMU's `-icount` (one host thread runs the
//! vCPUs in turn) a halt of *every* vCPU hands the virtual clock to QEMU's main-loop thread,
//! which moves it to the next timer (`main_loop_wait()` -> `icount_start_warp_timer()`) by that
//! timer's deadline minus the instruction count the vCPU thread last published; when it looks
//! between a vCPU's `hlt` and that vCPU's return from `cpu_exec()`, the last slice's
//! instructions are not yet published and the clock lands that many nanoseconds late, so two
//! boots of one command line part ways (docs/BENCHMARKS.md, "What is deterministic").
//!
//! `idle=last_polls` keeps the main loop out: while every online CPU waits, the highest-numbered
//! one (the *poller*) does not halt but spins, interrupts on, until an interrupt reaches it or
//! another CPU stops waiting (then it halts). QEMU then never sees every vCPU halted; the
//! poller's own instructions move the clock to the next timer's deadline, where the vCPU thread
//! fires it at the exact instruction, as after the main loop's jump but without the race.
//!
//! Why these choices, all from how QEMU's round-robin TCG runs vCPUs (`rr_cpu_thread_fn()`):
//! - The poller is the *last* vCPU in QEMU's order. A vCPU's turn ends at the next timer
//!   deadline, and the pass that follows the timer starts again at the first vCPU: a CPU the
//!   timer woke runs before the poller gets its next turn, in which it sees that CPU no longer
//!   waits and halts. A poller earlier in the order would spin first, for up to half the time
//!   to the next deadline, while the woken CPU waited its turn.
//! - The spin has no `pause`: TCG ends a vCPU's turn at every `pause` (`helper_pause()`), which
//!   would cost a pass of the round-robin loop per few instructions.
//! - An IPI to another vCPU does not end the sender's turn, so the sender uncounts the target
//!   before sending ([`woken`]): a sender that goes idle just after must not see every CPU
//!   waiting and spin while the woken CPU waits for its turn (measured before this rule: the
//!   pipe's round trip across two CPUs went from 4.5 to 80 us).
//! - A CPU that starts waiting while a reschedule IPI is on its way to it (sent while it ran
//!   with interrupts off, e.g. in its tick) does not count itself: TCG ends a vCPU's turn at
//!   `hlt` even with an interrupt pending, and the poller, seeing every CPU wait, would spin to
//!   the next timer deadline before that CPU ran again (measured: one such 0.5 ms stall in
//!   10,000 rounds of the cross-CPU pipe). The sender marks the target so
//!   ([`woken`]); the target's next interrupt clears the mark. The scenario
//!   `idle-ipi-coming-smp3` opens this window on purpose (`fault=idle_irqs_off`) and fails
//!   without the mark.
//! - When the last CPU to start waiting is not the poller, the poller is halted: that CPU kicks
//!   it with [`POLL_KICK_VECTOR`], which the poller takes without returning from its wait (the
//!   kick is not an interrupt its idle loop needs to see), and then polls.
//!
//! Invariants: `WAITING` counts the CPUs whose `PerCpu::waiting` is [`WAITS`]; a CPU sets it
//! (and counts itself) only here, with interrupts off, from [`RUNS`], and it leaves `WAITS`
//! (the CPU uncounted) at the entry of any interrupt but the kick the CPU takes ([`interrupted`]:
//! to `RUNS`), or when a CPU about to send it an IPI marks it ([`woken`]: to [`IPI_COMING`],
//! which only the next interrupt's entry clears), whichever comes first; so a CPU that an
//! interrupt switched to a task is never counted as waiting. `PerCpu::interrupts` counts the
//! interrupts other than the kick a CPU took: a wait returns when it moved.

use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use super::percpu::{IPI_COMING, RUNS, WAITS};
use super::vectors::POLL_KICK_VECTOR;
use super::{apic, percpu};

/// CPUs waiting in [`wait_for_interrupt`] (halted or polling).
static WAITING: AtomicU32 = AtomicU32::new(0);
/// The online CPUs when `idle=last_polls` is on; 0 = off (every waiting CPU halts).
static ONLINE: AtomicU32 = AtomicU32::new(0);
/// The poller: the highest online CPU.
static POLLER: AtomicUsize = AtomicUsize::new(0);

/// Turns `idle=last_polls` on for the online CPUs (`on` false: off), before the scheduler starts.
pub fn set_last_polls(on: bool) {
    let online: Cpus = (0..percpu::MAX_CPUS).filter(|&c| percpu::cpu(c).online.load(Ordering::Acquire)).into();
    POLLER.store(online.highest, Ordering::SeqCst);
    ONLINE.store(if on && online.count > 1 { online.count } else { 0 }, Ordering::SeqCst);
}

/// The online CPUs: how many, and the highest id.
struct Cpus {
    count: u32,
    highest: usize,
}

impl<I: Iterator<Item = usize>> From<I> for Cpus {
    fn from(it: I) -> Cpus {
        it.fold(Cpus { count: 0, highest: 0 }, |c, id| Cpus { count: c.count + 1, highest: id })
    }
}

/// Called at the entry of every interrupt and exception with its vector: a waiting CPU that
/// takes one (the kick aside) stops waiting, as a halted CPU leaves `hlt`.
#[inline(always)]
pub fn interrupted(vector: u64) {
    if ONLINE.load(Ordering::Relaxed) == 0 || vector == u64::from(POLL_KICK_VECTOR) {
        return;
    }
    let here = percpu::this_cpu();
    here.interrupts.store(here.interrupts.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    stop_waiting(here);
}

/// Called by a CPU about to send `cpu` an IPI: `cpu` stops waiting now, not when it takes the
/// IPI, and does not count itself as waiting until it took one (see the module docs).
#[inline(always)]
pub fn woken(cpu: usize) {
    if ONLINE.load(Ordering::Relaxed) != 0 {
        let area = percpu::cpu(cpu);
        if area.waiting.swap(IPI_COMING, Ordering::SeqCst) == WAITS {
            WAITING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// `area`'s CPU stops waiting (at an interrupt's entry), and its mark of an IPI on its way
/// goes.
#[inline(always)]
fn stop_waiting(area: &percpu::PerCpu) {
    if area.waiting.load(Ordering::Relaxed) != RUNS && area.waiting.swap(RUNS, Ordering::SeqCst) == WAITS {
        WAITING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits for the next interrupt, interrupts on; returns after it was taken. Called with
/// interrupts off, so that a wakeup checked just before cannot slip in unseen.
#[inline(always)]
pub fn wait_for_interrupt() {
    let n = ONLINE.load(Ordering::Relaxed);
    if n == 0 {
        x86_64::instructions::interrupts::enable_and_hlt();
    } else {
        wait_counted(n);
    }
}

/// A reschedule IPI is on its way to this CPU (`here`), or pending since its interrupts went
/// off: it halts uncounted, or the poller would spin to the next timer before this CPU ran
/// again (see the module docs). Returns whether an interrupt came since `seen`; if not,
/// interrupts are off again.
#[cold]
#[inline(never)]
fn halt_uncounted(here: &percpu::PerCpu, seen: u64) -> bool {
    x86_64::instructions::interrupts::enable_and_hlt();
    if here.interrupts.load(Ordering::Relaxed) != seen {
        return true;
    }
    x86_64::instructions::interrupts::disable();
    false
}

/// Wakes the halted `poller` so that it polls. Out of line: the wait of a CPU
/// that is not the poller would otherwise work out the poller's per-CPU area
/// before every halt, for a kick it seldom sends.
#[cold]
#[inline(never)]
fn kick_poller(poller: usize) {
    apic::send_ipi(POLL_KICK_VECTOR, percpu::cpu(poller).apic_id.load(Ordering::Relaxed));
}

/// [`wait_for_interrupt`] under `idle=last_polls`, `n` CPUs online. Inlined into the idle
/// loop, its one caller.
#[inline(always)]
fn wait_counted(n: u32) {
    let here = percpu::this_cpu();
    let poller = POLLER.load(Ordering::Relaxed);
    let me = percpu::cpu_id();
    let seen = here.interrupts.load(Ordering::Relaxed);
    loop {
        let mut state = here.waiting.load(Ordering::Relaxed);
        if state == RUNS {
            // Only a sender changes it meanwhile (interrupts are off): to IPI_COMING.
            match here.waiting.compare_exchange(RUNS, WAITS, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => {
                    WAITING.fetch_add(1, Ordering::SeqCst);
                }
                Err(now) => state = now,
            }
        }
        if state == IPI_COMING {
            if halt_uncounted(here, seen) {
                return;
            }
            continue;
        }
        let all_wait = WAITING.load(Ordering::SeqCst) >= n;
        if all_wait && me == poller {
            x86_64::instructions::interrupts::enable();
            // No `pause` here (see the module docs).
            while here.interrupts.load(Ordering::Relaxed) == seen && WAITING.load(Ordering::SeqCst) >= n {}
            x86_64::instructions::interrupts::disable();
            if here.interrupts.load(Ordering::Relaxed) != seen {
                // An interrupt came (its entry uncounted this CPU).
                x86_64::instructions::interrupts::enable();
                return;
            }
            // Another CPU stopped waiting: halt (still counted as waiting) below.
        } else if all_wait {
            // The last to wait, and the poller halted before: wake it to poll.
            kick_poller(poller);
        }
        // Interrupts on and `hlt` as one step: an interrupt before the `hlt` ends it at once.
        x86_64::instructions::interrupts::enable_and_hlt();
        if here.interrupts.load(Ordering::Relaxed) != seen {
            return;
        }
        x86_64::instructions::interrupts::disable();
        // Only the kick (or nothing at all) ended the halt: wait on, counted again above if a
        // sender uncounted this CPU meanwhile.
    }
}
