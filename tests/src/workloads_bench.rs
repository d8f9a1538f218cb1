//! The benchmark workloads (`workload=hackbench|schbench|ebizzy|tbench|fserver`,
//! kernel/workloads/src/): each run finished with every message, request and byte accounted for,
//! its human report (laid out like the original benchmark's) agrees with its `@fw` records, its
//! `@fw result` lines are the metrics `cargo xtask bench` reads, and each CPU's
//! `@fw schedstat_delta` is there and consistent with its counters since boot. schbench's
//! percentile blocks and histogram have their own file (workloads_schbench.rs), which uses the
//! helpers here.
//!
//! The parameters come from the scenario's own `-append` string (every one written out there,
//! so the kernel's defaults do not matter), the bounds from what the workload does with them.

use std::collections::BTreeMap;

use super::{ensure, num_is, workload_ran};
use crate::log::{Log, Record};
use crate::scenarios::CheckResult;

// ---------------------------------------------------------------------------------------------
// Parsing helpers

/// The numeric parameters of the `workload=NAME,key=value,...` option of a kernel command line.
pub fn workload_params(append: &str, name: &str) -> Result<BTreeMap<String, u64>, String> {
    let w = append
        .split_whitespace()
        .find_map(|o| o.strip_prefix("workload="))
        .ok_or_else(|| format!("`{append}` has no workload= option"))?;
    let mut it = w.split(',');
    ensure(it.next() == Some(name), || {
        format!("`{append}`: expected workload={name}")
    })?;
    it.map(|kv| {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("`{append}`: `{kv}` is not key=value"))?;
        let v = v
            .parse()
            .map_err(|_| format!("`{append}`: `{kv}` is not a number"))?;
        Ok((k.to_string(), v))
    })
    .collect()
}

/// One parameter, which the scenario must spell out.
pub(super) fn param(p: &BTreeMap<String, u64>, key: &str) -> Result<u64, String> {
    p.get(key)
        .copied()
        .ok_or_else(|| format!("the scenario's workload= must set `{key}=`"))
}

/// A decimal with exactly `places` digits after the point (`0.047`, `4750.93`), scaled to an
/// integer (47, 475093).
pub fn fixed(s: &str, places: usize) -> Option<u64> {
    let (int, frac) = s.split_once('.')?;
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || frac.len() != places {
        return None;
    }
    format!("{int}{frac}").parse().ok()
}

/// Matches `line` against `pattern`, where each `{}` stands for some text; returns those texts,
/// trimmed (`None` when the literal parts do not match, in order, the whole line).
pub fn scan<'a>(line: &'a str, pattern: &str) -> Option<Vec<&'a str>> {
    let lits: Vec<&str> = pattern.split("{}").collect();
    let mut rest = line.strip_prefix(lits[0])?;
    let mut caps = Vec::new();
    for (i, lit) in lits.iter().enumerate().skip(1) {
        let at = if i + 1 == lits.len() {
            // The last literal ends the line.
            rest.len()
                .checked_sub(lit.len())
                .filter(|&a| &rest[a..] == *lit)?
        } else if lit.is_empty() {
            return None; // two `{}` in a row: ambiguous
        } else {
            rest.find(lit)?
        };
        caps.push(rest[..at].trim());
        rest = &rest[at + lit.len()..];
    }
    Some(caps)
}

/// The one line of the log matching `pattern` (see [`scan`]) with its index and captures.
pub(super) fn one_match<'a>(log: &'a Log, pattern: &str) -> Result<(usize, Vec<&'a str>), String> {
    let found: Vec<(usize, Vec<&str>)> = log
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, scan(&l.text, pattern)?)))
        .collect();
    match <[_; 1]>::try_from(found) {
        Ok([m]) => Ok(m),
        Err(v) => Err(format!(
            "expected one line `{}`, found {}",
            pattern.escape_debug(),
            v.len()
        )),
    }
}

/// A captured integer.
pub(super) fn int_of(s: &str, what: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("{what}: `{s}` is not an integer"))
}

/// A captured decimal with `places` decimals, scaled (see [`fixed`]).
pub(super) fn fixed_of(s: &str, places: usize, what: &str) -> Result<u64, String> {
    fixed(s, places).ok_or_else(|| format!("{what}: `{s}` is not a number with {places} decimals"))
}

/// The line of a record in the log, for ordering checks.
fn line_of(log: &Log, kind: &str) -> Result<usize, String> {
    Ok(log.one(kind)?.line)
}

// ---------------------------------------------------------------------------------------------
// What every benchmark run prints

/// The `@fw result` lines of `workload`, exactly the metrics `want` (`(metric, unit, better)`)
/// in that order, all printed between `@fw workload` and `@fw workload_done`; their values in
/// thousandths (the value has three decimals).
pub fn results(log: &Log, workload: &str, want: &[(&str, &str, &str)]) -> Result<Vec<u64>, String> {
    let got: Vec<&Record> = log.records("result").collect();
    let names: Vec<&str> = want.iter().map(|w| w.0).collect();
    ensure(got.len() == want.len(), || {
        format!(
            "expected {} `@fw result` lines (metrics {names:?}), found {}",
            want.len(),
            got.len()
        )
    })?;
    let (start, done) = (line_of(log, "workload")?, line_of(log, "workload_done")?);
    let mut values = Vec::new();
    for (r, (metric, unit, better)) in got.into_iter().zip(want) {
        for (k, v) in [
            ("workload", workload),
            ("metric", metric),
            ("unit", unit),
            ("better", better),
        ] {
            ensure(r.get(k) == Some(v), || format!("`{r}`: expected {k}={v}"))?;
        }
        ensure(start < r.line && r.line < done, || {
            format!("`{r}`: printed outside the workload's run")
        })?;
        values.push(fixed_of(r.field("value")?, 3, &r.to_string())?);
    }
    Ok(values)
}

/// Each CPU's `@fw schedstat_delta` (CPUs `0..cpus`, in order, printed before
/// `@fw workload_done`): the same counters as its `@fw schedstat`, none above its value since
/// boot, `ttwu_local <= ttwu_count`, `sched_goidle <= sched_count`; every CPU ran workload
/// threads (`rq_cpu_time > 0`: each scenario has at least as many threads as CPUs) and the run
/// woke threads (the start gate alone wakes them all).
pub fn schedstat_deltas(log: &Log, cpus: u32) -> Result<Vec<&Record>, String> {
    let deltas: Vec<&Record> = log.records("schedstat_delta").collect();
    let seen: Vec<u64> = deltas
        .iter()
        .map(|r| r.num("cpu"))
        .collect::<Result<_, _>>()?;
    let want: Vec<u64> = (0..cpus as u64).collect();
    ensure(seen == want, || {
        format!(
            "expected one `@fw schedstat_delta` for each of CPUs 0..{cpus} in order, got {seen:?}"
        )
    })?;
    let done = line_of(log, "workload_done")?;
    let mut woken = 0;
    for (d, cpu) in deltas.iter().zip(0..) {
        ensure(d.line < done, || {
            format!("`{d}`: printed after `@fw workload_done`")
        })?;
        let total = super::schedstat(log, cpu)?;
        let keys = |r: &Record| r.fields.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        ensure(keys(d) == keys(total), || {
            format!("`{d}`: expected the fields of `{total}`")
        })?;
        for (k, _) in d.fields.iter().filter(|(k, _)| k != "cpu") {
            ensure(d.num(k)? <= total.num(k)?, || {
                format!("`{d}`: {k} gained more than its total since boot (`{total}`)")
            })?;
        }
        ensure(d.num("ttwu_local")? <= d.num("ttwu_count")?, || {
            format!("`{d}`: ttwu_local > ttwu_count")
        })?;
        ensure(d.num("sched_goidle")? <= d.num("sched_count")?, || {
            format!("`{d}`: sched_goidle > sched_count")
        })?;
        ensure(d.num("rq_cpu_time")? > 0, || {
            format!("`{d}`: no workload thread ran on CPU {cpu}")
        })?;
        woken += d.num("ttwu_count")?;
    }
    ensure(woken > 0, || {
        "no wakeup in any `@fw schedstat_delta`".into()
    })?;
    Ok(deltas)
}

/// What every benchmark scenario shares: [`workload_ran`] (invariant checks on, `ok=1`, a
/// `@fw schedstat` per CPU) and [`schedstat_deltas`].
pub(super) fn bench_ran<'a>(log: &'a Log, name: &str, cpus: u32) -> Result<Vec<&'a Record>, String> {
    workload_ran(log, name, cpus, true)?;
    schedstat_deltas(log, cpus)
}

/// Σ of a counter over the `@fw schedstat_delta` lines.
fn delta_sum(deltas: &[&Record], key: &str) -> Result<u64, String> {
    deltas.iter().map(|d| d.num(key)).sum()
}

// ---------------------------------------------------------------------------------------------
// hackbench

/// `workload=hackbench,groups=G,loops=L,datasize=D,fds=F` on `cpus` CPUs: rt-tests' header
/// (`G` groups of `2F` descriptors, `2GF` tasks; `L` messages of `D` bytes per sender), every one
/// of the `G·F·F·L` messages written and read (`@fw hackbench`), `Time:` and
/// `@fw result metric=time` both the run's `ns=` in seconds, at least a millisecond (so the
/// figure is not 0.000). With more threads than CPUs, receivers wake senders elsewhere: more
/// than half of the CPUs woke threads on another CPU (`ttwu_count > ttwu_local`) and
/// reschedule IPIs were taken.
pub fn check_hackbench(log: &Log, cpus: u32, append: &str) -> CheckResult {
    let p = workload_params(append, "hackbench")?;
    let (groups, loops, datasize, fds) = (
        param(&p, "groups")?,
        param(&p, "loops")?,
        param(&p, "datasize")?,
        param(&p, "fds")?,
    );
    let deltas = bench_ran(log, "hackbench", cpus)?;
    let header = format!(
        "Running in threaded mode with {groups} groups using {} file descriptors each (== {} tasks)",
        2 * fds,
        2 * groups * fds
    );
    ensure(log.lines_starting_with(&header).count() == 1, || {
        format!("expected one line `{header}`")
    })?;
    let each = format!("Each sender will pass {loops} messages of {datasize} bytes");
    ensure(log.lines_starting_with(&each).count() == 1, || {
        format!("expected one line `{each}`")
    })?;
    let h = log.one("hackbench")?;
    for (k, v) in [
        ("groups", groups),
        ("fds", fds),
        ("loops", loops),
        ("datasize", datasize),
    ] {
        num_is(h, k, v)?;
    }
    let msgs = groups * fds * fds * loops;
    num_is(h, "messages_sent", msgs)?;
    num_is(h, "messages_received", msgs)?;
    let ns = h.num("ns")?;
    ensure(ns >= 1_000_000, || {
        format!("`{h}`: the run took under a millisecond; Time would read 0.000")
    })?;
    let (_, t) = one_match(log, "Time: {}")?;
    let time_ms = fixed_of(t[0], 3, "Time:")?;
    ensure(time_ms == ns / 1_000_000, || {
        format!("`Time: {}` is not `{h}`'s ns= in seconds", t[0])
    })?;
    let v = results(log, "hackbench", &[("time", "s", "lower")])?[0];
    ensure(v == ns / 1_000_000, || {
        format!("@fw result metric=time value={v} ms is not `{h}`'s ns= in seconds")
    })?;
    // The threads spread and talk across CPUs: every CPU ran some of them, and some wakeups
    // crossed CPUs. Not "most CPUs woke across": which CPU wakes whom in a run of a few
    // milliseconds follows the code's layout (a change of instruction counts moved
    // icount-deterministic-smp4's 5 ms run from 4 to 2 CPUs waking across, all else equal).
    let mut remote = 0;
    for d in &deltas {
        remote += d.num("ttwu_count")?.saturating_sub(d.num("ttwu_local")?);
        ensure(d.num("rq_cpu_time")? > 0 && d.num("pcount")? > 0, || format!("`{d}`: no thread ran on this CPU"))?;
    }
    ensure(remote > 0, || format!("no CPU woke a thread on another CPU: {deltas:?}"))?;
    ensure(delta_sum(&deltas, "resched_ipis")? > 0, || {
        "no CPU took a reschedule IPI during the run".into()
    })
}

// ---------------------------------------------------------------------------------------------
// ebizzy

/// Share of `min(threads, CPUs) × ms` the CPUs must have spent running tasks during an ebizzy
/// run, in percent: its threads never sleep, so each has a CPU to itself once spread.
pub const EBIZZY_MIN_BUSY_PERCENT: u64 = 90;

/// How far past `ms` the measured time of a timed run (ebizzy, tbench, fserver) may end: the
/// timer's lateness, and for tbench the clients' last round trips.
pub const RUN_SLACK_MS: u64 = 50;

/// `workload=ebizzy,threads=N,chunks=C,records=R,ms=MS` on `cpus` CPUs: the closing line repeats
/// `N`, `C`, `R` and counts some searches; `real` is `MS` (up to [`RUN_SLACK_MS`] late);
/// `records/s` is the searches over `real` (to its 10 ms), and the `records_per_s` result says
/// the same; the CPUs ran tasks at least [`EBIZZY_MIN_BUSY_PERCENT`] of
/// `min(N, CPUs) × MS` (the threads run flat out, spread over the CPUs). (A search that missed
/// its key would make the run's `ok=0`.)
pub fn check_ebizzy(log: &Log, cpus: u32, append: &str) -> CheckResult {
    let p = workload_params(append, "ebizzy")?;
    let (threads, chunks, records, ms) = (
        param(&p, "threads")?,
        param(&p, "chunks")?,
        param(&p, "records")?,
        param(&p, "ms")?,
    );
    let deltas = bench_ran(log, "ebizzy", cpus)?;
    let (_, c) = one_match(
        log,
        "ebizzy: {} threads, {} chunks of {} records, {} searches",
    )?;
    let c: Vec<u64> = c
        .iter()
        .map(|s| int_of(s, "ebizzy:"))
        .collect::<Result<_, _>>()?;
    ensure(c[0] == threads && c[1] == chunks && c[2] == records, || {
        format!("the closing line says {c:?}: expected [{threads}, {chunks}, {records}, ..]")
    })?;
    let searches = c[3];
    ensure(searches > 0, || "ebizzy: no search completed".into())?;
    let (_, r) = one_match(log, "real {} s")?;
    let real_cs = fixed_of(r[0], 2, "real")?;
    ensure(
        (ms / 10..=(ms + RUN_SLACK_MS) / 10).contains(&real_cs),
        || format!("real {} s for a {ms} ms run", r[0]),
    )?;
    let rate = results(log, "ebizzy", &[("records_per_s", "records/s", "higher")])?[0];
    ensure(rate > 0, || "records_per_s is 0".into())?;
    // The time the rate implies, in ns, must be the `real` one (truncated to 10 ms).
    let implied = (searches as u128 * 1_000_000_000_000 / rate as u128) as u64;
    ensure(
        real_cs * 10_000_000 <= implied + 1000 && implied <= (real_cs + 1) * 10_000_000 + 1000,
        || {
            format!(
                "{searches} searches at {}.{:03} records/s take {implied} ns, not real {} s",
                rate / 1000,
                rate % 1000,
                r[0]
            )
        },
    )?;
    let (_, h) = one_match(log, "{} records/s")?;
    ensure(int_of(h[0], "records/s")? == rate / 1000, || {
        format!("`{} records/s` is not the records_per_s result", h[0])
    })?;
    let busy = delta_sum(&deltas, "rq_cpu_time")?;
    let want = threads.min(cpus as u64) * ms * 1_000_000 * EBIZZY_MIN_BUSY_PERCENT / 100;
    ensure(busy >= want, || {
        format!(
            "the CPUs ran tasks {busy} ns in all during the run: expected >= {want} \
             ({EBIZZY_MIN_BUSY_PERCENT}% of {} CPU(s) × {ms} ms)",
            threads.min(cpus as u64)
        )
    })
}

// ---------------------------------------------------------------------------------------------
// tbench

/// `workload=tbench,clients=C,req=Q,reply=A,server_us=W,ms=MS` on `cpus` CPUs: every round trip
/// a client completed was a request its server answered (`@fw tbench` `round_trips = served >
/// 0`), `bytes = round_trips·(Q + A)`, the run took `MS` (up to [`RUN_SLACK_MS`] more, as it
/// ends when every client has finished); the throughput is `bytes / ns` in MB/s (10^6 bytes)
/// in both the summary line and the result; each round trip holds `W` µs of server work (at
/// least `W/2` at calibrated speed), so `round_trips <= C · ns / (W/2)`; the max latency is the
/// result's, above `W/2` and within the run; the summary names `C` clients and `2C` procs.
pub fn check_tbench(log: &Log, cpus: u32, append: &str) -> CheckResult {
    let p = workload_params(append, "tbench")?;
    let (clients, req, reply, server_us, ms) = (
        param(&p, "clients")?,
        param(&p, "req")?,
        param(&p, "reply")?,
        param(&p, "server_us")?,
        param(&p, "ms")?,
    );
    bench_ran(log, "tbench", cpus)?;
    let t = log.one("tbench")?;
    num_is(t, "clients", clients)?;
    num_is(t, "req", req)?;
    num_is(t, "reply", reply)?;
    let trips = t.num("round_trips")?;
    ensure(trips > 0, || format!("`{t}`: no round trip"))?;
    num_is(t, "served", trips)?;
    num_is(t, "bytes", trips * (req + reply))?;
    let ns = t.num("ns")?;
    ensure(
        (ms * 1_000_000..=(ms + RUN_SLACK_MS) * 1_000_000).contains(&ns),
        || format!("`{t}`: expected ns= from {ms} to {} ms", ms + RUN_SLACK_MS),
    )?;
    if server_us > 0 {
        let most = clients * ns / (server_us * 1000 / 2).max(1);
        ensure(trips <= most, || {
            format!(
                "`{t}`: more round trips than {server_us} us of server work each allows ({most})"
            )
        })?;
    }
    let mbs = (trips as u128 * (req + reply) as u128 * 1_000_000 / ns as u128) as u64;
    let (_, s) = one_match(
        log,
        "Throughput {} MB/sec  {} clients  {} procs  max_latency={} ms",
    )?;
    ensure(fixed_of(s[0], 3, "Throughput")? == mbs, || {
        format!(
            "`Throughput {} MB/sec`: bytes/ns of `{t}` is {mbs} thousandths",
            s[0]
        )
    })?;
    ensure(
        int_of(s[1], "clients")? == clients && int_of(s[2], "procs")? == 2 * clients,
        || {
            format!(
                "the summary names {} clients, {} procs: expected {clients}, {}",
                s[1],
                s[2],
                2 * clients
            )
        },
    )?;
    let lat_us = fixed_of(s[3], 3, "max_latency")?;
    let v = results(
        log,
        "tbench",
        &[
            ("throughput", "MB/s", "higher"),
            ("max_latency", "ms", "lower"),
        ],
    )?;
    ensure(v[0] == mbs && v[1] == lat_us, || {
        format!(
            "results throughput={} max_latency={} (thousandths): expected {mbs} and the \
             summary's {lat_us}",
            v[0], v[1]
        )
    })?;
    ensure(lat_us >= server_us / 2 && lat_us * 1000 <= ns, || {
        format!(
            "max_latency={} ms: expected from {server_us}/2 us to the run's length",
            s[3]
        )
    })
}

// ---------------------------------------------------------------------------------------------
// fserver

/// `workload=fserver,threads=N,burst_us=B,sleep_us=S,ms=MS` on `cpus` CPUs: the first line
/// repeats `N`, `B`, `S` and counts ops in `MS` (up to [`RUN_SLACK_MS`] more); ops/s is the ops
/// over that time (to its millisecond) in the summary and the result, jobs/min 60 times it; no
/// thread can beat a sleep of at least `S/2` per op, so `ops <= N·(ms/(S/2) + 1)`; the burst
/// latency percentiles rise (`p50 <= p90 <= p99 <= max`), p99 is the result's, and p50 is at
/// least `B/4` µs (a burst is at least `B/2` of calibrated work; half of that leaves room).
pub fn check_fserver(log: &Log, cpus: u32, append: &str) -> CheckResult {
    let p = workload_params(append, "fserver")?;
    let (threads, burst_us, sleep_us, ms) = (
        param(&p, "threads")?,
        param(&p, "burst_us")?,
        param(&p, "sleep_us")?,
        param(&p, "ms")?,
    );
    bench_ran(log, "fserver", cpus)?;
    let (_, c) = one_match(
        log,
        "fserver: {} threads, burst {} us, sleep {} us, {} ops in {} ms",
    )?;
    let c: Vec<u64> = c
        .iter()
        .map(|s| int_of(s, "fserver:"))
        .collect::<Result<_, _>>()?;
    ensure(
        c[0] == threads && c[1] == burst_us && c[2] == sleep_us,
        || format!("the first line says {c:?}: expected [{threads}, {burst_us}, {sleep_us}, ..]"),
    )?;
    let (ops, run_ms) = (c[3], c[4]);
    ensure(ops > 0, || "fserver: no op completed".into())?;
    ensure((ms..=ms + RUN_SLACK_MS).contains(&run_ms), || {
        format!("{run_ms} ms for a {ms} ms run")
    })?;
    let most = threads * ((run_ms + 1) * 1000 * 2 / sleep_us.max(1) + 1);
    ensure(ops <= most, || {
        format!("{ops} ops: sleeps of {sleep_us}/2 us or more allow at most {most}")
    })?;
    let (_, s) = one_match(log, "Throughput {} ops/s  ({} jobs/min)")?;
    let rate = fixed_of(s[0], 3, "Throughput")?;
    // rate = ops / ns with run_ms = ns in whole milliseconds.
    let (hi, lo) = (
        ops * 1_000_000 / run_ms.max(1),
        (ops * 1_000_000 / (run_ms + 1)).saturating_sub(1),
    );
    ensure((lo..=hi).contains(&rate), || {
        format!(
            "{} ops/s for {ops} ops in {run_ms} ms: expected from {lo} to {hi} thousandths",
            s[0]
        )
    })?;
    ensure(int_of(s[1], "jobs/min")? == rate * 60 / 1000, || {
        format!("{} jobs/min is not 60 × {} ops/s", s[1], s[0])
    })?;
    let (_, l) = one_match(log, "Burst latency (usec): p50 {}  p90 {}  p99 {}  max {}")?;
    let l: Vec<u64> = l
        .iter()
        .map(|s| int_of(s, "Burst latency"))
        .collect::<Result<_, _>>()?;
    ensure(l.windows(2).all(|w| w[0] <= w[1]), || {
        format!("burst latency p50, p90, p99, max = {l:?}: expected rising")
    })?;
    ensure(l[0] >= burst_us / 4, || {
        format!(
            "burst latency p50 {} us: a burst is at least half of {burst_us} us of work, \
             expected >= {}",
            l[0],
            burst_us / 4
        )
    })?;
    let v = results(
        log,
        "fserver",
        &[
            ("ops_per_s", "ops/s", "higher"),
            ("burst_p99", "us", "lower"),
        ],
    )?;
    ensure(v[0] == rate && v[1] / 1000 == l[2], || {
        format!(
            "results ops_per_s={} burst_p99={} (thousandths): expected the summary's {rate} \
             and p99 {} us",
            v[0], v[1], l[2]
        )
    })
}

/// Each boot of an `icount-deterministic-*` scenario: the workload `name` started on `cpus` CPUs
/// and finished with `ok=1` and one `@fw schedstat` per CPU, or, for `overflow`, ran into its
/// guard page (which ends the boot). A pair of boots that both did nothing would agree; this is
/// what makes their agreement ([`compare_identical`]) mean something.
pub fn check_deterministic_boot(log: &Log, name: &str, cpus: u32) -> CheckResult {
    if name == "overflow" {
        super::workload_reported(log, name, cpus, false)?;
        return log.one("stack_overflow").map(|_| ());
    }
    super::workload_reported(log, name, cpus, true)
}

/// Deterministic mode's promise (`-icount`, `cargo xtask bench --icount`): two boots with the same
/// settings print the same serial output, line for line, wakeups, IPIs, balancing and figures
/// included. Names the first line that differs, with both versions and their line numbers.
pub fn compare_identical(first: &Log, second: &Log) -> CheckResult {
    let (a, b) = (&first.lines, &second.lines);
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i].text != b[i].text) {
        return Err(format!(
            "the two boots differ at line {}: first `{}`, second `{}` ({} and {} lines in all)",
            i + 1,
            a[i].text,
            b[i].text,
            a.len(),
            b.len()
        ));
    }
    ensure(a.len() == b.len(), || {
        format!("the two boots agree line for line, but the first printed {} lines and the second {}", a.len(), b.len())
    })
}
