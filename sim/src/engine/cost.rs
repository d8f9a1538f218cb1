//! The cost model: how much virtual time the engine charges for what a real
//! CPU spends on the scheduler's machinery, and how far apart two CPUs are.
//!
//! Every constant is in nanoseconds of virtual time (the unit is in each
//! field's name). [`CostModel::ICOUNT`] holds the values measured with the
//! kernel under QEMU `-icount shift=0` (one guest instruction = 1 ns); the
//! commands, the raw figures and the conversion are in docs/SIMULATOR.md
//! ("The cost model"). Tests build their own models with distinct values so
//! that each charge can be told apart.

use crate::machine::Machine;

/// How far a task moved when it runs on another CPU than last time: the
/// cache it leaves behind (`sim::machine`'s topology decides the class).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Distance {
    /// The same CPU: no move.
    SameCpu,
    /// Another hardware thread of the same core (L1/L2 shared).
    SameCore,
    /// Another core sharing the last-level cache.
    SameLlc,
    /// Another last-level cache in the same NUMA node.
    OtherLlc,
    /// Another NUMA node.
    OtherNode,
}

impl Distance {
    pub const ALL: [Distance; 5] =
        [Distance::SameCpu, Distance::SameCore, Distance::SameLlc, Distance::OtherLlc, Distance::OtherNode];

    /// Lower-case name for logs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Distance::SameCpu => "same_cpu",
            Distance::SameCore => "same_core",
            Distance::SameLlc => "same_llc",
            Distance::OtherLlc => "other_llc",
            Distance::OtherNode => "other_node",
        }
    }

    /// The distance between CPUs `a` and `b` of `m`.
    pub fn between(m: &Machine, a: usize, b: usize) -> Distance {
        let (ta, tb) = (&m.cpus[a], &m.cpus[b]);
        if a == b {
            Distance::SameCpu
        } else if ta.node != tb.node {
            Distance::OtherNode
        } else if ta.llc_id != tb.llc_id {
            Distance::OtherLlc
        } else if ta.pkg_id == tb.pkg_id && ta.core_id == tb.core_id {
            Distance::SameCore
        } else {
            Distance::SameLlc
        }
    }
}

/// The engine's charges, in virtual nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// A context switch from one task to another.
    pub switch_ns: u64,
    /// A context switch from a task to idle, or from idle to a task.
    pub switch_idle_ns: u64,
    /// From a CPU sending a reschedule IPI to the target seeing it pending.
    pub ipi_latency_ns: u64,
    /// Taking one interrupt (timer or IPI): entry, the handler's fixed part, return.
    pub irq_entry_ns: u64,
    /// A wakeup, charged on the waking CPU (placement and enqueue).
    pub wakeup_ns: u64,
    /// A task running on another CPU than last time: cache refill by distance
    /// (indexed by [`Distance`] order; `SameCpu` is never charged).
    pub migration_same_core_ns: u64,
    pub migration_same_llc_ns: u64,
    pub migration_other_llc_ns: u64,
    pub migration_other_node_ns: u64,
    /// Balancing: per CPU whose statistics a balance pass or an idle-CPU scan reads.
    pub balance_per_cpu_scanned_ns: u64,
}

/// One run of the kernel under `-icount`: what it printed for its measured
/// window (its `ns`, and the `@fw schedstat_delta` counts of the run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcountRun {
    /// The workload's own measured time (`total_ns=` or hackbench's `ns=`).
    pub ns: u64,
    /// Σ `sched_count`, Σ `ttwu_count`, Σ `timer_irqs`.
    pub switches: u64,
    pub wakeups: u64,
    pub ticks: u64,
    /// Pipe messages (one write and one read each): a pipe round trip is 2.
    pub messages: u64,
}

/// The kernel's own figures under QEMU `-icount shift=0` (one guest
/// instruction = 1 ns), from which [`CostModel::ICOUNT`] is derived; each
/// field names the command that printed it (docs/SIMULATOR.md, "The cost
/// model", has the commands, the dates and the commit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcountFigures {
    /// `workload=yield,rounds=20000` at `-smp 1`: `@fw yield ns_per_switch=`.
    pub yield_ns_per_switch: u64,
    /// `workload=pipe,rounds=20000,mode=same` at `-smp 1`.
    pub pipe_same: IcountRun,
    /// `workload=hackbench,groups=1,loops=20,datasize=1` at `-smp 1`: 8000
    /// one-byte messages, few wakeups (the pipes rarely empty).
    pub hackbench_1_byte: IcountRun,
    /// `workload=pipe,rounds=20000,mode=cross` at `-smp 2`: `ns_per_round_trip=`
    /// (icount runs one vCPU at a time: this is both CPUs' work added up).
    pub pipe_cross_ns_per_round_trip: u64,
    /// The same with `trace=1`, rounds=2000: median ns from the waker's
    /// `ev=switch ... next=0` (it went idle) to the wakee's `ev=enqueue` on the
    /// other CPU: the interrupt's entry and the wake list, on the target.
    pub cross_idle_to_enqueue_ns: u64,
    /// `workload=hackbench,groups=4` at `-smp 4`: Σ `@fw sis time_ns=` / Σ `scanned=`.
    pub sis_ns_per_cpu_scanned: u64,
}

impl IcountFigures {
    /// Measured at commit 7332c1d (2026-12-02), except the trace's and the
    /// scan's figures (25e9861, the same day).
    pub const MEASURED: IcountFigures = IcountFigures {
        yield_ns_per_switch: 1007,
        pipe_same: IcountRun { ns: 57_918_593, switches: 40_004, wakeups: 25_705, ticks: 57, messages: 40_000 },
        hackbench_1_byte: IcountRun { ns: 2_261_538, switches: 82, wakeups: 41, ticks: 2, messages: 8_000 },
        pipe_cross_ns_per_round_trip: 4521,
        cross_idle_to_enqueue_ns: 835,
        sis_ns_per_cpu_scanned: 170,
    };

    /// A run's time less its switches and ticks.
    const fn rest_ns(&self, r: IcountRun) -> i128 {
        (r.ns - r.switches * self.yield_ns_per_switch - r.ticks * self.cross_idle_to_enqueue_ns) as i128
    }

    /// The work of one small pipe read or write and of one wakeup, from the
    /// two one-CPU runs: each run's time less its switches (a yield's switch
    /// each) and ticks is `2 × messages × op + wakeups × wakeup`; two runs,
    /// two unknowns (hackbench has many messages and few wakeups, the pipe
    /// about one wakeup per message), solved exactly.
    pub const fn pipe_op_and_wakeup_ns(&self) -> (u64, u64) {
        let (h, p) = (self.hackbench_1_byte, self.pipe_same);
        let (a1, b1, c1) = (2 * h.messages as i128, h.wakeups as i128, self.rest_ns(h));
        let (a2, b2, c2) = (2 * p.messages as i128, p.wakeups as i128, self.rest_ns(p));
        let det = a1 * b2 - a2 * b1;
        let op = (c1 * b2 - c2 * b1 + det / 2) / det;
        let wakeup = (a1 * c2 - a2 * c1 + det / 2) / det;
        (op as u64, wakeup as u64)
    }

    /// The cost model these figures give (docs/SIMULATOR.md has the algebra):
    /// - a task-to-task switch is a yield's switch;
    /// - a pipe read or write and a wakeup from the two one-CPU runs
    ///   ([`Self::pipe_op_and_wakeup_ns`]); the pipe's work itself is the
    ///   platform's price of the mechanism's `Work::PipeCopy` (`platform::prices`), not a
    ///   charge of the model;
    /// - a cross-CPU round trip is, twice, a write and a read, a wakeup, the
    ///   waker's switch to idle, the target's interrupt and its switch from
    ///   idle; the interrupt is the traced idle-to-enqueue time, the four idle
    ///   switches share the rest;
    /// - no IPI latency, no cache penalty: icount serialises the vCPUs (the
    ///   target sees the IPI when the sender stops) and TCG models no cache;
    /// - balancing per CPU scanned is `select_idle_cpu()`'s loop per CPU.
    pub const fn cost_model(&self) -> CostModel {
        let (op, wakeup) = self.pipe_op_and_wakeup_ns();
        let idle = (self.pipe_cross_ns_per_round_trip - 4 * op - 2 * wakeup - 2 * self.cross_idle_to_enqueue_ns) / 4;
        CostModel {
            switch_ns: self.yield_ns_per_switch,
            switch_idle_ns: idle,
            ipi_latency_ns: 0,
            irq_entry_ns: self.cross_idle_to_enqueue_ns,
            wakeup_ns: wakeup,
            migration_same_core_ns: 0,
            migration_same_llc_ns: 0,
            migration_other_llc_ns: 0,
            migration_other_node_ns: 0,
            balance_per_cpu_scanned_ns: self.sis_ns_per_cpu_scanned,
        }
    }
}

impl CostModel {
    /// Calibrated from the kernel under `-icount` ([`IcountFigures::MEASURED`]).
    /// QEMU's TCG models no caches, so the icount figures contain no cache
    /// refill: the migration penalties are 0 here, which is what the QEMU
    /// cross-check must compare against.
    pub const ICOUNT: CostModel = IcountFigures::MEASURED.cost_model();

    /// A model that charges nothing (tests that want pure scheduling order).
    pub const FREE: CostModel = CostModel {
        switch_ns: 0,
        switch_idle_ns: 0,
        ipi_latency_ns: 0,
        irq_entry_ns: 0,
        wakeup_ns: 0,
        migration_same_core_ns: 0,
        migration_same_llc_ns: 0,
        migration_other_llc_ns: 0,
        migration_other_node_ns: 0,
        balance_per_cpu_scanned_ns: 0,
    };

    /// The cache-refill penalty for a move of `d`.
    pub fn migration_ns(&self, d: Distance) -> u64 {
        match d {
            Distance::SameCpu => 0,
            Distance::SameCore => self.migration_same_core_ns,
            Distance::SameLlc => self.migration_same_llc_ns,
            Distance::OtherLlc => self.migration_other_llc_ns,
            Distance::OtherNode => self.migration_other_node_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipes_work_done_is_the_icount_figure() {
        // The mechanism's pipe reports what these runs measured.
        let (op, wakeup) = IcountFigures::MEASURED.pipe_op_and_wakeup_ns();
        assert_eq!(op, crate::platform::prices::PIPE_OP_INSTRUCTIONS_SMALL * crate::platform::NS_PER_INSTRUCTION);
        assert_eq!(op, crate::platform::prices::pipe_op_instructions(1));
        assert_eq!((op, wakeup), (135, 263));
        let c = CostModel::ICOUNT;
        assert_eq!((c.switch_ns, c.wakeup_ns, c.switch_idle_ns, c.irq_entry_ns), (1007, 263, 446, 835));
    }

    #[test]
    fn distance_classes_follow_the_topology() {
        // 2 sockets (= nodes) x 2 dies (= LLCs) x 2 cores x 2 threads.
        let m = Machine::from_smp("16,sockets=2,dies=2,cores=2,threads=2", 2).unwrap();
        assert_eq!(Distance::between(&m, 0, 0), Distance::SameCpu);
        assert_eq!(Distance::between(&m, 0, 1), Distance::SameCore);
        assert_eq!(Distance::between(&m, 0, 2), Distance::SameLlc);
        assert_eq!(Distance::between(&m, 0, 4), Distance::OtherLlc);
        assert_eq!(Distance::between(&m, 0, 8), Distance::OtherNode);
        assert_eq!(Distance::between(&m, 9, 8), Distance::SameCore);
        // Core numbers repeat across dies: core 0 of die 1 is not CPU 0's core.
        assert_eq!(Distance::between(&m, 1, 5), Distance::OtherLlc);
    }
}
