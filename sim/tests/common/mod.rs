//! Helpers of the tests that run fairway's mechanism on the simulator
//! (`fairway_sim::platform`). The mechanism's state is per process, so
//! each test file holds one test, and a test that needs several runs (seeds)
//! starts this test binary again once per run (`in_child`).
#![allow(dead_code)]

use std::process::Command;

/// Runs `run` in a fresh process of this test binary (its `test_name`
/// filtered, `SIM_CHILD=arg` in the environment) and returns what the child
/// printed between `@child-begin` and `@child-end`; panics with the child's
/// output if it failed.
pub fn in_child(test_name: &str, arg: &str) -> String {
    let (ok, stdout, stderr) = run_child(test_name, arg);
    assert!(ok, "child run {arg} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    let begin = stdout.find("@child-begin\n").unwrap_or_else(|| panic!("child {arg} printed no result:\n{stdout}"));
    let end = stdout.find("@child-end").expect("the end of the child's result");
    stdout[begin + "@child-begin\n".len()..end].to_string()
}

/// Runs `test_name` in a fresh process with `SIM_CHILD=arg`: (whether it
/// succeeded, its stdout and stderr).
pub fn run_child(test_name: &str, arg: &str) -> (bool, String, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env("SIM_CHILD", arg)
        .output()
        .expect("start the child test process");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The child's argument, if this process is a child run.
pub fn child_arg() -> Option<String> {
    std::env::var("SIM_CHILD").ok()
}

/// Two tasks ping-pong one byte `rounds` times through the mechanism's own
/// pipes, `pipe-a` pinned to `cpu_a` and `pipe-b` to `cpu_b` (the kernel's
/// `workload=pipe`), on `machine` with the invariant checks on: the run's
/// report and the virtual ns from the first spawn to both joins.
pub fn pipe_ping_pong(machine: &fairway_sim::Machine, cpu_a: usize, cpu_b: usize, rounds: u64) -> (fairway_sim::platform::SimReport, u64) {
    pipe_ping_pong_then(machine, cpu_a, cpu_b, rounds, || {})
}

/// [`pipe_ping_pong`], then `after` in the init task once both joined (to
/// read the mechanism's counters while the run is still on).
pub fn pipe_ping_pong_then(
    machine: &fairway_sim::Machine,
    cpu_a: usize,
    cpu_b: usize,
    rounds: u64,
    after: impl FnOnce() + Send + 'static,
) -> (fairway_sim::platform::SimReport, u64) {
    use mech::sync::pipe::Pipe;
    use mech::thread::Spawn;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let elapsed = Arc::new(AtomicU64::new(0));
    let e = elapsed.clone();
    let config = fairway_sim::platform::SimConfig { sched_debug: true, ..Default::default() };
    let report = fairway_sim::platform::run(machine, config, move || {
        let ping = Arc::new(Pipe::new(4096));
        let pong = Arc::new(Pipe::new(4096));
        let (p1, q1) = (ping.clone(), pong.clone());
        let start = mech::rq::now_ns();
        let b = mech::thread::spawn(Spawn::new("pipe-b").pin(cpu_b), move || {
            let mut x = [0u8; 1];
            for _ in 0..rounds {
                p1.read_exact(&mut x);
                q1.write(&x, true);
            }
        })
        .unwrap();
        let a = mech::thread::spawn(Spawn::new("pipe-a").pin(cpu_a), move || {
            let mut x = [1u8; 1];
            for _ in 0..rounds {
                ping.write(&x, true);
                pong.read_exact(&mut x);
            }
        })
        .unwrap();
        mech::thread::join(&a);
        mech::thread::join(&b);
        e.store(mech::rq::now_ns() - start, Ordering::Relaxed);
        after();
    });
    (report, elapsed.load(Ordering::Relaxed))
}

/// Prints a child's result for `in_child`.
pub fn child_result(text: &str) {
    println!("@child-begin\n{text}@child-end");
}

/// What a seeded mix ([`mix`]) left behind, read after the run.
pub struct MixResult {
    /// Rounds each task completed.
    pub rounds: Vec<std::sync::atomic::AtomicU64>,
    /// Timer sleeps ended, and how many ended before their deadline.
    pub sleeps: std::sync::atomic::AtomicU64,
    pub early: std::sync::atomic::AtomicU64,
    /// Tokens each task received and consumed.
    pub consumed: Vec<std::sync::atomic::AtomicU64>,
}

/// The init body of a seeded random mix on `cpus` CPUs: `tasks` tasks in a
/// ring, each of `rounds` rounds posting a token to the next (a wakeup
/// through a wait queue), doing seeded random work in between (burns, timer
/// sleeps, yields, affinity changes of itself or of another task, which
/// migrate it), then waiting for its own token. Every token is consumed by
/// exactly one wait, so the run ends only if no wakeup was lost; the init
/// task joins every task, checks the mechanism's invariants across CPUs
/// (`mech::debug::check_global`) and prints the tasks' schedstat lines.
pub fn mix(seed: u64, cpus: usize, tasks: usize, rounds: u64) -> (std::sync::Arc<MixResult>, impl FnOnce() + Send + 'static) {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use fairway_sim::engine::queue::SplitMix64;
    use mech::sync::WaitQueue;
    use mech::thread::Spawn;

    let res = Arc::new(MixResult {
        rounds: (0..tasks).map(|_| AtomicU64::new(0)).collect(),
        sleeps: AtomicU64::new(0),
        early: AtomicU64::new(0),
        consumed: (0..tasks).map(|_| AtomicU64::new(0)).collect(),
    });
    let r = res.clone();
    let body = move || {
        struct Slot {
            tokens: AtomicUsize,
            wq: WaitQueue,
        }
        let slots: Arc<Vec<Slot>> = Arc::new((0..tasks).map(|_| Slot { tokens: AtomicUsize::new(0), wq: WaitQueue::new() }).collect());
        let all: Arc<Mutex<Vec<Arc<mech::task::Task>>>> = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        for i in 0..tasks {
            let (slots, all_t, r) = (slots.clone(), all.clone(), r.clone());
            let mut rng = SplitMix64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i as u64 + 1));
            let t = mech::thread::spawn(Spawn::new("mix").on_cpu(i % cpus), move || {
                let next = (i + 1) % tasks;
                for _ in 0..rounds {
                    slots[next].tokens.fetch_add(1, Ordering::SeqCst);
                    slots[next].wq.wake_one();
                    for _ in 0..(rng.next_u64() % 4) {
                        match rng.next_u64() % 6 {
                            0 | 1 => fairway_sim::platform::burn_ns(1_000 + rng.next_u64() % 200_000),
                            2 => {
                                let ns = 1_000 + rng.next_u64() % 3_000_000;
                                let deadline = mech::rq::now_ns() + ns;
                                mech::thread::sleep_ns(ns);
                                r.sleeps.fetch_add(1, Ordering::Relaxed);
                                if mech::rq::now_ns() < deadline {
                                    r.early.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            3 => mech::schedule::yield_now(),
                            _ => {
                                let mut mask = sched::cpumask::CpuMask::new();
                                let bits = rng.next_u64();
                                for c in 0..cpus {
                                    if bits >> c & 1 == 1 {
                                        mask.set(c);
                                    }
                                }
                                if mask.is_empty() {
                                    mask.set(bits as usize % cpus);
                                }
                                // Half of them change another task's CPUs.
                                let pick = rng.next_u64();
                                let other = {
                                    let all = all_t.lock().unwrap();
                                    (pick % 2 == 1 && !all.is_empty()).then(|| all[(pick / 2) as usize % all.len()].clone())
                                };
                                let target = other.unwrap_or_else(mech::task::current);
                                mech::setattr::set_affinity(&target, mask).unwrap();
                            }
                        }
                    }
                    let me = &slots[i];
                    me.wq.wait_until(|| {
                        me.tokens
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok()
                    });
                    r.consumed[i].fetch_add(1, Ordering::Relaxed);
                    r.rounds[i].fetch_add(1, Ordering::Relaxed);
                }
            })
            .unwrap();
            all.lock().unwrap().push(t.clone());
            handles.push(t);
        }
        for t in &handles {
            mech::thread::join(t);
        }
        mech::debug::check_global();
        for t in &handles {
            mech::schedstat::print_task(t);
        }
        mech::schedstat::print_cpus();
    };
    (res, body)
}

/// Runs the binary `fairway-sim --machine M --seed S -- CMDLINE`: (exit code, stdout).
pub fn sim(machine: &str, seed: u64, cmdline: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", machine, "--seed", &seed.to_string(), "--", cmdline])
        .output()
        .expect("run fairway-sim");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}
