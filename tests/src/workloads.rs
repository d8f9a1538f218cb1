//! Checks of the scheduler workloads (`workload=NAME,...`, kernel/src/workloads/) that the
//! scenarios in [`crate::scenarios::all`] boot. Every expected value is computed from the
//! scenario's inputs (its `-smp`, its `workload=` parameters, Linux's weight table, the base-slice
//! formula), never taken from the kernel's own output.

use std::collections::BTreeSet;

use crate::log::{format_cpulist, Log, Record};
use crate::scenarios::CheckResult;

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> CheckResult {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// Linux's `sched_prio_to_weight[]` (kernel/sched/core.c), index `nice + 20`.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291, //
    /* -15 */ 29154, 23254, 18705, 14949, 11916, //
    /* -10 */ 9548, 7620, 6100, 4904, 3906, //
    /*  -5 */ 3121, 2501, 1991, 1586, 1277, //
    /*   0 */ 1024, 820, 655, 526, 423, //
    /*   5 */ 335, 272, 215, 172, 137, //
    /*  10 */ 110, 87, 70, 56, 45, //
    /*  15 */ 36, 29, 23, 18, 15,
];

/// The load weight of a nice value (Linux's table), `None` outside -20..=19.
pub fn nice_weight(nice: i64) -> Option<u64> {
    if (-20..=19).contains(&nice) {
        Some(PRIO_TO_WEIGHT[(nice + 20) as usize])
    } else {
        None
    }
}

/// Linux's default `sysctl_sched_base_slice` (0.70 ms in v6.19) scaled like
/// `update_sysctl()` with `SCHED_TUNABLESCALING_LOG`: `1 + ilog2(min(ncpus, 8))`.
pub fn base_slice_ns(cpus: u32) -> u64 {
    let n = cpus.clamp(1, 8);
    700_000 * (1 + n.ilog2() as u64)
}

/// A signed decimal field (`nice=-5`).
fn int(r: &Record, key: &str) -> Result<i64, String> {
    let v = r.field(key)?;
    v.parse()
        .map_err(|_| format!("`{r}`: field `{key}={v}` is not an integer"))
}

fn num_is(r: &Record, key: &str, want: u64) -> CheckResult {
    let v = r.num(key)?;
    ensure(v == want, || format!("`{r}`: expected {key}={want}"))
}

fn cpus_are(r: &Record, key: &str, want: &[u32]) -> CheckResult {
    let got = r.cpus(key)?;
    ensure(got == want, || {
        format!("`{r}`: expected {key}={}", format_cpulist(want))
    })
}

/// The `@fw taskstat` records of the threads called `name`.
pub fn taskstats<'a>(log: &'a Log, name: &str) -> Vec<&'a Record> {
    log.records("taskstat")
        .filter(|r| r.get("name") == Some(name))
        .collect()
}

/// The one `@fw taskstat` of the thread called `name`.
fn one_taskstat<'a>(log: &'a Log, name: &str) -> Result<&'a Record, String> {
    match taskstats(log, name).as_slice() {
        [r] => Ok(r),
        v => Err(format!(
            "expected one `@fw taskstat ... name={name}`, found {}",
            v.len()
        )),
    }
}

/// What every workload scenario shares: the scheduler ran with its invariant checks on
/// (`sched_debug=1`), on `cpus` CPUs, the workload `name` started on all of them, and (when
/// `finished`) it reported `ok=1` and printed one `@fw schedstat` per CPU.
pub fn workload_ran(log: &Log, name: &str, cpus: u32, finished: bool) -> CheckResult {
    let line = log
        .lines_starting_with("scheduler: ")
        .next()
        .ok_or("no `scheduler: ` line")?;
    ensure(line.contains("invariant checks on"), || {
        format!("`{line}`: expected the invariant checks on (sched_debug=1)")
    })?;
    let w = log.one("workload")?;
    ensure(w.get("name") == Some(name), || {
        format!("`{w}`: expected name={name}")
    })?;
    num_is(w, "cpus", cpus as u64)?;
    if !finished {
        return Ok(());
    }
    let d = log.one("workload_done")?;
    ensure(
        d.get("name") == Some(name) && d.get("ok") == Some("1"),
        || format!("`{d}`: expected name={name} ok=1"),
    )?;
    let seen: Vec<u64> = log
        .records("schedstat")
        .map(|r| r.num("cpu"))
        .collect::<Result<_, _>>()?;
    let want: Vec<u64> = (0..cpus as u64).collect();
    ensure(seen == want, || {
        format!("expected one `@fw schedstat` for each of CPUs 0..{cpus} in order, got {seen:?}")
    })
}

/// The `@fw schedstat` of one CPU.
fn schedstat(log: &Log, cpu: u32) -> Result<&Record, String> {
    log.records("schedstat")
        .find(|r| r.num("cpu").ok() == Some(cpu as u64))
        .ok_or_else(|| format!("no `@fw schedstat cpu={cpu}`"))
}

// ---------------------------------------------------------------------------------------------
// shares

/// The nice values `workload=shares` gives its three hogs, and their names.
pub const SHARES_NICE: [(i64, &str); 3] = [(0, "hog0"), (5, "hog+5"), (-5, "hog-5")];

/// Largest distance, in percentage points, between a hog's runtime share and its weight share.
pub const SHARE_TOLERANCE_PP: f64 = 2.0;

/// `workload=shares,cpu=CPU` on `SMP` CPUs: three `@fw share` lines, one per nice value, each
/// with Linux's weight for its nice, `cpu=` and `ran_on=` the pinned CPU, and a runtime share
/// within [`SHARE_TOLERANCE_PP`] of the weight share; the pinned CPU's `rq_cpu_time` covers
/// their runtime.
pub fn check_shares<const SMP: u32, const CPU: u32>(log: &Log) -> CheckResult {
    workload_ran(log, "shares", SMP, true)?;
    shares(log, CPU)
}

fn shares(log: &Log, cpu: u32) -> CheckResult {
    let recs: Vec<&Record> = log.records("share").collect();
    ensure(recs.len() == SHARES_NICE.len(), || {
        format!(
            "expected {} `@fw share` lines, got {}",
            SHARES_NICE.len(),
            recs.len()
        )
    })?;
    let mut nices = BTreeSet::new();
    let mut rows = Vec::new();
    for r in &recs {
        let nice = int(r, "nice")?;
        let (_, name) = SHARES_NICE
            .iter()
            .find(|(n, _)| *n == nice)
            .ok_or_else(|| format!("`{r}`: nice={nice} is not one the workload uses"))?;
        ensure(nices.insert(nice), || format!("`{r}`: nice={nice} twice"))?;
        ensure(r.get("task") == Some(name), || {
            format!("`{r}`: expected task={name}")
        })?;
        let weight = nice_weight(nice).expect("the workload's nice values are in range");
        num_is(r, "weight", weight)?;
        num_is(r, "cpu", cpu as u64)?;
        cpus_are(r, "ran_on", &[cpu])?;
        rows.push((*r, weight, r.num("runtime_ns")?));
    }
    let total_w: u64 = rows.iter().map(|x| x.1).sum();
    let total_rt: u64 = rows.iter().map(|x| x.2).sum();
    ensure(total_rt > 0, || "the three hogs ran for 0 ns".into())?;
    for (r, w, rt) in &rows {
        let want = 100.0 * *w as f64 / total_w as f64;
        let got = 100.0 * *rt as f64 / total_rt as f64;
        ensure((got - want).abs() <= SHARE_TOLERANCE_PP, || {
            format!(
                "`{r}`: runtime share {got:.2}% is more than {SHARE_TOLERANCE_PP} points from \
                 the weight share {want:.2}% ({w} of {total_w})"
            )
        })?;
    }
    let s = schedstat(log, cpu)?;
    ensure(s.num("rq_cpu_time")? >= total_rt, || {
        format!("`{s}`: rq_cpu_time is less than the hogs' runtime {total_rt} on that CPU")
    })
}

// ---------------------------------------------------------------------------------------------
// storm

/// `workload=storm,threads=THREADS` on `SMP` CPUs: every thread spawned and finished, no
/// semaphore hand-off or pipe byte lost, both sides slept once per round, and every thread was
/// woken at least once.
pub fn check_storm<const SMP: u32, const THREADS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "storm", SMP, true)?;
    let r = log.one("storm")?;
    num_is(r, "threads", THREADS)?;
    num_is(r, "spawned", THREADS)?;
    num_is(r, "finished", THREADS)?;
    let rounds = r.num("rounds")?;
    ensure(rounds > 0, || format!("`{r}`: no round completed"))?;
    // Each round both sides sleep once and up the other's semaphore once.
    num_is(r, "sleeps", 2 * rounds)?;
    num_is(r, "sem_ups", 2 * rounds)?;
    num_is(r, "sem_downs", 2 * rounds)?;
    // Each sleep is followed by one increment under the shared sleeping mutex
    // (a read, a sleep, a write: a lost update would show as a smaller count).
    num_is(r, "mutex_count", 2 * rounds)?;
    // Each round side a sends 8 bytes ("go") and side b 8 (the reply); then each pair's last
    // message is side a's 8-byte "stop".
    let bytes = 16 * rounds + 8 * (THREADS / 2);
    num_is(r, "pipe_sent", bytes)?;
    num_is(r, "pipe_received", bytes)?;
    for name in ["storma", "stormb"] {
        let ts = taskstats(log, name);
        ensure(ts.len() as u64 == THREADS / 2, || {
            format!(
                "expected {} `@fw taskstat ... name={name}`, found {}",
                THREADS / 2,
                ts.len()
            )
        })?;
        for t in ts {
            ensure(t.num("nr_wakeups")? > 0, || {
                format!("`{t}`: a storm thread that was never woken")
            })?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// latency

/// `workload=latency,cpu=CPU,hogs=2,samples=300` on `SMP` CPUs: all 300 samples, percentiles in
/// order, p99 below two base slices (the slice computed from `SMP`), and the sleeper, pinned to
/// `CPU`, woken at least once per sample.
pub fn check_latency<const SMP: u32, const CPU: u32>(log: &Log) -> CheckResult {
    const HOGS: u64 = 2;
    const SAMPLES: u64 = 300;
    workload_ran(log, "latency", SMP, true)?;
    let r = log.one("latency")?;
    num_is(r, "cpu", CPU as u64)?;
    num_is(r, "hogs", HOGS)?;
    num_is(r, "samples", SAMPLES)?;
    let slice = base_slice_ns(SMP);
    num_is(r, "slice_ns", slice)?;
    let p = ["p50_ns", "p90_ns", "p99_ns", "max_ns"]
        .iter()
        .map(|k| r.num(k))
        .collect::<Result<Vec<_>, _>>()?;
    ensure(p.windows(2).all(|w| w[0] <= w[1]), || {
        format!("`{r}`: percentiles out of order")
    })?;
    ensure(p[2] < 2 * slice, || {
        format!(
            "`{r}`: p99 wakeup latency {} ns is not below two base slices ({} ns)",
            p[2],
            2 * slice
        )
    })?;
    let s = one_taskstat(log, "sleeper")?;
    cpus_are(s, "cpus", &[CPU])?;
    ensure(s.num("nr_wakeups")? >= SAMPLES, || {
        format!("`{s}`: expected nr_wakeups >= {SAMPLES} (one per sleep)")
    })?;
    ensure(taskstats(log, "hog").len() as u64 == HOGS, || {
        format!("expected {HOGS} `@fw taskstat ... name=hog`")
    })
}

// ---------------------------------------------------------------------------------------------
// affinity

/// `workload=affinity` on `SMP` CPUs: one pinned thread per CPU that ran only there; the mover,
/// pinned to CPU 0 and then moved to the last CPU, ended allowed only there, ran on CPU 0 and
/// the last CPU only (on the last one for sure), and was on the last CPU after the move.
pub fn check_affinity<const SMP: u32>(log: &Log) -> CheckResult {
    workload_ran(log, "affinity", SMP, true)?;
    let last = SMP - 1;
    let mut pinned_cpus = Vec::new();
    let mut movers = 0;
    for r in log.records("affinity") {
        match r.field("task")? {
            "pinned" => {
                let allowed = r.cpus("allowed")?;
                ensure(allowed.len() == 1, || {
                    format!("`{r}`: a pinned thread must allow a single CPU")
                })?;
                cpus_are(r, "ran_on", &allowed)?;
                pinned_cpus.push(allowed[0]);
            }
            "mover" => {
                movers += 1;
                cpus_are(r, "allowed", &[last])?;
                let ran = r.cpus("ran_on")?;
                ensure(
                    ran.contains(&last) && ran.iter().all(|&c| c == 0 || c == last),
                    || format!("`{r}`: expected ran_on= within {{0, {last}}} and holding {last}"),
                )?;
            }
            other => return Err(format!("`{r}`: unknown task={other}")),
        }
    }
    pinned_cpus.sort_unstable();
    let want: Vec<u32> = (0..SMP).collect();
    ensure(pinned_cpus == want, || {
        format!("expected one pinned thread on each of CPUs 0..{SMP}, got {pinned_cpus:?}")
    })?;
    ensure(movers == 1, || format!("expected one mover, got {movers}"))?;
    let m = log.one("affinity_move")?;
    num_is(m, "from", 0)?;
    num_is(m, "to", last as u64)?;
    num_is(m, "now_on", last as u64)
}

// ---------------------------------------------------------------------------------------------
// pipe

/// Round trips of the pipe scenarios (`workload=pipe,rounds=...`).
pub const PIPE_ROUNDS: u64 = 100_000;

/// Lower bound on each pipe thread's wakeups, as a fraction of the round trips. A read blocks
/// (and costs one wakeup) unless the answer is already there when the reader looks: on one CPU
/// that needs the reader preempted between its write and its read (a tick at most once a
/// millisecond, or the partner it just woke preempting it); across CPUs, the partner answering
/// before the reader reaches its read. The scenarios run in instruction time (`icount`), where
/// this is rare: at least 99 797 of 100 000 per thread at -smp 1/2/8, same and cross. (In wall
/// time under TCG the host decides: 55-99 % with a busy host, as a stalled vCPU thread lets the
/// partner answer first; hence `icount`.)
pub const PIPE_MIN_WAKEUPS_PERCENT: u64 = 99;

/// `workload=pipe,rounds=100000,mode=same|cross` on `SMP` CPUs (`CROSS`: `mode=cross`): the
/// threads on CPU 0 (and CPU 1 for cross), each having run only there; each thread woken at most
/// once per round trip (only the partner's one write per round can wake it; writes never block)
/// and in most of them ([`PIPE_MIN_WAKEUPS_PERCENT`]); every wakeup WF_SYNC (the pipe writes say
/// so), local for `same` and remote for `cross`. On one CPU every round trip needs a switch away
/// from each thread, so each thread switched at least `rounds - 1` times.
pub fn check_pipe<const SMP: u32, const CROSS: bool>(log: &Log) -> CheckResult {
    workload_ran(log, "pipe", SMP, true)?;
    let r = log.one("pipe")?;
    let (mode, b_cpu) = if CROSS { ("cross", 1) } else { ("same", 0) };
    ensure(r.get("mode") == Some(mode), || {
        format!("`{r}`: expected mode={mode}")
    })?;
    num_is(r, "rounds", PIPE_ROUNDS)?;
    num_is(r, "a_cpu", 0)?;
    num_is(r, "b_cpu", b_cpu)?;
    ensure(r.num("a_cpu")? != r.num("b_cpu")? || !CROSS, || {
        format!("`{r}`: cross mode on one CPU")
    })?;
    ensure(r.num("total_ns")? > 0, || format!("`{r}`: total_ns=0"))?;
    num_is(r, "ns_per_round_trip", r.num("total_ns")? / PIPE_ROUNDS)?;
    for (name, cpu) in [("pipe-a", 0u32), ("pipe-b", b_cpu as u32)] {
        let t = one_taskstat(log, name)?;
        cpus_are(t, "cpus", &[cpu])?;
        num_is(t, "nr_migrations", 0)?;
        let w = t.num("nr_wakeups")?;
        let min = PIPE_ROUNDS * PIPE_MIN_WAKEUPS_PERCENT / 100;
        ensure((min..=PIPE_ROUNDS).contains(&w), || {
            format!("`{t}`: expected nr_wakeups from {min} to {PIPE_ROUNDS}")
        })?;
        num_is(t, "nr_wakeups_sync", w)?;
        let (local, remote) = if CROSS { (0, w) } else { (w, 0) };
        num_is(t, "nr_wakeups_local", local)?;
        num_is(t, "nr_wakeups_remote", remote)?;
        if !CROSS {
            ensure(t.num("nr_switches")? >= PIPE_ROUNDS - 1, || {
                format!(
                    "`{t}`: on one CPU each round trip switches away from each thread: expected \
                     nr_switches >= {}",
                    PIPE_ROUNDS - 1
                )
            })?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// stack overflow

/// `workload=overflow` on `SMP` CPUs: the guard page names the thread (`@fw stack_overflow` and
/// the `STACK OVERFLOW in thread deep-recursion` line), and the fault is a #PF at that address.
pub fn check_overflow<const SMP: u32>(log: &Log) -> CheckResult {
    workload_ran(log, "overflow", SMP, false)?;
    let s = log.one("stack_overflow")?;
    ensure(s.get("task") == Some("deep-recursion"), || {
        format!("`{s}`: expected task=deep-recursion")
    })?;
    ensure(s.num("cpu")? < SMP as u64, || format!("`{s}`: no such CPU"))?;
    s.num("id")?;
    let addr = s.num("addr")?;
    ensure(addr != 0, || format!("`{s}`: addr=0"))?;
    ensure(
        log.lines_starting_with("STACK OVERFLOW in thread deep-recursion ")
            .count()
            == 1,
        || "expected one `STACK OVERFLOW in thread deep-recursion ` line".into(),
    )?;
    let f = log.one("fault")?;
    num_is(f, "vector", 14)?;
    ensure(f.get("name") == Some("#PF"), || {
        format!("`{f}`: expected name=#PF")
    })?;
    num_is(f, "cr2", addr)?;
    num_is(f, "cpu", s.num("cpu")?)
}

// ---------------------------------------------------------------------------------------------
// sched_features

/// The `sched_features=` of the `sched-features` scenario and what it must turn off.
pub const FEATURES_SET: &str = "NO_DELAY_DEQUEUE,NO_RUN_TO_PARITY";
/// The malformed `sched_features=` of the `sched-features-bogus` scenario.
pub const FEATURES_BOGUS: &str = "BOGUS";

fn feature_tokens(log: &Log) -> Result<(String, Vec<String>), String> {
    let r = log.one("sched_features")?;
    let msg = r.field("msg")?.to_string();
    let toks = msg.split_whitespace().map(str::to_string).collect();
    Ok((format!("{r}"), toks))
}

fn has_token(toks: &[String], t: &str) -> bool {
    toks.iter().any(|x| x == t)
}

/// `sched_features=NO_DELAY_DEQUEUE,NO_RUN_TO_PARITY`: both are printed off, PLACE_LAG still on,
/// no `cmdline: ` complaint, and the workload ran.
pub fn check_features(log: &Log) -> CheckResult {
    workload_ran(log, "shares", 2, true)?;
    let (line, toks) = feature_tokens(log)?;
    for t in FEATURES_SET.split(',') {
        ensure(has_token(&toks, t), || format!("`{line}`: expected {t}"))?;
        let on = t.trim_start_matches("NO_");
        ensure(!has_token(&toks, on), || {
            format!("`{line}`: {on} is still on")
        })?;
    }
    ensure(has_token(&toks, "PLACE_LAG"), || {
        format!("`{line}`: expected PLACE_LAG (a default) still on")
    })?;
    let complaints: Vec<&str> = log.lines_starting_with("cmdline: ").collect();
    ensure(complaints.is_empty(), || {
        format!("expected no `cmdline: ` line, got {complaints:#?}")
    })
}

/// `sched_features=BOGUS`: one `cmdline: ` line naming BOGUS, the default features (DELAY_DEQUEUE
/// on), and the boot and workload carry on.
pub fn check_features_bogus(log: &Log) -> CheckResult {
    workload_ran(log, "shares", 2, true)?;
    let complaints: Vec<&str> = log.lines_starting_with("cmdline: ").collect();
    ensure(
        complaints.len() == 1 && crate::scenarios::names_word(complaints[0], FEATURES_BOGUS),
        || format!("expected one `cmdline: ` line naming {FEATURES_BOGUS}, got {complaints:#?}"),
    )?;
    let (line, toks) = feature_tokens(log)?;
    for t in ["DELAY_DEQUEUE", "RUN_TO_PARITY", "PLACE_LAG"] {
        ensure(has_token(&toks, t), || {
            format!("`{line}`: expected the default {t} on")
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// spread: load balancing moves hogs started on one CPU

/// The `per_cpu=` field of an `@fw spread` line: how many hogs each CPU holds, CPU 0 first.
fn per_cpu(r: &Record) -> Result<Vec<u64>, String> {
    r.field("per_cpu")?
        .split(',')
        .map(|n| {
            n.parse()
                .map_err(|_| format!("`{r}`: per_cpu= is not a list of counts"))
        })
        .collect()
}

/// The `@fw spread` samples of `workload=spread,...,ms=MS` with `hogs` hogs on `cpus` CPUs: one
/// every 10 ms from `t_ms=10` to `t_ms=MS` in order, each counting every hog on one of the CPUs.
fn spread_samples(
    log: &Log,
    cpus: u32,
    hogs: u64,
    ms: u64,
) -> Result<Vec<(u64, Vec<u64>)>, String> {
    let mut v = Vec::new();
    for r in log.records("spread") {
        let counts = per_cpu(r)?;
        ensure(counts.len() == cpus as usize, || {
            format!("`{r}`: expected {cpus} per_cpu= counts")
        })?;
        ensure(counts.iter().sum::<u64>() == hogs, || {
            format!("`{r}`: the counts do not add up to the {hogs} hogs")
        })?;
        v.push((r.num("t_ms")?, counts));
    }
    let want: Vec<u64> = (1..=ms / 10).map(|i| 10 * i).collect();
    let got: Vec<u64> = v.iter().map(|x| x.0).collect();
    ensure(got == want, || {
        format!("expected `@fw spread` samples at t_ms=10,20,..,{ms}, got t_ms={got:?}")
    })?;
    Ok(v)
}

/// The `@fw hog` lines of `workload=spread`: exactly `hogs` of them, distinct ids, each with
/// `ran_on=` holding its final `cpu=` and runtime > 0. Returns (final CPU, runtime_ns, ran_on).
fn spread_hogs(log: &Log, hogs: u64, cpus: u32) -> Result<Vec<(u32, u64, Vec<u32>)>, String> {
    let mut ids = BTreeSet::new();
    let mut v = Vec::new();
    for r in log.records("hog") {
        ensure(ids.insert(r.num("id")?), || format!("`{r}`: id twice"))?;
        let cpu = r.num("cpu")?;
        ensure(cpu < cpus as u64, || format!("`{r}`: no CPU {cpu}"))?;
        let ran = r.cpus("ran_on")?;
        ensure(
            ran.contains(&(cpu as u32)) && ran.iter().all(|&c| c < cpus),
            || format!("`{r}`: ran_on= must hold cpu={cpu} and only CPUs below {cpus}"),
        )?;
        let rt = r.num("runtime_ns")?;
        ensure(rt > 0, || format!("`{r}`: runtime_ns=0"))?;
        v.push((cpu as u32, rt, ran));
    }
    ensure(v.len() as u64 == hogs, || {
        format!("expected {hogs} `@fw hog` lines, got {}", v.len())
    })?;
    Ok(v)
}

/// By this time (guest ms) of `workload=spread` with one hog per CPU, the balancer must have
/// given every CPU exactly one hog.
pub const SPREAD_WITHIN_MS: u64 = 100;

/// `workload=spread,ms=MS` (one hog per CPU, all started on CPU 0) on `SMP` CPUs: from
/// `t_ms=`[`SPREAD_WITHIN_MS`] to the end, every sample shows exactly one hog on every CPU, and
/// the `@fw hog` lines end on `SMP` distinct CPUs.
pub fn check_spread<const SMP: u32, const MS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "spread", SMP, true)?;
    let hogs = SMP as u64;
    for (t, counts) in spread_samples(log, SMP, hogs, MS)? {
        ensure(
            t < SPREAD_WITHIN_MS || counts.iter().all(|&n| n == 1),
            || {
                format!(
                    "at t_ms={t} (from {SPREAD_WITHIN_MS} on every CPU must hold one hog): \
                 per_cpu={counts:?}"
                )
            },
        )?;
    }
    let mut ends: Vec<u32> = spread_hogs(log, hogs, SMP)?.iter().map(|h| h.0).collect();
    ends.sort_unstable();
    ensure(ends == (0..SMP).collect::<Vec<_>>(), || {
        format!("expected the {hogs} hogs to end one per CPU, they ended on CPUs {ends:?}")
    })
}

/// The physical core (package, core) of every CPU, from the `@fw cpu` lines.
fn cores(log: &Log) -> Result<std::collections::BTreeMap<u32, (u64, u64)>, String> {
    log.records("cpu")
        .map(|r| Ok((r.num("id")? as u32, (r.num("pkg")?, r.num("core")?))))
        .collect()
}

/// `workload=spread,hogs=HOGS,ms=..` on `-smp SMT_SMP` with two threads per core (`SMT_SMP` is
/// the `-smp` value): the hogs end on `HOGS` different cores (package and core IDs from the `@fw
/// cpu` lines, themselves checked against QEMU's numbering), so no two share a core while whole
/// cores are idle (SMT balancing prefers idle cores).
pub fn check_spread_smt<const HOGS: u64>(log: &Log, smp: &str) -> CheckResult {
    let topo = crate::topology::Topology::from_smp(smp, 0)?;
    workload_ran(log, "spread", topo.cpus(), true)?;
    crate::scenarios::cpu_placement(log, &topo)?;
    let core_of = cores(log)?;
    let hogs = spread_hogs(log, HOGS, topo.cpus())?;
    let mut used = BTreeSet::new();
    for (cpu, _, _) in &hogs {
        let core = core_of
            .get(cpu)
            .ok_or_else(|| format!("no `@fw cpu id={cpu}` line"))?;
        ensure(used.insert(*core), || {
            let all: Vec<_> = hogs.iter().map(|h| (h.0, core_of.get(&h.0))).collect();
            format!(
                "two hogs end on core {core:?} (pkg, core) while cores are idle: (cpu, core) = \
                 {all:?}"
            )
        })?;
    }
    Ok(())
}

/// Each hog's share of one CPU with 3 hogs on 2 CPUs: 2/3, within this many points.
pub const THREE_ON_TWO_TOLERANCE_PP: f64 = 10.0;

/// `workload=spread,hogs=3,ms=MS` on 2 CPUs: every hog's `runtime_ns` is 2/3 of the run (66.7%
/// of `MS`) within [`THREE_ON_TWO_TOLERANCE_PP`] points. The balancer keeps the counts 2+1 and
/// must rotate which hog is alone; a hog kept alone would get 100%, the other two 50%.
pub fn check_three_on_two<const MS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "spread", 2, true)?;
    let run_ns = MS as f64 * 1e6;
    let want = 100.0 * 2.0 / 3.0;
    let hogs = spread_hogs(log, 3, 2)?;
    let shares: Vec<f64> = hogs.iter().map(|h| 100.0 * h.1 as f64 / run_ns).collect();
    for (h, got) in hogs.iter().zip(&shares) {
        ensure((got - want).abs() <= THREE_ON_TWO_TOLERANCE_PP, || {
            format!(
                "a hog (ended on CPU {}, ran on {}) got {got:.1}% of the {MS} ms run, more than \
                 {THREE_ON_TWO_TOLERANCE_PP} points from {want:.1}% (shares: {shares:.1?})",
                h.0,
                format_cpulist(&h.2)
            )
        })?;
    }
    Ok(())
}

/// `cpu_capacity=..` with the `small` CPUs at half capacity and `workload=spread,hogs=HOGS`
/// started on CPU `START` (a half-capacity one), on `SMP` CPUs: every hog ends on a
/// full-capacity CPU, on distinct CPUs. With `RAN_THERE`, each hog also ran on `START` first
/// (it became misfit there and was moved); without, it may have been pulled before it ever ran
/// (an idle full-capacity CPU balancing takes the queued task at once).
pub fn check_capacity<const SMP: u32, const HOGS: u64, const START: u32, const RAN_THERE: bool>(
    log: &Log,
    small: &[u32],
) -> CheckResult {
    workload_ran(log, "spread", SMP, true)?;
    let complaints: Vec<&str> = log.lines_starting_with("cmdline: ").collect();
    ensure(complaints.is_empty(), || {
        format!("expected no `cmdline: ` line, got {complaints:#?}")
    })?;
    let hogs = spread_hogs(log, HOGS, SMP)?;
    let mut ends = BTreeSet::new();
    for (cpu, _, ran) in &hogs {
        ensure(!small.contains(cpu), || {
            format!(
                "a hog ended on CPU {cpu}, one of the half-capacity CPUs {small:?} (ran on {}), \
                 while full-capacity CPUs were free",
                format_cpulist(ran)
            )
        })?;
        ensure(ends.insert(*cpu), || format!("two hogs end on CPU {cpu}"))?;
        if RAN_THERE {
            ensure(ran.contains(&START), || {
                format!(
                    "a hog started on CPU {START} has ran_on={}",
                    format_cpulist(ran)
                )
            })?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// tickless idle: timer interrupts per CPU

/// Timer interrupts per second a CPU with nothing to run may take with `nohz=on`.
pub const NOHZ_IDLE_MAX_PER_S: u64 = 5;
/// Timer interrupts per second a CPU with a tick must take (at `hz=1000`).
pub const TICKING_MIN_PER_S: u64 = 500;

/// `timer_irqs=` of each CPU's `@fw schedstat_delta` (what the workload's run gained).
fn timer_irqs(log: &Log, cpus: u32) -> Result<Vec<u64>, String> {
    let mut v = vec![None; cpus as usize];
    for r in log.records("schedstat_delta") {
        let c = r.num("cpu")? as usize;
        ensure(c < v.len() && v[c].is_none(), || {
            format!("`{r}`: unexpected or repeated CPU")
        })?;
        v[c] = Some(r.num("timer_irqs")?);
    }
    v.into_iter()
        .enumerate()
        .map(|(c, x)| x.ok_or_else(|| format!("no `@fw schedstat_delta cpu={c}`")))
        .collect()
}

/// `workload=shares,cpu=BUSY,ms=MS` (hogs pinned to CPU `BUSY`) on `SMP` CPUs, with the tick
/// stopped on idle CPUs (`NOHZ`) or not: the busy CPU takes at least [`TICKING_MIN_PER_S`] timer
/// interrupts per second of the run; every CPU above `BUSY` (nothing runs there) takes at most
/// [`NOHZ_IDLE_MAX_PER_S`] per second with `NOHZ`, at least [`TICKING_MIN_PER_S`] without.
/// (CPU 0 runs the workload's main thread, so it is not counted as idle.)
pub fn check_tickless<const SMP: u32, const BUSY: u32, const MS: u64, const NOHZ: bool>(
    log: &Log,
) -> CheckResult {
    workload_ran(log, "shares", SMP, true)?;
    let irqs = timer_irqs(log, SMP)?;
    let per_s = |n: u64| n * 1000 / MS;
    let min = TICKING_MIN_PER_S * MS / 1000;
    ensure(irqs[BUSY as usize] >= min, || {
        format!(
            "busy CPU {BUSY} took {} timer interrupts in {MS} ms ({}/s), expected >= \
             {TICKING_MIN_PER_S}/s",
            irqs[BUSY as usize],
            per_s(irqs[BUSY as usize])
        )
    })?;
    for c in BUSY + 1..SMP {
        let n = irqs[c as usize];
        if NOHZ {
            ensure(n <= NOHZ_IDLE_MAX_PER_S * MS / 1000, || {
                format!(
                    "idle CPU {c} took {n} timer interrupts in {MS} ms with nohz=on, expected \
                     <= {NOHZ_IDLE_MAX_PER_S}/s (all CPUs: {irqs:?})"
                )
            })?;
        } else {
            ensure(n >= min, || {
                format!(
                    "idle CPU {c} took {n} timer interrupts in {MS} ms with nohz=off, expected \
                     >= {TICKING_MIN_PER_S}/s (all CPUs: {irqs:?})"
                )
            })?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// newidle throttling: avg_idle_clamp=snap vs delta (two boots)

/// Newidle balance attempts per second of the run: the sum of `@fw newidle ... attempts=` over
/// the CPUs, divided by the `@fw prodcons ms=` duration.
pub fn newidle_attempts_per_s(log: &Log) -> Result<f64, String> {
    let p = log.one("prodcons")?;
    let ms = p.num("ms")?;
    ensure(ms > 0, || format!("`{p}`: ms=0"))?;
    let mut sum = 0;
    let mut n = 0;
    for r in log.records("newidle") {
        sum += r.num("attempts")?;
        n += 1;
    }
    ensure(n > 0, || "no `@fw newidle` line".into())?;
    Ok(sum as f64 * 1000.0 / ms as f64)
}

/// One boot of the newidle pair: `workload=prodcons,pairs=PAIRS,ms=MS` on `SMP` CPUs ran, moved
/// items, and printed one `@fw newidle` per CPU.
pub fn check_prodcons<const SMP: u32, const PAIRS: u64, const MS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "prodcons", SMP, true)?;
    let p = log.one("prodcons")?;
    num_is(p, "pairs", PAIRS)?;
    num_is(p, "ms", MS)?;
    ensure(p.num("items")? > 0, || format!("`{p}`: no item consumed"))?;
    let cpus: Vec<u64> = log
        .records("newidle")
        .map(|r| r.num("cpu"))
        .collect::<Result<_, _>>()?;
    ensure(cpus == (0..SMP as u64).collect::<Vec<_>>(), || {
        format!("expected one `@fw newidle` for each of CPUs 0..{SMP}, got {cpus:?}")
    })
}

/// (`avg_idle_clamp=snap` boot, `avg_idle_clamp=delta` boot): delta tries newidle balancing less
/// often. With a 1 ms ceiling, a long idle period sets snap's `avg_idle` to the ceiling but
/// raises delta's by at most 1/8 of it, so after each long period snap needs ~16 more short
/// idle periods than delta before `avg_idle` falls below the newidle cost and the gate closes.
pub fn compare_snap_delta(snap: &Log, delta: &Log) -> CheckResult {
    let (s, d) = (
        newidle_attempts_per_s(snap)?,
        newidle_attempts_per_s(delta)?,
    );
    ensure(d < s, || {
        format!("newidle attempts/s: delta {d:.1} is not below snap {s:.1}")
    })
}

// ---------------------------------------------------------------------------------------------
// wake affinity: wake_affine=on vs off (two boots)

/// `(same_cpu, same_llc, rounds)` of `@fw pipes_total`, checked against the per-pair lines.
pub fn pipes_total(log: &Log, pairs: u64, rounds: u64) -> Result<(u64, u64), String> {
    let t = log.one("pipes_total")?;
    num_is(t, "pairs", pairs)?;
    num_is(t, "rounds", pairs * rounds)?;
    let (mut cpu, mut llc, mut n) = (0, 0, 0);
    for r in log.records("pipes") {
        num_is(r, "rounds", rounds)?;
        let (c, l) = (r.num("same_cpu")?, r.num("same_llc")?);
        ensure(c <= l && l <= rounds, || {
            format!("`{r}`: expected same_cpu <= same_llc <= rounds")
        })?;
        cpu += c;
        llc += l;
        n += 1;
    }
    ensure(n == pairs, || {
        format!("expected {pairs} `@fw pipes` lines, got {n}")
    })?;
    num_is(t, "same_cpu", cpu)?;
    num_is(t, "same_llc", llc)?;
    Ok((cpu, llc))
}

/// The sum of a `@fw domstat` field over every CPU and level.
pub fn domstat_sum(log: &Log, key: &str) -> Result<u64, String> {
    let mut sum = 0;
    let mut n = 0;
    for r in log.records("domstat") {
        sum += r.num(key)?;
        n += 1;
    }
    ensure(n > 0, || "no `@fw domstat` line".into())?;
    Ok(sum)
}

/// One boot of the wake-affinity pair: `workload=pipes,pairs=PAIRS,rounds=ROUNDS` on `SMP` CPUs
/// with one LLC (QEMU's default topology): every round trip saw the partners share the LLC.
pub fn check_pipes<const SMP: u32, const PAIRS: u64, const ROUNDS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "pipes", SMP, true)?;
    let (_, llc) = pipes_total(log, PAIRS, ROUNDS)?;
    ensure(llc == PAIRS * ROUNDS, || {
        format!("same_llc={llc}: with one LLC the partners always share it")
    })
}

/// (`wake_affine=on` boot, `wake_affine=off` boot) of `workload=pipes,pairs=PAIRS,rounds=ROUNDS`
/// at `-smp 4` (one LLC, so `same_llc` is always 100% and `same_cpu` is what differs): with
/// wake_affine on, the partners are on one CPU at more round trips than with it off, by at least
/// a quarter of the round trips; the domains counted affine wakeups (`ttwu_move_affine`) with it
/// on and none with it off.
pub fn compare_wake_affine<const PAIRS: u64, const ROUNDS: u64>(
    on: &Log,
    off: &Log,
) -> CheckResult {
    let (c_on, _) = pipes_total(on, PAIRS, ROUNDS)?;
    let (c_off, _) = pipes_total(off, PAIRS, ROUNDS)?;
    let total = PAIRS * ROUNDS;
    ensure(c_on >= c_off + total / 4, || {
        format!(
            "same_cpu: {c_on} of {total} round trips with wake_affine=on, {c_off} with off: \
             expected on >= off + {}",
            total / 4
        )
    })?;
    let (a_on, a_off) = (
        domstat_sum(on, "ttwu_move_affine")?,
        domstat_sum(off, "ttwu_move_affine")?,
    );
    ensure(a_on > 0 && a_off == 0, || {
        format!(
            "ttwu_move_affine summed over CPUs and levels: {a_on} with wake_affine=on, {a_off} \
             with off: expected > 0 and 0"
        )
    })
}

// ---------------------------------------------------------------------------------------------
// What a correct kernel prints, for the unit tests.

#[cfg(test)]
#[path = "workloads_synthetic.rs"]
pub(crate) mod synthetic;

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;
