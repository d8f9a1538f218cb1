//! Scheduling entities: the per-task state the fair class keeps.

use crate::pelt::SchedAvg;
use crate::time::Nanos;
use crate::weight::{LoadWeight, Nice};

/// A stable handle to an entity of one [`FairRq`](crate::fair_rq::FairRq).
///
/// Handles are small indices into the run-queue's arena; a handle is valid
/// from [`FairRq::add_entity`](crate::fair_rq::FairRq::add_entity) until
/// [`FairRq::remove_entity`](crate::fair_rq::FairRq::remove_entity), after
/// which the index may be reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntityId(pub u32);

/// Scheduling policy within the fair class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// `SCHED_NORMAL`.
    #[default]
    Normal,
    /// `SCHED_BATCH`: never preempts on wakeup.
    Batch,
    /// `SCHED_IDLE`: weight 3, never preempts, preempted by any non-idle
    /// wakee.
    Idle,
}

/// One entity's fair-class state.
///
/// Invariants (kept by the run-queue, which owns every `SchedEntity` it
/// schedules; the fields are readable, changes go through `FairRq`):
/// - `weight` is the table weight of `nice` (or [`LoadWeight::IDLE`] for
///   `Policy::Idle`) unless set directly with `FairRq::set_weight`;
/// - `slice` is in `[MIN_CUSTOM_SLICE_NS, MAX_CUSTOM_SLICE_NS]` when
///   `custom_slice`, else the queue's base slice as of the last placement;
/// - `sched_delayed` implies `on_rq`;
/// - while queued and not running, `vruntime`, `deadline` and `slice` equal
///   the copies in the tree node;
/// - `vlag` is within `±calc_delta_fair(max(2·slice, TICK_NSEC))` whenever
///   it was set by a dequeue (it may be scaled by a reweight, which keeps
///   the bound for the new weight), and is only meaningful off the queue
///   (or, relative, with `rel_deadline` for `deadline`);
/// - `rel_deadline` means `deadline` holds `deadline - vruntime` (an
///   offset), to be re-based at the next placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedEntity {
    /// Nice level (meaningless when the weight was set directly).
    pub nice: Nice,
    /// Policy.
    pub policy: Policy,
    /// Load weight.
    pub weight: LoadWeight,
    /// Virtual runtime (wrapping).
    pub vruntime: u64,
    /// Virtual deadline: `vruntime` at placement + `slice` in virtual time.
    pub deadline: u64,
    /// Request size in wall-clock ns.
    pub slice: Nanos,
    /// Whether `slice` was set by the user (`sched_setattr` runtime).
    pub custom_slice: bool,
    /// Saved virtual lag `V - vruntime` (virtual ns), set at dequeue.
    pub vlag: i64,
    /// End of the slice protection (RUN_TO_PARITY), virtual time; only
    /// meaningful while running.
    pub vprot: u64,
    /// `deadline` is stored relative to `vruntime`.
    pub rel_deadline: bool,
    /// Counted on the run-queue (in the tree, or running, or delayed).
    pub on_rq: bool,
    /// Asleep but kept queued until eligible (DELAY_DEQUEUE).
    pub sched_delayed: bool,
    /// Task clock when its dequeue was last delayed (for
    /// [`RqStats`](crate::fair_rq::RqStats)' delay times; meaningful while
    /// `sched_delayed`).
    pub delayed_at: Nanos,
    /// Task clock when it last started running or was last accounted.
    pub exec_start: Nanos,
    /// Total runtime.
    pub sum_exec_runtime: Nanos,
    /// `sum_exec_runtime` when it was last picked.
    pub prev_sum_exec_runtime: Nanos,
    /// PELT averages.
    pub avg: SchedAvg,
}

impl SchedEntity {
    /// A fresh, unqueued entity with the given nice level and policy.
    pub fn new(nice: Nice, policy: Policy) -> SchedEntity {
        let weight = if policy == Policy::Idle { LoadWeight::IDLE } else { nice.weight() };
        SchedEntity {
            nice,
            policy,
            weight,
            vruntime: 0,
            deadline: 0,
            slice: 0,
            custom_slice: false,
            vlag: 0,
            vprot: 0,
            rel_deadline: false,
            on_rq: false,
            sched_delayed: false,
            delayed_at: 0,
            exec_start: 0,
            sum_exec_runtime: 0,
            prev_sum_exec_runtime: 0,
            avg: SchedAvg::default(),
        }
    }

    /// A fresh nice-0 `SCHED_NORMAL` entity.
    pub fn nice0() -> SchedEntity {
        SchedEntity::new(Nice::ZERO, Policy::Normal)
    }

    /// The weight on the 1024 scale.
    #[inline]
    pub fn w(&self) -> u64 {
        self.weight.weight()
    }

    /// Queued and not delayed: counted as runnable.
    #[inline]
    pub fn runnable(&self) -> bool {
        self.on_rq && !self.sched_delayed
    }
}
