//! The torture's books: the accounts every operation keeps (`C`, printed as
//! the `@fw torture` fields), the doorbells, each worker's slot with its
//! recent operations, and the world the workers and the coordinator share;
//! the byte stream a pipe pair must carry intact.

use super::*;

/// The accounts, in the order of `COUNT_NAMES` (the `@fw torture` fields).
#[derive(Clone, Copy)]
pub(super) enum C {
    Spawned,
    Exited,
    Joined,
    SleepBegun,
    SleepEnded,
    SleepEarly,
    MutexBegun,
    MutexEnded,
    SemBegun,
    SemEnded,
    SemUps,
    BellBegun,
    BellEnded,
    BellPosts,
    BellTaken,
    BellByToken,
    BellTimeouts,
    BellStops,
    BellSlept,
    LostWakeups,
    JoinBegun,
    JoinEnded,
    ReadBegun,
    ReadEnded,
    WriteBegun,
    WriteEnded,
    PipeSent,
    PipeReceived,
    PipeBad,
    AffinityMisses,
    AttrMisses,
    SpawnFailed,
    Violations,
}
pub(super) const NCOUNTS: usize = C::Violations as usize + 1;
pub(super) const COUNT_NAMES: [&str; NCOUNTS] = [
    "spawned",
    "exited",
    "joined",
    "sleep_begun",
    "sleep_ended",
    "sleep_early",
    "mutex_begun",
    "mutex_ended",
    "sem_begun",
    "sem_ended",
    "sem_ups",
    "bell_begun",
    "bell_ended",
    "bell_posts",
    "bell_taken",
    "bell_by_token",
    "bell_timeouts",
    "bell_stops",
    "bell_slept",
    "lost_wakeups",
    "join_begun",
    "join_ended",
    "read_begun",
    "read_ended",
    "write_begun",
    "write_ended",
    "pipe_sent",
    "pipe_received",
    "pipe_bad",
    "affinity_misses",
    "attr_misses",
    "spawn_failed",
    "violations",
];

/// A thread's doorbell: peers post tokens, the owner waits for some and
/// takes all that are there.
///
/// Invariant: `taken <= posted`; `posting` counts posts that have bumped
/// `posted` and not yet finished their wakeup.
pub(super) struct Bell {
    pub(super) posted: AtomicU64,
    pub(super) taken: AtomicU64,
    pub(super) posting: AtomicU64,
    /// Bumped by the coordinator to end a wait (timeout, stop).
    pub(super) generation: AtomicU64,
    /// When the owner's current wait began (ns; 0: not waiting).
    pub(super) since: AtomicU64,
    /// The coordinator's last suspicious sighting (`posted << 32 | taken`, + 1).
    pub(super) suspect: AtomicU64,
    pub(super) wq: WaitQueue,
}

impl Bell {
    pub(super) fn new() -> Bell {
        Bell {
            posted: AtomicU64::new(0),
            taken: AtomicU64::new(0),
            posting: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            since: AtomicU64::new(0),
            suspect: AtomicU64::new(0),
            wq: WaitQueue::new(),
        }
    }

    /// Takes every posted token; returns how many (0: none was there).
    pub(super) fn take(&self) -> u64 {
        let mut t = self.taken.load(Ordering::Acquire);
        loop {
            let p = self.posted.load(Ordering::Acquire);
            if p <= t {
                return 0;
            }
            match self.taken.compare_exchange(t, p, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return p - t,
                Err(now) => t = now,
            }
        }
    }
}

/// One worker's slot: its task, doorbell and recent operations.
pub(super) struct Slot {
    pub(super) task: IrqMutex<level::Workload, Option<Arc<Task>>>,
    pub(super) bell: Bell,
    /// `op << 56 | arg`, the last `RING` operations; `ring_us` their start.
    pub(super) ring: [AtomicU64; RING],
    pub(super) ring_us: [AtomicU64; RING],
    pub(super) next: AtomicUsize,
    /// The operation under way (`u64::MAX`: none).
    pub(super) doing: AtomicU64,
    pub(super) done: AtomicBool,
    /// A violation was seen by or about this thread: report its operations.
    pub(super) bad: AtomicBool,
}

pub(super) struct World {
    pub(super) seed: u64,
    pub(super) ms: u64,
    pub(super) threads: usize,
    pub(super) cpus: Vec<usize>,
    pub(super) online: CpuMask,
    pub(super) t0: u64,
    pub(super) stop: AtomicBool,
    pub(super) slots: Vec<Slot>,
    pub(super) mutexes: Vec<Mutex<u64>>,
    pub(super) sems: Vec<Semaphore>,
    /// Pair `k`'s pipe: worker `2k` writes, worker `2k + 1` reads.
    pub(super) pipes: Vec<Pipe>,
    pub(super) counts: [AtomicU64; NCOUNTS],
    pub(super) ops: [AtomicU64; OPS.len()],
    /// Children left to the coordinator to join.
    pub(super) orphans: IrqMutex<level::Workload, Vec<Arc<Task>>>,
    /// Children not yet joined (each holds a thread stack until then).
    pub(super) children: AtomicU64,
    pub(super) child_cap: u64,
    /// Runtime of the threads joined so far (ns).
    pub(super) joined_runtime: AtomicU64,
}

impl World {
    pub(super) fn add(&self, c: C, n: u64) {
        self.counts[c as usize].fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn get(&self, c: C) -> u64 {
        self.counts[c as usize].load(Ordering::Relaxed)
    }

    /// Records a violation by or about worker `who`.
    pub(super) fn violation(&self, who: usize, c: C, what: core::fmt::Arguments) {
        self.add(c, 1);
        self.add(C::Violations, 1);
        if let Some(s) = self.slots.get(who) {
            s.bad.store(true, Ordering::Relaxed);
        }
        mech::kprintln!("torture: VIOLATION (thread {}, seed {}): {}", who, self.seed, what);
    }

    /// Notes that worker `me` starts `op` with `arg`.
    pub(super) fn note(&self, me: usize, op: usize, arg: u64) {
        let s = &self.slots[me];
        let at = s.next.fetch_add(1, Ordering::Relaxed) % RING;
        let code = (op as u64) << 56 | (arg & ((1 << 56) - 1));
        s.ring[at].store(code, Ordering::Relaxed);
        s.ring_us[at].store(mech::rq::now_ns().saturating_sub(self.t0) / 1000, Ordering::Relaxed);
        s.doing.store(code, Ordering::Relaxed);
    }

    /// Joins `t` (it has exited or is about to) and books its runtime.
    pub(super) fn reap(&self, t: &Arc<Task>) {
        mech::thread::join(t);
        self.joined_runtime.fetch_add(t.stats.sum_exec_runtime.load(Ordering::Relaxed), Ordering::Relaxed);
        self.add(C::Joined, 1);
    }
}

/// splitmix64's finaliser: independent streams from one seed.
pub(super) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Byte `k` of pair `pair`'s stream: a loss, a duplicate or a reordering
/// shows as a wrong byte.
pub(super) fn stream_byte(pair: usize, k: u64) -> u8 {
    (splitmix(k ^ (pair as u64) << 48) >> 56) as u8
}
