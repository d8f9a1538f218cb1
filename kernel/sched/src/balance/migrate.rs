//! Which tasks to move (reference §5.8, §5.9): `can_migrate_task`, the
//! `detach_tasks` loop as a cursor, the outcome bookkeeping of
//! `sched_balance_rq` and `need_active_balance`.
//!
//! # Contract
//!
//! With the busiest CPU chosen, the kernel locks that CPU's run-queue (and
//! its own for the attach), builds a [`DetachCursor`] and walks the source's
//! fair tasks from the list tail, one [`TaskSnapshot`] at a time:
//!
//! ```text
//! let mut cur = DetachCursor::new(&params, migration);
//! for task in src tasks (tail first, skipped ones rotated to the head) {
//!     match cur.consider(&task) {
//!         Detach::Take => move it (deactivate, set_task_cpu, activate on dst),
//!         Detach::Skip(_) => rotate it,
//!         Detach::Stop(_) => break,
//!     }
//! }
//! let outcome = cur.outcome();   // then interval::finish_balance(...)
//! ```
//!
//! `Stop(NeedBreak)` asks the kernel to drop the locks and call
//! [`DetachCursor::resume`] to continue (every 32 tasks examined). The
//! cursor never lets a task go to a CPU outside its affinity
//! (property-tested) and never takes a running task except with
//! `active = true` (the stopper thread of active balancing, which runs on
//! the source CPU so its current task is not running at that moment).

use crate::cpumask::CpuMask;
use crate::features::{Feature, Features};
use crate::time::Nanos;
use crate::topology::SD_SHARE_CPUCAPACITY;

use super::capacity::task_fits_cpu;
use super::imbalance::{Migration, MigrationType};
use super::snapshot::{CpuSnapshot, IdleType, TaskSnapshot};

pub use super::config::SCHED_NR_MIGRATE_BREAK;

/// Why a task stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CantMigrate {
    /// Delayed-dequeue entity and not a load migration.
    Delayed,
    /// Not eligible now and the domain has not failed yet (PLACE_LAG).
    Ineligible,
    /// Per-CPU kernel thread.
    PerCpuKthread,
    /// dst is outside its affinity.
    Affinity,
    /// Running on the source.
    Running,
    /// Cache hot and the domain has not failed enough.
    CacheHot,
}

/// Fixed inputs of one detach pass.
#[derive(Clone, Copy, Debug)]
pub struct DetachParams {
    /// Pulling CPU and its snapshot values used here.
    pub dst_cpu: usize,
    /// dst's fair runnable count (for the eligibility preference).
    pub dst_h_nr_runnable: u32,
    /// dst's runnable count of every class (`rq->nr_running`, for
    /// CACHE_HOT_BUDDY: a buddy is kept only from a busy dst).
    pub dst_nr_running: u32,
    /// CPUs of dst's local group (for a DST_PINNED retry target).
    pub dst_group: CpuMask,
    /// The attempt's candidate CPUs (Linux `env->cpus`): a DST_PINNED
    /// retry target is taken from `dst_group ∩ cpus`.
    pub cpus: CpuMask,
    /// Balance context.
    pub idle: IdleType,
    /// The stopper thread of active balancing.
    pub active: bool,
    /// Domain flags, `cache_nice_tries`, `nr_balance_failed`.
    pub sd_flags: u32,
    /// See `sd_flags`.
    pub cache_nice_tries: u32,
    /// See `sd_flags`.
    pub nr_balance_failed: u32,
    /// `sysctl_sched_migration_cost` (ns); 0 = never hot.
    pub migration_cost: Nanos,
    /// Source CPU's task clock now (`rq_clock_task`).
    pub src_clock_task: Nanos,
    /// Source fair/all runnable count when the pass starts.
    pub src_nr_running: u32,
    /// Source capacity (misfit fit test).
    pub src_capacity: u64,
    /// `sysctl_sched_nr_migrate` (32).
    pub nr_migrate: u32,
    /// PLACE_LAG, LB_MIN and CACHE_HOT_BUDDY features (see
    /// [`DetachParams::set_features`]).
    pub place_lag: bool,
    /// See `place_lag`.
    pub lb_min: bool,
    /// See `place_lag`.
    pub cache_hot_buddy: bool,
    /// Stop after one task when newly idle (Linux on preemptible kernels).
    pub newidle_single: bool,
}

impl DetachParams {
    /// Parameters for pulling from `src` to `dst` at a domain.
    pub fn new(dst: &CpuSnapshot, src: &CpuSnapshot, idle: IdleType, sd: &crate::topology::SchedDomain, nr_balance_failed: u32) -> Self {
        DetachParams {
            dst_cpu: dst.cpu,
            dst_h_nr_runnable: dst.h_nr_runnable,
            dst_nr_running: dst.nr_running,
            dst_group: sd.groups.first().map_or(CpuMask::single(dst.cpu), |g| g.span),
            cpus: sd.span,
            idle,
            active: false,
            sd_flags: sd.flags,
            cache_nice_tries: sd.cache_nice_tries,
            nr_balance_failed,
            migration_cost: super::avg_idle::SYSCTL_SCHED_MIGRATION_COST,
            src_clock_task: 0,
            src_nr_running: src.nr_running,
            src_capacity: src.cap(),
            nr_migrate: SCHED_NR_MIGRATE_BREAK,
            place_lag: true,
            lb_min: false,
            cache_hot_buddy: true,
            newidle_single: true,
        }
    }

    /// Takes the features the detach pass reads (PLACE_LAG, LB_MIN,
    /// CACHE_HOT_BUDDY) from `f`; [`DetachParams::new`] assumes the defaults.
    pub fn set_features(&mut self, f: Features) {
        self.place_lag = f.has(Feature::PlaceLag);
        self.lb_min = f.has(Feature::LbMin);
        self.cache_hot_buddy = f.has(Feature::CacheHotBuddy);
    }

    /// Pulls to `dst` instead (a DST_PINNED retry on another CPU of the
    /// group): its CPU and the snapshot values read here.
    pub fn set_dst(&mut self, dst: &CpuSnapshot) {
        self.dst_cpu = dst.cpu;
        self.dst_h_nr_runnable = dst.h_nr_runnable;
        self.dst_nr_running = dst.nr_running;
    }
}

/// `task_hot` (fair.c): whether moving the task would lose a warm cache.
/// Never for a SCHED_IDLE task or within an SMT core (its siblings share
/// the caches); always for its queue's next buddy when dst has tasks of its
/// own (CACHE_HOT_BUDDY: the buddy is about to run where it is); otherwise
/// when it ran on the source less than `migration_cost` ago.
pub fn task_hot(p: &TaskSnapshot, env: &DetachParams) -> bool {
    if p.idle_policy || env.sd_flags & SD_SHARE_CPUCAPACITY != 0 {
        return false;
    }
    if env.cache_hot_buddy && env.dst_nr_running > 0 && p.next_buddy {
        return true;
    }
    if env.migration_cost == 0 {
        return false;
    }
    if p.exec_start == 0 {
        return false; // just migrated
    }
    env.src_clock_task.saturating_sub(p.exec_start) < env.migration_cost
}

/// `can_migrate_task` (§5.8). `Ok(forced_hot)` when it may move (`true`
/// if it was cache hot and moved only because of failures).
pub fn can_migrate_task(p: &TaskSnapshot, env: &DetachParams, kind: MigrationType) -> Result<bool, CantMigrate> {
    if p.delayed && kind != MigrationType::Load {
        return Err(CantMigrate::Delayed);
    }
    if env.place_lag && env.nr_balance_failed == 0 && env.dst_h_nr_runnable > 0 && p.ineligible {
        return Err(CantMigrate::Ineligible);
    }
    if p.per_cpu_kthread {
        return Err(CantMigrate::PerCpuKthread);
    }
    if !p.allows(env.dst_cpu) {
        return Err(CantMigrate::Affinity);
    }
    if p.running && !env.active {
        return Err(CantMigrate::Running);
    }
    if env.active {
        return Ok(false);
    }
    if !task_hot(p, env) {
        return Ok(false);
    }
    if env.nr_balance_failed > env.cache_nice_tries {
        return Ok(true);
    }
    Err(CantMigrate::CacheHot)
}

/// Why the walk ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Imbalance fixed.
    Done,
    /// Source down to one task (idle balancing).
    SourceDrained,
    /// `loop_max` tasks examined.
    LoopMax,
    /// 32 examined: drop the locks, then [`DetachCursor::resume`].
    NeedBreak,
    /// Newidle pulls one task.
    NewidleOne,
}

/// The cursor's verdict on one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detach {
    /// Move it.
    Take,
    /// Leave it (rotate to the head).
    Skip(Option<CantMigrate>),
    /// Stop walking (the task was not examined).
    Stop(StopReason),
}

/// Result of a detach pass (Linux's `LBF_*` flags and counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetachOutcome {
    /// Tasks moved.
    pub moved: u32,
    /// Of those, moved while cache hot (schedstat `lb_hot_gained`).
    pub hot_moved: u32,
    /// Every examined task was pinned away from dst (`LBF_ALL_PINNED`).
    pub all_pinned: bool,
    /// Some task was pinned away from dst (`LBF_SOME_PINNED`).
    pub some_pinned: bool,
    /// Another CPU of dst's group that a pinned task allows (`new_dst_cpu`).
    pub new_dst_cpu: Option<usize>,
    /// Imbalance left.
    pub imbalance_left: u64,
}

/// `detach_tasks` as a cursor (see the module docs).
#[derive(Clone, Debug)]
pub struct DetachCursor {
    params: DetachParams,
    kind: MigrationType,
    imbalance: u64,
    src_nr: u32,
    loops: u32,
    loop_max: u32,
    loop_break: u32,
    out: DetachOutcome,
    examined_any: bool,
}

impl DetachCursor {
    /// Starts a pass for `migration`.
    pub fn new(params: &DetachParams, migration: Migration) -> Self {
        DetachCursor {
            params: *params,
            kind: migration.kind,
            imbalance: migration.imbalance,
            src_nr: params.src_nr_running,
            loops: 0,
            loop_max: params.nr_migrate.min(params.src_nr_running),
            loop_break: SCHED_NR_MIGRATE_BREAK,
            out: DetachOutcome { all_pinned: true, imbalance_left: migration.imbalance, ..Default::default() },
            examined_any: false,
        }
    }

    /// Continue after a `NeedBreak` stop.
    pub fn resume(&mut self) {
        self.loop_break = self.loop_break.saturating_add(SCHED_NR_MIGRATE_BREAK);
    }

    /// The verdict on the next task from the tail.
    pub fn consider(&mut self, p: &TaskSnapshot) -> Detach {
        let e = &self.params;
        if self.imbalance == 0 {
            return Detach::Stop(StopReason::Done);
        }
        if e.idle.is_idle() && self.src_nr <= 1 {
            return Detach::Stop(StopReason::SourceDrained);
        }
        self.loops += 1;
        if self.loops > self.loop_max {
            return Detach::Stop(StopReason::LoopMax);
        }
        if self.loops > self.loop_break {
            self.loops -= 1;
            return Detach::Stop(StopReason::NeedBreak);
        }
        self.examined_any = true;
        // As fair.c: can_migrate_task(), only a task that passed the
        // affinity test clears LBF_ALL_PINNED: the delayed, ineligible and
        // per-CPU kthread rejections come before that test.
        let hot = match can_migrate_task(p, e, self.kind) {
            Ok(h) => {
                self.out.all_pinned = false;
                h
            }
            Err(why) => {
                match why {
                    CantMigrate::Affinity => {
                        self.out.some_pinned = true;
                        if !e.idle.eq(&IdleType::NewlyIdle) && !e.active && self.out.new_dst_cpu.is_none() {
                            self.out.new_dst_cpu = e.dst_group.intersection(&e.cpus).intersection(&p.allowed).first();
                        }
                    }
                    CantMigrate::Running | CantMigrate::CacheHot => self.out.all_pinned = false,
                    CantMigrate::Delayed | CantMigrate::Ineligible | CantMigrate::PerCpuKthread => {}
                }
                return Detach::Skip(Some(why));
            }
        };
        let shift = self.params.nr_balance_failed.min(63);
        match self.kind {
            MigrationType::Load => {
                let load = p.load_avg.max(1);
                if e.lb_min && load < 16 && e.nr_balance_failed == 0 {
                    return Detach::Skip(None);
                }
                if load >> shift > self.imbalance {
                    return Detach::Skip(None);
                }
                self.imbalance = self.imbalance.saturating_sub(load);
            }
            MigrationType::Util => {
                if p.util >> shift > self.imbalance {
                    return Detach::Skip(None);
                }
                self.imbalance = self.imbalance.saturating_sub(p.util);
            }
            MigrationType::Task => self.imbalance -= 1,
            MigrationType::Misfit => {
                if task_fits_cpu(p.util, e.src_capacity) {
                    return Detach::Skip(None);
                }
                self.imbalance = 0;
            }
        }
        self.out.moved += 1;
        self.out.hot_moved += hot as u32;
        self.src_nr = self.src_nr.saturating_sub(1);
        self.out.imbalance_left = self.imbalance;
        Detach::Take
    }

    /// After a `Take`: whether to stop now (newidle takes one task).
    pub fn stop_after_take(&self) -> Option<StopReason> {
        if self.params.idle == IdleType::NewlyIdle && self.params.newidle_single {
            Some(StopReason::NewidleOne)
        } else if self.imbalance == 0 {
            Some(StopReason::Done)
        } else {
            None
        }
    }

    /// The pass's result. `all_pinned` is false if no task was examined.
    pub fn outcome(&self) -> DetachOutcome {
        let mut o = self.out;
        o.all_pinned &= self.examined_any;
        o.imbalance_left = self.imbalance;
        o
    }
}

/// The order of Linux's `rq->cfs_tasks` list over a runqueue's entity slots
/// (slots are reused, so their index says nothing about age). A task goes to
/// the head when it is put on the list (`account_entity_enqueue`: fork,
/// wakeup, migration), when it is picked to run (`set_next_task_fair`) and
/// when `detach_tasks` skips it; `detach_tasks` walks from the tail, the task
/// least recently enqueued or run.
///
/// Invariant: stamps of distinct slots differ, except never-stamped slots
/// (0); the walk orders by (stamp, slot). The sequence is `u64`: one stamp
/// per nanosecond would take 584 years to wrap.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CfsTasksOrder {
    seq: u64,
    stamp: alloc::vec::Vec<u64>,
}

impl CfsTasksOrder {
    /// Moves `slot` to the head of the list (on the wakeup and switch paths:
    /// one increment and one store unless the slot is new).
    #[inline]
    pub fn to_head(&mut self, slot: usize) {
        self.seq += 1;
        match self.stamp.get_mut(slot) {
            Some(s) => *s = self.seq,
            None => self.grow(slot),
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, slot: usize) {
        self.stamp.resize(slot + 1, 0);
        self.stamp[slot] = self.seq;
    }

    /// A walk from the tail over the slots as they are now: slots moved to
    /// the head during the walk are not visited again.
    pub fn from_tail(&self) -> TailWalk {
        TailWalk { after: None, end: self.seq }
    }
}

/// A walk of [`CfsTasksOrder`] from its tail (see [`CfsTasksOrder::from_tail`]).
#[derive(Clone, Copy, Debug)]
pub struct TailWalk {
    after: Option<(u64, usize)>,
    end: u64,
}

impl TailWalk {
    /// The next slot toward the head among those `live` says hold a task.
    /// O(slots) per step: the walk examines at most `loop_max` tasks.
    pub fn next(&mut self, order: &CfsTasksOrder, live: impl Fn(usize) -> bool) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (i, &st) in order.stamp.iter().enumerate() {
            let key = (st, i);
            if st > self.end || self.after.is_some_and(|a| key <= a) || best.is_some_and(|b| key >= b) {
                continue;
            }
            if live(i) {
                best = Some(key);
            }
        }
        self.after = best;
        best.map(|(_, i)| i)
    }
}

/// Inputs of `need_active_balance`.
#[derive(Clone, Copy, Debug)]
pub struct ActiveBalanceInput<'a> {
    /// Migration type of the failed attempt.
    pub kind: MigrationType,
    /// Balance context.
    pub idle: IdleType,
    /// The pulling and the busiest CPU.
    pub dst: &'a CpuSnapshot,
    /// See `dst`.
    pub src: &'a CpuSnapshot,
    /// Domain parameters.
    pub imbalance_pct: u32,
    /// See `imbalance_pct`.
    pub cache_nice_tries: u32,
    /// The domain's `nr_balance_failed` (after this failure's increment).
    pub nr_balance_failed: u32,
}

/// `need_active_balance` (§5.9, without ASYM_PACKING): push the busiest
/// CPU's running task with the stopper.
pub fn need_active_balance(a: &ActiveBalanceInput<'_>) -> bool {
    if a.kind == MigrationType::Misfit {
        return true;
    }
    let pct = a.imbalance_pct as u128;
    if a.idle != IdleType::NotIdle
        && a.src.h_nr_runnable == 1
        && (a.src.capacity as u128) * pct < (a.src.capacity_orig as u128) * 100
        && (a.src.capacity as u128) * pct < (a.dst.capacity as u128) * 100
    {
        return true;
    }
    a.kind == MigrationType::Task && a.nr_balance_failed > a.cache_nice_tries.saturating_add(2)
}
