//! Why a 0.3 ms custom slice does not always preempt (the `latency`
//! workload's `slice_us=300` row in docs/BENCHMARKS.md): PREEMPT_SHORT only
//! lifts the running entity's slice protection; the wakeup still preempts
//! only if the EEVDF pick names the wakee, i.e. if its virtual deadline is
//! earlier than those of the eligible others, the running hog included.

use sched::sim::{Behavior, Event, Sim};
use sched::time::{vbefore, vdiff, NSEC_PER_MSEC, NSEC_PER_USEC};
use sched::{EnqueueFlags, EntityId, FairRq, Feature, Nice, SchedEntity, Tunables, WakeFlags};

const US: u64 = NSEC_PER_USEC;

/// The queue of one losing wakeup of the kernel run, rebuilt: two nice-0
/// hogs (0.7 ms base slice, one CPU), hog A picked with lag `lambda` (hog B
/// at `-lambda`) and a fresh request, and after A ran `t` the sleeper wakes
/// with saved lag `l` and custom slice `slice`. Returns the queue, the
/// three handles and whether the wakeup preempts (the same from
/// [`FairRq::wake`] as from `enqueue` + `check_preempt_wakeup`).
fn wake_beside_hog(lambda: u64, t: u64, l: u64, slice: u64) -> (FairRq, [EntityId; 3], bool) {
    let mut rq = FairRq::new(Tunables::new(1));
    rq.update_clock(NSEC_PER_MSEC);
    // B first: alone on the queue it is placed at V whatever its lag; A then
    // joins with +lambda (place_entity inflates it so that it keeps it), which
    // leaves B at -lambda.
    let b = rq.add_entity(SchedEntity::nice0()).unwrap();
    rq.enqueue(b, EnqueueFlags::WAKEUP).unwrap();
    let mut se = SchedEntity::nice0();
    se.vlag = lambda as i64;
    let a = rq.add_entity(se).unwrap();
    rq.enqueue(a, EnqueueFlags::WAKEUP).unwrap();
    assert_eq!(rq.schedule(), Some(a), "the hog with positive lag is the only eligible one");
    rq.update_clock(NSEC_PER_MSEC + t);
    let mut se = SchedEntity::nice0();
    se.vlag = l as i64;
    se.slice = slice;
    se.custom_slice = true;
    let s = rq.add_entity(se).unwrap();
    // the kernel's combined wakeup, and the two steps it stands for
    let mut combined = rq.clone();
    let preempt = combined.wake(s, EnqueueFlags::WAKEUP, WakeFlags::NONE).unwrap();
    rq.enqueue(s, EnqueueFlags::WAKEUP).unwrap();
    assert_eq!(rq.check_preempt_wakeup(s, WakeFlags::NONE).unwrap(), preempt);
    (rq, [a, b, s], preempt)
}

/// Virtual deadline minus V, in ns (nice 0: virtual ns = ns).
fn deadline_after_v(rq: &FairRq, id: EntityId) -> i64 {
    vdiff(rq.entity(id).unwrap().deadline, rq.avg_vruntime())
}

/// The wakeup at 490.56 ms of `workload=latency,slice_us=300` in a
/// throwaway kernel build that recorded the queue at every wakeup: the
/// running hog was picked at a tick
/// with lag +311 µs and a 0.7 ms request and has run 328 µs; the sleeper's
/// saved lag is +45 µs. Worked out by hand (all nice 0, so virtual = real
/// ns; V moves at half speed while A runs beside B, and the sleeper joining
/// with lag L moves V back by L/2):
///
/// - A's deadline: `700 - lambda - t/2 + L/2` = 700 - 311 - 164 + 22.5 =
///   247.5 µs after V, lag `lambda - t/2 - L/2` = +124.5 µs (eligible);
/// - the sleeper's: `300 - L` = 255 µs after V, lag +45 µs (eligible);
/// - B: lag `-lambda + t/2 - L/2` = -169.5 µs (not eligible).
///
/// PREEMPT_SHORT applies (0.3 < 0.7 ms), so A's protection does not count,
/// but `pick_eevdf` returns the eligible entity with the earliest deadline:
/// A, 7.5 µs ahead of the sleeper. No preemption; RUN_TO_PARITY trims A's
/// protection to 0.3 ms from now, and the sleeper waits for the next tick
/// (672 µs: A has then used up its request). The kernel measured 124.3,
/// 246.3 and 254.7 µs and a 672 µs wait.
#[test]
fn short_slice_wakee_loses_to_a_hog_with_an_earlier_deadline() {
    let (lambda, t, l) = (311 * US, 328 * US, 45 * US);
    let (mut rq, [a, b, s], preempt) = wake_beside_hog(lambda, t, l, 300 * US);
    assert!(!preempt, "the hog's deadline is earlier: no preemption");
    assert_eq!(rq.curr(), Some(a));
    let lag = |rq: &FairRq, id| rq.entity_lag(id).unwrap() / 1024;
    let close = |got: i64, want: u64| (got - want as i64).abs() <= 2;
    assert!(close(deadline_after_v(&rq, a), 700 * US - lambda - t / 2 + l / 2), "A: {}", deadline_after_v(&rq, a));
    assert!(close(deadline_after_v(&rq, s), 300 * US - l), "S: {}", deadline_after_v(&rq, s));
    assert!(close(lag(&rq, a) as i64, lambda - t / 2 - l / 2), "A's lag {}", lag(&rq, a));
    assert!(close(lag(&rq, s) as i64, l), "S's lag {}", lag(&rq, s));
    assert!(rq.entity_eligible(a) && rq.entity_eligible(s) && !rq.entity_eligible(b));
    // the pick with A's protection ignored (what PREEMPT_SHORT asks for) is
    // A; with it, A too
    assert_eq!(rq.pick_eevdf_peek(), Some(a));
    // RUN_TO_PARITY: the failed wakeup shrank A's protection to the
    // smallest queued slice (the sleeper's 0.3 ms) from now
    let se = rq.entity(a).unwrap();
    assert_eq!(vdiff(se.vprot, se.vruntime), 300 * US as i64);
    // nothing happens until the next tick: A's request (and protection) has
    // run out by then, and the sleeper, now the earliest eligible deadline,
    // is picked 672 µs after it woke
    assert!(rq.tick(2 * NSEC_PER_MSEC));
    assert_eq!(rq.schedule(), Some(s));
    assert_eq!(2 * NSEC_PER_MSEC - (NSEC_PER_MSEC + t), 672 * US);
}

/// The same decision as a rule: the sleeper loses iff A is still eligible
/// (lag `lambda - t/2 - L/2 >= 0`, i.e. `t <= 2·lambda - L`, 577 µs here)
/// and A's deadline `700 - lambda - t/2 + L/2` is before the sleeper's
/// `300 - L`, i.e. `t > 800 - 2·lambda + 3·L` (313 µs here): a window of
/// the hog's run, which each µs of saved lag narrows by 4 µs. A 0.1 ms slice
/// moves the lower end to `1200 - 2·lambda + 3·L` (713 µs here), past the
/// upper one, so here it always preempts (the window would open only for a
/// hog picked with `lambda > 300 + L`). Checked on both sides of both ends.
#[test]
fn short_slice_loses_only_inside_a_window_of_the_hogs_run() {
    let (lambda, l) = (311 * US, 45 * US);
    let (lo, hi) = (800 * US - 2 * lambda + 3 * l, 2 * lambda - l);
    assert_eq!((lo, hi), (313 * US, 577 * US));
    for t in [10 * US, 200 * US, lo - 2 * US, lo + 2 * US, 328 * US, 500 * US, hi - 2 * US, hi + 2 * US, 690 * US] {
        let (_, _, preempt) = wake_beside_hog(lambda, t, l, 300 * US);
        assert_eq!(preempt, !(lo < t && t < hi), "slice 0.3 ms, t = {t}");
        let (_, _, preempt) = wake_beside_hog(lambda, t, l, 100 * US);
        assert!(preempt, "slice 0.1 ms, t = {t}: its deadline is always earlier");
    }
    // more saved lag (from a recent late wakeup) wins at t = 328 µs
    let (_, _, preempt) = wake_beside_hog(lambda, 328 * US, 60 * US, 300 * US);
    assert!(preempt, "L = 60 µs: the window starts at 358 µs");
}

/// The whole run under the simulator, as the kernel's `latency` workload
/// does it: two nice-0 hogs and a sleeper that runs 5 µs every 3 ms (so its
/// wakeups drift 5 µs later per period against the 1 ms tick), with a custom
/// slice of 0.3 ms and of 0.1 ms, 2,000 wakeups each. With 0.3 ms a few
/// wakeups lose: each time the running hog is eligible with the earlier
/// deadline, and the sleeper runs at the next tick. After such a late
/// wakeup the sleeper has a large saved lag (it waited while the hogs ran),
/// which wins the following wakeups; it shrinks by 2/3 of its 5 µs run per
/// period, until the hog's window (see above) opens again. With 0.1 ms none
/// loses.
#[test]
fn short_slice_sleeper_beside_two_hogs_loses_rarely_and_for_that_reason() {
    let tick = NSEC_PER_MSEC;
    for (slice, expect_losses) in [(300 * US, true), (100 * US, false)] {
        let mut sim = Sim::new(Tunables::new(1));
        for _ in 0..2 {
            sim.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap();
        }
        let s = sim.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
        sim.apply(Event::SetSlice(s, slice)).unwrap();
        sim.apply(Event::Run(5 * US)).unwrap();
        let (mut losses, mut wakes) = (Vec::new(), 0);
        for _ in 0..2000 {
            if sim.running() != Some(s) {
                let next = (sim.now() / tick + 1) * tick;
                sim.apply(Event::Run(next - sim.now())).unwrap();
                continue;
            }
            sim.apply(Event::Run(5 * US)).unwrap();
            sim.apply(Event::Sleep(s)).unwrap();
            sim.apply(Event::Run(3 * NSEC_PER_MSEC)).unwrap();
            let woke = sim.now();
            sim.apply(Event::Wake(s)).unwrap();
            wakes += 1;
            if sim.running() == Some(s) {
                continue;
            }
            let rq = sim.rq();
            let hog = rq.curr().unwrap();
            let se_s = sim.entity(s).unwrap();
            let se_h = rq.entity(hog).unwrap();
            assert!(rq.entity_eligible(hog), "a wakeup lost to an ineligible hog at {woke}");
            assert!(rq.entity_eligible(sim.task(s).unwrap().entity));
            assert!(vdiff(se_h.deadline, se_s.deadline) < 0, "a wakeup lost to a later deadline at {woke}");
            let next = (woke / tick + 1) * tick;
            sim.apply(Event::Run(next - woke)).unwrap();
            assert_eq!(sim.running(), Some(s), "the sleeper runs at the next tick");
            losses.push((woke / US, (next - woke) / US));
        }
        println!("slice {slice}: {wakes} wakeups, lost (at µs, waited µs): {losses:?}");
        if expect_losses {
            assert!(!losses.is_empty() && losses.len() * 50 < wakes, "rare, but there");
        } else {
            assert!(losses.is_empty());
        }
    }
}

/// One lost wakeup of [`sleeper_run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Loss {
    /// When the sleeper woke (ns).
    at: u64,
    /// How long after the last tick it woke (ns).
    phase: u64,
    /// How long it waited: until the next tick, every time (ns).
    wait: u64,
    /// The running hog was inside its protected slice (`vprot`).
    hog_protected: bool,
    /// The running hog's virtual deadline was earlier than the sleeper's.
    hog_deadline_first: bool,
}

/// The sleeper's side of a [`sleeper_run`], from its first lost wakeup on:
/// what it waited and ran, and its lag (service ns) at the start and end.
#[derive(Debug)]
struct SleeperRun {
    losses: Vec<Loss>,
    /// Wait of every wakeup from the first loss on (only the lost ones
    /// wait: a won wakeup runs at once in the simulator).
    waited: i64,
    /// CPU time of the sleeper over the same wakeups.
    ran: i64,
    /// Its lag at the first lost wakeup and at its last sleep.
    lag_start: i64,
    lag_end: i64,
    /// What sleeping changed its lag by, summed over its sleeps: zero
    /// unless it slept with negative lag, was kept queued as delayed
    /// (DELAY_DEQUEUE) and came back with less debt, or at 0 (DELAY_ZERO
    /// drops the surplus).
    lag_while_asleep: i64,
    /// Sleeps over the whole run that left it delayed.
    delayed_sleeps: usize,
}

/// The kernel's `workload=latency,hogs=2,samples=3000` under the simulator:
/// two nice-0 hogs and a sleeper with a custom `slice` that runs 2.76 µs
/// per period (the kernel's 8.27 ms of sleeper CPU time over 3,000 periods
/// at `3208c9c`) and sleeps 3 ms + 0.44 µs, so that its wakeups drift 3.2
/// µs later per period against the 1 ms tick (the kernel's drift also
/// includes its ~3 µs wakeup path). A lost wakeup waits for the next tick,
/// where the sleeper must run.
fn sleeper_run(slice: u64, preempt_short: bool) -> SleeperRun {
    const RUN: u64 = 2_760;
    const SLEEP: u64 = 3 * NSEC_PER_MSEC + 440;
    let tick = NSEC_PER_MSEC;
    let mut tun = Tunables::new(1);
    tun.features.set(Feature::PreemptShort, preempt_short);
    let mut sim = Sim::new(tun);
    for _ in 0..2 {
        sim.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap();
    }
    let s = sim.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
    let se = sim.task(s).unwrap().entity;
    sim.apply(Event::SetSlice(s, slice)).unwrap();
    let lag = |sim: &Sim| (sim.rq().entity_lag(se).unwrap() / 1024) as i64;
    let mut run = SleeperRun { losses: Vec::new(), waited: 0, ran: 0, lag_start: 0, lag_end: 0, lag_while_asleep: 0, delayed_sleeps: 0 };
    let mut wakes = 0;
    while wakes < 3000 {
        if sim.running() != Some(s) {
            // only at the start: the sleeper waits behind the hogs
            let next = (sim.now() / tick + 1) * tick;
            sim.apply(Event::Run(next - sim.now())).unwrap();
            continue;
        }
        sim.apply(Event::Run(RUN)).unwrap();
        let now = sim.now();
        sim.rq_mut().update_curr_at(now);
        let lag_at_sleep = lag(&sim);
        sim.apply(Event::Sleep(s)).unwrap();
        run.delayed_sleeps += sim.entity(s).unwrap().sched_delayed as usize;
        if !run.losses.is_empty() {
            run.ran += RUN as i64;
            run.lag_end = lag_at_sleep;
        }
        sim.apply(Event::Run(SLEEP)).unwrap();
        let woke = sim.now();
        sim.apply(Event::Wake(s)).unwrap();
        wakes += 1;
        // placement keeps the lag it slept with, unless it was delayed
        let lag_at_wake = lag(&sim);
        if !run.losses.is_empty() {
            run.lag_while_asleep += lag_at_wake - lag_at_sleep;
        }
        if sim.running() == Some(s) {
            continue;
        }
        let rq = sim.rq();
        let hog = rq.entity(rq.curr().unwrap()).unwrap();
        assert!(rq.entity_eligible(rq.curr().unwrap()), "a wakeup lost to an ineligible hog at {woke}");
        let loss = Loss {
            at: woke,
            phase: woke % tick,
            wait: (woke / tick + 1) * tick - woke,
            // a failed wakeup trims the protection, it does not end it
            hog_protected: vbefore(hog.vruntime, hog.vprot),
            hog_deadline_first: vbefore(hog.deadline, sim.entity(s).unwrap().deadline),
        };
        sim.apply(Event::Run(loss.wait)).unwrap();
        assert_eq!(sim.running(), Some(s), "the sleeper runs at the next tick");
        if run.losses.is_empty() {
            run.lag_start = lag_at_wake;
        }
        run.waited += loss.wait as i64;
        run.losses.push(loss);
    }
    run
}

/// Why PREEMPT_SHORT makes a 0.3 ms sleeper wait late more often than
/// without it (the kernel: 25 against 16 of 3,000): not more waiting, the
/// same waiting cut into shorter pieces.
///
/// The total is fixed by the lag bookkeeping. Queued beside two hogs of
/// equal weight, the sleeper is owed a third of the time it spends queued:
/// running `r` lowers its lag by `2r/3`, waiting `w` raises it by `w/3`.
/// Sleeping keeps the lag, unless it sleeps with negative lag (then
/// DELAY_DEQUEUE keeps it queued while asleep, so it earns the debt back
/// without waiting, and DELAY_ZERO drops any surplus). So over any stretch `waited = 2·ran + 3·(lag_end -
/// lag_start) - 3·lag_while_asleep`: checked here to the µs. With
/// PREEMPT_SHORT the sleeper never sleeps with negative lag after its first
/// late wakeup (it loses again while its saved lag is still positive);
/// without, it does a few times, just before the wakeup that loses, which
/// spares it 46 µs of lag here. Either way it waits about twice its CPU
/// time in all, as the kernel's sleeper did (`wait_sum` 17.11 ms against
/// 2 × 8.27 ms of `sum_exec_runtime` with, 16.10 against 2 × 8.00 without).
///
/// The pieces differ. With PREEMPT_SHORT the hog's protection does not
/// count; the sleeper loses only the deadline comparison, to a hog picked
/// at a tick with a fresh request, about a third into that tick, when its
/// saved lag has run down (the window of the tests above), and waits the
/// rest of the tick: 0.6-0.7 ms. Without it, the sleeper's deadline is
/// earlier each time it loses; it loses to the protection of a hog the tick
/// picked just before it woke (its lag moves V back by half of itself, which
/// leaves only a freshly picked hog eligible), and waits a whole tick. Same
/// total, pieces 1.5 times shorter: about 1.5 times as many.
#[test]
fn preempt_short_cuts_the_same_waiting_into_more_shorter_waits() {
    let with = sleeper_run(300 * US, true);
    let without = sleeper_run(300 * US, false);
    for (name, run) in [("PREEMPT_SHORT", &with), ("NO_PREEMPT_SHORT", &without)] {
        println!(
            "{name}: {} late wakeups, {} µs waited, {} µs ran, lag {} -> {} µs, {} µs while asleep, {} delayed sleeps",
            run.losses.len(),
            run.waited / 1000,
            run.ran / 1000,
            run.lag_start / 1000,
            run.lag_end / 1000,
            run.lag_while_asleep / 1000,
            run.delayed_sleeps
        );
        let ledger = 2 * run.ran + 3 * (run.lag_end - run.lag_start) - 3 * run.lag_while_asleep;
        assert!((run.waited - ledger).abs() < 1000, "{name}: waited {} against the lag's {ledger}", run.waited);
        // sleeping gives back only what it repaid delayed (to rounding: V
        // is the floor of a weighted mean)
        assert!(run.lag_while_asleep > -1000, "{name}");
        let late: i64 = run.losses.iter().map(|l| l.wait as i64).sum();
        assert!((late - 2 * run.ran).abs() < 1000 * US as i64, "{name}: waits {late} against twice the CPU time {}", 2 * run.ran);
    }
    assert!(with.lag_while_asleep.abs() < 1000, "PREEMPT_SHORT: no delayed sleep after the first late wakeup");
    // the first loss of each run comes out of the start (the sleeper's lag
    // from waiting behind the hogs at fork has just run out); the rest:
    for l in &with.losses[1..] {
        assert!(l.hog_deadline_first, "PREEMPT_SHORT: lost the deadline comparison, {l:?}");
        assert!((300 * US..400 * US).contains(&l.phase) && (600 * US..700 * US).contains(&l.wait), "{l:?}");
    }
    for l in &without.losses[1..] {
        assert!(l.hog_protected && !l.hog_deadline_first, "NO_PREEMPT_SHORT: lost to the protection alone, {l:?}");
        assert!(l.phase < 10 * US && l.wait > 990 * US, "{l:?}");
    }
    let mean = |r: &SleeperRun| r.waited / r.losses.len() as i64;
    println!("mean wait: {} µs with, {} µs without", mean(&with) / 1000, mean(&without) / 1000);
    assert!(with.losses.len() * 10 >= without.losses.len() * 13, "{} against {}", with.losses.len(), without.losses.len());
}

/// The other two cells of the kernel's table. Without PREEMPT_SHORT a 0.1
/// ms sleeper loses exactly the wakeups a 0.3 ms one loses, at the same
/// times: each loss is decided by the hog's protection, with the sleeper's
/// deadline the earlier one, and a shorter slice only makes it earlier
/// still. (The slice still acts elsewhere: a hog picked while the sleeper
/// sleeps delayed is protected for the sleeper's slice, not its own; in the
/// kernel that adds a pick at some ticks, which keep the same hog, so the
/// figures stay the same, not the instructions.) With PREEMPT_SHORT the 0.1
/// ms sleeper never loses and never waits: its deadline, at most 0.1 ms
/// after V, beats every eligible hog's, its lag runs down to zero, and from
/// then it repays the `2r/3` of each run while it sleeps, delayed.
#[test]
fn a_short_slice_decides_nothing_without_preempt_short_and_never_waits_with_it() {
    let (a, b) = (sleeper_run(100 * US, false), sleeper_run(300 * US, false));
    assert!(!a.losses.is_empty());
    assert_eq!(a.losses, b.losses, "same late wakeups without PREEMPT_SHORT");
    let short = sleeper_run(100 * US, true);
    assert!(short.losses.is_empty() && short.waited == 0);
    assert!(short.delayed_sleeps > 2500, "{} of 3,000 sleeps delayed", short.delayed_sleeps);
}
