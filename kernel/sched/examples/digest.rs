//! A behaviour digest for optimisation work: thousands of deterministic
//! random operation scripts (fork, wake, sleep, migrate, time, tick,
//! schedule, renice, slice, yield, remove, delayed exit) under several
//! feature sets and tunable variants, hashing every operation's result and
//! the whole observable state of the queue after it (every entity's state,
//! the queue order, V and its sums, PELT, counters, flags).
//!
//! ```sh
//! cargo run --release -p fairway-sched --example digest
//! ```
//!
//! A change that claims to preserve every scheduling decision and statistic
//! must leave the printed digest unchanged.
//!
//! A second pass runs the same scripts with every wakeup through
//! `FairRq::wake` and every sleep followed by a switch through
//! `FairRq::block_and_schedule`, hashing their results as the separate
//! calls' results: its line (`digest, combined ops`) must equal the first.

use std::fmt::Debug;

use sched::weight::DeltaMath;
use sched::{DequeueFlags, EnqueueFlags, EntityId, FairRq, Features, Nice, Policy, Tunables, WakeFlags};

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Hasher(u64);
impl Hasher {
    fn feed(&mut self, x: impl Debug) {
        for b in format!("{x:?}|").bytes() {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100000001b3);
        }
    }
}

fn state(rq: &FairRq, ids: &[EntityId], h: &mut Hasher) {
    for &id in ids {
        h.feed(rq.entity(id));
    }
    h.feed(rq.queued().collect::<Vec<_>>());
    h.feed((rq.avg_sums(), rq.avg_vruntime(), rq.zero_vruntime(), rq.cfs_rq_min_slice()));
    h.feed((rq.pelt(), rq.pelt_clock(), rq.stats(), rq.curr(), rq.curr_protected()));
    h.feed((rq.nr_queued(), rq.h_nr_runnable(), rq.load_weight(), rq.need_resched(), rq.clock()));
}

fn configs() -> Vec<Tunables> {
    let feats = [
        "",
        "NO_RUN_TO_PARITY",
        "NO_DELAY_DEQUEUE NO_PLACE_LAG",
        "NEXT_BUDDY NO_PICK_BUDDY NO_PREEMPT_SHORT",
        "NEXT_BUDDY NO_DELAY_ZERO NO_PLACE_REL_DEADLINE NO_PLACE_DEADLINE_INITIAL",
        "NO_WAKEUP_PREEMPTION",
    ];
    let mut v = Vec::new();
    for (k, f) in feats.iter().enumerate() {
        for cpus in [1, 8] {
            let mut t = Tunables::new(cpus);
            t.features = f.parse::<Features>().unwrap();
            if k % 2 == 1 {
                t.delta_math = DeltaMath::InverseMultiply;
            }
            if k == 2 {
                t.recenter_on_tick = false;
            }
            v.push(t);
        }
    }
    v
}

fn script(t: Tunables, seed: u64, len: usize, h: &mut Hasher, combined: bool) {
    let mut rq = FairRq::new(t);
    let mut rng = Lcg(seed);
    let mut ids: Vec<EntityId> = Vec::new();
    let mut now = 0u64;
    if seed.is_multiple_of(3) {
        rq.set_cpu_capacity(512 + rng.below(512));
        rq.set_freq_capacity(256 + rng.below(768));
    }
    for _ in 0..len {
        let pick = |rng: &mut Lcg, ids: &[EntityId]| (!ids.is_empty()).then(|| ids[rng.below(ids.len() as u64) as usize]);
        match rng.below(24) {
            0..=1 => {
                let idle = rng.below(10) == 0;
                let policy = if idle { Policy::Idle } else if rng.below(10) == 0 { Policy::Batch } else { Policy::Normal };
                let nice = Nice::clamped(rng.below(40) as i32 - 20);
                let r = rq.fork(nice, policy);
                h.feed(r);
                if let Ok(id) = r {
                    h.feed(rq.enqueue(id, EnqueueFlags::INITIAL));
                    h.feed(rq.check_preempt_wakeup(id, WakeFlags::FORK));
                    ids.push(id);
                }
            }
            2..=5 => {
                if let Some(id) = pick(&mut rng, &ids) {
                    now += rng.below(50_000);
                    rq.update_clock(now);
                    // enqueue refuses exactly a queued entity that is not delayed
                    let will_enqueue = rq.entity(id).is_some_and(|se| !se.on_rq || se.sched_delayed);
                    if combined && will_enqueue {
                        let wf = [WakeFlags::NONE, WakeFlags::SYNC, WakeFlags::SYNC | WakeFlags::RQ_SELECTED][rng.below(3) as usize];
                        let r = rq.wake(id, EnqueueFlags::WAKEUP, wf);
                        h.feed(r.map(|_| ()));
                        h.feed(r);
                    } else {
                        let r = rq.enqueue(id, EnqueueFlags::WAKEUP);
                        h.feed(r);
                        if r.is_ok() {
                            let wf = [WakeFlags::NONE, WakeFlags::SYNC, WakeFlags::SYNC | WakeFlags::RQ_SELECTED][rng.below(3) as usize];
                            h.feed(rq.check_preempt_wakeup(id, wf));
                        }
                    }
                }
            }
            6..=8 => {
                if let Some(id) = pick(&mut rng, &ids) {
                    let f = match rng.below(8) {
                        0 => DequeueFlags::SLEEP | DequeueFlags::SPECIAL,
                        1 => DequeueFlags::SLEEP | DequeueFlags::DELAYED,
                        _ => DequeueFlags::SLEEP,
                    };
                    let switch = rng.below(2) == 0;
                    if combined && switch {
                        let (r, next) = rq.block_and_schedule(id, f);
                        h.feed(r);
                        h.feed(next);
                    } else {
                        h.feed(rq.dequeue(id, f));
                        if switch {
                            h.feed(rq.schedule());
                        }
                    }
                }
            }
            9 => {
                if let Some(id) = pick(&mut rng, &ids) {
                    if rq.curr() != Some(id) {
                        let r = rq.dequeue(id, DequeueFlags::NONE);
                        h.feed(r);
                        if r.is_ok() {
                            h.feed(rq.enqueue(id, EnqueueFlags::MIGRATED));
                        }
                    }
                }
            }
            10..=12 => {
                now += 1 + rng.below(3_000_000);
                h.feed(rq.update_curr_at(now));
            }
            13..=14 => {
                now += 1 + rng.below(2_000_000);
                let r = rq.tick(now);
                h.feed(r);
                if r {
                    h.feed(rq.schedule());
                }
            }
            15..=17 => {
                now += rng.below(20_000);
                rq.update_clock(now);
                h.feed(rq.schedule());
            }
            18 => {
                if let Some(id) = pick(&mut rng, &ids) {
                    h.feed(rq.reweight(id, Nice::clamped(rng.below(40) as i32 - 20)));
                }
            }
            19 => {
                if let Some(id) = pick(&mut rng, &ids) {
                    let s = [0, 50_000, 300_000, 3_000_000, 150_000_000][rng.below(5) as usize];
                    h.feed(rq.set_slice(id, s));
                }
            }
            20 => {
                now += rng.below(10_000);
                rq.update_clock(now);
                rq.yield_curr();
                h.feed(rq.schedule());
            }
            21 => {
                if let Some(id) = pick(&mut rng, &ids) {
                    let r = rq.remove_entity(id);
                    h.feed(r);
                    if let Ok(se) = r {
                        ids.retain(|&x| x != id);
                        // half of them come back, as a migration would
                        if rng.below(2) == 0 {
                            let r = rq.add_entity(se);
                            h.feed(r);
                            if let Ok(n) = r {
                                h.feed(rq.enqueue(n, EnqueueFlags::MIGRATED | EnqueueFlags::WAKEUP));
                                ids.push(n);
                            }
                        }
                    }
                }
            }
            22 => {
                h.feed(rq.pick_eevdf_peek());
                if let Some(id) = pick(&mut rng, &ids) {
                    h.feed((rq.entity_eligible(id), rq.entity_lag(id), rq.is_delayed(id)));
                }
            }
            _ => {
                if let Some(id) = pick(&mut rng, &ids) {
                    if rq.entity(id).is_some_and(|se| se.on_rq && !se.sched_delayed) {
                        h.feed(rq.set_curr(id));
                    }
                }
            }
        }
        state(&rq, &ids, h);
    }
}

fn main() {
    let scripts: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(400);
    let mut total = Hasher(0xcbf29ce484222325);
    let mut total_combined = Hasher(0xcbf29ce484222325);
    for (k, t) in configs().into_iter().enumerate() {
        let mut h = Hasher(0xcbf29ce484222325);
        let mut hc = Hasher(0xcbf29ce484222325);
        for s in 0..scripts {
            script(t, (k as u64) << 32 | s, 40 + (s % 5) as usize * 60, &mut h, false);
            script(t, (k as u64) << 32 | s, 40 + (s % 5) as usize * 60, &mut hc, true);
        }
        println!("config {k:2}: {:016x}", h.0);
        total.feed(h.0);
        total_combined.feed(hc.0);
    }
    println!("digest, combined ops: {:016x}", total_combined.0);
    println!("digest: {:016x}", total.0);
}
