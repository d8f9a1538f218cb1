//! `mech::platform::Platform` for the simulated machine (see the module
//! docs of `platform` for the mapping); each item keeps the contract the
//! trait's docs state.

use std::fmt;
use std::sync::Arc;

use mech::platform::{Context, Exit, Frame, Platform, RemoteAccess, Stack, SwitchError, Work};
use mech::lock::level::LockClass;
use mech::task::Task;

use super::context::{new_coroutine, new_ctx};
use super::{cpu_id, hw, log, now, suspend, take_interrupts, with, with_ctx, Req, Resumed, CTXS};
use crate::engine::cost::Distance;

/// The simulator's machine (bound with `mech::set_platform!`).
pub struct SimPlatform;

mech::set_platform!(SimPlatform);

fn wrap(h: usize) -> Context {
    // SAFETY: `h` is a fresh handle of `new_ctx`, named by no other
    // `Context`; `context_free` ends it when this one drops.
    unsafe { Context::from_handle(h) }
}

/// Interrupts back on after a section: a pending one is taken now, as `sti`
/// lets it in.
fn irqs_on_again() {
    super::pay_own_work();
    let c = cpu_id();
    let pending = with(|s| {
        let cpu = &mut s.cpus[c];
        cpu.irqs_on = true;
        cpu.guards == 0 && cpu.hooks_on && (cpu.pending_ipi || cpu.pending_timer)
    });
    if pending {
        take_interrupts();
    }
    // A task that arrived owes its working set's refill: it runs now.
    hw::pay_refill();
}

impl Platform for SimPlatform {
    fn cpu_id() -> usize {
        cpu_id()
    }
    fn current() -> Option<Arc<Task>> {
        let c = cpu_id();
        with(|s| s.cpus[c].current.clone())
    }
    fn current_ptr() -> *const Task {
        let c = cpu_id();
        // The slot keeps its count while its task runs here.
        with(|s| s.cpus[c].current.as_ref().map_or(std::ptr::null(), Arc::as_ptr))
    }
    fn set_current(task: Arc<Task>) {
        let c = cpu_id();
        let old = with(|s| s.cpus[c].current.replace(task));
        // Dropped outside the state's borrow: it may free a context.
        drop(old);
    }
    fn set_current_irqs_off(task: Arc<Task>) {
        Self::set_current(task)
    }
    fn irq_guard_enter() {
        let c = cpu_id();
        with(|s| {
            let cpu = &mut s.cpus[c];
            if cpu.guards == 0 {
                cpu.guard_saved_on = cpu.irqs_on;
                cpu.irqs_on = false;
            }
            cpu.guards += 1;
        });
    }
    fn irq_guard_exit() {
        let c = cpu_id();
        let restore = with(|s| {
            let cpu = &mut s.cpus[c];
            cpu.guards -= 1;
            cpu.guards == 0 && cpu.guard_saved_on
        });
        if restore {
            irqs_on_again();
        }
    }
    fn irq_guards_held() -> u32 {
        let c = cpu_id();
        with(|s| s.cpus[c].guards)
    }
    fn irqs_enabled() -> bool {
        let c = cpu_id();
        with(|s| s.cpus[c].irqs_on)
    }
    fn irq_disable() {
        let c = cpu_id();
        with(|s| s.cpus[c].irqs_on = false);
    }
    fn irq_enable() {
        irqs_on_again();
    }
    fn wait_for_interrupt() {
        // `sti; hlt`: interrupts on, and one pending already ends the wait.
        let c = cpu_id();
        let pending = with(|s| {
            let cpu = &mut s.cpus[c];
            cpu.irqs_on = true;
            cpu.pending_ipi || cpu.pending_timer
        });
        if !pending {
            match suspend(Req::Halt) {
                Resumed::Irq { .. } => {}
                r => unreachable!("sim: a halt resumed with {r:?}"),
            }
        }
        take_interrupts();
    }

    fn context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, _stack_top: u64) -> Context {
        let (bytes, wss) = with(|s| (s.stack_bytes, s.hw.wss_default_kb * 1024));
        let co = new_coroutine(bytes, move || {
            // A new thread starts with interrupts on.
            irqs_on_again();
            entry(arg)
        });
        wrap(new_ctx(Some(co), None, false, wss))
    }
    fn context_running_here(cpu: usize) -> Context {
        // Another name for the boot flow running on `cpu` (its coroutine is
        // the engine's).
        wrap(new_ctx(None, Some(cpu), true, 0))
    }
    fn context_on_cpu(h: usize) -> bool {
        with_ctx(h, |x| x.on_cpu)
    }
    fn context_free(h: usize) {
        let gone = CTXS.with(|cs| {
            let mut cs = cs.borrow_mut();
            let x = cs[h - 1].as_mut().expect("sim: a context freed twice");
            if x.co.is_none() && x.boot_of.is_none() {
                // Its coroutine runs now (a thread dropping the last count
                // of itself): freed when it suspends.
                x.freed = true;
                return None;
            }
            cs[h - 1].take()
        });
        // Outside the borrow: dropping it discards its coroutine.
        drop(gone);
    }
    fn context_adopt_here(_h: usize) {}
    fn switch_frames(frame: *mut Frame, prev: usize, next: usize) -> Result<*mut Frame, SwitchError> {
        if prev == next {
            return Ok(frame);
        }
        let c = cpu_id();
        if with_ctx(next, |x| x.on_cpu) {
            let other = with(|s| s.cpus.iter().position(|cpu| cpu.running == next)).unwrap_or(usize::MAX);
            return Err(SwitchError::RunningElsewhere { cpu: other });
        }
        let (last, next_idle) = with_ctx(next, |x| {
            x.on_cpu = true;
            let last = x.last_cpu.replace(c);
            (last, x.boot_of.is_some())
        });
        let prev_idle = with_ctx(prev, |x| {
            x.on_cpu = false;
            x.boot_of.is_some()
        });
        let ns = with(|s| {
            let n = s.nr_cpus;
            let d = last.map_or(Distance::SameCpu, |l| s.distance[l * n + c]);
            let cpu = &mut s.cpus[c];
            let base = if prev_idle || next_idle { s.cost.switch_idle_ns } else { s.cost.switch_ns };
            cpu.stats.switches += 1;
            cpu.stats.idle_switches += u64::from(prev_idle || next_idle);
            cpu.stats.migrations_in[d as usize] += u64::from(d != Distance::SameCpu);
            let ns = base + s.cost.migration_ns(d);
            cpu.charge_ns += ns;
            ns
        });
        hw::switch(c, prev, prev_idle, next, next_idle);
        log(c, format_args!("switch prev={prev} next={next} cost={ns}"));
        Ok(next as *mut Frame)
    }
    fn give_up_cpu() {
        let c = cpu_id();
        let (started, me, was_on) = with(|s| {
            let cpu = &mut s.cpus[c];
            let was_on = cpu.irqs_on;
            cpu.irqs_on = false;
            (cpu.current.is_some(), cpu.running, was_on)
        });
        if !started {
            with(|s| s.cpus[c].irqs_on = was_on);
            return;
        }
        // The schedule trap: the switch runs on this context's stack, and
        // this context resumes here when it is picked again.
        let resume = mech::schedule::schedule_voluntary(me as *mut Frame) as usize;
        if resume != me {
            suspend(Req::Switch(resume));
        }
        if was_on {
            irqs_on_again();
        } else {
            let c = cpu_id();
            with(|s| s.cpus[c].irqs_on = false);
        }
    }

    fn send_resched_ipi(cpu: usize) {
        let from = cpu_id();
        with(|s| {
            s.cpus[from].stats.ipis_sent += 1;
            // It leaves after the hardware delays its sender met so far
            // (lock waits, remote lines: 0 without the hardware model).
            let mut at = now() + s.cost.ipi_latency_ns + s.cpus[from].hw_ahead_ns;
            if s.hw_on.ipi {
                let lat = s.hw.ipi_ns(s.distance[from * s.nr_cpus + cpu]);
                at += lat;
                s.cpus[cpu].hw.ipi_ns += lat;
                s.cpus[cpu].hw.ipis += 1;
            }
            s.queue.push(at, super::Event::Ipi { cpu });
        });
        log(from, format_args!("ipi_send to={cpu}"));
    }
    fn timer_start_ns(ns: u64) {
        let c = cpu_id();
        with(|s| {
            let cpu = &mut s.cpus[c];
            cpu.timer_gen += 1;
            let gen = cpu.timer_gen;
            s.queue.push(now() + ns.max(1), super::Event::Timer { cpu: c, gen });
        });
    }
    fn timer_stop() {
        let c = cpu_id();
        with(|s| s.cpus[c].timer_gen += 1);
    }
    fn timer_eoi() {}
    fn uptime_ns() -> u64 {
        super::cpu_now()
    }

    fn stack_alloc() -> Option<Stack> {
        // The coroutine has its own stack: this one is a name only.
        with(|s| {
            s.stacks_in_use += 1;
            s.next_stack_slot += 1;
            Some(Stack { slot: s.next_stack_slot, top: 0 })
        })
    }
    fn stack_free(_stack: Stack) {
        with(|s| s.stacks_in_use -= 1);
    }
    fn stack_usage() -> (usize, usize) {
        with(|s| (s.stacks_in_use, usize::MAX))
    }
    fn heap_usage() -> (usize, usize) {
        (0, usize::MAX)
    }
    fn stack_sizing(_out: &mut dyn fmt::Write) {
        // Stacks are the coroutines' own, without a limit: no rule to name.
    }

    fn write_line(args: fmt::Arguments) {
        let line = args.to_string();
        with(|s| {
            if s.echo {
                println!("{line}");
            }
            s.out.push(line);
        });
    }
    fn exit(why: Exit) -> ! {
        with(|s| {
            s.stopped.get_or_insert_with(|| format!("exit {why:?}"));
        });
        loop {
            suspend(Req::Stop);
        }
    }
    fn burn_ns(ns: u64) {
        super::burn_ns(ns)
    }
    fn work_done(instructions: u64) {
        // The loop took no virtual time: it costs what it costs the kernel
        // under `-icount shift=0`, one ns per guest instruction.
        super::work_done(instructions)
    }
    fn mechanism_work(work: Work) {
        // The mechanism's own work, at the kernel's `-icount` price.
        super::work_done(super::prices::instructions(work))
    }
    fn busy_loops_run() -> bool {
        // `work_done` alone moves the clock: the loops' host work is skipped.
        false
    }
    fn lock_acquired(class: LockClass, key: u32, lock: usize) {
        hw::lock_acquired(class, key, lock)
    }
    fn lock_released(class: LockClass, key: u32) {
        hw::lock_released(class, key)
    }
    fn remote_access(cpu: usize, access: RemoteAccess) {
        match access {
            RemoteAccess::Snapshot => hw::remote_cpu_read(cpu),
            RemoteAccess::WakePoller => hw::poll_kick(cpu),
            RemoteAccess::WakeListPush => hw::remote_line(cpu),
        }
    }
    fn poll_relax() {
        hw::poll_relax()
    }
    fn set_working_set(kib: u32) {
        hw::set_working_set(u64::from(kib) * 1024)
    }
}
