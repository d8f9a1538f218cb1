//! Interrupts on a simulated CPU: an arriving timer or IPI is delivered to
//! a halted or burning CPU at once, to any other when its context turns
//! interrupts back on; the handlers run on the interrupted context's stack.

use super::context::{resume_ctx, suspend};
use super::cpu_loop::handle;
use super::{cpu_id, log, now, with, Act, Event, Req, Resumed};

/// Takes the pending interrupts of this CPU, if its interrupts are on: the
/// handlers run here, on the running context's stack; a switch they decide
/// suspends this context until it is picked again.
pub(super) fn take_interrupts() {
    loop {
        let c = cpu_id();
        let (timer, ipi, me) = with(|s| {
            let cpu = &mut s.cpus[c];
            if !cpu.irqs_on || cpu.guards != 0 || !cpu.hooks_on {
                return (false, false, 0);
            }
            // One interrupt at a time, the timer's vector first: if its
            // handler switches, the IPI waits for the next context's unmask.
            let timer = std::mem::take(&mut cpu.pending_timer);
            let ipi = !timer && std::mem::take(&mut cpu.pending_ipi);
            if timer || ipi {
                cpu.irqs_on = false;
                cpu.charge_ns += s.cost.irq_entry_ns;
                if timer {
                    cpu.stats.timer_irqs += 1;
                } else {
                    cpu.stats.ipis_taken += 1;
                }
            }
            (timer, ipi, cpu.running)
        });
        if !timer && !ipi {
            return;
        }
        log(c, format_args!("irq {}", if timer { "timer" } else { "resched_ipi" }));
        let frame = me as *mut mech::platform::Frame;
        let resume = if timer { mech::entry::timer_interrupt(frame) } else { mech::entry::scheduler_ipi(frame) };
        let next = resume as usize;
        if next != me {
            suspend(Req::Switch(next));
        }
        // The return from the interrupt: interrupts on again, on whichever
        // CPU this context now runs.
        let c = cpu_id();
        with(|s| s.cpus[c].irqs_on = true);
    }
}

/// An interrupt became pending on `cpu`: taken now if the CPU halts, or
/// burns with interrupts on; otherwise when its context unmasks them.
pub(super) fn deliver(cpu: usize) {
    let t = now();
    let go = with(|s| {
        let exit_ns = if s.hw_on.idle_exit { s.hw.idle_exit_ns } else { 0 };
        let c = &mut s.cpus[cpu];
        match c.act {
            // The halted CPU needs its idle state's exit latency first.
            Act::Halt if exit_ns > 0 => {
                c.act = Act::Waking;
                c.step_gen += 1;
                c.hw.idle_exit_ns += exit_ns;
                c.hw.idle_exits += 1;
                let gen = c.step_gen;
                s.queue.push(t + exit_ns, Event::StepEnd { cpu, gen });
                None
            }
            Act::Halt => Some((c.running, 0)),
            // A polling CPU runs at once (a kick on its way is dropped).
            Act::Poll { .. } => {
                c.step_gen += 1;
                Some((c.running, 0))
            }
            Act::Burn { start, end } if c.irqs_on => {
                c.step_gen += 1;
                c.stats.burn_ns += t - start;
                Some((c.running, end - t))
            }
            _ => None,
        }
    });
    if let Some((h, left)) = go {
        let req = resume_ctx(cpu, h, Resumed::Irq { left });
        handle(cpu, req);
    }
}
