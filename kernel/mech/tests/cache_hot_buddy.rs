//! CACHE_HOT_BUDDY through the mechanism's pull (fair.c: `task_hot()` in
//! `detach_tasks()`): a task that a NEXT_BUDDY wakeup nominated as its
//! queue's next buddy stays where it is when a busy CPU balances, though it
//! is cold by time (it last ran 10 ms ago, past the 0.5 ms migration cost);
//! without the feature the same pull takes it.
//!
//! CPU 1 runs `runner` with `buddy` woken beside it (nominated, not yet
//! switched to); CPU 0 runs `busy`. CPU 0 pulls one task from CPU 1 as its
//! periodic balance does (`balance::pass` hands the detach pass the
//! booted features through `DetachParams::set_features`).

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use mech::task::Task;
use mech::thread::Spawn;
use sched::balance::migrate::DetachParams;
use sched::balance::{IdleType, Migration, MigrationType};
use sched::{EntityId, Feature, Features, WakeFlags};

fn pull_one(features: Features) -> u32 {
    let g = mech::balance::global().unwrap();
    let sd = &g.sds.per_cpu(0)[0];
    let (dst, src) = (mech::balance::snapshot::cpu_snapshot(0), mech::balance::snapshot::cpu_snapshot(1));
    assert_eq!(dst.nr_running, 1, "the pulling CPU is busy");
    let mut params = DetachParams::new(&dst, &src, IdleType::NotIdle, sd, 0);
    params.set_features(features);
    run_on(0);
    mech::balance::pull::pull_tasks(0, 1, &params, Migration { kind: MigrationType::Task, imbalance: 1 }).moved
}

fn eid_of(cpu: usize, t: &Arc<Task>) -> EntityId {
    let rq = mech::rq::lock(cpu);
    EntityId(rq.tasks.iter().position(|s| s.as_ref().is_some_and(|s| Arc::ptr_eq(s, t))).expect("on this runqueue") as u32)
}

#[test]
fn a_busy_cpu_leaves_the_next_buddy_where_it_is() {
    let features = Features::default().with(Feature::NextBuddy, true);
    assert!(features.has(Feature::CacheHotBuddy));
    boot_features(2, features);
    let busy = mech::thread::spawn(Spawn::new("busy").on_cpu(0), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &busy));
    let a = mech::thread::spawn(Spawn::new("a").on_cpu(1), || {}).unwrap();
    let b = mech::thread::spawn(Spawn::new("b").on_cpu(1), || {}).unwrap();
    let buddy = preempt(1);
    let runner = block(1);
    assert!(!Arc::ptr_eq(&buddy, &runner) && [&a, &b].iter().any(|t| Arc::ptr_eq(t, &runner)));
    advance_ns(10_000_000);

    run_on(1);
    assert!(mech::wakeup::try_to_wake_up(&buddy, WakeFlags::NONE));
    assert_eq!(buddy.cpu.load(Ordering::Relaxed), 1, "woken where it slept");
    let e = eid_of(1, &buddy);
    assert_eq!(mech::rq::lock(1).fair.next_buddy(), Some(e), "NEXT_BUDDY nominated it");

    // The booted features (CACHE_HOT_BUDDY on): hot, kept on CPU 1.
    let booted = mech::balance::global().unwrap().cfg.features;
    assert_eq!(booted, features);
    assert_eq!(pull_one(booted), 0, "the buddy is cache hot");
    assert_eq!(buddy.cpu.load(Ordering::Relaxed), 1);
    assert_eq!(mech::rq::lock(1).fair.next_buddy(), Some(e), "still the buddy");

    // Without CACHE_HOT_BUDDY the same pull takes it: cold by time.
    assert_eq!(pull_one(booted.with(Feature::CacheHotBuddy, false)), 1);
    assert_eq!(buddy.cpu.load(Ordering::Relaxed), 0, "the buddy moved to CPU 0");
    assert_eq!((nr_queued(0), nr_queued(1)), (2, 1));
}
