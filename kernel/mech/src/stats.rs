//! A CPU's scheduler counters: the runqueue's (`Rq::stat`, under its lock)
//! and the record `schedstat.rs` prints from them, with "idle while others
//! wait" (`balance::idle_wait`). The types only: the counting is done by
//! the code that counts, the gathering and printing by `schedstat.rs`
//! (Linux keeps the counters in `struct rq` and prints them in
//! `kernel/sched/stats.c`).

use core::fmt::Write;

use sched::topology::Level;

use crate::MAX_LEVELS;

/// Declares [`CpuStat`] from its counters, so that the `@fw schedstat`
/// records and the deltas list each counter once (in the record's order).
macro_rules! cpu_stat {
    ($( $(#[$doc:meta])* $name:ident, )*) => {
        /// One CPU's counters (under its runqueue lock). Every counter only
        /// grows while the CPU is online.
        #[derive(Clone, Copy, Debug, Default)]
        pub struct CpuStat {
            $( $(#[$doc])* pub $name: u64, )*
            /// Time with no runnable task, and idle while a CPU of each
            /// domain had two or more (`balance::idle_wait`).
            pub idle_wait: IdleWait,
        }

        impl CpuStat {
            /// The counters by name, in their order on the record.
            pub(crate) fn counters(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$( (stringify!($name), self.$name), )*].into_iter()
            }

            /// What each counter gained since `before` (saturating at 0, so
            /// that a `before` taken elsewhere cannot wrap).
            pub fn since(&self, before: &CpuStat) -> CpuStat {
                CpuStat {
                    $( $name: self.$name.saturating_sub(before.$name), )*
                    idle_wait: self.idle_wait.since(&before.idle_wait),
                }
            }
        }
    };
}

cpu_stat! {
    yld_count,
    sched_count,
    sched_goidle,
    ttwu_count,
    ttwu_local,
    rq_cpu_time,
    run_delay,
    pcount,
    /// Scheduler ticks taken (not a schedstat field; for the tick checks).
    ticks,
    /// LAPIC timer interrupts taken (ticks and sleep deadlines; not a
    /// schedstat field: shows tickless idle at work).
    timer_irqs,
    /// Reschedule IPIs taken.
    resched_ipis,
    /// Wakeups and reschedules that reached this CPU while it polled in
    /// idle (`idle=poll`), so that no IPI was sent.
    wake_idle_without_ipi,
    /// ns the `cpu_capacity=` pressure source took from this CPU's ticks.
    pressure_ns,
}

/// Writes ` name=value` for each counter of a [`CpuStat`].
pub(crate) struct Fields<'a>(pub(crate) &'a CpuStat);

impl core::fmt::Display for Fields<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (name, value) in self.0.counters() {
            write!(f, " {name}={value}")?;
        }
        Ok(())
    }
}

/// One CPU's "idle while others wait" figures (`balance::idle_wait::read`):
/// its idle time and, per domain level bottom-up, its idle-while-others-wait
/// time (ns).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdleWait {
    pub idle_ns: u64,
    pub levels: [Option<(Level, u64)>; MAX_LEVELS],
}

impl IdleWait {
    /// The top level's figure (0 without domains).
    pub fn top(&self) -> u64 {
        self.levels.iter().flatten().last().map_or(0, |&(_, v)| v)
    }

    /// What the figures gained since `before` (the same CPU's).
    pub fn since(&self, before: &IdleWait) -> IdleWait {
        let mut d = *self;
        d.idle_ns = self.idle_ns.saturating_sub(before.idle_ns);
        for (l, b) in d.levels.iter_mut().zip(before.levels.iter()) {
            if let (Some((_, v)), Some((_, bv))) = (l.as_mut(), b) {
                *v = v.saturating_sub(*bv);
            }
        }
        d
    }
}

/// Writes ` idle_ns=.. idle_wait_ns=..` and one ` idle_wait_<level>_ns=..`
/// per domain level (lower-case level name) for the schedstat records.
pub fn write_fields(w: &mut impl Write, iw: &IdleWait) -> core::fmt::Result {
    write!(w, " idle_ns={} idle_wait_ns={}", iw.idle_ns, iw.top())?;
    for &(level, v) in iw.levels.iter().flatten() {
        let mut name = alloc::string::String::new();
        let _ = write!(name, "{}", level);
        write!(w, " idle_wait_{}_ns={}", name.to_ascii_lowercase(), v)?;
    }
    Ok(())
}
