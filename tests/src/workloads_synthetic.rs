use super::*;

#[path = "workloads_synthetic/bench.rs"]
mod bench;
#[path = "workloads_synthetic/trace.rs"]
mod trace;
#[path = "workloads_synthetic/placement.rs"]
mod placement;
pub(crate) use bench::{latency_report, latency_report_as, latency_samples};
use bench::bench;
use placement::wakeplace;
use trace::{trace_newidle, trace_newidle_push, trace_pipe_cross};

/// The `workload=` parameters of an `-append` string.
fn params(append: &str) -> (String, Vec<(String, String)>) {
    let w = append
        .split_whitespace()
        .find_map(|w| w.strip_prefix("workload="))
        .expect("a workload scenario");
    let mut it = w.split(',');
    let name = it.next().unwrap().to_string();
    let kv = it
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    (name, kv)
}

fn get<'a>(kv: &'a [(String, String)], k: &str, default: &'a str) -> &'a str {
    kv.iter()
        .find(|(x, _)| x == k)
        .map_or(default, |(_, v)| v.as_str())
}

fn taskstat(id: u32, name: &str, nice: i64, wakeups: u64, switches: u64, cpus: &str) -> String {
    format!(
        "@fw taskstat id={id} name={name} nice={nice} sum_exec_runtime=1000 wait_sum=10 \
         wait_max=5 nr_switches={switches} nr_migrations=0 nr_wakeups={wakeups} \
         nr_wakeups_local={wakeups} nr_wakeups_remote=0 nr_wakeups_sync=0 cpus={cpus}\n"
    )
}

/// The scheduler and workload part of a correct log, from the `sched` stage to the exit line.
pub(crate) fn workload(append: &str, cpus: u32) -> String {
    let (name, kv) = params(append);
    let mut feats = vec![
        "PLACE_LAG",
        "RUN_TO_PARITY",
        "NO_NEXT_BUDDY",
        "DELAY_DEQUEUE",
        "TTWU_QUEUE",
        "SIS_UTIL",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    let mut out = String::from("@fw stage name=sched\n");
    if let Some(f) = append
        .split_whitespace()
        .find_map(|w| w.strip_prefix("sched_features="))
    {
        for t in f.split(',') {
            let base = t.trim_start_matches("NO_");
            if let Some(name) = crate::workloads::LINUX_ONLY_FEATURES.iter().find(|n| **n == base) {
                out += &format!(
                    "cmdline: sched_features: {name} is a Linux feature fairway does not implement \
                     (why); ignoring {t}, the other features apply\n"
                );
                continue;
            }
            match feats
                .iter_mut()
                .find(|x| x.trim_start_matches("NO_") == base)
            {
                Some(x) => *x = t.to_string(),
                None => {
                    out += &format!(
                        "cmdline: sched_features: unknown feature \"{t}\"; keeping the \
                         features as they were\n"
                    )
                }
            }
        }
    }
    out += &format!("@fw sched_features msg={}\n", feats.join(" "));
    let slice = base_slice_ns(cpus);
    out += &format!(
        "scheduler: EEVDF, base slice {} us, tick 1000 Hz, invariant checks on\n",
        slice / 1000
    );
    out += "@fw stage name=workload\n";
    out += &format!("@fw workload name={name} cpus={cpus}\n");
    match name.as_str() {
        "shares" => {
            let cpu: u32 = get(&kv, "cpu", "1").parse().unwrap();
            // Under capacity pressure the hogs run about half of the run: 110 ns per unit of
            // weight per ms, and their weights sum to 4,480, so 49.3 % (246 of 500 ms).
            let ms: u64 = get(&kv, "ms", "2000").parse().unwrap();
            let per_weight = if option(append, "cpu_capacity").is_empty() { 100_000 } else { ms * 110 };
            for (id, (nice, task)) in (2..).zip(SHARES_NICE) {
                let w = nice_weight(nice).unwrap();
                out += &taskstat(id, task, nice, 0, 100, &cpu.to_string());
                out += &format!(
                    "@fw share task={task} cpu={cpu} nice={nice} weight={w} \
                     runtime_ns={} ran_on={cpu}\n",
                    w * per_weight
                );
            }
        }
        "torture" => {
            // 4 threads per CPU; every book balanced, from made-up counts.
            let ms: u64 = get(&kv, "ms", "5000").parse().unwrap();
            let seed: u64 = get(&kv, "seed", "1").parse().unwrap();
            let threads: u64 = get(&kv, "threads", &(4 * cpus).to_string()).parse().unwrap();
            let spawned = threads + 500;
            let elapsed = ms * 1_000_000 + 3_000_000;
            let runtime = cpus as u64 * elapsed / 2;
            // `cpu_capacity=1:CAP`: the source takes (1024 - CAP)/1024 of CPU 1's time.
            let pressure = match option(append, "cpu_capacity").strip_prefix("1:") {
                Some(cap) => elapsed * (1024 - cap.parse::<u64>().unwrap()) / 1024,
                None => 0,
            };
            let idle = cpus as u64 * elapsed - runtime - 1000 - 50_000 - pressure;
            out += &format!(
                "torture: {threads} threads on {cpus} CPUs for {ms} ms, seed {seed}\n\
                 @fw torture seed={seed} ms={ms} cpus={cpus} threads={threads} ok=1 alive=0 \
                 mutex_count=700 sem_units=4 sem_left=4 bell_left=30 spawned={spawned} \
                 exited={spawned} joined={spawned} sleep_begun=2000 sleep_ended=2000 sleep_early=0 \
                 mutex_begun=700 mutex_ended=700 sem_begun=600 sem_ended=600 sem_ups=600 \
                 bell_begun=400 bell_ended=400 bell_posts=430 bell_taken=400 bell_by_token=380 \
                 bell_timeouts=15 bell_stops=5 bell_slept=200 lost_wakeups=0 join_begun=250 join_ended=250 read_begun=900 \
                 read_ended=900 write_begun=800 write_ended=800 pipe_sent=40000 \
                 pipe_received=40000 pipe_bad=0 affinity_misses=0 attr_misses=0 spawn_failed=0 \
                 violations=0 runtime_ns={runtime} idle_ns={idle} newidle_ns=50000 pressure_ns={pressure} \
                 elapsed_ns={elapsed} run_ns={} no_runnable_ns={idle}\n\
                 @fw torture_ops spin=900 sleep_short=900 sleep_long=200 mutex=700 sem=600 \
                 post=430 wait=400 pipe=1700 spawn=520 renice=300 slice=300 affinity=300 yield=600\n",
                ms * 1_000_000 + 1_000_000
            );
        }
        "storm" => {
            let threads: u64 = get(&kv, "threads", "64").parse().unwrap();
            // held IPIs slow the hand-offs
            let rounds = if fault_modes(append) & IPI_DELAY != 0 { 600 } else { 1000 };
            for i in 0..threads {
                let side = if i % 2 == 0 { "storma" } else { "stormb" };
                let cpu = (i % cpus as u64).to_string();
                out += &taskstat(i as u32 + 2, side, 0, 10 + i, 20 + i, &cpu);
            }
            let bytes = 16 * rounds + 8 * (threads / 2);
            out += &format!(
                "@fw storm threads={threads} spawned={threads} finished={threads} \
                 rounds={rounds} sleeps={} sem_downs={} sem_ups={} pipe_sent={bytes} \
                 pipe_received={bytes} mutex_count={}\n",
                2 * rounds,
                2 * rounds,
                2 * rounds,
                2 * rounds
            );
        }
        "latency" if get(&kv, "wake", "timer") == "pipe" => {
            // A sleeper alone on its CPU, woken by a waker's pipe writes: a few us each.
            let cpu: u32 = get(&kv, "cpu", "1").parse().unwrap();
            let waker = get(&kv, "waker", "0");
            let samples: u64 = get(&kv, "samples", "300").parse().unwrap();
            out += &taskstat(2, "sleeper", 0, samples, samples + 1, &cpu.to_string());
            out += &taskstat(3, "waker", 0, samples, samples + 1, waker);
            let v: Vec<u64> = {
                let mut v: Vec<u64> = (0..samples).map(|i| 1_900 + i * 37 % 1_500).collect();
                v.sort_unstable();
                v
            };
            out += &latency_report_as(cpu, 0, &format!("pipe waker={waker}"), slice, slice, &v);
        }
        "latency" => {
            let cpu: u32 = get(&kv, "cpu", "1").parse().unwrap();
            let samples: u64 = get(&kv, "samples", "300").parse().unwrap();
            out += &taskstat(4, "sleeper", 0, samples, samples + 1, &cpu.to_string());
            out += &taskstat(2, "hog", 0, 0, 300, &cpu.to_string());
            out += &taskstat(3, "hog", 0, 0, 300, &cpu.to_string());
            let custom: u64 = get(&kv, "slice_us", "0").parse().unwrap();
            let sleeper = if custom == 0 { slice } else { (custom * 1000).clamp(100_000, 100_000_000) };
            let v = latency_samples(samples, slice.min(sleeper));
            out += &latency_report(cpu, slice, sleeper, &v);
        }
        "affinity" => {
            let last = cpus - 1;
            for c in 0..cpus {
                out += &format!(
                    "@fw affinity task=pinned id={} allowed={c} ran_on={c}\n",
                    c + 2
                );
            }
            out += &format!(
                "@fw affinity task=mover id={} allowed={last} ran_on={}\n",
                cpus + 2,
                format_cpulist(&[0, last])
            );
            out += &format!("@fw affinity_move from=0 to={last} now_on={last}\n");
        }
        "pipe" => {
            let rounds: u64 = get(&kv, "rounds", "100000").parse().unwrap();
            let mode = get(&kv, "mode", "same");
            let b = if mode == "cross" { 1 } else { 0 };
            let total = rounds * 17_000;
            out += &format!(
                "@fw pipe mode={mode} rounds={rounds} a_cpu=0 b_cpu={b} total_ns={total} \
                 ns_per_round_trip={}\n",
                total / rounds
            );
            for (id, name, cpu, w) in [
                (3, "pipe-a", 0, rounds - rounds / 200),
                (2, "pipe-b", b, rounds - rounds * 7 / 1000),
            ] {
                let (l, r) = if mode == "cross" { (0, w) } else { (w, 0) };
                out += &format!(
                    "@fw taskstat id={id} name={name} nice=0 sum_exec_runtime=1000 \
                     wait_sum=10 wait_max=5 nr_switches={} nr_migrations=0 nr_wakeups={w} \
                     nr_wakeups_local={l} nr_wakeups_remote={r} nr_wakeups_sync={w} \
                     cpus={cpu}\n",
                    rounds + 2
                );
            }
            if option(append, "trace") == "1" && mode == "cross" {
                out += &trace_pipe_cross(rounds);
            }
        }
        "demo" => {
            let ms = get(&kv, "ms", "300");
            out += &format!("demo: three hogs at nice -5, 0 and 5 on each of {cpus} CPUs for {ms} ms\n");
            for c in 0..cpus {
                out += &format!(
                    "CPU {c}:  hog-5  60.9% (expected 60.9%)  hog0  25.7% (expected 25.7%)  \
                     hog+5  13.4% (expected 13.4%)\n"
                );
            }
            out += "@fw pipe mode=same rounds=2000 a_cpu=0 b_cpu=0 total_ns=34000000 \
                    ns_per_round_trip=17000\n";
        }
        "yield" => {
            let rounds: u64 = get(&kv, "rounds", "100000").parse().unwrap();
            out += &format!(
                "@fw yield rounds={rounds} cpu=0 total_ns={} switches={} ns_per_switch=1000\n",
                rounds * 2000,
                rounds * 2
            );
        }
        "regs" => {
            let rounds: u64 = get(&kv, "rounds", "2000").parse().unwrap();
            let preemptions: u64 = get(&kv, "preemptions", "20").parse().unwrap();
            out += &format!("@fw regs phase=pair cpu=0 checks={} mismatches=0\n", 2 * rounds);
            out += &format!(
                "@fw regs phase=spinner cpu=0 checks={} mismatches=0 hog_preemptions={}\n",
                2 * rounds,
                preemptions * 70
            );
            if cpus > 1 {
                out += &format!("@fw regs phase=cross cpu=1 checks={rounds} mismatches=0 ipis={rounds}\n");
            }
        }
        "overflow" => {
            out += "STACK OVERFLOW in thread deep-recursion (id 2): it ran into its guard \
                    page at 0x8230ec8\n";
            out += "@fw stack_overflow cpu=1 task=deep-recursion id=2 addr=0x8230ec8\n";
            out += "@fw fault cpu=1 vector=14 name=#PF error=0x2 rip=0x112e77 cr2=0x8230ec8\n";
            out += "@fw bt cpu=1 frame=0 addr=0x112e77\n";
            return out + "@fw exit status=39 code=exception\n";
        }
        "spread" => {
            let hogs: u32 = get(&kv, "hogs", &cpus.to_string()).parse().unwrap();
            let start: u32 = get(&kv, "start_cpu", "0").parse().unwrap();
            let ms: u64 = get(&kv, "ms", "1000").parse().unwrap();
            // Where a correct balancer puts them: full-capacity CPUs, evenly strided (one
            // per core with 2 threads per core), round-robin when there are more hogs.
            // ... and allowed by `mask` (0: all).
            let mask: u64 = get(&kv, "mask", "0").parse().unwrap();
            let big: Vec<u32> = (0..cpus)
                .filter(|c| !option(append, "cpu_capacity").contains(&format!("{c}:512")))
                .filter(|c| mask == 0 || mask & (1 << c) != 0)
                .collect();
            let step = (big.len() as u32 / hogs).max(1) as usize;
            // Pinned hogs first (balance-group-imbalanced): each stays on its CPU, and the one
            // free hog leaves the pinned hog of its start CPU for the other CPU of its mask.
            let pinned: Vec<u32> = (0..cpus).filter(|c| get(&kv, "pinned_mask", "0").parse::<u64>().unwrap() & (1 << c) != 0).collect();
            // One hog on a full-capacity CPU is already balanced: it stays where it started.
            let stays = hogs == 1 && big.contains(&start) && !pinned.contains(&start);
            let ends: Vec<u32> = if stays {
                vec![start]
            } else if !pinned.is_empty() {
                vec![*big.iter().find(|&&c| c != start).unwrap()]
            } else {
                (0..hogs as usize).map(|i| big[(i * step) % big.len()]).collect()
            };
            let count = |on: &[u32]| {
                (0..cpus)
                    .map(|c| on.iter().filter(|&&x| x == c).count().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let at_start = vec![start; hogs as usize];
            for t in (10..=ms).step_by(10) {
                let on = if t < SPREAD_WITHIN_MS && pinned.is_empty() {
                    &at_start
                } else {
                    &ends
                };
                out += &format!("@fw spread t_ms={t} per_cpu={}\n", count(on));
            }
            // Each hog's share of the run: all of it, or cpus/hogs of it.
            let runtime = ms * 1_000_000 * (big.len() as u64).min(hogs as u64) / hogs as u64;
            // More hogs than full CPUs: the busy CPUs' pulls rotate them over all of them.
            let rotate = hogs as usize > big.len();
            for (i, c) in ends.iter().enumerate() {
                let ran = if rotate {
                    big.clone()
                } else if *c == start {
                    vec![start]
                } else if !pinned.is_empty() {
                    // Pulled before it first ran (the pinned hog held CPU 3).
                    vec![*c]
                } else {
                    vec![start.min(*c), start.max(*c)]
                };
                out += &format!(
                    "@fw hog id={} cpu={c} runtime_ns={runtime} migrations={} ran_on={}\n",
                    i + 2,
                    if stays { 0 } else if rotate { 10 } else { 1 },
                    format_cpulist(&ran)
                );
            }
            for (i, c) in pinned.iter().enumerate() {
                out += &format!("@fw pinned_hog id={} cpu={c} ran_on={c}\n", hogs as usize + 2 + i);
            }
            if option(append, "trace") == "1" {
                out += &trace_newidle_push(!option(append, "cpu_capacity").is_empty());
            }
        }
        "oltp" => {
            let procs = get(&kv, "procs", &(4 * cpus).to_string()).to_string();
            let ms: u64 = get(&kv, "ms", "1000").parse().unwrap();
            out += &format!(
                "@fw oltp procs={procs} irq_cpu=0 steps={} completed={} passes={} migrations={} ns={}\n",
                ms * 20,
                ms * 20,
                ms * 15,
                ms * 4,
                ms * 1_000_000
            );
        }
        "idleperiods" => {
            let threads = get(&kv, "threads", &cpus.to_string()).to_string();
            let ms: u64 = get(&kv, "ms", "1000").parse().unwrap();
            out += &format!(
                "@fw idleperiods threads={threads} items={} sleeps={} long_sleeps={} ns={} wakeup_delay_mean_ns=1500\n",
                ms * 3,
                ms * 3,
                ms * 3 / 10,
                ms * 1_000_000
            );
        }
        "prodcons" => {
            let pairs = get(&kv, "pairs", &cpus.to_string()).to_string();
            let ms = get(&kv, "ms", "2000");
            out += &format!("@fw prodcons pairs={pairs} ms={ms} items=5000\n");
        }
        "pipes" => {
            let pairs: u64 = get(&kv, "pairs", "4").parse().unwrap();
            let rounds: u64 = get(&kv, "rounds", "2000").parse().unwrap();
            let same = if option(append, "wake_affine") == "off" {
                0
            } else {
                rounds * 7 / 8
            };
            for i in 0..pairs {
                out += &format!(
                    "@fw pipes pair={i} rounds={rounds} same_cpu={same} same_llc={rounds}\n"
                );
            }
            out += &format!(
                "@fw pipes_total pairs={pairs} rounds={} same_cpu={} same_llc={}\n",
                pairs * rounds,
                pairs * same,
                pairs * rounds
            );
        }
        "wakeplace" => {
            out += &wakeplace(append, &kv, cpus);
        }
        "renice" => {
            // As measured: 8 us from each renice to the switch (the reschedule it asks for).
            let cpu = get(&kv, "cpu", "1");
            let rounds: u64 = get(&kv, "rounds", "30").parse().unwrap();
            out += &taskstat(3, "renice-a", 0, 0, rounds / 2 + 1, cpu);
            out += &taskstat(4, "renice-b", 0, 0, rounds / 2 + 1, cpu);
            out += &taskstat(2, "renice-19", 18, 0, 2, cpu);
            out += &format!(
                "@fw renice cpu={cpu} rounds={rounds} samples={rounds} to_peer={} kept=15 no_switch=0 \
                 slice_ns=300000 after_ns=500000 p50_ns=7627 max_ns=7754\n",
                rounds - 1
            );
            out += &result_line("renice", "switch_p50", 7627, "us", "lower");
            out += &result_line("renice", "switch_max", 7754, "us", "lower");
        }
        "utilest" => {
            // Woken on CPU 1 with util_avg 12 (906 decayed over 200 ms) and util_est 906: a
            // misfit at the first tick, on CPU 0 4 ms later (util_avg needs ~46 ms).
            out += "@fw utilest big=0 small=1 woke_cpu=1 util_avg=12 util_est=906 moved_after_us=4000 ran_on=0-1\n";
        }
        "hackbench" | "schbench" | "ebizzy" | "tbench" | "fserver" => {
            let b = bench(&name, &kv);
            // Half the searches on a CPU of half the capacity (only the searches are read).
            if option(append, "cpu_capacity") == "0:512" {
                out += &b.replace(", 210649 searches", ", 105324 searches");
            } else {
                out += &b;
            }
            if name == "fserver" && option(append, "trace") == "1" {
                out += &trace_newidle(option(append, "newidle") != "off");
            }
        }
        other => panic!("no synthetic output for workload {other}"),
    }
    // The run's timer interrupts: a tick per ms on the shares CPU, and with nohz=off on all.
    let ms: u64 = get(&kv, "ms", "1000").parse().unwrap();
    let busy = get(&kv, "cpu", "1").to_string();
    for c in 0..cpus {
        let irqs = if option(append, "nohz") == "off" || c.to_string() == busy {
            ms
        } else if c == 0 {
            2
        } else {
            0
        };
        // A cross-CPU pipe's CPUs take an IPI per wakeup, or none while polling in idle.
        let rounds: u64 = get(&kv, "rounds", "0").parse().unwrap();
        let pipe_cpu = name == "pipe" && get(&kv, "mode", "same") == "cross" && c <= 1;
        let (ipis, silent) = match (pipe_cpu, option(append, "idle") == "poll") {
            (false, _) => (0, 0),
            (true, false) => (rounds - 500, 0),
            (true, true) => (3, rounds - 500),
        };
        // The benchmarks wake threads across CPUs (and take IPIs for it); ebizzy's threads
        // keep every CPU busy for the whole run.
        let (ttwu, ipis, busy_ns) = match name.as_str() {
            "hackbench" | "schbench" | "ebizzy" | "tbench" | "fserver" => {
                // ebizzy keeps a CPU per worker busy; fewer workers than CPUs leave CPU 0
                // (the forker's) to fork balancing's choice: idle.
                let workers: u64 = get(&kv, "threads", &cpus.to_string()).parse().unwrap();
                let busy = if name != "ebizzy" {
                    5
                } else if c == 0 && workers < cpus as u64 {
                    5_000_000
                } else {
                    ms * 1_000_000
                };
                // hackbench: only CPU 0 wakes across, the least its check takes.
                (if name == "hackbench" && c != 0 { 1 } else { 3 }, ipis + 2, busy)
            }
            _ => (1, ipis, 5),
        };
        // The capacity pressure source takes half of CPU 0's ticks at cpu_capacity=0:512.
        let pressure = if c == 0 && option(append, "cpu_capacity") == "0:512" { ms * 500_000 } else { 0 };
        // Idle while others wait: twice as long without newidle balancing; one MC level
        // (QEMU's default topology) above one CPU.
        let wait: u64 = if option(append, "newidle") == "off" { 4_000_000 } else { 2_000_000 };
        let idle_wait = if cpus > 1 {
            format!(" idle_ns=10000000 idle_wait_ns={wait} idle_wait_mc_ns={wait}")
        } else {
            " idle_ns=10000000 idle_wait_ns=0".to_string()
        };
        out += &format!(
            "@fw schedstat_delta cpu={c} yld_count=0 sched_count=10 sched_goidle=1 \
             ttwu_count={ttwu} ttwu_local=1 rq_cpu_time={busy_ns} run_delay=5 pcount=3 \
             ticks={irqs} timer_irqs={irqs} resched_ipis={ipis} \
             wake_idle_without_ipi={silent} pressure_ns={pressure}{idle_wait}\n"
        );
    }
    // As kernel/workloads/src/lib.rs prints them: the deltas, then the end of the run.
    out += &format!("@fw workload_done name={name} ok=1\n");
    out += &faults_line(append);
    for c in 0..cpus {
        // The spread sleeper's CPU goes idle at each of its sleeps.
        let goidle = match get(&kv, "sleeper_busy_us", "0").parse::<u64>().unwrap_or(0) {
            busy if busy > 0 && name == "spread" && c.to_string() == get(&kv, "sleeper_cpu", "0") => {
                let sleep: u64 = get(&kv, "sleeper_sleep_us", "100").parse().unwrap();
                ms * 1000 / (busy + sleep)
            }
            _ => 1,
        };
        out += &format!(
            "@fw schedstat cpu={c} yld_count=0 sched_count=10 sched_goidle={goidle} ttwu_count=1000 \
             ttwu_local=1 rq_cpu_time={} run_delay=5 pcount=3 ticks=2000 timer_irqs=1000000 \
             resched_ipis=1000000 wake_idle_without_ipi=1000000 pressure_ns=100000000000{}\n",
            100_000_000_000u64 + c as u64,
            if cpus > 1 {
                " idle_ns=100000000000 idle_wait_ns=50000000000 idle_wait_mc_ns=50000000000"
            } else {
                " idle_ns=100000000000 idle_wait_ns=0"
            }
        );
    }
    // Delayed dequeues (after the schedstat lines, as schedstat.rs prints them): the one-CPU
    // pipe's sleeps follow its wakeups, most of them delayed unless NO_DELAY_DEQUEUE.
    let delay_on = !append.contains("NO_DELAY_DEQUEUE");
    for c in 0..cpus {
        let rounds: u64 = get(&kv, "rounds", "100000").parse().unwrap();
        let line = if name == "pipe" && c == 0 && get(&kv, "mode", "same") == "same" && delay_on {
            let sleeps = (rounds - rounds / 200) + (rounds - rounds * 7 / 1000) + 3;
            let delayed = sleeps - 100;
            format!(
                "sleeps={sleeps} delayed={delayed} requeued={} picked=3 dequeued=4 pending=1 \
                 delayed_ns=500000 delayed_max_ns=6000 leave_lag=-300 zeroed=2",
                delayed - 5
            )
        } else {
            "sleeps=200000 delayed=0 requeued=0 picked=0 dequeued=0 pending=0 delayed_ns=0 \
             delayed_max_ns=0 leave_lag=0 zeroed=0"
                .to_string()
        };
        out += &format!("@fw delayed cpu={c} {line}\n");
    }
    // The balancer's statistics: affine wakeups unless wake_affine=off; newidle attempts,
    // fewer with avg_idle_clamp=delta than snap.
    let affine = if option(append, "wake_affine") == "off" {
        0
    } else {
        100
    };
    // Newidle pulls too, more with snap than delta, none with newidle=off; the hogs of
    // `spread` never sleep, so no CPU goes newly idle there.
    let (attempts, pulled) = match (option(append, "newidle"), option(append, "avg_idle_clamp")) {
        _ if name == "spread" => (0, 0),
        ("off", _) => (0, 0),
        (_, "snap") => (1000, 4),
        (_, "delta") => (600, 1),
        _ => (800, 2),
    };
    // With cpu_capacity= a misfit hog on CPU 1 is pushed: CPU 0 asks, CPU 1 pushes.
    let capacity = !option(append, "cpu_capacity").is_empty();
    let nohz = option(append, "nohz") != "off";
    // Fork balancing places the workers of a benchmark without spread=1 (one fork before it).
    let forked: u64 = if name == "ebizzy" && get(&kv, "spread", "0") == "0" {
        get(&kv, "threads", &cpus.to_string()).parse().unwrap()
    } else {
        0
    };
    // Periodic pulls by idle type: `spread` with more hogs than full-capacity CPUs rotates them
    // by busy pulls (5 per CPU, fewer than the hogs' migrations); one hog already on a full
    // CPU is balanced (nothing gained); otherwise each idle CPU pulled its hog once.
    let (gained_idle, gained_busy) = if name == "spread" {
        let hogs: usize = get(&kv, "hogs", &cpus.to_string()).parse().unwrap();
        let start: u32 = get(&kv, "start_cpu", "0").parse().unwrap();
        let big = (0..cpus)
            .filter(|c| !option(append, "cpu_capacity").contains(&format!("{c}:512")))
            .count();
        if hogs > big {
            (0, 5)
        } else if hogs == 1 && !option(append, "cpu_capacity").contains(&format!("{start}:512")) {
            (0, 0)
        } else {
            (1, 0)
        }
    } else {
        (1, 0)
    };
    // Hogs on an affinity mask (balance-dst-pinned-new-dst-cpu): mask 11, CPU 1 pulls its hog
    // and CPU 2 pulls one for CPU 3 (new_dst_cpu).
    let mask: u64 = if name == "spread" { get(&kv, "mask", "0").parse().unwrap() } else { 0 };
    // Pinned hogs on CPUs 0 and 3 and a free one on mask 10 (balance-group-imbalanced): CPU 2's
    // MC level fails on CPU 3's pinned queue, CPU 1's PKG level gains the free hog.
    let group_imb = name == "spread" && get(&kv, "pinned_mask", "0") != "0";
    for c in 0..cpus {
        let (gained_idle, failed_idle) = match (mask, c) {
            _ if group_imb => (0, (c == 2) as u64),
            (0, _) => (gained_idle, 0),
            (11, 1) | (11, 2) => (1, 0),
            _ => (0, 0),
        };
        let (alb_count, alb_pushed) = match (capacity, c) {
            (true, 0) => (1, 0),
            (true, 1) => (0, 1),
            _ => (0, 0),
        };
        out += &format!(
            "@fw domstat cpu={c} level=MC lb_count_idle=3 lb_failed_idle={failed_idle} lb_gained_idle={gained_idle} \
             lb_failed_busy=0 lb_failed_newidle=0 \
             lb_count_busy=16 lb_gained_busy={gained_busy} lb_count_newidle={attempts} lb_gained_newidle={pulled} alb_count={alb_count} \
             alb_pushed={alb_pushed} sbf_count={} sbf_pushed={} ttwu_wake_remote=999 ttwu_move_affine={affine} \
             ttwu_move_balance=0\n",
            if c == 0 { 1 + forked } else { 0 },
            if c == 0 { forked } else { 0 }
        );
        if group_imb {
            out += &format!(
                "@fw domstat cpu={c} level=PKG lb_count_idle=3 lb_failed_idle=0 lb_gained_idle={} lb_failed_busy=0 \
                 lb_failed_newidle=0 lb_count_busy=16 lb_gained_busy=0 lb_count_newidle=0 lb_gained_newidle=0 alb_count=0 \
                 alb_pushed=0 sbf_count=0 sbf_pushed=0 ttwu_wake_remote=0 ttwu_move_affine=0 ttwu_move_balance=0\n",
                (c == 1) as u64
            );
        }
        out += &format!(
            "@fw newidle cpu={c} attempts={attempts} successes={pulled} pulled={pulled} time_ns=9 \
             gate_skips=2 cost_stops=0 random_skips=0 avg_idle=1000 \
             max_idle_balance_cost=500000 entries={} lock_drops={attempts}\n",
            2 + attempts
        );
        // The gate saw avg_idle at or above the 500 us migration cost exactly as often as it
        // let an entry through (the 2013 gate), and below it for the two refusals.
        out += &format!(
            "@fw avg_idle_hist cpu={c} lt_125us=1 lt_250us=0 lt_500us=1 lt_1ms={attempts} lt_2ms=0 ge_2ms=0\n"
        );
        // Tickless idle CPUs: CPU 0 (busy) kicks CPU 1, which balances for the others and
        // pulls one task to one of them.
        let (kicks, runs, pulls) = match (nohz, c) {
            (true, 0) => (300, 0, 0),
            (true, 1) => (0, 300, 1),
            _ => (0, 0, 0),
        };
        out += &format!(
            "@fw nohz cpu={c} kicks_sent={kicks} ilb_runs={runs} balanced_for_others={runs} \
             pulled_for_others={pulls}\n"
        );
    }
    out + "@fw stage name=shutdown\n@fw exit status=33 code=success\n"
}

/// The value of a `key=value` option of an `-append` string ("" when absent).
fn option<'a>(append: &'a str, key: &str) -> &'a str {
    append
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or("")
}

/// One `@fw result` line as the kernel prints it, from a value in thousandths (three decimals).
fn result_line(workload: &str, metric: &str, milli: u64, unit: &str, better: &str) -> String {
    format!(
        "@fw result workload={workload} metric={metric} value={}.{:03} unit={unit} better={better}\n",
        milli / 1000,
        milli % 1000
    )
}

fn num(kv: &[(String, String)], k: &str) -> u64 {
    get(kv, k, "")
        .parse()
        .unwrap_or_else(|_| panic!("a bench scenario must set {k}="))
}

/// The nearest-rank percentile `p`/1000 of sorted `v` (kernel/workloads/src/samples.rs).
fn pct(v: &[u64], p: u64) -> u64 {
    let rank = (v.len() as u64 * p).div_ceil(1000).max(1) as usize;
    v[rank.min(v.len()) - 1]
}

/// The command line's `fault=` modes (0 without it, or with a name that is no mode: the kernel
/// then injects nothing).
fn fault_modes(append: &str) -> u8 {
    let value = option(append, "fault");
    if value.is_empty() {
        return 0;
    }
    value
        .split(',')
        .try_fold(0, |acc, n| FAULT_MODES.iter().find(|(m, _)| *m == n).map(|(_, b)| acc | b))
        .unwrap_or(0)
}

/// The `@fw faults` line of a correct run with the command line's modes (none without them).
fn faults_line(append: &str) -> String {
    let modes = fault_modes(append);
    if modes == 0 {
        return String::new();
    }
    let on = |m: u8| modes & m != 0;
    let held = if on(IPI_DELAY | IPI_REORDER) { 100 } else { 0 };
    let seed = if option(append, "fault_seed").is_empty() { "1" } else { option(append, "fault_seed") };
    format!(
        "faults injected ({}, seed {seed})\n@fw faults modes={} seed={seed} ipi_held={held} ipi_late_ns={} \
         ipi_reordered={} spurious_wakeups={} spurious_resleeps={} preempt_injected={} \
         preempted_blocking={} stalls={} stall_ns={} idle_holds={} idle_holds_woken={}\n",
        mode_names(modes),
        mode_names(modes),
        held * 60_000,
        if on(IPI_REORDER) { 10 } else { 0 },
        if on(SPURIOUS_WAKE) { 20 } else { 0 },
        if on(SPURIOUS_WAKE) { 15 } else { 0 },
        if on(PREEMPT_POINTS) { 50 } else { 0 },
        if on(PREEMPT_POINTS) { 30 } else { 0 },
        if on(CPU_STALL) { 4 } else { 0 },
        if on(CPU_STALL) { 400_000 } else { 0 },
        if on(IDLE_IRQS_OFF) { 260 } else { 0 },
        if on(IDLE_IRQS_OFF) { 198 } else { 0 },
    )
}
