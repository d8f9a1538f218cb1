//! EEVDF's fairness: the runtime split of hogs at different nice values (`workload=shares`),
//! a sleeper's wakeup latency beside hogs (`workload=latency`), the switch after a renice
//! (`workload=renice`), and the `sched_features=` option (whose scenarios run `workload=shares`).

use std::collections::BTreeSet;

use super::bench::results;
use super::{
    base_slice_ns, cpus_are, ensure, hist_buckets, hist_rank_bucket, int, nice_weight, num_is,
    one_taskstat, schedstat, taskstats, workload_ran,
};
use crate::log::{Log, Record};
use crate::scenarios::CheckResult;

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
// latency

/// Linux's bounds on a custom slice (`sched_attr.sched_runtime`): 0.1 ms to 100 ms.
pub const CUSTOM_SLICE_NS: (u64, u64) = (100_000, 100_000_000);

/// The percentiles of `@fw latency`, in thousandths (`p_milli`), with their fields.
const LATENCY_PCTS: [(&str, u64); 3] = [("p50_ns", 500), ("p90_ns", 900), ("p99_ns", 990)];

/// `workload=latency,cpu=CPU,hogs=2,samples=300[,slice_us=SLICE_US]` on `SMP` CPUs: all 300
/// samples, percentiles in order, the sleeper's slice (`SLICE_US` clamped to
/// `CUSTOM_SLICE_NS`, or the base slice computed from `SMP` when 0), p99 below two of the
/// shorter of the two slices, and the sleeper, pinned to `CPU`, woken at least once per sample.
/// A sleeper with the shorter slice must get the CPU within it: with PREEMPT_SHORT (on by
/// default) its wakeup preempts a hog still inside its own longer request, so with a custom
/// slice shorter than the base one no wakeup at all waits more than two of its slices
/// (`over_2slice=0`; a 1% tail would not move the nearest-rank p99 of 300 samples). The
/// record, histogram and results agree (`latency_report`).
pub fn check_latency<const SMP: u32, const CPU: u32, const SLICE_US: u64>(log: &Log) -> CheckResult {
    const HOGS: u64 = 2;
    const SAMPLES: u64 = 300;
    workload_ran(log, "latency", SMP, true)?;
    let r = log.one("latency")?;
    num_is(r, "cpu", CPU as u64)?;
    num_is(r, "hogs", HOGS)?;
    num_is(r, "samples", SAMPLES)?;
    let base = base_slice_ns(SMP);
    num_is(r, "slice_ns", base)?;
    let sleeper = if SLICE_US == 0 {
        base
    } else {
        (SLICE_US * 1000).clamp(CUSTOM_SLICE_NS.0, CUSTOM_SLICE_NS.1)
    };
    num_is(r, "sleeper_slice_ns", sleeper)?;
    let slice = base.min(sleeper);
    let (p, over) = latency_report(log, r, sleeper)?;
    ensure(p[2] < 2 * slice, || {
        format!(
            "`{r}`: p99 wakeup latency {} ns is not below two of the shorter slice ({} ns)",
            p[2],
            2 * slice
        )
    })?;
    if sleeper < base {
        ensure(over == 0, || {
            format!(
                "`{r}`: {over} wakeups waited more than two of the sleeper's {sleeper} ns slice, \
                 expected none (PREEMPT_SHORT)"
            )
        })?;
    }
    let s = one_taskstat(log, "sleeper")?;
    cpus_are(s, "cpus", &[CPU])?;
    ensure(s.num("nr_wakeups")? >= SAMPLES, || {
        format!("`{s}`: expected nr_wakeups >= {SAMPLES} (one per sleep)")
    })?;
    ensure(taskstats(log, "hog").len() as u64 == HOGS, || {
        format!("expected {HOGS} `@fw taskstat ... name=hog`")
    })
}

/// What `@fw latency` `r` says about its samples, checked against the `@fw hist` buckets
/// and the `@fw result` lines of the same run; returns p50, p90, p99, max (ns) and
/// `over_2slice`. The percentiles rise; the buckets (kind `wakeup`, whole microseconds) hold
/// `samples`, the last one `max_ns`, and each percentile lies in the bucket of its nearest rank
/// (`ceil(samples·p)`: the definition schbench's blocks use); `over_2slice` (samples above
/// `2·sleeper` ns) lies between the counts of the buckets wholly and partly above that, and it
/// reaches the samples above the nearest rank of p99 exactly when p99 is above it, and 1 when
/// max is; the results are `wakeup_p50`, `wakeup_p99`, `wakeup_max` (us, the record's ns as
/// thousandths) and `wakeup_over_2slice` (samples), all lower-is-better.
pub(super) fn latency_report(log: &Log, r: &Record, sleeper: u64) -> Result<([u64; 4], u64), String> {
    let n = r.num("samples")?;
    let mut p = [0; 4];
    for (i, (k, _)) in LATENCY_PCTS.iter().enumerate() {
        p[i] = r.num(k)?;
    }
    p[3] = r.num("max_ns")?;
    ensure(p.windows(2).all(|w| w[0] <= w[1]), || {
        format!("`{r}`: percentiles out of order")
    })?;
    let buckets = hist_buckets(log, "latency", "wakeup")?;
    let sum: u64 = buckets.iter().map(|b| b.2).sum();
    ensure(sum == n, || {
        format!("the `@fw hist` buckets hold {sum} samples, `{r}` {n}")
    })?;
    let in_bucket = |ns: u64, b: Option<(u64, u64)>| b.is_some_and(|(lo, hi)| (lo..hi).contains(&(ns / 1000)));
    for (i, (k, milli)) in LATENCY_PCTS.iter().enumerate() {
        let rank = (n * milli).div_ceil(1000).max(1);
        let b = hist_rank_bucket(&buckets, rank);
        ensure(in_bucket(p[i], b), || {
            format!(
                "`{r}`: {k} is not in the `@fw hist` bucket of sample {rank} of {n} (the nearest \
                 rank), {b:?} us"
            )
        })?;
    }
    let last = buckets[buckets.len() - 1];
    ensure(in_bucket(p[3], Some((last.0, last.1))), || {
        format!("`{r}`: max_ns is not in the last `@fw hist` bucket {last:?}")
    })?;
    let over = r.num("over_2slice")?;
    let limit = 2 * sleeper;
    let wholly: u64 = buckets.iter().filter(|b| b.0 * 1000 > limit).map(|b| b.2).sum();
    let partly: u64 = buckets.iter().filter(|b| b.1 * 1000 > limit).map(|b| b.2).sum();
    ensure((wholly..=partly).contains(&over), || {
        format!(
            "`{r}`: over_2slice={over}, but the `@fw hist` buckets hold {wholly} to {partly} \
             samples above {limit} ns"
        )
    })?;
    let above99 = n - (n * 990).div_ceil(1000).max(1);
    ensure((p[2] > limit) == (over > above99) && (p[3] > limit) == (over > 0), || {
        format!(
            "`{r}`: over_2slice={over} disagrees with p99 and max against {limit} ns (p99 is above \
             it exactly when more than {above99} samples are)"
        )
    })?;
    let v = results(
        log,
        "latency",
        &[
            ("wakeup_p50", "us", "lower"),
            ("wakeup_p99", "us", "lower"),
            ("wakeup_max", "us", "lower"),
            ("wakeup_over_2slice", "samples", "lower"),
        ],
    )?;
    let want = [p[0], p[2], p[3], over * 1000];
    ensure(v == want, || {
        format!(
            "results wakeup_p50, wakeup_p99, wakeup_max, wakeup_over_2slice = {v:?} (thousandths): \
             expected `{r}`'s {want:?}"
        )
    })?;
    Ok((p, over))
}
// ---------------------------------------------------------------------------------------------
// sched_features

/// The `sched_features=` of the `sched-features` scenario and what it must turn off.
pub const FEATURES_SET: &str = "NO_DELAY_DEQUEUE,NO_RUN_TO_PARITY";
/// The malformed `sched_features=` of the `sched-features-bogus` scenario.
pub const FEATURES_BOGUS: &str = "BOGUS";
/// The `sched_features=` of the `sched-features-linux-only` scenario: one feature fairway
/// implements, turned off, between two Linux features it does not (one asked on, one off).
pub const FEATURES_LINUX_ONLY: &str = "HRTICK,NO_DELAY_DEQUEUE,NO_RT_PUSH_IPI";
/// Linux's `sched_features` names whose concepts fairway does not implement (docs/OPTIONS.md):
/// refused on the command line, never printed.
pub const LINUX_ONLY_FEATURES: [&str; 9] = [
    "HRTICK",
    "HRTICK_DL",
    "NONTASK_CAPACITY",
    "WARN_DOUBLE_CLOCK",
    "RT_PUSH_IPI",
    "RT_RUNTIME_SHARE",
    "ATTACH_AGE_LOAD",
    "LATENCY_WARN",
    "PARANOID_AVG",
];

/// The `@fw sched_features` record and its tokens; no Linux feature fairway does not implement
/// among them (the line prints only what acts).
fn feature_tokens(log: &Log) -> Result<(String, Vec<String>), String> {
    let r = log.one("sched_features")?;
    let msg = r.field("msg")?.to_string();
    let toks: Vec<String> = msg.split_whitespace().map(str::to_string).collect();
    let line = format!("{r}");
    for t in &toks {
        let name = t.trim_start_matches("NO_");
        ensure(!LINUX_ONLY_FEATURES.contains(&name), || {
            format!("`{line}`: prints {t}, a Linux feature fairway does not implement")
        })?;
    }
    Ok((line, toks))
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

/// `sched_features=HRTICK,NO_DELAY_DEQUEUE,NO_RT_PUSH_IPI`: one `cmdline: ` line per Linux-only
/// name, in command-line order, each naming its feature and token and saying that fairway does
/// not implement it and the others apply; DELAY_DEQUEUE printed off (the token between them
/// applied), PLACE_LAG still on, neither refused name printed; the workload ran.
pub fn check_features_linux_only(log: &Log) -> CheckResult {
    workload_ran(log, "shares", 2, true)?;
    let complaints: Vec<&str> = log.lines_starting_with("cmdline: ").collect();
    let refused = [("HRTICK", "HRTICK"), ("RT_PUSH_IPI", "NO_RT_PUSH_IPI")];
    ensure(complaints.len() == refused.len(), || {
        format!("expected {} `cmdline: ` lines (HRTICK, RT_PUSH_IPI), got {complaints:#?}", refused.len())
    })?;
    for (line, (name, tok)) in complaints.iter().zip(refused) {
        let want = format!("cmdline: sched_features: {name} is a Linux feature fairway does not implement (");
        let tail = format!("; ignoring {tok}, the other features apply");
        ensure(line.starts_with(&want) && line.ends_with(&tail), || {
            format!("`{line}`: expected `{want}...{tail}`")
        })?;
    }
    let (line, toks) = feature_tokens(log)?;
    for t in ["NO_DELAY_DEQUEUE", "PLACE_LAG", "RUN_TO_PARITY"] {
        ensure(has_token(&toks, t), || format!("`{line}`: expected {t}"))?;
    }
    Ok(())
}

/// `ttwu-queue-off-torture-smp4`: the torture (`torture-smp4`'s books: no lost wakeup, thread,
/// byte or update, runtime conserved, invariant checks on) with every remote wakeup enqueued by
/// its waker on the target's runqueue (`sched_features=NO_TTWU_QUEUE`), which the boot line
/// prints.
pub fn check_torture_no_ttwu_queue(log: &Log) -> CheckResult {
    crate::workloads::check_torture::<4, 2000, 3>(log)?;
    let (line, toks) = feature_tokens(log)?;
    ensure(has_token(&toks, "NO_TTWU_QUEUE"), || format!("`{line}`: expected NO_TTWU_QUEUE"))
}

// ---------------------------------------------------------------------------------------------
// DELAY_DEQUEUE

/// The `delay-dequeue` scenarios: the one-CPU pipe (`workload=pipe,mode=same`), whose threads each
/// sleep right after waking the other, while ahead of V (they ran more than the one they woke), so
/// with DELAY_DEQUEUE (`ON`) their sleeps are delayed. `check_pipe`'s checks, then CPU 0's
/// `@fw delayed`: it counts at least one sleep per wakeup of the two threads (each wakeup ends a
/// sleep); with `ON`, some sleeps were delayed, every delay ended by a requeue (the partner's
/// wakeup), a final dequeue (picked once eligible) or is still pending (at most the two threads),
/// some ended each way a delay can end in a pipe (requeued and picked), they stayed queued for some
/// time, and the lag they left with is never positive (DELAY_ZERO: the debt was paid, no credit
/// kept); without it (`sched_features=NO_DELAY_DEQUEUE`), none at all.
pub fn check_delay_dequeue<const ON: bool>(log: &Log) -> CheckResult {
    super::check_pipe::<1, false, false>(log)?;
    let (line, toks) = feature_tokens(log)?;
    let want = if ON { "DELAY_DEQUEUE" } else { "NO_DELAY_DEQUEUE" };
    ensure(has_token(&toks, want), || format!("`{line}`: expected {want}"))?;
    let r = log
        .records("delayed")
        .find(|r| r.num("cpu").ok() == Some(0))
        .ok_or("no `@fw delayed cpu=0`")?;
    let wakeups = one_taskstat(log, "pipe-a")?.num("nr_wakeups")? + one_taskstat(log, "pipe-b")?.num("nr_wakeups")?;
    let sleeps = r.num("sleeps")?;
    ensure(sleeps >= wakeups, || {
        format!("`{r}`: expected sleeps >= {wakeups}, the two threads' wakeups")
    })?;
    let n = |k: &str| r.num(k);
    let (delayed, requeued, picked, dequeued, pending) =
        (n("delayed")?, n("requeued")?, n("picked")?, n("dequeued")?, n("pending")?);
    let (ns, max_ns, zeroed) = (n("delayed_ns")?, n("delayed_max_ns")?, n("zeroed")?);
    let leave_lag: i64 = r.field("leave_lag")?.parse().map_err(|_| format!("`{r}`: leave_lag is no integer"))?;
    if !ON {
        return ensure(
            [delayed, requeued, picked, dequeued, pending, ns, max_ns, zeroed] == [0; 8] && leave_lag == 0,
            || format!("`{r}`: with NO_DELAY_DEQUEUE expected no delayed dequeue at all"),
        );
    }
    ensure(delayed > 0 && delayed <= sleeps, || {
        format!("`{r}`: expected from 1 to {sleeps} (the sleeps) delayed dequeues")
    })?;
    ensure(delayed == requeued + dequeued + pending && pending <= 2, || {
        format!("`{r}`: every delay ends by a requeue, a final dequeue or is pending (at most the two threads)")
    })?;
    ensure(requeued > 0 && picked > 0 && picked <= dequeued, || {
        format!("`{r}`: expected delays ended by the partner's wakeup (requeued) and by a pick (picked <= dequeued)")
    })?;
    ensure(ns > 0 && max_ns > 0 && max_ns <= ns, || {
        format!("`{r}`: expected a positive time delayed, the longest within the sum")
    })?;
    ensure(leave_lag <= 0 && zeroed <= dequeued, || {
        format!("`{r}`: with DELAY_ZERO a delayed entity leaves with no positive lag (leave_lag <= 0, zeroed <= dequeued)")
    })
}

// ---------------------------------------------------------------------------------------------
// capacity pressure

/// The `shares-pressure` scenario's run time (ms) and CPU 1's `cpu_capacity=`.
pub const PRESSURE_MS: u64 = 250;
/// See [`PRESSURE_MS`].
pub const PRESSURE_CAPACITY: u64 = 512;

/// `cpu_capacity=1:512 workload=shares,cpu=1`: the pressure source takes half of every tick on
/// CPU 1, like IRQ time, and the hogs are charged only the time they ran (Linux's
/// `rq_clock_task` leaves IRQ time out): their runtimes add up to CAP/1024 of the run, within
/// 5 points (not the whole run), and still split by weight as [`check_shares`] asks.
pub fn check_shares_pressure(log: &Log) -> CheckResult {
    workload_ran(log, "shares", 2, true)?;
    shares(log, 1)?;
    let total: u64 = log.records("share").map(|r| r.num("runtime_ns")).sum::<Result<_, _>>()?;
    let pct = total * 100 / (PRESSURE_MS * 1_000_000);
    let want = PRESSURE_CAPACITY * 100 / 1024;
    ensure(pct + 5 >= want && pct <= want + 5, || {
        format!("the hogs ran {total} ns of {PRESSURE_MS} ms ({pct} %): expected {want} % ± 5, the time the pressure left them")
    })
}

// ---------------------------------------------------------------------------------------------
// renice

/// `workload=renice`'s rounds and its nice-0 hogs' slice and renice time (its defaults).
pub const RENICE_ROUNDS: u64 = 30;
pub const RENICE_SLICE_NS: u64 = 300_000;
pub const RENICE_AFTER_NS: u64 = 500_000;

/// The longest switch after a renice that counts as "at once": a tenth of the tick at
/// `hz=1000` (1 ms). The renicer renices 0.5 ms into its turn, past its 0.3 ms request and
/// protection; if the renice's reschedule request were dropped, the switch would wait for the
/// next tick, 0.5 ms later when its turn began at a tick (measured: p50 498 us, max 499 us).
pub const RENICE_AT_ONCE_NS: u64 = 100_000;

/// `workload=renice,cpu=CPU` on `SMP` CPUs: every round measured (`samples = rounds`), each
/// switch after a renice within [`RENICE_AT_ONCE_NS`] (fair.c `dequeue_entity()`'s
/// `update_curr()` asks for the reschedule at the renice: core.c `set_user_nice()` dequeues the
/// reniced task), the median not above the longest, the results `switch_p50` and `switch_max`
/// the record's (us, lower-is-better), and the three hogs ran only on `CPU`.
pub fn check_renice<const SMP: u32, const CPU: u32>(log: &Log) -> CheckResult {
    workload_ran(log, "renice", SMP, true)?;
    let r = log.one("renice")?;
    num_is(r, "cpu", CPU as u64)?;
    num_is(r, "rounds", RENICE_ROUNDS)?;
    num_is(r, "samples", RENICE_ROUNDS)?;
    num_is(r, "slice_ns", RENICE_SLICE_NS)?;
    num_is(r, "after_ns", RENICE_AFTER_NS)?;
    let (p50, max) = (r.num("p50_ns")?, r.num("max_ns")?);
    ensure(p50 <= max, || format!("`{r}`: p50_ns above max_ns"))?;
    ensure(max < RENICE_AT_ONCE_NS, || {
        format!(
            "`{r}`: a switch after a renice took {max} ns, expected every one within \
             {RENICE_AT_ONCE_NS} ns (at once, not at the next tick)"
        )
    })?;
    ensure(r.num("to_peer")? <= RENICE_ROUNDS, || format!("`{r}`: to_peer above the samples"))?;
    let v = results(log, "renice", &[("switch_p50", "us", "lower"), ("switch_max", "us", "lower")])?;
    ensure(v == [p50, max], || {
        format!("`{r}`: the results (thousandths of us) {v:?} are not p50_ns and max_ns")
    })?;
    for name in ["renice-a", "renice-b", "renice-19"] {
        cpus_are(one_taskstat(log, name)?, "cpus", &[CPU])?;
    }
    Ok(())
}
