//! The default work until the scheduler lands: a short self-check of what
//! boot set up (heap, every CPU's timer interrupts, IPIs to every CPU), and the
//! deliberate crashes the harness uses to test fault reports.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::arch::{self, apic, percpu, vectors};
use workloads::cmdline::{Crash, Options};

/// The unmapped address the `page_fault` crash reads: above the 4 GiB
/// identity map (`mem::paging`), so no mapping can be behind it.
pub const CRASH_ADDRESS: u64 = 0xdead_0000 + (1 << 32);

/// Bumped by the boot CPU to ask every AP to run `TIMER_TICKS` timer ticks.
static TIMER_REQUEST: AtomicU32 = AtomicU32::new(0);
static TIMER_TICKS: AtomicU64 = AtomicU64::new(0);
static TIMER_HZ: AtomicU32 = AtomicU32::new(1000);

/// Runs every check; prints one `@fw selfcheck` record each. True if all pass.
pub fn run(options: &Options, online: usize) -> bool {
    let checks = [heap(), ipis(online), timers(options, online)];
    checks.iter().all(|ok| *ok)
}

fn report(name: &str, ok: bool, detail: core::fmt::Arguments) -> bool {
    crate::kprintln!("self-check {}: {} ({})", name, if ok { "ok" } else { "FAILED" }, detail);
    crate::record!("selfcheck", "name={} result={}", name, if ok { "ok" } else { "fail" });
    ok
}

/// Allocates, fills, checks and frees a few MiB.
fn heap() -> bool {
    let before = crate::mem::heap::usage().0;
    let mut blocks: Vec<Vec<u64>> = Vec::new();
    for i in 0..8u64 {
        blocks.push((0..(64 * 1024)).map(|j| i * 1_000_000 + j).collect());
    }
    let ok = blocks.iter().enumerate().all(|(i, b)| b.iter().enumerate().all(|(j, v)| *v == i as u64 * 1_000_000 + j as u64));
    drop(blocks);
    let after = crate::mem::heap::usage().0;
    report("heap", ok && after == before, format_args!("4 MiB allocated, verified and freed; {} bytes in use", after))
}

/// Sends one test IPI to every other CPU and waits for each to take it.
fn ipis(online: usize) -> bool {
    let mut missing = 0;
    for cpu in 1..online {
        let area = percpu::cpu(cpu);
        let before = area.test_ipis.load(Ordering::Acquire);
        apic::send_ipi(vectors::TEST_IPI_VECTOR, area.apic_id.load(Ordering::Relaxed));
        let deadline = arch::time::uptime_us() + 1_000_000;
        while area.test_ipis.load(Ordering::Acquire) == before {
            if arch::time::uptime_us() > deadline {
                crate::kprintln!("self-check: CPU {} did not take its IPI within 1 s", cpu);
                missing += 1;
                break;
            }
            arch::time::relax();
        }
    }
    report("ipi", missing == 0, format_args!("{} of {} other CPUs answered", online - 1 - missing, online - 1))
}

/// Every CPU takes `selfcheck_ticks` timer interrupts at `hz`.
fn timers(options: &Options, online: usize) -> bool {
    let ticks = options.selfcheck_ticks as u64;
    TIMER_TICKS.store(ticks, Ordering::Relaxed);
    TIMER_HZ.store(options.hz, Ordering::Relaxed);
    let start: Vec<u64> = (0..online).map(|c| percpu::cpu(c).timer_ticks.load(Ordering::Relaxed)).collect();
    TIMER_REQUEST.fetch_add(1, Ordering::Release);
    for cpu in 1..online {
        apic::send_ipi(vectors::TEST_IPI_VECTOR, percpu::cpu(cpu).apic_id.load(Ordering::Relaxed));
    }
    arm_timer(ticks, options.hz);
    // Generous: TCG may run many vCPUs on few host cores.
    let deadline = arch::time::uptime_us() + 2_000_000 + ticks * 1_000_000 / options.hz as u64 * 4;
    let taken = |c: usize| percpu::cpu(c).timer_ticks.load(Ordering::Relaxed).wrapping_sub(start[c]);
    // Poll with interrupts on (not hlt: this CPU's own timer stops after its
    // ticks, and nothing else would wake it to notice a slow CPU).
    x86_64::instructions::interrupts::enable();
    while !(0..online).all(|c| taken(c) >= ticks) && arch::time::uptime_us() < deadline {
        arch::time::relax();
    }
    x86_64::instructions::interrupts::disable();
    // Each count read once: the verdict and the line printed come from the
    // same value (a late tick between two reads once printed "only 10 of 10").
    let counts: Vec<u64> = (0..online).map(taken).collect();
    let slow: Vec<usize> = (0..online).filter(|&c| counts[c] < ticks).collect();
    for &c in &slow {
        crate::kprintln!("self-check: CPU {} took only {} of {} timer interrupts", c, counts[c], ticks);
    }
    report(
        "timer",
        slow.is_empty(),
        format_args!("{} of {} CPUs took {} ticks at {} Hz", online - slow.len(), online, ticks, options.hz),
    )
}

fn arm_timer(ticks: u64, hz: u32) {
    let area = percpu::this_cpu();
    area.timer_stop_after.store(area.timer_ticks.load(Ordering::Relaxed) + ticks, Ordering::Relaxed);
    apic::start_periodic(hz);
}

/// Set by the boot CPU when the APs should start their schedulers.
static SCHED_START: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Tells every AP to leave `ap_idle` (they get a test IPI to wake up).
pub fn release_aps(online: usize) {
    SCHED_START.store(true, Ordering::Release);
    for cpu in 1..online {
        apic::send_ipi(vectors::TEST_IPI_VECTOR, percpu::cpu(cpu).apic_id.load(Ordering::Relaxed));
    }
}

/// The idle loop of an AP before the scheduler starts: sleeps, arms its
/// timer when the self-check asks, returns when `release_aps` is called.
pub fn ap_idle() {
    let mut seen = 0;
    loop {
        x86_64::instructions::interrupts::disable();
        if SCHED_START.load(Ordering::Acquire) {
            apic::stop_timer();
            // While this CPU waited here, the BSP made the stack arena:
            // it split 2 MiB pages and unmapped the guard pages, flushing
            // only its own TLB. Whatever this CPU cached of the old
            // mappings (a 2 MiB entry would hide a guard page) goes before
            // it runs a thread on those stacks.
            crate::mem::paging::flush_local_tlb();
            return;
        }
        let request = TIMER_REQUEST.load(Ordering::Acquire);
        if request != seen {
            seen = request;
            arm_timer(TIMER_TICKS.load(Ordering::Relaxed), TIMER_HZ.load(Ordering::Relaxed));
        }
        arch::wait_for_interrupt();
    }
}

/// Fails on purpose, as `test_crash=` asked.
pub fn crash(what: Crash) -> ! {
    crate::kprintln!("test_crash: provoking {:?} on purpose", what);
    match what {
        Crash::PageFault => arch::provoke::page_fault(CRASH_ADDRESS),
        Crash::DivideError => arch::provoke::divide_error(),
        Crash::InvalidOpcode => arch::provoke::invalid_opcode(),
        Crash::Panic => panic!("deliberate panic (test_crash=panic)"),
        Crash::Oom => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(alloc::vec![1u8; 16 << 20]);
            }
        }
    }
}
