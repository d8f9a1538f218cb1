//! The CPU loop: boots every CPU's flow, then processes the engine's events
//! in order (a step's end, a timer, an IPI's arrival), resuming the context
//! each one concerns and carrying out what it asks next.

use super::context::{new_coroutine, new_ctx, resume_ctx, suspend};
use super::config::{SimConfig, SimReport};
use super::irq::deliver;
use super::{hw, log, now, with, Act, Cpu, CpuStats, Event, HwOn, Req, Resumed, State, CPU, NOW, STATE};
use crate::engine::cost::Distance;
use crate::engine::queue::EventQueue;
use crate::hw::cache::Caches;
use crate::hw::locks::Locks;
use crate::hw::HwCpuStats;
use crate::machine::Machine;

/// Runs the mechanism on `machine`: boots every CPU as the kernel does
/// (`kernel/src/main.rs: start_scheduler()` and `ap_main()`: the runqueue,
/// the capacity, the tick, then the idle loop), starts `init` as the kernel's
/// `init` thread from CPU 0, and runs until `init` returns, the mechanism
/// exits, no event is left, or `cfg.until_ns`.
///
/// Once per process: the mechanism's state (runqueues, tasks, the domains)
/// is static, as in the kernel. A test that needs many runs starts one
/// process per run (see `tests/common`).
pub fn run(machine: &Machine, cfg: SimConfig, init: impl FnOnce() + Send + 'static) -> SimReport {
    let n = machine.nr_cpus();
    assert!((1..=mech::MAX_CPUS).contains(&n), "sim: {n} CPUs (1..={})", mech::MAX_CPUS);
    let domains = machine.domains().unwrap_or_else(|e| panic!("sim: the machine's domains: {e}"));
    install_state(machine, &cfg);
    let tunables = boot_scheduler(machine, &cfg, domains);
    start_cpus(n, cfg.stack_bytes, tunables, init);
    run_events(cfg.until_ns);
    finish()
}

/// The platform's state for this process's one run: the CPUs off, the event queue seeded, the
/// hardware model (distances, caches, locks) as `cfg.hw` asks.
fn install_state(machine: &Machine, cfg: &SimConfig) {
    let n = machine.nr_cpus();
    let mut distance = Vec::with_capacity(n * n);
    for a in 0..n {
        for b in 0..n {
            distance.push(Distance::between(machine, a, b));
        }
    }
    let hw_on = HwOn::of(&cfg.hw);
    let caches = hw_on.refill.then(|| Caches::new(machine, &cfg.hw));
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        assert!(s.is_none(), "sim: platform::run runs once per process (the mechanism's state is static)");
        *s = Some(State {
            cost: cfg.cost,
            hw: cfg.hw.clone(),
            hw_on,
            caches,
            locks: Locks::new(n),
            stack_bytes: cfg.stack_bytes,
            queue: EventQueue::new(cfg.seed),
            cpus: (0..n)
                .map(|_| Cpu {
                    running: 0,
                    act: Act::Off,
                    step_gen: 0,
                    irqs_on: false,
                    guards: 0,
                    guard_saved_on: false,
                    pending_ipi: false,
                    pending_timer: false,
                    timer_gen: 0,
                    charge_ns: 0,
                    section_ns: 0,
                    hooks_on: false,
                    current: None,
                    ttwu_seen: 0,
                    stats: CpuStats::default(),
                    hw_ahead_ns: 0,
                    hw: HwCpuStats::default(),
                })
                .collect(),
            distance,
            nr_cpus: n,
            out: Vec::new(),
            echo: cfg.echo,
            log: cfg.log.then(Vec::new),
            digest: 0xcbf2_9ce4_8422_2325,
            events: 0,
            stopped: None,
            stacks_in_use: 0,
            next_stack_slot: 0,
            boot_ctx: vec![0; n],
        });
    });
}

/// What the kernel's boot does before the scheduler starts (`kernel/src/main.rs`), on the boot
/// CPU: the capacities, the balancer and its domains, the switches of the command line, and
/// `fault=` and `trace=` as `start_scheduler()` sets them up. Returns the tunables every CPU
/// starts with.
fn boot_scheduler(machine: &Machine, cfg: &SimConfig, domains: sched::topology::SchedDomains) -> sched::Tunables {
    let n = machine.nr_cpus();
    let mut caps = sched::balance::CapacityTable::new(n);
    for (c, &cap) in machine.capacity.iter().enumerate() {
        caps.set(c, u64::from(cap));
    }
    let mut tun = sched::Tunables::new(n as u32);
    tun.set_tick_nsec(1_000_000_000 / u64::from(cfg.hz));
    let mut balance_cfg = cfg.balance;
    if let Some(f) = cfg.features {
        tun.features = f;
        balance_cfg.features = f;
    }
    mech::balance::init(domains, balance_cfg, caps, cfg.hz);
    mech::debug::enable(cfg.sched_debug);
    // The lock-order checker, where it is compiled in (the `lockdep`
    // feature of `kernel/mech`, which this crate's tests turn on).
    mech::lock::lockdep::enable(true);
    mech::clock::set_hz(cfg.hz);
    mech::timer::set_nohz(cfg.nohz);
    mech::resched::set_poll(cfg.idle_poll);
    // Before any CPU schedules.
    if let Some((modes, seed)) = cfg.faults {
        let off = modes & !super::SIM_FAULTS;
        assert!(off == 0, "sim: fault={} is not modelled (the caller refuses it)", mech::fault::names(off));
        mech::entry::configure_faults(modes, seed);
    }
    if cfg.trace > 0 {
        let cpus: Vec<usize> = (0..n).collect();
        if let Err(why) = mech::entry::configure_trace(cfg.trace, &cpus) {
            panic!("sim: trace={}: {why}", cfg.trace);
        }
    }
    tun
}

/// Every CPU's boot flow is a coroutine: CPUs 1.. come online first, then CPU 0 starts `init`
/// (the kernel's boot CPU waits for the others).
fn start_cpus(n: usize, stack_bytes: usize, tun: sched::Tunables, init: impl FnOnce() + Send + 'static) {
    let mut init = Some(init);
    let order: Vec<usize> = (1..n).chain([0]).collect();
    for &c in &order {
        let init = if c == 0 { init.take() } else { None };
        let co = new_coroutine(stack_bytes, move || {
            start_this_cpu(c, tun);
            if let Some(init) = init {
                let init = move || {
                    init();
                    with(|s| s.stopped.get_or_insert_with(|| "finished".to_string()).clone());
                    loop {
                        suspend(Req::Stop);
                    }
                };
                if let Err(e) = mech::thread::spawn(mech::thread::Spawn::new("init"), init) {
                    panic!("sim: cannot start the init thread: {e}");
                }
            }
            mech::idle_loop::idle_loop()
        });
        let h = new_ctx(Some(co), Some(c), true, 0);
        with(|s| {
            s.boot_ctx[c] = h;
            s.cpus[c].running = h;
            s.cpus[c].act = Act::Running;
        });
        CPU.with(|x| x.set(c));
        let req = resume_ctx(c, h, Resumed::Run);
        handle(c, req);
    }
}

/// The event loop: each event in time order up to `until_ns`, until the run stops (`init`
/// returned, the mechanism exited) or no event is left.
fn run_events(until_ns: u64) {
    loop {
        if with(|s| s.stopped.is_some()) {
            break;
        }
        let Some((t, ev)) = with(|s| match s.queue.peek_time() {
            Some(t) if t <= until_ns => s.queue.pop(),
            _ => None,
        }) else {
            with(|s| {
                if s.stopped.is_none() {
                    let why = if s.queue.is_empty() { "idle" } else { "until" };
                    s.stopped = Some(why.to_string());
                }
            });
            break;
        };
        step(t, ev);
    }
}

/// The run's report: the output (with the hardware model's lines after the workload's own,
/// docs/CONSOLE.md: `@fw hw`, `hwcost`, `hwlock`), how it ended, the digest and the statistics.
fn finish() -> SimReport {
    for line in hw::report_lines() {
        with(|s| {
            if s.echo {
                println!("{line}");
            }
            s.out.push(line);
        });
    }
    let report = with(|s| SimReport {
        output: std::mem::take(&mut s.out),
        end: s.stopped.clone().unwrap_or_default(),
        end_ns: now(),
        events: s.events,
        digest: s.digest,
        cpus: s.cpus.iter().map(|c| c.stats.clone()).collect(),
        log: s.log.take().unwrap_or_default(),
        hw: s.cpus.iter().map(|c| c.hw.clone()).collect(),
        locks: mech::lock::level::LockClass::ALL
            .iter()
            .map(|&k| (k.name(), s.locks.classes[k as usize]))
            .filter(|(_, st)| st.acquires > 0)
            .collect(),
    });
    report
}

/// The kernel's `start_this_cpu` (`kernel/src/main.rs`), the same shared
/// `mech::entry::sched_cpu_starting`: this flow becomes the CPU's idle task,
/// its capacity is published, the interrupt hooks go on, its tick starts.
fn start_this_cpu(cpu: usize, tun: sched::Tunables) {
    mech::entry::sched_cpu_starting(cpu, tun, || with(|s| s.cpus[cpu].hooks_on = true));
}

/// Carries out what the context running on `c` asked, paying its charged
/// kernel work first; resumes contexts until one waits for an event.
pub(super) fn handle(c: usize, mut req: Req) {
    loop {
        let charge = with(|s| {
            let cpu = &mut s.cpus[c];
            cpu.hw_ahead_ns = 0;
            std::mem::take(&mut cpu.charge_ns) + std::mem::take(&mut cpu.section_ns)
        });
        if charge > 0 && req != Req::Stop {
            with(|s| {
                let t = now() + charge;
                let cpu = &mut s.cpus[c];
                cpu.stats.kernel_ns += charge;
                cpu.step_gen += 1;
                cpu.act = Act::Kernel { then: req };
                let gen = cpu.step_gen;
                s.queue.push(t, Event::StepEnd { cpu: c, gen });
            });
            return;
        }
        match start(c, req) {
            Some(r) => req = r,
            None => return,
        }
    }
}

/// Starts `req` on CPU `c` (its charge paid); returns the next request if
/// it resumed a context at once.
fn start(c: usize, req: Req) -> Option<Req> {
    match req {
        Req::Burn(ns) => {
            let (pending, h) = with(|s| {
                let cpu = &s.cpus[c];
                (cpu.irqs_on && (cpu.pending_ipi || cpu.pending_timer), cpu.running)
            });
            if pending {
                return Some(resume_ctx(c, h, Resumed::Irq { left: ns }));
            }
            with(|s| {
                let t = now() + ns;
                let cpu = &mut s.cpus[c];
                cpu.step_gen += 1;
                cpu.act = Act::Burn { start: now(), end: t };
                let gen = cpu.step_gen;
                s.queue.push(t, Event::StepEnd { cpu: c, gen });
            });
            None
        }
        Req::Halt => {
            let (pending, h) = with(|s| {
                let cpu = &mut s.cpus[c];
                cpu.act = Act::Halt;
                (cpu.pending_ipi || cpu.pending_timer, cpu.running)
            });
            pending.then(|| resume_ctx(c, h, Resumed::Irq { left: 0 }))
        }
        Req::Poll => {
            let (pending, h) = with(|s| {
                let cpu = &mut s.cpus[c];
                let pending = cpu.irqs_on && (cpu.pending_ipi || cpu.pending_timer);
                if !pending {
                    cpu.act = Act::Poll { kicked: false };
                }
                (pending, cpu.running)
            });
            pending.then(|| resume_ctx(c, h, Resumed::Irq { left: 0 }))
        }
        Req::Switch(next) => {
            with(|s| s.cpus[c].running = next);
            Some(resume_ctx(c, next, Resumed::Run))
        }
        Req::Pay => {
            let h = with(|s| s.cpus[c].running);
            Some(resume_ctx(c, h, Resumed::Done))
        }
        Req::Stop => {
            with(|s| {
                s.cpus[c].act = Act::Stopped;
                s.stopped.get_or_insert_with(|| "exit".to_string());
            });
            None
        }
    }
}

/// Processes one event.
fn step(t: u64, ev: Event) {
    let (cpu, kind) = match ev {
        Event::StepEnd { cpu, gen } => {
            if with(|s| s.cpus[cpu].step_gen != gen) {
                return;
            }
            (cpu, 1u64)
        }
        Event::Timer { cpu, gen } => {
            if with(|s| s.cpus[cpu].timer_gen != gen) {
                return;
            }
            (cpu, 2)
        }
        Event::Ipi { cpu } => (cpu, 3),
    };
    NOW.with(|n| n.set(t));
    with(|s| {
        s.events += 1;
        for v in [t, kind << 32 | cpu as u64] {
            for b in v.to_le_bytes() {
                s.digest ^= u64::from(b);
                s.digest = s.digest.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    });
    match ev {
        Event::StepEnd { cpu, .. } => {
            let act = with(|s| s.cpus[cpu].act);
            match act {
                Act::Burn { start, .. } => {
                    let h = with(|s| {
                        let c = &mut s.cpus[cpu];
                        c.stats.burn_ns += t - start;
                        c.running
                    });
                    let req = resume_ctx(cpu, h, Resumed::Done);
                    handle(cpu, req);
                }
                Act::Kernel { then } => {
                    if let Some(req) = start(cpu, then) {
                        handle(cpu, req);
                    }
                }
                // Out of the halt: the interrupt is taken now.
                Act::Waking => {
                    let h = with(|s| s.cpus[cpu].running);
                    let req = resume_ctx(cpu, h, Resumed::Irq { left: 0 });
                    handle(cpu, req);
                }
                // A waker's store reached the polling CPU.
                Act::Poll { .. } => {
                    let h = with(|s| s.cpus[cpu].running);
                    let req = resume_ctx(cpu, h, Resumed::Done);
                    handle(cpu, req);
                }
                other => panic!("sim: a step ended on CPU {cpu} doing {other:?}"),
            }
        }
        Event::Timer { cpu, .. } => {
            with(|s| s.cpus[cpu].pending_timer = true);
            log(cpu, format_args!("timer_expired"));
            deliver(cpu);
        }
        Event::Ipi { cpu } => {
            with(|s| s.cpus[cpu].pending_ipi = true);
            log(cpu, format_args!("ipi_arrive"));
            deliver(cpu);
        }
    }
}
