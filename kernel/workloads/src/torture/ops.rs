//! The workers' operations: each chosen by weight from the worker's seeded
//! generator, each booked as it begins and ends, each checked for its
//! effect where it has one (a sleep lasts its length, a pinned thread runs
//! where pinned, a renice or slice reaches the entity).

use super::*;

/// The operations, in the order of `OPS`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Spin,
    SleepShort,
    SleepLong,
    Mutex,
    Sem,
    Post,
    Wait,
    Pipe,
    Spawn,
    Renice,
    Slice,
    Affinity,
    Yield,
}

/// Each operation's name and weight (percent) in the workers' choice.
pub(super) const OPS: [(Op, &str, u64); 13] = [
    (Op::Spin, "spin", 12),
    (Op::SleepShort, "sleep_short", 12),
    (Op::SleepLong, "sleep_long", 3),
    (Op::Mutex, "mutex", 10),
    (Op::Sem, "sem", 8),
    (Op::Post, "post", 6),
    (Op::Wait, "wait", 10),
    (Op::Pipe, "pipe", 14),
    (Op::Spawn, "spawn", 5),
    (Op::Renice, "renice", 4),
    (Op::Slice, "slice", 4),
    (Op::Affinity, "affinity", 4),
    (Op::Yield, "yield", 8),
];

/// The weights' sum: what [`choose`] draws below.
const OPS_WEIGHT: u64 = {
    let mut sum = 0;
    let mut i = 0;
    while i < OPS.len() {
        sum += OPS[i].2;
        i += 1;
    }
    sum
};


/// One worker: operations chosen by its own generator until the stop, then
/// its side of the pipe wound down.
pub(super) fn worker(w: &Arc<World>, me: usize) {
    let mut s = Worker::new(w, me);
    while !w.stop.load(Ordering::Acquire) {
        let idx = choose(&mut s.rng);
        w.ops[idx].fetch_add(1, Ordering::Relaxed);
        perform(w, &mut s, idx);
        w.slots[me].doing.store(u64::MAX, Ordering::Relaxed);
        check_pinned(w, me, s.pinned);
    }
    wind_down(w, &mut s);
}

/// What a worker carries from one operation to the next.
struct Worker {
    me: usize,
    rng: Rng,
    task: Arc<Task>,
    /// Its pipe pair (`me / 2`), in which it is the writer or the reader.
    pair: usize,
    writer: bool,
    /// Bytes written (writer) or read (reader).
    seq: u64,
    /// The reader has seen its pipe's end.
    eof: bool,
    /// The affinity it set, when not every online CPU.
    pinned: Option<CpuMask>,
    buf: [u8; MAX_IO as usize],
}

impl Worker {
    /// Worker `me` before its first operation, on the running task.
    fn new(w: &World, me: usize) -> Worker {
        let rng = Rng::new(splitmix(w.seed ^ splitmix(me as u64 + 1)));
        let task = mech::task::current();
        Worker { me, rng, task, pair: me / 2, writer: me.is_multiple_of(2), seq: 0, eof: false, pinned: None, buf: [0u8; MAX_IO as usize] }
    }
}

/// The next operation's index in `OPS`, drawn by weight.
fn choose(rng: &mut Rng) -> usize {
    let mut r = rng.below(OPS_WEIGHT);
    let idx = OPS.iter().position(|o| {
        if r < o.2 {
            true
        } else {
            r -= o.2;
            false
        }
    });
    idx.unwrap_or(0)
}

/// Does operation `OPS[idx]`, its arguments drawn from the worker's generator.
fn perform(w: &Arc<World>, s: &mut Worker, idx: usize) {
    let me = s.me;
    let rng = &mut s.rng;
    match OPS[idx].0 {
        Op::Spin => {
            let ns = 10_000 + rng.below(1_000_000);
            w.note(me, idx, ns);
            mech::platform::burn_ns(ns);
        }
        Op::SleepShort | Op::SleepLong => {
            let ns = if OPS[idx].0 == Op::SleepShort { 10_000 + rng.below(190_000) } else { 1_000_000 + rng.below(19_000_000) };
            w.note(me, idx, ns);
            timed_sleep(w, me, ns);
        }
        Op::Mutex => lock_mutex(w, me, rng, idx),
        Op::Sem => down_sem(w, me, rng, idx),
        Op::Post => post(w, me, rng, idx),
        Op::Wait => {
            w.note(me, idx, 0);
            bell_wait(w, me);
        }
        Op::Pipe => pipe_io(w, s, idx),
        Op::Spawn => spawn_child(w, me, rng, idx),
        Op::Renice => renice(w, me, rng, &s.task, idx),
        Op::Slice => {
            let ns = if rng.below(4) == 0 { 0 } else { 100_000 + rng.below(20_000_000) };
            w.note(me, idx, ns);
            let _ = setattr::set_slice(&s.task, ns);
            check_attrs(w, me, &s.task);
        }
        Op::Affinity => change_affinity(w, s, idx),
        Op::Yield => {
            w.note(me, idx, 0);
            mech::schedule::yield_now();
        }
    }
}

/// Takes a random mutex, holds it briefly and counts one more acquisition in it.
fn lock_mutex(w: &World, me: usize, rng: &mut Rng, idx: usize) {
    let m = rng.below(MUTEXES as u64) as usize;
    let hold = rng.next();
    w.note(me, idx, m as u64);
    w.add(C::MutexBegun, 1);
    let mut g = w.mutexes[m].lock();
    w.add(C::MutexEnded, 1);
    let v = *g;
    hold_briefly(w, me, hold);
    *g = v + 1;
}

/// Takes a unit of a random semaphore, holds it briefly and gives it back.
fn down_sem(w: &World, me: usize, rng: &mut Rng, idx: usize) {
    let s = rng.below(SEMS as u64) as usize;
    let hold = rng.next();
    w.note(me, idx, s as u64);
    w.add(C::SemBegun, 1);
    w.sems[s].down();
    w.add(C::SemEnded, 1);
    hold_briefly(w, me, hold);
    w.sems[s].up();
    w.add(C::SemUps, 1);
}

/// Posts a token on a random worker's doorbell and wakes it.
fn post(w: &World, me: usize, rng: &mut Rng, idx: usize) {
    // Mostly to a worker waiting on its doorbell (a few draws):
    // a wakeup that reaches a sleeper, not a token piling up.
    let mut to = rng.below(w.threads as u64) as usize;
    for _ in 0..4 {
        if w.slots[to].bell.since.load(Ordering::Acquire) != 0 {
            break;
        }
        to = rng.below(w.threads as u64) as usize;
    }
    w.note(me, idx, to as u64);
    let b = &w.slots[to].bell;
    b.posting.fetch_add(1, Ordering::SeqCst);
    b.posted.fetch_add(1, Ordering::SeqCst);
    w.add(C::BellPosts, 1);
    b.wq.wake_one();
    b.posting.fetch_sub(1, Ordering::SeqCst);
}

/// The writer writes the next bytes of its pair's stream; the reader reads
/// some, until the pipe's end.
fn pipe_io(w: &World, s: &mut Worker, idx: usize) {
    let n = 1 + s.rng.below(MAX_IO) as usize;
    w.note(s.me, idx, n as u64);
    if s.writer {
        for (k, b) in s.buf[..n].iter_mut().enumerate() {
            *b = stream_byte(s.pair, s.seq + k as u64);
        }
        w.add(C::WriteBegun, 1);
        w.pipes[s.pair].write(&s.buf[..n], s.rng.below(2) == 0);
        w.add(C::WriteEnded, 1);
        w.add(C::PipeSent, n as u64);
        s.seq += n as u64;
    } else if !s.eof {
        s.eof = !read_some(w, s.me, s.pair, &mut s.seq, &mut s.buf[..n]);
    }
}

/// Renices itself or (one time in four) a peer, then checks its own entity.
fn renice(w: &World, me: usize, rng: &mut Rng, task: &Arc<Task>, idx: usize) {
    let nice = rng.below(40) as i32 - 20;
    let peer = rng.below(4) == 0;
    let target = if peer { w.slots[rng.below(w.threads as u64) as usize].task.lock().clone() } else { Some(task.clone()) };
    w.note(me, idx, (nice + 20) as u64);
    if let Some(t) = target {
        match setattr::set_user_nice(&t, nice) {
            Ok(()) | Err(SetattrError::Exited) => {}
            Err(e) => w.violation(me, C::AttrMisses, format_args!("renice to {}: {}", nice, e)),
        }
    }
    check_attrs(w, me, task);
}

/// Pins itself to one CPU or a few, or, when pinned, lets itself run on every
/// online CPU again.
fn change_affinity(w: &World, s: &mut Worker, idx: usize) {
    let rng = &mut s.rng;
    let mask = match s.pinned {
        Some(_) => w.online,
        None if rng.below(3) == 0 => {
            // A few CPUs, at least one.
            let mut m = CpuMask::empty();
            for &c in &w.cpus {
                if rng.below(2) == 0 {
                    m.set(c);
                }
            }
            m.set(w.cpus[rng.below(w.cpus.len() as u64) as usize]);
            m
        }
        None => CpuMask::single(w.cpus[rng.below(w.cpus.len() as u64) as usize]),
    };
    w.note(s.me, idx, mask.bits()[0]);
    if let Err(e) = mech::setattr::set_affinity(&s.task, mask) {
        w.violation(s.me, C::AffinityMisses, format_args!("set_affinity: {}", e));
    }
    // The switch moves a task off a CPU it may no longer use.
    mech::schedule::yield_now();
    s.pinned = if mask == w.online { None } else { Some(mask) };
}

/// A pinned worker must run where it is pinned.
fn check_pinned(w: &World, me: usize, pinned: Option<CpuMask>) {
    if let Some(m) = pinned {
        let cpu = mech::platform::cpu_id();
        if !m.contains(cpu) {
            w.violation(me, C::AffinityMisses, format_args!("runs on CPU {} outside its affinity {:#x}", cpu, m.bits()[0]));
        }
    }
}

/// Wind down: the writer closes its pipe, the reader drains it to the end;
/// a pinned worker is let go on every online CPU; then it is done.
fn wind_down(w: &World, s: &mut Worker) {
    if s.writer {
        w.pipes[s.pair].close();
    } else {
        let mut buf = [0u8; MAX_IO as usize];
        while !s.eof {
            s.eof = !read_some(w, s.me, s.pair, &mut s.seq, &mut buf);
        }
    }
    if s.pinned.is_some() {
        let _ = mech::setattr::set_affinity(&s.task, w.online);
    }
    w.add(C::Exited, 1);
    w.slots[s.me].done.store(true, Ordering::Release);
}

/// One read of pair `pair`'s pipe, checked byte by byte; false at its end.
pub(super) fn read_some(w: &World, me: usize, pair: usize, seq: &mut u64, buf: &mut [u8]) -> bool {
    w.add(C::ReadBegun, 1);
    let got = w.pipes[pair].read(buf);
    w.add(C::ReadEnded, 1);
    w.add(C::PipeReceived, got as u64);
    for (k, &b) in buf[..got].iter().enumerate() {
        let want = stream_byte(pair, *seq + k as u64);
        if b != want {
            w.violation(me, C::PipeBad, format_args!("pipe {}: byte {} is {:#x}, expected {:#x}", pair, *seq + k as u64, b, want));
            break;
        }
    }
    *seq += got as u64;
    got > 0
}

/// Sleeps `ns` and checks that the sleep lasted that long.
pub(super) fn timed_sleep(w: &World, me: usize, ns: u64) {
    w.add(C::SleepBegun, 1);
    let t = mech::rq::now_ns();
    mech::thread::sleep_ns(ns);
    let slept = mech::rq::now_ns() - t;
    w.add(C::SleepEnded, 1);
    if slept < ns {
        w.violation(me, C::SleepEarly, format_args!("a sleep of {} ns ended after {} ns", ns, slept));
    }
}

/// What a mutex or semaphore holder does while holding: spin, sleep a
/// little or yield (never anything that waits for another thread).
pub(super) fn hold_briefly(w: &World, me: usize, r: u64) {
    match r % 3 {
        0 => mech::platform::burn_ns(1_000 + (r >> 8) % 50_000),
        1 => timed_sleep(w, me, 5_000 + (r >> 8) % 50_000),
        _ => mech::schedule::yield_now(),
    }
}

/// Waits on worker `me`'s doorbell for a token, a timeout or the stop.
pub(super) fn bell_wait(w: &World, me: usize) {
    let b = &w.slots[me].bell;
    w.add(C::BellBegun, 1);
    let generation = b.generation.load(Ordering::Acquire);
    b.since.store(mech::rq::now_ns().max(1), Ordering::Release);
    let mut how = C::BellByToken;
    let mut checks = 0;
    let mut tokens = 0;
    b.wq.wait_until(|| {
        checks += 1;
        tokens = b.take();
        if tokens > 0 {
            how = C::BellByToken;
        } else if w.stop.load(Ordering::Acquire) {
            how = C::BellStops;
        } else if b.generation.load(Ordering::Acquire) != generation {
            how = C::BellTimeouts;
        } else {
            return false;
        }
        true
    });
    b.since.store(0, Ordering::Release);
    if checks > 1 {
        w.add(C::BellSlept, 1);
    }
    w.add(C::BellEnded, 1);
    w.add(C::BellTaken, tokens);
    w.add(how, 1);
}

/// Spawns a short-lived child with random nice, slice and placement; joins
/// it at once or leaves it to the coordinator.
pub(super) fn spawn_child(w: &Arc<World>, me: usize, rng: &mut Rng, idx: usize) {
    if w.children.fetch_add(1, Ordering::AcqRel) >= w.child_cap {
        w.children.fetch_sub(1, Ordering::AcqRel);
        w.note(me, idx, 0);
        return;
    }
    let mut opts = Spawn::new("torture-child").nice(rng.below(40) as i32 - 20);
    if rng.below(2) == 0 {
        opts = opts.slice_ns(100_000 + rng.below(10_000_000));
    }
    let cpu = w.cpus[rng.below(w.cpus.len() as u64) as usize];
    opts = match rng.below(3) {
        0 => opts.on_cpu(cpu),
        1 => opts.pin(cpu),
        _ => opts, // fork balancing places it
    };
    let pin = opts.affinity;
    let steps = 1 + rng.below(6);
    let child_seed = rng.next();
    let join_now = rng.below(2) == 0;
    w.note(me, idx, steps);
    let wc = w.clone();
    let child = crate::spawn(opts, move || {
        let mut r = Rng::new(child_seed);
        for _ in 0..steps {
            match r.below(3) {
                0 => mech::platform::burn_ns(10_000 + r.below(300_000)),
                1 => mech::thread::sleep_ns(10_000 + r.below(500_000)),
                _ => mech::schedule::yield_now(),
            }
            if let Some(m) = pin {
                let cpu = mech::platform::cpu_id();
                if !m.contains(cpu) {
                    wc.violation(me, C::AffinityMisses, format_args!("its pinned child runs on CPU {} outside {:#x}", cpu, m.bits()[0]));
                }
            }
        }
        wc.add(C::Exited, 1);
    });
    let Some(child) = child else {
        w.children.fetch_sub(1, Ordering::AcqRel);
        w.add(C::SpawnFailed, 1);
        return;
    };
    w.add(C::Spawned, 1);
    if join_now {
        w.add(C::JoinBegun, 1);
        w.reap(&child);
        w.add(C::JoinEnded, 1);
        w.children.fetch_sub(1, Ordering::AcqRel);
    } else {
        w.orphans.lock().push(child);
    }
}

/// The running task's entity carries the nice and slice the task records
/// (a renice or slice change reached the policy).
pub(super) fn check_attrs(w: &World, me: usize, task: &Arc<Task>) {
    let rq = mech::rq::lock_task_rq(task);
    // Read under the runqueue lock the changes hold while they store them.
    let (nice, slice) = (task.nice_value(), task.slice_ns.load(Ordering::Relaxed));
    let Some(se) = rq.fair.entity(EntityId(task.eid.load(Ordering::Relaxed))) else {
        drop(rq);
        w.violation(me, C::AttrMisses, format_args!("the running task has no entity"));
        return;
    };
    let weight_ok = se.w() == mech::task::nice_weight(nice) && se.nice.get() == nice;
    let slice_ok = match sched::tunables::clamp_custom_slice(slice) {
        Some(s) => se.custom_slice && se.slice == s,
        None => !se.custom_slice,
    };
    let (w_se, s_se, c_se) = (se.w(), se.slice, se.custom_slice);
    drop(rq);
    if !weight_ok || !slice_ok {
        w.violation(
            me,
            C::AttrMisses,
            format_args!("task nice {} slice {} but its entity has weight {} slice {} custom {}", nice, slice, w_se, s_se, c_se),
        );
    }
}
