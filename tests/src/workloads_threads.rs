//! Kernel threads and their primitives: many threads sleeping, handing off semaphores, pipes and
//! a sleeping mutex (`workload=storm`), affinity (`workload=affinity`), pipe ping-pong
//! (`workload=pipe`) and the stack guard page (`workload=overflow`).

use super::{cpus_are, ensure, num_is, one_taskstat, taskstats, workload_ran};
use crate::log::Log;
use crate::scenarios::CheckResult;

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
/// (and costs one wakeup) unless the answer is already there when the reader looks. On one CPU
/// that needs the reader preempted between its write and its read: by a tick, or by the partner
/// it just woke. The latter is EEVDF at work, not noise: an ineligible running task has no
/// RUN_TO_PARITY protection, and a wakee re-placed at V with a fresh request can have the earlier
/// deadline, so for some rounds after a slice refresh the partner preempts the writer. How many
/// depends on where the refreshes fall, which moves with every change to the instruction count
/// of the path: 99 797 of 100 000 per thread at one build, 92 989 at the next (`-smp 1`). Across
/// CPUs it is the partner answering before the reader reaches its read (at least 99 797). The
/// bound is set well below both to catch reads that stop blocking, not the phase of the slices.
/// The scenarios run in instruction time (`icount`): in wall time under TCG the host decides
/// (55-99 % with a busy host, as a stalled vCPU thread lets the partner answer first).
pub const PIPE_MIN_WAKEUPS_PERCENT: u64 = 80;

/// [`PIPE_MIN_WAKEUPS_PERCENT`] for the one-CPU pipe (`mode=same`), lower: since the requeue of a
/// delayed sleeper follows Linux (fair.c `requeue_delayed_entity()` does not charge the running
/// task first, so a sleeper still behind V keeps its place and its earlier deadline instead of
/// being re-placed at V with a fresh request), the woken partner preempts the writer before its
/// read in about four rounds of ten: 62 000 and 62 139 wakeups of 100 000 per thread at -smp 1
/// (`delay-dequeue`), 78 793 with NO_DELAY_DEQUEUE (`delay-dequeue-off`).
pub const PIPE_SAME_MIN_WAKEUPS_PERCENT: u64 = 50;

/// `workload=pipe,rounds=100000,mode=same|cross` on `SMP` CPUs (`CROSS`: `mode=cross`): the
/// threads on CPU 0 (and CPU 1 for cross), each having run only there; each thread woken at most
/// once per round trip (only the partner's one write per round can wake it; writes never block)
/// and in most of them ([`PIPE_MIN_WAKEUPS_PERCENT`]); every wakeup WF_SYNC (the pipe writes say
/// so), local for `same` and remote for `cross`. On one CPU every round trip needs a switch away
/// from each thread, so each thread switched at least `rounds - 1` times. Across CPUs, how the
/// wakeups reach the idle partner CPU: `check_pipe_ipis` (`POLL`: booted with `idle=poll`).
pub fn check_pipe<const SMP: u32, const CROSS: bool, const POLL: bool>(log: &Log) -> CheckResult {
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
        let pct = if CROSS { PIPE_MIN_WAKEUPS_PERCENT } else { PIPE_SAME_MIN_WAKEUPS_PERCENT };
        let min = PIPE_ROUNDS * pct / 100;
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
    if CROSS {
        check_pipe_ipis(log, &[0, b_cpu], POLL)?;
    }
    Ok(())
}

/// Most reschedule IPIs a polling CPU may take in a pipe run, in percent of the round trips
/// (the wakeups themselves send none; the tick's balancing may kick now and then).
pub const POLL_MAX_IPIS_PERCENT: u64 = 1;

/// The pipe threads' CPUs (`cpus`), idle whenever their thread sleeps, in a cross-CPU run: with
/// `idle=halt` (`poll` false) each wakeup reaches the halted CPU by a reschedule IPI, so each
/// took at least [`PIPE_MIN_WAKEUPS_PERCENT`] of the rounds in IPIs and none arrived without one
/// (`wake_idle_without_ipi=0`); with `idle=poll` the waker sees the CPU polling and sends none:
/// at least that many `wake_idle_without_ipi` and at most [`POLL_MAX_IPIS_PERCENT`] IPIs.
pub fn check_pipe_ipis(log: &Log, cpus: &[u64], poll: bool) -> CheckResult {
    let min = PIPE_ROUNDS * PIPE_MIN_WAKEUPS_PERCENT / 100;
    let max_ipis = PIPE_ROUNDS * POLL_MAX_IPIS_PERCENT / 100;
    for &cpu in cpus {
        let r = log
            .records("schedstat_delta")
            .find(|r| r.num("cpu").ok() == Some(cpu))
            .ok_or_else(|| format!("no `@fw schedstat_delta cpu={cpu}`"))?;
        let ipis = r.num("resched_ipis")?;
        let silent = r.num("wake_idle_without_ipi")?;
        if poll {
            ensure(silent >= min && ipis <= max_ipis, || {
                format!(
                    "`{r}`: with idle=poll expected wake_idle_without_ipi >= {min} and \
                     resched_ipis <= {max_ipis}"
                )
            })?;
        } else {
            ensure(ipis >= min && silent == 0, || {
                format!(
                    "`{r}`: with idle=halt expected resched_ipis >= {min} and \
                     wake_idle_without_ipi=0"
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
// the scheduler trace of a cross-CPU pipe (`trace=1`)

/// Round trips of `trace-pipe-cross-smp2` (small, so the dump stays short).
pub const TRACE_PIPE_ROUNDS: u64 = 500;

/// `trace=1 workload=pipe,rounds=TRACE_PIPE_ROUNDS,mode=cross` on 2 CPUs: the dump is whole and
/// tells a consistent story. Both rings kept every event (`lost=0`); each CPU's events are in
/// time order; on each CPU every `switch` starts from the task the previous one switched to;
/// `pipe-a` runs only on CPU 0 and `pipe-b` only on CPU 1 (both pinned). Every wakeup of a pipe
/// thread (`ev=wakeup`, on the waker's CPU) names the thread's CPU as target, and is followed by
/// exactly one `enqueue` of the thread (on that CPU) before its next wakeup, the two rings merged
/// by time: every successful wakeup has its `enqueue`, as every one has Linux's `sched_wakeup`,
/// including one that finds the thread still queued because it had not switched out yet, and
/// when the thread is running there that enqueue has `preempt=0` (a task is not checked against
/// itself). Every time a pipe thread is switched in after sleeping (`prev_state=S`), exactly one
/// `enqueue` of it came in between, and when its CPU was idle the enqueue asked for the switch
/// (`preempt=1`) and the next switch there ran it. Each thread has at least
/// [`PIPE_MIN_WAKEUPS_PERCENT`] of the rounds in enqueues.
pub fn check_trace_pipe(log: &Log) -> CheckResult {
    workload_ran(log, "pipe", 2, true)?;
    let pid_of = |name: &str| -> Result<String, String> {
        let r = log
            .records("trace_task")
            .find(|r| r.get("name") == Some(name))
            .ok_or_else(|| format!("no `@fw trace_task ... name={name}`"))?;
        Ok(r.field("pid")?.to_string())
    };
    let (a, b) = (pid_of("pipe-a")?, pid_of("pipe-b")?);
    for cpu in 0..2u64 {
        let r = log
            .records("trace_cpu")
            .find(|r| r.num("cpu").ok() == Some(cpu))
            .ok_or_else(|| format!("no `@fw trace_cpu cpu={cpu}`"))?;
        num_is(r, "lost", 0)?;
    }
    // Per CPU: (ts, record) in dump order.
    let mut per_cpu: Vec<Vec<&crate::log::Record>> = vec![Vec::new(), Vec::new()];
    for r in log.records("trace") {
        let c = r.num("cpu")? as usize;
        ensure(c < 2, || format!("`{r}`: a CPU beyond -smp 2"))?;
        per_cpu[c].push(r);
    }
    let home = |pid: &str| if pid == a { Some(0usize) } else if pid == b { Some(1) } else { None };
    // Enqueues seen on each CPU since the pipe thread last left it asleep, per pid.
    let mut pending: Vec<std::collections::BTreeMap<String, u64>> = vec![Default::default(), Default::default()];
    // Per pipe thread: (ts, 0 for wakeup / 1 for enqueue), from both CPUs.
    let mut wakes = std::collections::BTreeMap::<String, Vec<(u64, u8)>>::new();
    let mut enqueued = std::collections::BTreeMap::<String, u64>::new();
    for (cpu, evs) in per_cpu.iter().enumerate() {
        let mut last_ts = 0;
        let mut running: Option<String> = None;
        let mut asleep = std::collections::BTreeSet::<String>::new();
        let mut must_run_next: Option<String> = None;
        for r in evs {
            let ts = r.num("ts")?;
            ensure(ts >= last_ts, || format!("`{r}`: out of time order on CPU {cpu} (after ts={last_ts})"))?;
            last_ts = ts;
            match r.field("ev")? {
                "switch" => {
                    let (prev, next) = (r.field("prev")?.to_string(), r.field("next")?.to_string());
                    if let Some(run) = &running {
                        ensure(*run == prev, || format!("`{r}`: CPU {cpu} was running pid {run}, not {prev}"))?;
                    }
                    if let Some(want) = must_run_next.take() {
                        ensure(next == want, || format!("`{r}`: the idle CPU {cpu} was asked to run pid {want} next"))?;
                    }
                    if home(&prev) == Some(cpu) && r.field("prev_state")? == "S" {
                        asleep.insert(prev.clone());
                    }
                    if let Some(h) = home(&next) {
                        ensure(h == cpu, || format!("`{r}`: a pinned pipe thread runs on CPU {cpu}"))?;
                        if asleep.remove(&next) {
                            let n = pending[cpu].remove(&next).unwrap_or(0);
                            ensure(n == 1, || format!("`{r}`: pid {next} switched in after sleeping with {n} enqueues since"))?;
                        }
                    }
                    running = Some(next);
                }
                "enqueue" => {
                    let pid = r.field("pid")?.to_string();
                    // what it found running is the task the CPU's switches say runs there;
                    // eligibility and protection are a fair entity's, other than the wakee's
                    let curr = r.field("curr")?;
                    if let Some(run) = &running {
                        ensure(curr == run, || format!("`{r}`: CPU {cpu} was running pid {run}"))?;
                    }
                    let flags = [r.field("curr_eligible")?, r.field("curr_protected")?];
                    if curr == "0" || curr == pid {
                        ensure(flags == ["-", "-"], || format!("`{r}`: the idle task or the wakee itself has no eligibility"))?;
                    } else {
                        ensure(flags.iter().all(|f| *f == "0" || *f == "1"), || format!("`{r}`: a running task is eligible or not"))?;
                    }
                    if home(&pid).is_some() {
                        ensure(home(&pid) == Some(cpu), || format!("`{r}`: pipe thread enqueued off its CPU"))?;
                        *enqueued.entry(pid.clone()).or_default() += 1;
                        wakes.entry(pid.clone()).or_default().push((ts, 1));
                        if asleep.contains(&pid) {
                            *pending[cpu].entry(pid.clone()).or_default() += 1;
                            if running.as_deref() == Some("0") {
                                num_is(r, "preempt", 1)?;
                                must_run_next = Some(pid);
                            }
                        } else if running.as_deref() == Some(pid.as_str()) {
                            // woken before it switched out: it runs, nothing to preempt
                            num_is(r, "preempt", 0)?;
                        }
                    }
                }
                "wakeup" => {
                    let pid = r.field("pid")?.to_string();
                    if let Some(h) = home(&pid) {
                        num_is(r, "target", h as u64)?;
                        wakes.entry(pid).or_default().push((ts, 0));
                    }
                }
                _ => {}
            }
        }
    }
    let min = TRACE_PIPE_ROUNDS * PIPE_MIN_WAKEUPS_PERCENT / 100;
    for pid in [&a, &b] {
        // Merged by time (a wakeup first on a tie, as it is recorded first), the events must
        // alternate wakeup, enqueue, ..., ending with an enqueue.
        let mut seq = wakes.remove(pid).unwrap_or_default();
        seq.sort_unstable();
        for (i, &(ts, kind)) in seq.iter().enumerate() {
            let (what, want) = if i % 2 == 0 { ("wakeup", 0) } else { ("enqueue", 1) };
            ensure(kind == want, || {
                format!("pid {pid}: at ts={ts} expected its {what} (each wakeup followed by one enqueue)")
            })?;
        }
        ensure(seq.len().is_multiple_of(2), || format!("pid {pid}: its last wakeup has no enqueue"))?;
        let e = enqueued.get(pid).copied().unwrap_or(0);
        ensure((min..=TRACE_PIPE_ROUNDS + 1).contains(&e), || {
            format!("pid {pid}: {e} enqueues, expected {min} to {}", TRACE_PIPE_ROUNDS + 1)
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// regs

/// `workload=regs,rounds=ROUNDS,preemptions=PREEMPTIONS` on `CPUS` CPUs: every checked switch
/// found rbx, rbp, r12-r15, the x87 control word and MXCSR as the thread left them, in every
/// phase (on CPU 0: resumed by `schedule_call`'s own return path; and beside a hog the tick
/// preempted at least `PREEMPTIONS` times, so also by `restore_frame`; with 2+ CPUs a sleeper on
/// CPU 1 woken from CPU 0 while its CPU idles, resumed by the reschedule IPI's path, each of at
/// least 90% of its wakeups having come with a reschedule IPI). A mismatch fails naming the
/// register.
pub fn check_regs<const ROUNDS: u64, const PREEMPTIONS: u64, const CPUS: u32>(log: &Log) -> CheckResult {
    let lost: Vec<String> = log.records("regs_mismatch").map(|r| r.to_string()).collect();
    ensure(lost.is_empty(), || {
        format!("a switch lost a callee-saved register:\n{}", lost.join("\n"))
    })?;
    workload_ran(log, "regs", CPUS, true)?;
    let mut phases = Vec::new();
    for r in log.records("regs") {
        let phase = r.field("phase")?;
        num_is(r, "mismatches", 0)?;
        let threads = if phase == "cross" { 1 } else { 2 };
        ensure(r.num("checks")? >= threads * ROUNDS, || {
            format!("`{r}`: expected checks >= {} ({threads} checking thread(s), rounds={ROUNDS})", threads * ROUNDS)
        })?;
        if phase == "spinner" {
            ensure(r.num("hog_preemptions")? >= PREEMPTIONS, || {
                format!("`{r}`: expected hog_preemptions >= {PREEMPTIONS}: resumes through restore_frame")
            })?;
        }
        if phase == "cross" {
            ensure(r.num("ipis")? >= ROUNDS * 9 / 10, || {
                format!("`{r}`: expected ipis >= {}: the sleeper's wakeups come through the reschedule IPI", ROUNDS * 9 / 10)
            })?;
        }
        phases.push(phase.to_string());
    }
    let expected: &[&str] = if CPUS > 1 { &["pair", "spinner", "cross"] } else { &["pair", "spinner"] };
    ensure(phases == expected, || {
        format!("expected `@fw regs` for phases {expected:?}, got {phases:?}")
    })
}
