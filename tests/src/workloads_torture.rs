//! `workload=torture`: the books of its `@fw torture` line, checked on the host from
//! the line's own counts and the scenario's inputs (`-smp`, `ms=`, `seed=`), as the kernel
//! checks them; `cargo xtask torture` prints the same list.

use super::{ensure, workload_ran};
use crate::log::{Log, Record};
use crate::scenarios::CheckResult;

/// The operations a torture worker chooses from, as `@fw torture_ops` names them.
pub const TORTURE_OPS: [&str; 13] = [
    "spin",
    "sleep_short",
    "sleep_long",
    "mutex",
    "sem",
    "post",
    "wait",
    "pipe",
    "spawn",
    "renice",
    "slice",
    "affinity",
    "yield",
];

/// Semaphore units the torture starts with (2 semaphores of 2: kernel/workloads/src/torture/mod.rs).
pub const TORTURE_SEM_UNITS: u64 = 4;

/// Default worker threads on `cpus` CPUs: 4 per CPU, within 2..=512.
pub fn torture_default_threads(cpus: u64) -> u64 {
    (4 * cpus).clamp(2, 512)
}

/// Every check of the torture's books, named, with whether it held, from its `@fw torture`
/// and `@fw torture_ops` records. `cpus`, `ms` and `seed` are what the boot was asked for.
pub fn torture_books(log: &Log, cpus: u64, ms: u64, seed: u64, threads: u64) -> Result<Vec<(String, bool)>, String> {
    let r = log.one("torture")?;
    let ops = log.one("torture_ops")?;
    let n = |k: &str| r.num(k);
    let mut books: Vec<(String, bool)> = Vec::new();
    let eq = |books: &mut Vec<(String, bool)>, what: &str, a: u64, b: u64| books.push((format!("{what} ({a} = {b})"), a == b));
    eq(&mut books, "seed as asked", n("seed")?, seed);
    eq(&mut books, "ms as asked", n("ms")?, ms);
    eq(&mut books, "cpus as booted", n("cpus")?, cpus);
    eq(&mut books, "threads as asked", n("threads")?, threads);
    eq(&mut books, "threads spawned = exited + alive", n("spawned")?, n("exited")? + n("alive")?);
    eq(&mut books, "threads alive at the end", n("alive")?, 0);
    eq(&mut books, "threads joined = exited", n("joined")?, n("exited")?);
    for p in ["sleep", "mutex", "sem", "bell", "join", "read", "write"] {
        eq(&mut books, &format!("{p} waits ended = begun"), n(&format!("{p}_ended"))?, n(&format!("{p}_begun"))?);
    }
    eq(&mut books, "mutex count = acquisitions", n("mutex_count")?, n("mutex_ended")?);
    eq(&mut books, "semaphore ups = downs", n("sem_ups")?, n("sem_ended")?);
    eq(&mut books, "semaphore units intact", n("sem_left")?, TORTURE_SEM_UNITS);
    eq(&mut books, "semaphore units at start", n("sem_units")?, TORTURE_SEM_UNITS);
    eq(
        &mut books,
        "doorbell waits ended = by tokens + timeout + stop",
        n("bell_ended")?,
        n("bell_by_token")? + n("bell_timeouts")? + n("bell_stops")?,
    );
    eq(&mut books, "doorbell tokens posted = taken + left", n("bell_posts")?, n("bell_taken")? + n("bell_left")?);
    books.push((format!("doorbell waits that slept ({} > 0)", n("bell_slept")?), n("bell_slept")? > 0));
    eq(&mut books, "pipe bytes received = sent", n("pipe_received")?, n("pipe_sent")?);
    for v in ["lost_wakeups", "sleep_early", "pipe_bad", "affinity_misses", "attr_misses", "spawn_failed", "violations"] {
        eq(&mut books, v, n(v)?, 0);
    }
    eq(&mut books, "the kernel's verdict ok", n("ok")?, 1);
    // Operations: each kind done, and the primitives' counts are the operations' own.
    for op in TORTURE_OPS {
        let k = ops.num(op)?;
        books.push((format!("operation {op} done ({k} > 0)"), k > 0));
    }
    eq(&mut books, "mutex operations = mutex waits", ops.num("mutex")?, n("mutex_begun")?);
    eq(&mut books, "sem operations = semaphore waits", ops.num("sem")?, n("sem_begun")?);
    eq(&mut books, "wait operations = doorbell waits", ops.num("wait")?, n("bell_begun")?);
    eq(&mut books, "post operations = tokens posted", ops.num("post")?, n("bell_posts")?);
    books.push((
        format!("children spawned ({} > {threads} workers)", n("spawned")?),
        n("spawned")? > threads,
    ));
    // Runtime conserved: every CPU's elapsed time went to a task, to its idle task, to a
    // switch's newidle balancing (between the two) or to pressure.
    let (run, idle, newidle, pressure, elapsed) =
        (n("runtime_ns")?, n("idle_ns")?, n("newidle_ns")?, n("pressure_ns")?, n("elapsed_ns")?);
    let capacity = cpus * elapsed;
    let accounted = run + idle + newidle + pressure;
    books.push((
        format!("runtime + idle + newidle + pressure = CPUs x elapsed within 1% ({accounted} vs {capacity})"),
        accounted.abs_diff(capacity) * 100 <= capacity,
    ));
    books.push((format!("ran its {ms} ms"), n("run_ns")? >= ms * 1_000_000 && elapsed >= n("run_ns")?));
    let threads_reported = log.records("torture_thread").count();
    books.push((format!("no failing thread reported ({threads_reported})"), threads_reported == 0));
    Ok(books)
}

/// The books as one result: the first that does not balance, with the record.
pub fn torture_verdict(log: &Log, cpus: u64, ms: u64, seed: u64, threads: u64) -> CheckResult {
    let books = torture_books(log, cpus, ms, seed, threads)?;
    let r: &Record = log.one("torture")?;
    match books.iter().find(|(_, held)| !held) {
        Some((what, _)) => Err(format!("`{r}`: the torture's books do not balance: {what}")),
        None => Ok(()),
    }
}

/// `sched_debug=1 workload=torture,ms=MS,seed=SEED` on `SMP` CPUs (default threads): the run
/// finished with its invariant checks on and every book balanced.
pub fn check_torture<const SMP: u32, const MS: u64, const SEED: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "torture", SMP, true)?;
    torture_verdict(log, SMP as u64, MS, SEED, torture_default_threads(SMP as u64))?;
    ensure(log.lines_starting_with("torture: VIOLATION").next().is_none(), || "a `torture: VIOLATION` line".into())
}

/// `torture-pressure-books-smp2`: `idle=poll cpu_capacity=1:CAP workload=torture,ms=MS,seed=SEED,
/// threads=2` at `-smp 2`. One pipe pair on two CPUs leaves CPU 1 idle much of the run, and a
/// polling CPU keeps its tick, so the pressure source runs in idle periods too. The source's
/// time is `(1024 - CAP)/1024` of every tick of CPU 1, so `pressure_ns` is that share of the
/// run's `elapsed_ns` (within two ticks of 1 ms and 1%); and the books balance: pressure taken
/// while idle is not also idle time (kernel/time/tick-sched.c: tick_nohz_irq_enter() stops the
/// idle clock for an interrupt), so runtime + idle + newidle + pressure is still 2 × elapsed.
pub fn check_torture_pressure<const CAP: u64, const MS: u64, const SEED: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "torture", 2, true)?;
    let r = log.one("torture")?;
    let (pressure, elapsed) = (r.num("pressure_ns")?, r.num("elapsed_ns")?);
    let want = elapsed * (1024 - CAP) / 1024;
    let slack = 2_000_000 + want / 100;
    ensure(pressure.abs_diff(want) <= slack, || {
        format!("`{r}`: pressure_ns={pressure}: expected {want} ((1024 - {CAP})/1024 of CPU 1's elapsed_ns={elapsed}) within {slack}")
    })?;
    torture_verdict(log, 2, MS, SEED, 2)
}
