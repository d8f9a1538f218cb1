//! "Idle while others wait": the effect balancing exists to minimise.
//!
//! For each CPU `c` and each of its sched domains `sd`, `idle_wait[c][sd]`
//! is the time during which `c` had no runnable task while another CPU of
//! `sd`'s span had a task waiting (runnable, not running) that `c` is
//! allowed to run: what a balancer pulling to `c` could have fixed. A task
//! pinned to its own CPU, or allowed elsewhere but not on `c`, does not
//! count for `c`. `idle[c]` is the time `c` had no runnable task at all, the
//! denominator. Both count from the moment balancing is set up; both follow
//! the values each CPU publishes for the balancer (`snapshot::publish_load`,
//! under its runqueue lock, at every enqueue, switch, pull and tick), so
//! they see what the balancer could have seen: a task woken onto an idle
//! CPU ends its idle time when it is enqueued, not when it first runs.
//! Domains nest, so a CPU's `idle_wait` grows with the level and its top
//! level is its figure for the machine (its largest domain).
//!
//! Only tasks `c` may run count: counting any CPU with two or more runnable
//! tasks, pinned ones included, would show a workload that pins its hogs
//! (prodcons) as ~200 ms per CPU that no balancer could have removed.
//!
//! It is exact and event-driven, so a tickless CPU loses nothing and an
//! `-icount` run reproduces it. A CPU with two or more runnable tasks
//! offers the union of its waiting tasks' allowed CPUs (its own left out;
//! kept in its own atomics, no lock). Each domain instance (a span, shared
//! by the CPUs of the span) keeps, per CPU `c` of the span, how many CPUs
//! of the span offer to `c` and the integral `A_c(t)` of "that number is
//! above zero" over time, changed only when an offer changes (under that
//! slot's leaf lock, which orders the writers). A CPU reads its `A_c` of
//! each of its domains when it becomes idle and again when it stops being
//! idle, and adds the difference. An idle CPU offers nothing, so "another
//! CPU" holds by construction. The offer is recomputed (a walk of the
//! queue that stops at the first waiting task free to run on every other
//! CPU) whenever an overloaded CPU's runnable count changes; a task whose
//! affinity changes while it waits and the count does not is seen at the
//! next change. Between changes the fast paths pay one load and two
//! compares (`on_publish`); a CPU with one runnable task never walks.
//!
//! The reads take no lock: a slot carries a sequence count that a
//! writer makes odd while it changes the slot (Linux's `seqcount_t`
//! pattern), and a reader retries when the count was odd or moved. Every
//! idle entry and exit reads (its own slot of each domain), and a pipe
//! ping-pong across two CPUs makes four of them per round trip, so this is
//! the common case: each CPU keeps its own list of its slots (set once at
//! `init`) and reads them without the lock. Taking the leaf lock, looking
//! the CPU's domains up through the shared layout and reading the clock
//! once per level cost about 17 guest instructions more per idle
//! transition (`cargo xtask profile pipe --params rounds=2000,mode=cross
//! --smp 2`: 438 against 370 per round trip; docs/history.md, 2026-12-02).
//! An edge reads no clock: its time is its runqueue's clock, which the
//! enqueue or switch that made the edge has just read (as Linux's
//! statistics take `rq_clock()`), so the CPU's idle period and its slots'
//! integrals are measured on that one reading.
//!
//! Exactness of a lock-free read: the writer reads the clock inside its
//! odd section, and a read whose count did not move overlapped no write.
//! The statistics' own read (`read`) takes its time inside its even
//! section, so each write's time is either before it (and its values are
//! seen) or after it, and `A` is exact. An edge's time was read a little
//! before its slots are: a write between the two that ended an offer is
//! seen with its own, later time, so an edge's `A` may run ahead by that
//! gap (a few hundred nanoseconds at most, the enqueue or switch path);
//! an offer that began in the gap adds nothing (its start is after the
//! edge's time). Each period's gain is therefore capped at the period's
//! length, and no CPU's `idle_wait` exceeds its `idle_ns`.
//!
//! Overflow: the times are u64 nanoseconds since boot (584 years); the
//! sequence count wraps (u32) harmlessly, only equality is tested.
//!
//! No Linux function computes this: it measures the outcome of
//! `kernel/sched/fair.c: sched_balance_rq()` and its callers.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};

use sched::cpumask::CpuMask;
use sched::topology::{Level, SchedDomains};
use sched::EntityId;

use crate::rq::Rq;
use crate::stats::IdleWait;
use crate::MAX_LEVELS;
use crate::lock::{level, IrqMutex};
use crate::percpu::{per_cpu, PerCpu};


/// For one CPU `c` of a domain instance: how many CPUs of the span offer
/// `c` a waiting task, and the integral of "some CPU does" (ns). Writers
/// hold `writer`; readers take no lock (see the module docs).
struct Waiting {
    /// Even while no writer is inside; a writer makes it odd, changes the
    /// fields, and makes it even again.
    seq: AtomicU32,
    offering: AtomicU32,
    since: AtomicU64,
    acc: AtomicU64,
    writer: IrqMutex<level::IdleWaitSlot, ()>,
}

impl Waiting {
    const fn new() -> Self {
        Waiting {
            seq: AtomicU32::new(0),
            offering: AtomicU32::new(0),
            since: AtomicU64::new(0),
            acc: AtomicU64::new(0),
            writer: IrqMutex::new(()),
        }
    }

    /// `A(t)` at `t`, the time of an idle edge (its runqueue's clock, read
    /// by the enqueue or switch that made the edge), read consistently
    /// without the lock and without a clock read of its own. With no offer
    /// standing, `A` is its sum whatever `t` is.
    #[inline(always)]
    fn value_at(&self, t: u64) -> u64 {
        loop {
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 == 0 {
                // Worked out before the count is read again, so that only
                // the result and the count stay live (no saved registers
                // in the idle edge); discarded if the count moved.
                let acc = self.acc.load(Ordering::Relaxed);
                let a = if self.offering.load(Ordering::Relaxed) > 0 {
                    acc + t.saturating_sub(self.since.load(Ordering::Relaxed))
                } else {
                    acc
                };
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == s {
                    return a;
                }
            }
            core::hint::spin_loop();
        }
    }

    /// `A(t)`, how long up to `t` some CPU of the span offered a task, and
    /// `t` (now), read consistently without the lock.
    fn value_now(&self) -> (u64, u64) {
        loop {
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 == 0 {
                let t = crate::rq::now_ns();
                let offering = self.offering.load(Ordering::Relaxed);
                let acc = self.acc.load(Ordering::Relaxed);
                let since = self.since.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == s {
                    let a = if offering > 0 { acc + t.saturating_sub(since) } else { acc };
                    return (a, t);
                }
            }
            core::hint::spin_loop();
        }
    }

    /// Runs `f` on the fields as the one writer (leaf lock held, count odd)
    /// with the time read inside the write.
    #[inline(always)]
    fn write(&self, f: impl FnOnce(&Self, u64)) {
        let _w = self.writer.lock();
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        f(self, crate::rq::now_ns());
        self.seq.store(s.wrapping_add(2), Ordering::Release);
    }
}

/// One domain instance: its span and, per CPU of the span in CPU order,
/// its `Waiting` (in that CPU's part for its lowest domain, so that its
/// idle edges find it at a fixed place: `IdleWaitCpu::lowest`).
struct Instance {
    span: CpuMask,
    per: Box<[&'static Waiting]>,
}

impl Instance {
    /// The slot of span CPU `cpu`: its rank in the span.
    fn slot(&self, cpu: usize) -> &Waiting {
        let bits = self.span.bits();
        let (w, b) = (cpu / 64, cpu % 64);
        let below: u32 = bits[..w].iter().map(|x| x.count_ones()).sum::<u32>() + (bits[w] & ((1u64 << b) - 1)).count_ones();
        self.per[below as usize]
    }
}

/// One of a CPU's domains: its level, its instance, and the CPU's own slot
/// there (what its idle transitions read).
#[derive(Clone, Copy)]
struct Dom {
    level: Level,
    inst: &'static Instance,
    w: &'static Waiting,
}

/// The CPUs that have domains (the most any offer can hold), set by `init`.
static ALL: spin::Once<CpuMask> = spin::Once::new();

/// One CPU's side, written only by that CPU's publish (under its runqueue
/// lock) and read by the statistics.
struct CpuSide {
    idle: AtomicBool,
    idle_since: AtomicU64,
    idle_ns: AtomicU64,
    /// `A` of each domain when this CPU last became idle.
    entry: [AtomicU64; MAX_LEVELS],
    wait_ns: [AtomicU64; MAX_LEVELS],
    /// The CPUs this CPU offers a waiting task to, as `CpuMask` words
    /// (written under its runqueue lock only; atomics, not a lock, so that
    /// the slot locks taken while it changes stay leaves).
    offer: [AtomicU64; sched::cpumask::MAX_CPUS / 64],
    /// `offer` is not empty: a CPU that neither has a queue nor offered
    /// skips the mask work (the pipe's 0/1 crossings).
    offering: AtomicBool,
}

impl CpuSide {
    const fn new() -> Self {
        CpuSide {
            // No CPU runs anything before the scheduler starts.
            idle: AtomicBool::new(true),
            idle_since: AtomicU64::new(0),
            idle_ns: AtomicU64::new(0),
            entry: [const { AtomicU64::new(0) }; MAX_LEVELS],
            wait_ns: [const { AtomicU64::new(0) }; MAX_LEVELS],
            offer: [const { AtomicU64::new(0) }; sched::cpumask::MAX_CPUS / 64],
            offering: AtomicBool::new(false),
        }
    }
}

/// This module's per-CPU part (its `CPUS`).
struct IdleWaitCpu {
    per_cpu: CpuSide,
    /// Each CPU's band of runnable counts that change none of its states,
    /// `lo << 32 | hi` for `lo <= runnable < hi`: `[0, 1)` idle, `[1, 2)` one
    /// task, `[n, n + 1)` a queue of `n` (its offer is walked again when the
    /// count changes); `[1, MAX)` for a CPU without domains (`-smp 1`), whose
    /// queue no other CPU could take. The fast paths load it and compare.
    band: AtomicU64,
    /// The band of one runnable task and no queue (`band_of(1, false, ..)`:
    /// `[1, 2)`, or `[1, MAX)` without domains), set once by `init`: the
    /// lone-task edge loads it instead of working it out.
    one_task_band: AtomicU64,
    /// This CPU's domains bottom-up (as `SchedDomains::per_cpu`), set once
    /// by `init`; unset for a CPU above the last online one.
    doms: spin::Once<&'static [Dom]>,
    /// This CPU's slot in its lowest domain (`doms[0].w` is this).
    lowest: Waiting,
    /// This CPU has exactly one domain (a machine of one shared cache), set
    /// once by `init`: its idle edges read `lowest` and nothing else, with
    /// one load where they would test `doms` and its length.
    one_level: AtomicBool,
    /// `one_level` and no offer of this CPU standing (`CpuSide::offering`
    /// clear), kept with the latter (written under the CPU's runqueue lock
    /// only): an edge of at most one runnable task then changes nothing but
    /// the idle figures of `lowest`, one load to know it.
    lone_edges: AtomicBool,
}

impl IdleWaitCpu {
    const fn new() -> Self {
        IdleWaitCpu {
            per_cpu: CpuSide::new(),
            band: AtomicU64::new(band(0, 1)),
            one_task_band: AtomicU64::new(band(1, 2)),
            doms: spin::Once::new(),
            lowest: Waiting::new(),
            one_level: AtomicBool::new(false),
            lone_edges: AtomicBool::new(false),
        }
    }
}

/// Every CPU's IdleWaitCpu.
static CPUS: PerCpu<IdleWaitCpu> = per_cpu!(IdleWaitCpu::new());

const fn band(lo: u32, hi: u32) -> u64 {
    (lo as u64) << 32 | hi as u64
}

/// Sets up the domain instances (once, on the boot CPU, before any CPU
/// publishes). Idle periods count from now. The instances live as long as
/// the kernel (leaked once: the domains never change after boot).
pub fn init(sds: &SchedDomains) {
    let now = crate::rq::now_ns();
    let mut spans: Vec<CpuMask> = Vec::new();
    let mut of_cpu: Vec<Vec<(Level, usize)>> = Vec::new();
    let nr = sds.online().iter().last().map_or(0, |c| c + 1);
    for cpu in 0..nr {
        let mut mine = Vec::new();
        if sds.online().contains(cpu) {
            for sd in sds.per_cpu(cpu).iter().take(MAX_LEVELS) {
                let id = match spans.iter().position(|s| *s == sd.span) {
                    Some(i) => i,
                    None => {
                        spans.push(sd.span);
                        spans.len() - 1
                    }
                };
                mine.push((sd.level, id));
            }
            CPUS[cpu].per_cpu.idle_since.store(now, Ordering::Relaxed);
        }
        of_cpu.push(mine);
    }
    // A CPU's slot in its lowest domain is its part's `lowest`; the others
    // are allocated.
    let lowest_of = |cpu: usize| of_cpu.get(cpu).and_then(|m| m.first()).map(|&(_, id)| id);
    let instances: &'static [Instance] = Box::leak(
        spans
            .iter()
            .enumerate()
            .map(|(id, s)| Instance {
                span: *s,
                per: s
                    .iter()
                    .map(|c| -> &'static Waiting {
                        if lowest_of(c) == Some(id) {
                            &CPUS[c].lowest
                        } else {
                            Box::leak(Box::new(Waiting::new()))
                        }
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    ALL.call_once(|| sds.online());
    for (cpu, mine) in of_cpu.iter().enumerate() {
        let doms: Vec<Dom> = mine
            .iter()
            .map(|&(level, id)| {
                let inst = &instances[id];
                Dom { level, inst, w: inst.slot(cpu) }
            })
            .collect();
        CPUS[cpu].one_task_band.store(band_of(1, false, doms.is_empty()), Ordering::Relaxed);
        CPUS[cpu].one_level.store(doms.len() == 1, Ordering::Relaxed);
        // No offer stands yet.
        CPUS[cpu].lone_edges.store(doms.len() == 1, Ordering::Relaxed);
        CPUS[cpu].doms.call_once(|| Box::leak(doms.into_boxed_slice()));
    }
}

/// `rq` published (call under its lock, from `snapshot::publish_load`).
#[inline]
pub fn on_publish(rq: &Rq) {
    let runnable = rq.fair.h_nr_runnable();
    let this = &CPUS[rq.cpu];
    let b = this.band.load(Ordering::Relaxed);
    if runnable < (b >> 32) as u32 || runnable >= b as u32 {
        transition(rq, runnable, this);
    }
}

/// Puts into `m` (empty) the CPUs other than its own that `rq`'s waiting
/// tasks (runnable, not running) may run on. The walk stops at the first
/// task that may run on every other CPU (the common case of a free task).
/// In place: a mask is 128 bytes, and this runs at every change of a queue.
fn offer_of(rq: &Rq, all: &CpuMask, m: &mut CpuMask) {
    // Own CPU in while the walk compares with `all`, out at the end.
    m.set(rq.cpu);
    let curr = rq.fair.curr();
    for (i, t) in rq.tasks.iter().enumerate() {
        let Some(t) = t else { continue };
        let e = EntityId(i as u32);
        if curr == Some(e) || !rq.fair.entity(e).is_some_and(|se| se.on_rq && !se.sched_delayed) {
            continue;
        }
        t.affinity.union_into(m);
        if all.is_subset(m) {
            m.intersect_with(all);
            break;
        }
    }
    m.clear(rq.cpu);
}

/// A change of band. The common case, at most one runnable task and no
/// offer (the pipe's and every sleep-and-wake path's), is handled here: no
/// offer changes, only the band and, at an idle edge, the idle figures; no
/// mask is built. Everything else is in [`transition_offers`], out of line,
/// so that this path keeps a small frame (its mask and the registers it
/// needs cost about 15 guest instructions per idle edge when inlined here).
///
/// `this` is `rq`'s CPU's part, which the caller has just looked up.
#[inline(never)]
fn transition(rq: &Rq, runnable: u32, this: &IdleWaitCpu) {
    let me = &this.per_cpu;
    if runnable <= 1 && this.lone_edges.load(Ordering::Relaxed) {
        // Each edge apart and one level (a machine of one shared cache)
        // inline: such an edge keeps to the caller-saved registers, where
        // the loop over several levels needs saved ones.
        let (one, t) = (&this.lowest, rq.clock);
        if runnable == 0 {
            this.band.store(band(0, 1), Ordering::Relaxed);
            // Not idle before: `band` was not `[0, 1)`, which it is exactly
            // while `idle` is set (both change only here and in
            // `transition_offers`, together).
            debug_assert!(!me.idle.load(Ordering::Relaxed));
            become_idle(me, core::iter::once(one), t);
        } else {
            this.band.store(this.one_task_band.load(Ordering::Relaxed), Ordering::Relaxed);
            note_idle(me, core::iter::once(one), false, t);
        }
        return;
    }
    // Several levels (or none), still without an offer.
    if runnable <= 1 && !me.offering.load(Ordering::Relaxed) {
        let t = rq.clock;
        let Some(&mine) = this.doms.get() else { return };
        let b = if runnable == 0 { band(0, 1) } else { this.one_task_band.load(Ordering::Relaxed) };
        this.band.store(b, Ordering::Relaxed);
        note_idle_levels(me, mine, runnable == 0, t);
        return;
    }
    let Some(&mine) = this.doms.get() else { return };
    transition_offers(rq, runnable, this, mine);
}

/// [`note_idle`] for a CPU with several levels (or none), out of
/// [`transition`].
#[inline(never)]
fn note_idle_levels(me: &CpuSide, mine: &[Dom], idle: bool, t: u64) {
    note_idle(me, mine.iter().map(|d| d.w), idle, t);
}

/// [`transition`] for a CPU that has a queue or had one (it offers, or
/// offered, its waiting tasks).
#[inline(never)]
fn transition_offers(rq: &Rq, runnable: u32, this: &IdleWaitCpu, mine: &[Dom]) {
    let me = &this.per_cpu;
    let idle = runnable == 0;
    let queue = runnable >= 2 && !mine.is_empty();
    this.band.store(band_of(runnable, queue, mine.is_empty()), Ordering::Relaxed);
    // Withdraw offers before becoming idle, and make them after stopping
    // being idle: an idle CPU offers nothing.
    let mut new = CpuMask::new();
    let offers = queue || me.offering.load(Ordering::Relaxed);
    if offers {
        withdraw_offers(rq, mine, queue, &mut new);
    }
    note_idle(me, mine.iter().map(|d| d.w), idle, rq.clock);
    if offers {
        make_offers(rq.cpu, mine, &new);
    }
}

/// The band that holds `runnable` (`queue`: at least two, and domains to
/// offer them to; `alone`: no domain above the CPU): the counts for which
/// the next publish finds nothing to do.
#[inline(always)]
fn band_of(runnable: u32, queue: bool, alone: bool) -> u64 {
    match (runnable == 0, queue) {
        (true, _) => band(0, 1),
        (false, true) => band(runnable, runnable + 1),
        (false, false) if alone => band(1, u32::MAX),
        (false, false) => band(1, 2),
    }
}

/// An idle edge at `t` (`idle`: the CPU became idle; else it stopped being
/// idle), if it is one: the entry values, or the waiting time gained per
/// level, and the idle time. A level's gain is at most the idle period's
/// length: `t` is the runqueue's clock, read a little before the slots
/// are, so a slot may show an offer that ended after `t`.
#[inline(always)]
fn note_idle<'a>(me: &CpuSide, slots: impl Iterator<Item = &'a Waiting>, idle: bool, t: u64) {
    if me.idle.load(Ordering::Relaxed) == idle {
        return;
    }
    if idle {
        become_idle(me, slots, t);
    } else {
        let period = t.saturating_sub(me.idle_since.load(Ordering::Relaxed));
        for (w, (entry, wait_ns)) in slots.zip(me.entry.iter().zip(me.wait_ns.iter())) {
            let (a, e) = (w.value_at(t), entry.load(Ordering::Relaxed));
            // No offer during the period (the usual case): nothing gained,
            // no sum to change.
            if a != e {
                let gained = a.saturating_sub(e).min(period);
                // Only this CPU's publishes write it, under its runqueue lock.
                wait_ns.store(wait_ns.load(Ordering::Relaxed) + gained, Ordering::Relaxed);
            }
        }
        me.idle_ns.store(me.idle_ns.load(Ordering::Relaxed) + period, Ordering::Relaxed);
        me.idle.store(false, Ordering::Relaxed);
    }
}

/// The idle entry of [`note_idle`] (the CPU was not idle): the entry values
/// of `slots` (its domains' own slots bottom-up) at `t`.
#[inline(always)]
fn become_idle<'a>(me: &CpuSide, slots: impl Iterator<Item = &'a Waiting>, t: u64) {
    // At most MAX_LEVELS slots (`init`): zipped, not indexed, so no bounds
    // check.
    for (w, entry) in slots.zip(me.entry.iter()) {
        entry.store(w.value_at(t), Ordering::Relaxed);
    }
    me.idle_since.store(t, Ordering::Relaxed);
    me.idle.store(true, Ordering::Relaxed);
}

/// Withdraws what `rq`'s CPU offered and offers no longer, and puts into
/// `new` (empty) the offer it makes now: its waiting tasks' CPUs while it
/// has a queue, none otherwise. Apart from `transition` (not inlined into
/// it), as is `make_offers`: their masks would take the registers of the
/// idle entry and exit that every pipe round trip makes.
#[inline(never)]
fn withdraw_offers(rq: &Rq, mine: &[Dom], queue: bool, new: &mut CpuMask) {
    if let Some(all) = ALL.get().filter(|_| queue) {
        offer_of(rq, all, new);
    }
    let made = &CPUS[rq.cpu].per_cpu.offer;
    let new = new.words_in_use();
    change_offers(mine, |i| made[i].load(Ordering::Relaxed) & !new[i], new.len(), false);
}

/// Makes the offers of `new` that `cpu` did not make yet and records `new`
/// as its offer.
#[inline(never)]
fn make_offers(cpu: usize, mine: &[Dom], new: &CpuMask) {
    let me = &CPUS[cpu].per_cpu;
    let new = new.words_in_use();
    change_offers(mine, |i| new[i] & !me.offer[i].load(Ordering::Relaxed), new.len(), true);
    for (w, &b) in me.offer.iter().zip(new) {
        w.store(b, Ordering::Relaxed);
    }
    let offering = new.iter().any(|&b| b != 0);
    me.offering.store(offering, Ordering::Relaxed);
    CPUS[cpu].lone_edges.store(CPUS[cpu].one_level.load(Ordering::Relaxed) && !offering, Ordering::Relaxed);
}

/// Adds (`on`) or withdraws one offer to each CPU of `cpus` (its words
/// `cpus(i)`, `i < words`: the offers' words, read as they go, no mask
/// built) in every domain of `mine` whose span holds it, domain by domain
/// in CPU order. One slot lock at a time (leaves, never nested).
fn change_offers(mine: &[Dom], cpus: impl Fn(usize) -> u64, words: usize, on: bool) {
    if (0..words).all(|i| cpus(i) == 0) {
        return;
    }
    for d in mine {
        for (i, &span) in d.inst.span.words_in_use().iter().enumerate().take(words) {
            let mut bits = cpus(i) & span;
            while bits != 0 {
                let c = i * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                d.inst.slot(c).write(|w, t| {
                    let n = w.offering.load(Ordering::Relaxed);
                    if on {
                        if n == 0 {
                            w.since.store(t, Ordering::Relaxed);
                        }
                        w.offering.store(n + 1, Ordering::Relaxed);
                    } else {
                        if n == 1 {
                            let since = w.since.load(Ordering::Relaxed);
                            w.acc.store(w.acc.load(Ordering::Relaxed) + t.saturating_sub(since), Ordering::Relaxed);
                        }
                        w.offering.store(n.saturating_sub(1), Ordering::Relaxed);
                    }
                });
            }
        }
    }
}

/// `cpu`'s figures so far: its idle time and, per domain level bottom-up,
/// its idle-while-others-wait time (ns), an ongoing idle period included.
pub fn read(cpu: usize) -> IdleWait {
    let mut out = IdleWait::default();
    let Some(&mine) = CPUS[cpu].doms.get() else { return out };
    let me = &CPUS[cpu].per_cpu;
    // Under the CPU's runqueue lock, so that no transition of its own
    // falls between the reads.
    let _rq = crate::rq::lock(cpu);
    let idle = me.idle.load(Ordering::Relaxed);
    let now = crate::rq::now_ns();
    out.idle_ns = me.idle_ns.load(Ordering::Relaxed);
    if idle {
        out.idle_ns += now.saturating_sub(me.idle_since.load(Ordering::Relaxed));
    }
    for (l, d) in mine.iter().enumerate() {
        let mut v = me.wait_ns[l].load(Ordering::Relaxed);
        if idle {
            v += d.w.value_now().0.saturating_sub(me.entry[l].load(Ordering::Relaxed));
        }
        out.levels[l] = Some((d.level, v));
    }
    out
}
