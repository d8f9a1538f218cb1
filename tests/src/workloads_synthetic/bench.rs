//! The benchmark workloads' output as a correct kernel prints it, and latency samples.

use super::*;

/// Wakeup latencies (ns, sorted) like those of `workload=latency` in instruction time: all but
/// four from 2.9 to 3.3 us (the wakeup path), then four that waited, the first (the nearest-rank
/// p99 of 300) at `short`, the slowest just under two of it.
pub(crate) fn latency_samples(n: u64, short: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n - 4).map(|i| 2_900 + i * 37 % 400).collect();
    v.extend([short, short * 3 / 2, short * 3 / 2 + 1_000, 2 * short - 1_000]);
    v.sort_unstable();
    v
}

/// What `workload=latency` prints after its taskstats for sorted samples `v` (ns)
/// (kernel/workloads/src/latency.rs): `@fw latency` with nearest-rank percentiles, the
/// `@fw hist` buckets in whole microseconds, the `@fw result` lines.
pub(crate) fn latency_report(cpu: u32, slice: u64, sleeper: u64, v: &[u64]) -> String {
    latency_report_as(cpu, 2, "timer", slice, sleeper, v)
}

/// [`latency_report`] of a run with `hogs` hogs, its sleeper woken as `wake` says (`timer`, or
/// `pipe waker=N`).
pub(crate) fn latency_report_as(cpu: u32, hogs: u32, wake: &str, slice: u64, sleeper: u64, v: &[u64]) -> String {
    let over = v.iter().filter(|&&x| x > 2 * sleeper).count() as u64;
    let max = v[v.len() - 1];
    let mut out = format!(
        "@fw latency cpu={cpu} hogs={hogs} samples={} p50_ns={} p90_ns={} p99_ns={} max_ns={max} \
         slice_ns={slice} sleeper_slice_ns={sleeper} over_2slice={over} wake={wake}\n",
        v.len(),
        pct(v, 500),
        pct(v, 900),
        pct(v, 990)
    );
    out += &hist_lines("latency", "wakeup", &v.iter().map(|x| x / 1000).collect::<Vec<_>>());
    for (metric, milli, unit) in [
        ("wakeup_p50", pct(v, 500), "us"),
        ("wakeup_p99", pct(v, 990), "us"),
        ("wakeup_max", max, "us"),
        ("wakeup_over_2slice", over * 1000, "samples"),
    ] {
        out += &result_line("latency", metric, milli, unit, "lower");
    }
    out
}

/// The `@fw hist` lines of sorted microsecond samples (kernel/workloads/src/samples.rs).
pub(super) fn hist_lines(workload: &str, kind: &str, v: &[u64]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < v.len() {
        let (lo, hi) = hist_bucket(v[i]);
        let j = i + v[i..].iter().take_while(|&&x| x < hi).count();
        out += &format!("@fw hist workload={workload} kind={kind} lo_us={lo} hi_us={hi} count={}\n", j - i);
        i = j;
    }
    out
}

/// What a correct kernel prints for a benchmark workload, from its `@fw workload` line to its
/// results (laid out as kernel/workloads/src/<name>.rs prints them).
pub(super) fn bench(name: &str, kv: &[(String, String)]) -> String {
    let mut out = String::new();
    match name {
        "hackbench" => {
            let (g, l, d, f) = (
                num(kv, "groups"),
                num(kv, "loops"),
                num(kv, "datasize"),
                num(kv, "fds"),
            );
            let msgs = g * f * f * l;
            out += &format!(
                "Running in threaded mode with {g} groups using {} file descriptors each \
                 (== {} tasks)\nEach sender will pass {l} messages of {d} bytes\nTime: 0.047\n",
                2 * f,
                2 * g * f
            );
            out += &format!(
                "@fw hackbench groups={g} fds={f} loops={l} datasize={d} messages_sent={msgs} \
                 messages_received={msgs} ns=47535941\n"
            );
            out += "@fw result workload=hackbench metric=time value=0.047 unit=s better=lower\n";
        }
        "schbench" => {
            let (m, t, runtime_ms, work, sleep) = (
                num(kv, "threads"),
                num(kv, "workers"),
                num(kv, "runtime_ms"),
                num(kv, "work_us"),
                num(kv, "sleep_us"),
            );
            let ns = runtime_ms * 1_000_000 + 1_234_567;
            let secs = (ns / 1_000_000_000).max(1);
            let n = 1400;
            let mut req: Vec<u64> = (0..n).map(|i| sleep + work + i * 7919 % 4000).collect();
            let mut wake: Vec<u64> = (0..n - m * t + 1).map(|i| 1 + i * 104_729 % 3000).collect();
            req.sort_unstable();
            wake.sort_unstable();
            for (title, v) in [("Wakeup Latencies", &wake), ("Request Latencies", &req)] {
                out += &format!(
                    "{title} percentiles (usec) runtime {secs} (s) ({} total samples)\n",
                    v.len()
                );
                for (p, star) in [(500, ' '), (900, ' '), (990, '*'), (999, ' ')] {
                    let x = pct(v, p);
                    let c = v.iter().filter(|&&y| y <= x).count();
                    out += &format!(
                        "\t{star} {:>2}.{}th: {x:<10} ({c} samples)\n",
                        p / 10,
                        p % 10
                    );
                }
                out += &format!("\t  min={}, max={}\n", v[0], v[v.len() - 1]);
            }
            let rps = (n as u128 * 1_000_000_000_000 / ns as u128) as u64;
            out += &format!("average rps: {}.{:02}\n", rps / 1000, rps % 1000 / 10);
            for (kind, v) in [("wakeup", &wake), ("request", &req)] {
                out += &hist_lines("schbench", kind, v);
            }
            for (metric, milli, unit, better) in [
                ("wakeup_p99", pct(&wake, 990) * 1000, "us", "lower"),
                ("request_p99", pct(&req, 990) * 1000, "us", "lower"),
                ("rps", rps, "req/s", "higher"),
            ] {
                out += &result_line("schbench", metric, milli, unit, better);
            }
            out += &format!(
                "schbench: {m} message threads, {t} workers each, work {work} us (124 loops/us), \
                 sleep {sleep} us\n"
            );
        }
        "ebizzy" => {
            let (threads, chunks, records, ms) = (
                num(kv, "threads"),
                num(kv, "chunks"),
                num(kv, "records"),
                num(kv, "ms"),
            );
            let ns = ms * 1_000_000 + 123_456;
            let n = 210_649u64;
            let rate = (n as u128 * 1_000_000_000_000 / ns as u128) as u64;
            out += &format!(
                "{} records/s\nreal {:>5}.{:02} s\n",
                rate / 1000,
                ns / 1_000_000_000,
                ns / 10_000_000 % 100
            );
            out += &format!(
                "ebizzy: {threads} threads, {chunks} chunks of {records} records, {n} searches\n"
            );
            out += &result_line("ebizzy", "records_per_s", rate, "records/s", "higher");
        }
        "tbench" => {
            let (clients, req, reply, ms) = (
                num(kv, "clients"),
                num(kv, "req"),
                num(kv, "reply"),
                num(kv, "ms"),
            );
            let ns = ms * 1_000_000 + 530_135;
            let trips = 29_155u64;
            let bytes = trips * (req + reply);
            let mbs = (bytes as u128 * 1_000_000 / ns as u128) as u64;
            out += &format!(
                "Throughput {}.{:03} MB/sec  {clients} clients  {} procs  max_latency=1.259 ms\n",
                mbs / 1000,
                mbs % 1000,
                2 * clients
            );
            out += &format!(
                "@fw tbench clients={clients} req={req} reply={reply} round_trips={trips} \
                 served={trips} bytes={bytes} ns={ns}\n"
            );
            out += &result_line("tbench", "throughput", mbs, "MB/s", "higher");
            out += "@fw result workload=tbench metric=max_latency value=1.259 unit=ms \
                    better=lower\n";
        }
        "fserver" => {
            let (threads, burst, sleep, ms) = (
                num(kv, "threads"),
                num(kv, "burst_us"),
                num(kv, "sleep_us"),
                num(kv, "ms"),
            );
            let ns = ms * 1_000_000 + 456_789;
            // As many as the sleeps allow, at most 5467.
            let ops = 5467u64.min(threads * (ms * 1000 / (sleep / 2) + 1));
            let rate = (ops as u128 * 1_000_000_000_000 / ns as u128) as u64;
            out += &format!(
                "fserver: {threads} threads, burst {burst} us, sleep {sleep} us, {ops} ops in {} \
                 ms\n",
                ns / 1_000_000
            );
            out += &format!(
                "Throughput {}.{:03} ops/s  ({} jobs/min)\n",
                rate / 1000,
                rate % 1000,
                rate * 60 / 1000
            );
            // The percentiles grow with the burst (50 us: 64, 123, 233, 355).
            let k = (burst / 50).max(1);
            out += &format!(
                "Burst latency (usec): p50 {}  p90 {}  p99 {}  max {}\n",
                64 * k,
                123 * k,
                233 * k,
                355 * k
            );
            out += &result_line("fserver", "ops_per_s", rate, "ops/s", "higher");
            out += &format!(
                "@fw result workload=fserver metric=burst_p99 value={}.642 unit=us better=lower\n",
                233 * k
            );
        }
        other => panic!("{other} is not a benchmark workload"),
    }
    out
}
