//! Shared test helpers: random operation scripts, brute-force EEVDF
//! references and whole-queue invariant checks.
#![allow(dead_code)]

use proptest::prelude::*;
use sched::time::{vbefore, vdiff};
use sched::{DequeueFlags, EnqueueFlags, EntityId, FairRq, Feature, Features, Nice, Policy, WakeFlags};

/// One random run-queue operation. Entity operands are indices into the
/// entities created so far (modulo their count); invalid operations are
/// allowed and must be refused without a panic.
#[derive(Clone, Debug)]
pub enum Op {
    Fork(i32, bool),
    Wake(usize),
    Sleep(usize, bool),
    Migrate(usize),
    Advance(u64),
    Tick(u64),
    Schedule,
    Reweight(usize, i32),
    SetSlice(usize, u64),
    Yield,
    Remove(usize),
}

/// The feature sets the property tests run under: the defaults and the
/// switches whose paths differ most (one list, so every suite covers them all).
pub fn features() -> impl Strategy<Value = Features> {
    prop_oneof![
        Just(Features::default()),
        Just("NO_RUN_TO_PARITY".parse().unwrap()),
        Just("NO_DELAY_DEQUEUE NO_PLACE_LAG".parse().unwrap()),
        Just("NEXT_BUDDY NO_PICK_BUDDY NO_PREEMPT_SHORT".parse().unwrap()),
        Just("NEXT_BUDDY NO_DELAY_ZERO NO_PLACE_REL_DEADLINE NO_PLACE_DEADLINE_INITIAL".parse().unwrap()),
        Just("NO_WAKEUP_PREEMPTION".parse().unwrap()),
    ]
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (-20i32..=19, prop::bool::weighted(0.1)).prop_map(|(n, idle)| Op::Fork(n, idle)),
        3 => any::<usize>().prop_map(Op::Wake),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(k, s)| Op::Sleep(k, s)),
        1 => any::<usize>().prop_map(Op::Migrate),
        4 => (1u64..4_000_000).prop_map(Op::Advance),
        2 => (1u64..2_000_000).prop_map(Op::Tick),
        3 => Just(Op::Schedule),
        1 => (any::<usize>(), -20i32..=19).prop_map(|(k, n)| Op::Reweight(k, n)),
        1 => (any::<usize>(), 0u64..120_000_000).prop_map(|(k, s)| Op::SetSlice(k, s)),
        1 => Just(Op::Yield),
        1 => any::<usize>().prop_map(Op::Remove),
    ]
}

fn nth(ids: &[EntityId], k: usize) -> Option<EntityId> {
    (!ids.is_empty()).then(|| ids[k % ids.len()])
}

/// A queue under a random script, with the handles it created.
pub struct Driver {
    pub rq: FairRq,
    pub ids: Vec<EntityId>,
    pub now: u64,
}

impl Driver {
    pub fn new(rq: FairRq) -> Driver {
        Driver { rq, ids: Vec::new(), now: 0 }
    }


    /// Apply an operation; errors are fine, panics are not.
    pub fn apply(&mut self, op: &Op) {
        let rq = &mut self.rq;
        match *op {
            Op::Fork(n, idle) => {
                let policy = if idle { Policy::Idle } else { Policy::Normal };
                if let Ok(id) = rq.fork(Nice::clamped(n), policy) {
                    let _ = rq.enqueue(id, EnqueueFlags::INITIAL);
                    let _ = rq.check_preempt_wakeup(id, WakeFlags::FORK);
                    self.ids.push(id);
                }
            }
            Op::Wake(k) => {
                if let Some(id) = nth(&self.ids, k) {
                    if rq.enqueue(id, EnqueueFlags::WAKEUP).is_ok() {
                        let _ = rq.check_preempt_wakeup(id, WakeFlags::NONE);
                    }
                }
            }
            Op::Sleep(k, special) => {
                if let Some(id) = nth(&self.ids, k) {
                    let f = if special { DequeueFlags::SLEEP | DequeueFlags::SPECIAL } else { DequeueFlags::SLEEP };
                    let _ = rq.dequeue(id, f);
                }
            }
            Op::Migrate(k) => {
                // out and back in, as a migration would (relative deadline kept)
                if let Some(id) = nth(&self.ids, k) {
                    if rq.curr() != Some(id) && rq.dequeue(id, DequeueFlags::NONE).is_ok() {
                        let _ = rq.enqueue(id, EnqueueFlags::MIGRATED);
                    }
                }
            }
            Op::Advance(d) => {
                self.now += d;
                rq.update_curr_at(self.now);
            }
            Op::Tick(d) => {
                self.now += d;
                if rq.tick(self.now) {
                    rq.schedule();
                }
            }
            Op::Schedule => {
                rq.update_clock(self.now);
                rq.schedule();
            }
            Op::Reweight(k, n) => {
                if let Some(id) = nth(&self.ids, k) {
                    let _ = rq.reweight(id, Nice::clamped(n));
                }
            }
            Op::SetSlice(k, s) => {
                if let Some(id) = nth(&self.ids, k) {
                    let _ = rq.set_slice(id, s);
                }
            }
            Op::Yield => rq.yield_curr(),
            Op::Remove(k) => {
                if let Some(id) = nth(&self.ids, k) {
                    if rq.remove_entity(id).is_ok() {
                        self.ids.retain(|&x| x != id);
                    }
                }
            }
        }
    }
}

/// Brute-force eligibility: `Σ_j w_j·(v_j - v) >= 0` over the queued
/// entities, i.e. `v <= V` exactly.
pub fn brute_eligible(rq: &FairRq, v: u64) -> bool {
    let s: i128 = rq.queued().map(|id| rq.entity(id).unwrap()).map(|se| se.w() as i128 * vdiff(se.vruntime, v) as i128).sum();
    s >= 0
}

/// Brute-force V: `floor(Σ w_i v_i / Σ w_i)` relative to the first queued
/// entity's vruntime; `None` when nothing is queued.
pub fn brute_avg_vruntime(rq: &FairRq) -> Option<u64> {
    let first = rq.queued().next()?;
    let base = rq.entity(first).unwrap().vruntime;
    let (mut s, mut w) = (0i128, 0i128);
    for id in rq.queued() {
        let se = rq.entity(id).unwrap();
        s += se.w() as i128 * vdiff(se.vruntime, base) as i128;
        w += se.w() as i128;
    }
    Some(base.wrapping_add(s.div_euclid(w) as i64 as u64))
}

/// Check a pick against an O(n) EEVDF reference: the picked entity is
/// eligible and has the earliest deadline among eligible queued entities;
/// a protected eligible running entity is kept; a single queued entity is
/// taken regardless.
pub fn check_pick(rq: &FairRq, picked: Option<EntityId>) -> Result<(), String> {
    let queued: Vec<EntityId> = rq.queued().collect();
    if queued.is_empty() {
        return if picked.is_none() { Ok(()) } else { Err("picked from an empty queue".into()) };
    }
    let p = picked.ok_or("nothing picked from a non-empty queue")?;
    if queued.len() == 1 {
        return if p == queued[0] { Ok(()) } else { Err("single entity not picked".into()) };
    }
    let se = |id: EntityId| rq.entity(id).unwrap();
    // PICK_BUDDY: an eligible next buddy comes before everything else,
    // protection included
    if rq.features().has(Feature::PickBuddy) {
        if let Some(b) = rq.next_buddy().filter(|&b| se(b).on_rq && brute_eligible(rq, se(b).vruntime)) {
            return if p == b { Ok(()) } else { Err(format!("eligible next buddy {b:?} not picked, got {p:?}")) };
        }
    }
    let curr = rq.curr().filter(|&c| se(c).on_rq && brute_eligible(rq, se(c).vruntime));
    if let Some(c) = curr {
        if vbefore(se(c).vruntime, se(c).vprot) {
            return if p == c { Ok(()) } else { Err(format!("protected curr {c:?} not kept, got {p:?}")) };
        }
    }
    let best = queued
        .iter()
        .copied()
        .filter(|&id| brute_eligible(rq, se(id).vruntime))
        .min_by(|&a, &b| vdiff(se(a).deadline, se(b).deadline).cmp(&0))
        .ok_or("no eligible entity at all")?;
    if !brute_eligible(rq, se(p).vruntime) {
        return Err(format!("picked {p:?} is not eligible"));
    }
    if se(p).deadline != se(best).deadline {
        return Err(format!("picked deadline {} but earliest eligible is {}", se(p).deadline, se(best).deadline));
    }
    Ok(())
}

/// Whole-queue invariants: counts, load, sums, tree structure.
pub fn check_invariants(rq: &FairRq) -> Result<(), String> {
    rq.check_tree().map_err(|e| e.to_string())?;
    let queued: Vec<_> = rq.queued().map(|id| *rq.entity(id).unwrap()).collect();
    if queued.len() as u32 != rq.nr_queued() {
        return Err(format!("nr_queued {} but {} queued", rq.nr_queued(), queued.len()));
    }
    let runnable = queued.iter().filter(|se| !se.sched_delayed).count() as u32;
    if runnable != rq.h_nr_runnable() {
        return Err(format!("h_nr_runnable {} but {} runnable", rq.h_nr_runnable(), runnable));
    }
    let load: u64 = queued.iter().map(|se| se.w()).sum();
    if load != rq.load_weight() {
        return Err(format!("load {} but sum {}", rq.load_weight(), load));
    }
    if !queued.iter().all(|se| se.on_rq) {
        return Err("a listed entity is not on_rq".into());
    }
    if brute_avg_vruntime(rq).is_some_and(|v| v != rq.avg_vruntime()) {
        return Err(format!("avg_vruntime {} but brute force {:?}", rq.avg_vruntime(), brute_avg_vruntime(rq)));
    }
    Ok(())
}
