//! fairway: a bare-metal x86_64 SMP kernel built around a Linux-faithful fair
//! scheduler.
//!
//! Layers (docs/DESIGN.md): `boot/` (assembly: multiboot entry, long mode,
//! AP trampoline, interrupt stubs), `arch` and `mem` (all hardware access and
//! all `unsafe`), the safe kernel modules here, and the pure policy crate
//! `sched` (kernel/sched), which the kernel uses unchanged; the mechanism
//! crate `mech` (kernel/mech) over the platform `arch` implements; and the
//! workloads and command line, the crate `workloads` (kernel/workloads).
//!
//! The boot CPU enters at `kernel_entry`, brings the machine up stage by stage
//! (each stage prints `@fw stage name=...`, so a harness can say where a boot
//! stopped), starts the other CPUs, builds the sched domains and runs the
//! default work.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

#[allow(unsafe_code)]
mod arch;
use mech::balance;
mod console;
#[allow(unsafe_code)]
mod mem;
mod panic;
use mech::debug;
use mech::fault;
use mech::idle_loop::idle_loop;
use mech::lockdep_provoke;
use mech::rq;
use mech::schedule;
mod selfcheck;
use mech::lock;
use mech::task;
use mech::timer;
mod topology;
use mech::watchdog;
use workloads::cmdline;

use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use arch::{percpu, ExitCode};
use console::stage;

/// The boot CPU's Rust entry (from `arch::kernel_entry`), on the boot stack,
/// interrupts off.
fn boot_main(magic: u32, info: u32) -> ! {
    console::init();
    kprintln!("fairway {} booting", env!("CARGO_PKG_VERSION"));
    stage("entry");
    stage("console");

    stage("bootinfo");
    let early = match mem::multiboot::early(magic, info) {
        Ok(b) => b,
        Err(fatal) => {
            kprintln!("boot: {}. Exiting.", fatal);
            record!("boot_fatal", "msg={}", fatal);
            arch::exit_with(ExitCode::Failure);
        }
    };
    report_boot_info(early);
    let memory = init_memory(early);

    stage("cmdline");
    let options = read_cmdline(early);

    stage("interrupts");
    arch::descriptors::init_this_cpu();
    arch::pit::disable_8259();

    stage("acpi");
    let platform = discover_acpi(early);
    // The RSDP search reads the BIOS data area in page 0; from now on page 0
    // is unmapped so that a null pointer dereference faults.
    if let Err(e) = mem::paging::unmap_page(0) {
        kprintln!("memory: cannot unmap page 0 ({}); null pointers will not fault", e);
    }

    stage("apic");
    if let Err(e) = arch::apic::init_this_cpu() {
        panic!("local APIC on the boot CPU: {}", e);
    }
    kprintln!("local APIC in {} mode", arch::apic::mode_name());
    record!("apic", "mode={}", arch::apic::mode_name());

    stage("timer");
    calibrate();

    stage("smp");
    let (online, nodes) = start_cpus(platform.as_ref(), memory);

    stage("topology");
    let cpus = topology::decode(online, &nodes);
    if let Some(source) = topology::layout_source(0) {
        kprintln!("topology from CPUID ({:?})", source);
    }
    topology::print_cpus(&cpus);

    stage("domains");
    let distances = platform.as_ref().and_then(|p| p.distances.clone());
    let domains = topology::build_domains(&cpus, distances.as_deref());
    topology::print_domains(&domains);
    init_balancing(domains, &options, online);

    stage("selfcheck");
    let ok = selfcheck::run(&options, online);

    if let Some(crash) = options.test_crash {
        selfcheck::crash(crash);
    }
    if !ok {
        stage("shutdown");
        arch::exit_with(ExitCode::Failure);
    }

    stage("sched");
    start_scheduler(&options, online)
}

/// Stage `cmdline`: parses the boot loader's command line, reports each problem (`cmdline:`
/// lines, which the harness refuses a run for), sets the log level and turns the lock-order
/// checker on or off, before any other CPU starts and with no lock held (`lock::lockdep`).
fn read_cmdline(early: &mem::multiboot::BootInfo) -> cmdline::Options {
    let cmdline = early.cmdline();
    let parsed = cmdline::parse(&cmdline);
    record!("cmdline", "msg={}", cmdline);
    if early.problems().any(|p| *p == bootinfo::Problem::CmdlineCut) {
        cmdline::report_problem(format_args!(
            "longer than {} bytes; the rest is ignored",
            bootinfo::CMDLINE_MAX
        ));
    }
    for problem in &parsed.problems {
        cmdline::report_problem(problem);
    }
    let options = parsed.options;
    console::init_log(log_level(options.log));
    let lockdep = options.lockdep.unwrap_or(options.sched_debug || options.test_lockdep.is_some());
    if !lock::lockdep::BUILT_IN && (options.lockdep == Some(true) || options.test_lockdep.is_some()) {
        cmdline::report_problem(format_args!(
            "lockdep=1: this kernel is built without the lock-order checker (`cargo xtask test` and `cargo xtask run --lockdep` build it in); no lock order is checked"
        ));
    }
    lock::lockdep::enable(lockdep);
    options
}

/// Stage `acpi`: the MADT's CPUs and I/O APICs and the SRAT's nodes, or `None` (said on the
/// console and in `@fw acpi none=1`): the boot CPU then runs alone.
fn discover_acpi(early: &mem::multiboot::BootInfo) -> Option<arch::acpi::Platform> {
    match arch::acpi::discover(early.rsdp.as_ref()) {
        Ok(p) => {
            kprintln!(
                "ACPI: RSDP at {:#x} (from {}), {} CPUs and {} I/O APICs in the MADT, {} NUMA nodes in the SRAT",
                p.rsdp,
                p.rsdp_source.describe(),
                p.processors.len(),
                p.ioapics.len(),
                p.numa_nodes
            );
            record!(
                "acpi",
                "rsdp={:#x} rsdp_source={} cpus={} ioapics={} numa_nodes={}",
                p.rsdp,
                p.rsdp_source.word(),
                p.processors.len(),
                p.ioapics.len(),
                p.numa_nodes
            );
            Some(p)
        }
        Err(problem) => {
            kprintln!("ACPI: no usable tables ({}): running on the boot CPU only", problem);
            record!("acpi", "none=1");
            None
        }
    }
}

/// Stage `smp`: starts the CPUs the MADT lists (up to `MAX_CPUS`, and those the APIC's mode can
/// address, each dropped CPU said), waits for them, and returns how many are online with each
/// CPU's NUMA node, the boot CPU first.
fn start_cpus(platform: Option<&arch::acpi::Platform>, memory: mem::frame::Summary) -> (usize, Vec<u32>) {
    let boot_apic = arch::cpuid::apic_id();
    percpu::cpu(0).apic_id.store(boot_apic, Ordering::Relaxed);
    topology::record_this_cpu(0);
    let mut apic_ids: Vec<u32> = Vec::new();
    let mut nodes: Vec<u32> = Vec::new();
    apic_ids.push(boot_apic);
    if let Some(p) = platform {
        nodes.push(p.processors.iter().find(|c| c.apic_id == boot_apic).map_or(0, |c| c.node));
        let mut unreachable = 0;
        for c in p.processors.iter().filter(|c| c.apic_id != boot_apic) {
            if !arch::apic::addressable(c.apic_id) {
                unreachable += 1;
                continue;
            }
            if apic_ids.len() == percpu::MAX_CPUS {
                kprintln!(
                    "the MADT lists {} CPUs, more than the {} fairway handles (MAX_CPUS); using the first {}",
                    p.processors.len(),
                    percpu::MAX_CPUS,
                    percpu::MAX_CPUS
                );
                record!("cpus_dropped", "reason=max_cpus listed={} kept={}", p.processors.len(), percpu::MAX_CPUS);
                break;
            }
            apic_ids.push(c.apic_id);
            nodes.push(c.node);
        }
        if unreachable > 0 {
            kprintln!(
                "{} CPUs have APIC IDs that {} mode cannot address (above 254); running without them",
                unreachable,
                arch::apic::mode_name()
            );
            record!("cpus_dropped", "reason=apic_id count={} apic={}", unreachable, arch::apic::mode_name());
        }
    } else {
        nodes.push(0);
    }
    check_memory_for(apic_ids.len(), memory);
    mark_online(0);
    let failures = arch::smp::start_aps(&apic_ids, ap_main);
    for f in &failures {
        kprintln!("CPU {} (APIC id {}) did not start; continuing without it", f.cpu, f.apic_id);
    }
    let expected = apic_ids.len();
    let online = wait_all_online(expected);
    let last_online = (0..expected)
        .filter(|&c| percpu::cpu(c).online.load(Ordering::Acquire))
        .map(|c| percpu::cpu(c).online_tsc.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    let boot_us = arch::time::us_since_boot(last_online);
    kprintln!(
        "{} of {} CPUs online, the last {}.{:03} ms after kernel entry",
        online,
        expected,
        boot_us / 1000,
        boot_us % 1000
    );
    record!("cpus", "online={} expected={} boot_us={}", online, expected, boot_us);
    (online, nodes)
}

/// Stage `domains`, its end: the CPU capacities asked for (`cpu_capacity=`; one naming a CPU
/// that is not online is a `cmdline:` problem) and the balancing configuration, handed with the
/// domains to the mechanism's balancer.
fn init_balancing(domains: sched::topology::SchedDomains, options: &cmdline::Options, online: usize) {
    let mut caps = sched::balance::CapacityTable::new(online);
    for &(cpu, cap) in &options.cpu_capacity {
        // Known only once the CPUs are counted, so checked here, but
        // reported like every parse problem: the harness refuses the run.
        match cmdline::cpu_capacity_offline(cpu, cap, online) {
            Some(problem) => cmdline::report_problem(problem),
            None => {
                caps.set(cpu, cap);
            }
        }
    }
    let mut balance_cfg = options.balance;
    balance_cfg.features = options.sched_features;
    kprintln!("balancing: {}", balance_cfg);
    record!("balance_config", "msg={}", balance_cfg);
    balance::init(domains, balance_cfg, caps, options.hz);
}

/// The `log` crate's level for `log=`.
fn log_level(l: cmdline::LogLevel) -> log::LevelFilter {
    match l {
        cmdline::LogLevel::Off => log::LevelFilter::Off,
        cmdline::LogLevel::Error => log::LevelFilter::Error,
        cmdline::LogLevel::Warn => log::LevelFilter::Warn,
        cmdline::LogLevel::Info => log::LevelFilter::Info,
        cmdline::LogLevel::Debug => log::LevelFilter::Debug,
        cmdline::LogLevel::Trace => log::LevelFilter::Trace,
    }
}

/// The tunables every CPU's runqueue starts with.
static TUNABLES: spin::Once<sched::Tunables> = spin::Once::new();

/// Starts the scheduler on every CPU, runs the workload in the `init`
/// thread, and turns this flow into CPU 0's idle task.
fn start_scheduler(options: &cmdline::Options, online: usize) -> ! {
    let mut tun = sched::Tunables::new(online as u32);
    tun.features = options.sched_features;
    tun.set_tick_nsec(1_000_000_000 / options.hz as u64);
    TUNABLES.call_once(|| tun);
    kprintln!("sched_features: {}", options.sched_features);
    record!("sched_features", "msg={}", options.sched_features);
    kprintln!(
        "scheduler: EEVDF, base slice {} us, tick {} Hz ({}), idle={}, invariant checks {}",
        tun.base_slice() / 1000,
        options.hz,
        if options.nohz && !options.idle_poll { "stopped on idle CPUs" } else { "always on" },
        options.idle_name(),
        if options.sched_debug { "on" } else { "off" }
    );
    debug::enable(options.sched_debug);
    let hard_lockup = options.nmi_watchdog || options.test_watchdog == Some(watchdog::Provoke::HardLockup);
    watchdog::init(options.watchdog_thresh, options.hung_task_timeout_secs, hard_lockup);
    kprintln!(
        "watchdogs: soft{} lockup after {} s{}, hung task after {} s{}; lock order checks {}",
        if hard_lockup { " and hard" } else { "" },
        2 * options.watchdog_thresh,
        if options.watchdog_thresh == 0 { " (off)" } else { "" },
        options.hung_task_timeout_secs,
        if options.hung_task_timeout_secs == 0 { " (off)" } else { "" },
        if lock::lockdep::enabled() { "on" } else if lock::lockdep::BUILT_IN { "off" } else { "not built in" }
    );
    if options.fault != 0 {
        mech::entry::configure_faults(options.fault, options.fault_seed.unwrap_or(fault::DEFAULT_SEED));
    }
    if options.trace > 0 {
        let cpus: Vec<usize> = (0..online).collect();
        if let Err(why) = mech::entry::configure_trace(options.trace, &cpus) {
            // a command-line value the machine cannot honour: reported as one
            cmdline::report_problem(format_args!(
                "trace={}: {}; tracing is off (give a smaller trace=N)",
                options.trace, why
            ));
        }
    }
    mech::clock::set_hz(options.hz);
    mech::tick::print_stats_every(options.stats_ms);
    timer::set_nohz(options.nohz);
    mech::resched::set_poll(options.idle_poll);
    arch::wait::set_last_polls(options.idle_last_polls);
    init_stacks(online);
    arch::trap::install_hooks(arch::trap::Hooks {
        timer: on_timer,
        resched_ipi: on_resched_ipi,
        schedule: on_schedule,
        explain_page_fault,
    });
    start_this_cpu(0);
    selfcheck::release_aps(online);
    let deadline = arch::time::uptime_us() + 5_000_000;
    while rq::online_mask().weight() < online as u32 && arch::time::uptime_us() < deadline {
        arch::time::relax();
    }
    kprintln!("{} of {} CPUs scheduling", rq::online_mask().weight(), online);
    let workload = options.workload.clone();
    let phase_ns = options.phase_ns;
    let tests = (options.test_lockdep, options.test_watchdog);
    if let Err(e) = mech::thread::spawn(mech::thread::Spawn::new("init"), move || run_init(workload, phase_ns, tests)) {
        panic!("cannot start the init thread: {}", e);
    }
    idle_loop()
}

/// Threads the kernel itself runs on arena stacks: `init` alone (each CPU's
/// idle task runs on the stack that CPU booted on).
const KERNEL_THREADS: usize = 1;

/// Creates the thread-stack arena, sized from the memory still free (see
/// `mem::stack`), and says how its size was chosen. Exits when not even the
/// init thread gets a stack.
fn init_stacks(online: usize) {
    let workload = workloads::params::MAX_THREADS as usize;
    let s = match mem::stack::init(online, workload, KERNEL_THREADS) {
        Ok(s) => s,
        Err(e) => panic!("cannot set up the thread stacks: {}", e),
    };
    kprintln!(
        "thread stacks: {} of {} KiB, each below an unmapped guard page ({})",
        s.slots,
        mem::stack::STACK_SIZE / 1024,
        s
    );
    record!(
        "stacks",
        "slots={} wanted={} rule={} free_kib={} share={} floor={} ceiling={}",
        s.slots,
        s.wanted,
        s.rule.word(),
        s.free / 1024,
        s.share,
        s.floor,
        s.ceiling
    );
    if s.slots < KERNEL_THREADS {
        kprintln!("thread stacks: none for the init thread ({} MiB of memory free). Exiting.", s.free >> 20);
        arch::exit_with(ExitCode::Oom);
    }
    if s.slots < s.floor {
        // The floor covers the default workload (demo: 3 threads per CPU).
        kprintln!(
            "thread stacks: {} is below the {} the kernel is sized for ({} and {} per CPU): workloads needing more are refused, and demo may not start all its threads; give QEMU more memory",
            s.slots,
            s.floor,
            mem::stack::FLOOR_BASE,
            mem::stack::FLOOR_PER_CPU
        );
    }
}

/// Makes this CPU's current flow its idle task and starts its tick (the
/// mechanism's `entry::sched_cpu_starting`, shared with the simulator); the
/// trap table's switch to the scheduler's hooks is this platform's part.
fn start_this_cpu(cpu: usize) {
    let tun = TUNABLES.get().cloned().unwrap_or_default();
    mech::entry::sched_cpu_starting(cpu, tun, arch::trap::enable_hooks_here);
}

/// The init thread: the workload, the statistics, then QEMU's exit.
fn run_init(
    workload: cmdline::Workload,
    phase_ns: u64,
    tests: (Option<lockdep_provoke::Provoke>, Option<watchdog::Provoke>),
) {
    // The lockdep and watchdog scenarios: what they provoke ends the boot.
    if let Some(p) = tests.0 {
        lockdep_provoke::provoke(p);
    }
    if let Some(p) = tests.1 {
        watchdog::provoke(p);
    }
    // Under -icount every boot of one command line is the same run; this
    // shifts where the workload starts against the CPUs' ticks, for a
    // deterministic sample of another phase (`bench --phases`).
    if phase_ns > 0 {
        mech::platform::burn_ns(phase_ns);
    }
    // With log=debug its timestamp is the boot's cost in guest time.
    log::debug!("the workload starts");
    stage("workload");
    mech::entry::workload_starts();
    let ok = workloads::run(&workload);
    mech::entry::workload_done();
    stage("shutdown");
    arch::exit_with(if ok { ExitCode::Success } else { ExitCode::Failure })
}

/// The reschedule IPI: acknowledged at the APIC, then the mechanism's
/// handler (`entry::scheduler_ipi`, shared with the simulator).
extern "C" fn on_resched_ipi(frame: &mut arch::trap::TrapFrame) -> *mut arch::trap::TrapFrame {
    arch::trap::resched_entered();
    arch::apic::eoi();
    mech::entry::scheduler_ipi((frame as *mut arch::trap::TrapFrame).cast()).cast()
}

/// The timer interrupt, into the mechanism (its frame opaque there).
fn on_timer(frame: &mut arch::trap::TrapFrame) -> *mut arch::trap::TrapFrame {
    mech::entry::timer_interrupt((frame as *mut arch::trap::TrapFrame).cast()).cast()
}

/// A task gives up its CPU (`arch::context::give_up_cpu`), into the mechanism.
extern "C" fn on_schedule(frame: &mut arch::trap::TrapFrame) -> *mut arch::trap::TrapFrame {
    schedule::schedule_voluntary((frame as *mut arch::trap::TrapFrame).cast()).cast()
}

/// Names the thread whose stack guard page a page fault hit.
fn explain_page_fault(cr2: u64) -> bool {
    let Some(slot) = mem::stack::guard_slot(cr2) else { return false };
    match task::by_stack_slot(slot) {
        Some(t) => {
            kprintln!("STACK OVERFLOW in thread {} (id {}): it ran into its guard page at {:#x}", t.name, t.id, cr2);
            record!("stack_overflow", "cpu={} task={} id={} addr={:#x}", percpu::cpu_id(), t.name, t.id, cr2);
        }
        None => {
            kprintln!("STACK OVERFLOW: guard page of stack slot {} hit at {:#x}", slot, cr2);
            record!("stack_overflow", "cpu={} task=unknown id=0 addr={:#x}", percpu::cpu_id(), cr2);
        }
    }
    true
}

/// Says how the kernel was booted and what the boot information held (`@fw boot`), and each
/// problem with it (`@fw boot_problem`) with the fallback taken.
fn report_boot_info(b: &mem::multiboot::BootInfo) {
    let loader = if b.loader_name().is_empty() { "unnamed loader" } else { b.loader_name() };
    let rsdp = b.rsdp.map_or("none", |r| r.source.word());
    kprintln!(
        "boot: {} from {}; memory from the {} ({} regions), command line {}, RSDP {}",
        b.protocol.word(),
        loader,
        match b.memory_source {
            bootinfo::MemorySource::MemoryMap => "memory map",
            bootinfo::MemorySource::BasicMeminfo => "basic memory sizes",
        },
        b.regions().len(),
        if b.has_cmdline { "from the boot loader" } else { "not passed (defaults)" },
        match b.rsdp {
            Some(r) => r.source.describe(),
            None if b.acpi_tags > 0 => "tags all invalid: the BIOS areas will be scanned",
            None => "not passed: the BIOS areas will be scanned",
        }
    );
    record!(
        "boot",
        "protocol={} memory={} regions={} cmdline={} rsdp={} acpi_tags={}",
        b.protocol.word(),
        b.memory_source.word(),
        b.regions().len(),
        u8::from(b.has_cmdline),
        rsdp,
        b.acpi_tags
    );
    // (a cut command line is reported with the command line's own problems)
    for p in b.problems().filter(|p| **p != bootinfo::Problem::CmdlineCut) {
        kprintln!("boot: {}", p);
        record!("boot_problem", "msg={}", p);
    }
}

/// Sets up the frame allocator and the heap from the memory map.
/// Stops the boot, before any other CPU starts, when the heap cannot hold
/// what `cpus` CPUs take (`mem::heap_need`): without this the boot ran out of
/// heap in the self-check or the SMP stage, saying nothing about why.
fn check_memory_for(cpus: usize, m: mem::frame::Summary) {
    // What the heap holds already (the ACPI tables' copies) is within HEAP_BASE.
    let size = mem::heap::usage().1;
    let need = mem::heap_need(cpus as u64);
    if size as u64 >= need {
        return;
    }
    let free = m.free_frames as u64 * mem::FRAME_SIZE;
    let usable_need = mem::usable_need(cpus as u64, m.usable_bytes, free);
    let msg = format_args!(
        "{} MiB is too small for {} CPUs: need at least {} MiB (the heap, a quarter of the memory free after the kernel image, is {} KiB and must hold {} KiB: {} MiB, {} KiB per CPU and {} bytes per pair of CPUs)",
        m.usable_bytes >> 20,
        cpus,
        usable_need.div_ceil(1 << 20),
        size / 1024,
        need / 1024,
        mem::HEAP_BASE >> 20,
        mem::HEAP_PER_CPU >> 10,
        mem::HEAP_PER_CPU_PAIR
    );
    kprintln!("memory: {}. Exiting.", msg);
    record!("boot_fatal", "msg={}", msg);
    arch::exit_with(ExitCode::Oom);
}

fn init_memory(early: &mem::multiboot::BootInfo) -> mem::frame::Summary {
    stage("memory");
    let (kstart, kend) = mem::kernel_range();
    let summary = mem::frame::init(early.regions(), kend);
    kprintln!(
        "memory: {} MiB usable, kernel at {:#x}..{:#x}, {} MiB free for allocation",
        summary.usable_bytes >> 20,
        kstart,
        kend,
        (summary.free_frames as u64 * mem::FRAME_SIZE) >> 20
    );
    if summary.above_4g_bytes > 0 {
        kprintln!(
            "memory: {} MiB above 4 GiB is not mapped and stays unused",
            summary.above_4g_bytes >> 20
        );
    }
    stage("heap");
    // A quarter of free memory, between 8 MiB and 1 GiB.
    let free = summary.free_frames as u64 * mem::FRAME_SIZE;
    let size = (free / 4).clamp(mem::HEAP_MIN, mem::HEAP_MAX);
    let Some(start) = mem::frame::alloc_contiguous((size / mem::FRAME_SIZE) as usize) else {
        kprintln!(
            "memory: cannot find {} MiB of contiguous RAM for the kernel heap ({} MiB free). Exiting.",
            size >> 20,
            free >> 20
        );
        arch::exit_with(ExitCode::Oom);
    };
    mem::heap::init(start, size as usize);
    kprintln!("heap: {} MiB at {:#x}", size >> 20, start);
    record!("memory", "usable_kib={} free_kib={} heap_kib={}", summary.usable_bytes >> 10, free >> 10, size >> 10);
    // Device windows uncached.
    if let Err(e) = mem::paging::set_uncached(0xfec0_0000, 0x1_0000_0000) {
        kprintln!("memory: cannot map the APIC windows uncached ({})", e);
    }
    summary
}

/// Measures the TSC against 20 ms of the PIT, then the LAPIC timer against
/// the TSC: the shortest time of five one-shot countdowns of known length to
/// raise their interrupt. (The timer's current-count register is never read: under
/// QEMU's `-icount` an x2APIC read of it aborts QEMU with "Bad icount read".)
fn calibrate() {
    const MS: u64 = 20;
    let measure_with = |channel: u8| {
        let (mut tsc0, mut tsc1) = (0, 0);
        let (before, after) = (|| tsc0 = arch::time::rdtsc(), || tsc1 = arch::time::rdtsc());
        if channel == 2 {
            arch::pit::measure(MS, before, after);
        } else {
            arch::pit::measure_channel0(MS, before, after);
        }
        tsc1.wrapping_sub(tsc0) * 1000 / MS
    };
    let mut tsc_hz = measure_with(2);
    if !arch::time::TSC_HZ_PLAUSIBLE.contains(&tsc_hz) {
        // No port 0x61 (microvm): its read of 0xff ends the wait at once.
        kprintln!(
            "timer: the TSC measured {} kHz against PIT channel 2 (port 0x61), outside {} to {} MHz; measuring against channel 0",
            tsc_hz / 1000,
            arch::time::TSC_HZ_PLAUSIBLE.start() / 1_000_000,
            arch::time::TSC_HZ_PLAUSIBLE.end() / 1_000_000
        );
        tsc_hz = measure_with(0);
    }
    if !arch::time::TSC_HZ_PLAUSIBLE.contains(&tsc_hz) {
        // Every timeout, delay and tick would be off by the same factor: an
        // AP's start-up delays too short, the self-check's deadlines wrong.
        let msg = format_args!(
            "the TSC measured {} kHz against the PIT, outside {} to {} MHz: there is no working PIT to calibrate against, and no time can be kept",
            tsc_hz / 1000,
            arch::time::TSC_HZ_PLAUSIBLE.start() / 1_000_000,
            arch::time::TSC_HZ_PLAUSIBLE.end() / 1_000_000
        );
        kprintln!("timer: {}. Exiting.", msg);
        record!("boot_fatal", "msg={}", msg);
        arch::exit_with(ExitCode::Failure);
    }
    arch::time::set_tsc_hz(tsc_hz);

    // Several short countdowns; the shortest measured one has the least
    // interrupt latency in it (under TCG, host load delays interrupts).
    const COUNTS: u32 = 2_000_000;
    const ROUNDS: usize = 5;
    let cpu = percpu::this_cpu();
    let mut best = u64::MAX;
    for _ in 0..ROUNDS {
        let before = cpu.timer_ticks.load(Ordering::Relaxed);
        cpu.timer_stop_after.store(before + 1, Ordering::Relaxed);
        let start = arch::time::rdtsc();
        arch::apic::start_oneshot(COUNTS);
        x86_64::instructions::interrupts::enable();
        let limit = start + tsc_hz.max(1) * 5;
        while cpu.timer_ticks.load(Ordering::Relaxed) == before && arch::time::rdtsc() < limit {
            arch::time::spin(arch::time::MEASURE_SPINS);
        }
        x86_64::instructions::interrupts::disable();
        let end = arch::time::rdtsc();
        cpu.timer_stop_after.store(0, Ordering::Relaxed);
        if cpu.timer_ticks.load(Ordering::Relaxed) == before {
            panic!("the LAPIC timer never fired during calibration (5 s)");
        }
        best = best.min(end - start);
    }
    let lapic_hz = (COUNTS as u128 * tsc_hz as u128 / best.max(1) as u128) as u64;
    arch::apic::set_lapic_hz(lapic_hz);
    kprintln!(
        "TSC {}.{:03} MHz (against {} ms of the PIT), LAPIC timer {}.{:03} MHz (against the TSC)",
        tsc_hz / 1_000_000,
        tsc_hz / 1000 % 1000,
        MS,
        lapic_hz / 1_000_000,
        lapic_hz / 1000 % 1000
    );
    record!("timer", "tsc_hz={} lapic_hz={}", tsc_hz, lapic_hz);
}

fn mark_online(cpu: usize) {
    let area = percpu::cpu(cpu);
    area.online_tsc.store(arch::time::rdtsc(), Ordering::Relaxed);
    area.online.store(true, Ordering::Release);
}

/// Waits (at most 5 s) until the started CPUs report online; returns how many did.
fn wait_all_online(expected: usize) -> usize {
    let deadline = arch::time::uptime_us() + 5_000_000;
    loop {
        let online = (0..expected).filter(|&c| percpu::cpu(c).online.load(Ordering::Acquire)).count();
        if online == expected || arch::time::uptime_us() > deadline {
            return online;
        }
        arch::time::relax();
    }
}

/// What every AP does once its tables and APIC are up.
fn ap_main(cpu: usize) -> ! {
    topology::record_this_cpu(cpu);
    mark_online(cpu);
    log::debug!("online (APIC id {})", percpu::this_cpu().apic_id.load(Ordering::Relaxed));
    selfcheck::ap_idle();
    start_this_cpu(cpu);
    idle_loop()
}
