//! The platform's side of the hardware cost model (`crate::hw`): what the
//! mechanism's hooks (`Platform::lock_acquired`, `lock_released`,
//! `remote_access`, `poll_relax`, `set_working_set`) and the
//! switches cost on a simulated CPU.
//!
//! A lock wait or a remote line happens inside mechanism code, where a
//! coroutine never suspends: it moves this CPU's clock (`section_ns`, which
//! `uptime_ns` reads, so newidle's measured cost and the idle-CPU scan's
//! time see it) and is paid with the next charge, as the mechanism's own
//! work inside a section is. A refill is the arriving task's own time: it
//! is owed by the context and burnt, interruptibly, when the task next runs
//! with interrupts on (`pay_refill`), so the task's runtime holds it.

use mech::lock::level::LockClass;

use super::{cpu_id, now, suspend, take_interrupts, with, with_ctx, Act, Event, Req, Resumed};

/// `Platform::lock_acquired`: wait behind another CPU's hold, and bring the
/// lock's lines from its last holder.
pub(super) fn lock_acquired(class: LockClass, key: u32, addr: usize) {
    let c = cpu_id();
    with(|s| {
        if !s.hw_on.locks {
            return;
        }
        let n = s.nr_cpus;
        let clock = now() + s.cpus[c].section_ns;
        let (hw, dist) = (&s.hw, &s.distance);
        let t = s.locks.acquire(c, class, key, addr, clock, |from| hw.lock_lines * hw.line(dist[from * n + c]));
        let add = t.wait_ns + t.handoff_ns;
        if add > 0 {
            let cpu = &mut s.cpus[c];
            cpu.section_ns += add;
            cpu.hw_ahead_ns += add;
            cpu.hw.lock_wait_ns += t.wait_ns;
            cpu.hw.lock_waits += u64::from(t.wait_ns > 0);
            cpu.hw.remote_ns += t.handoff_ns;
        }
    })
}

/// `Platform::lock_released`.
pub(super) fn lock_released(class: LockClass, key: u32) {
    let c = cpu_id();
    with(|s| {
        if s.hw_on.locks {
            let clock = now() + s.cpus[c].section_ns;
            s.locks.release(c, class, key, clock, &s.hw.hold_ns);
        }
    })
}

/// `Platform::remote_access` (`Snapshot`): `snapshot_lines` lines from `cpu`.
pub(super) fn remote_cpu_read(cpu: usize) {
    let c = cpu_id();
    with(|s| {
        if !s.hw_on.remote || cpu == c {
            return;
        }
        let ns = s.hw.snapshot_lines * s.hw.line(s.distance[cpu * s.nr_cpus + c]);
        let me = &mut s.cpus[c];
        me.section_ns += ns;
        me.hw_ahead_ns += ns;
        me.hw.remote_ns += ns;
        me.hw.remote_reads += 1;
    })
}

/// `Platform::remote_access` (`WakeListPush`): the wake list head's one
/// line from `cpu`, priced as a remote read (the waker's compare-exchange
/// owns the line before it writes).
pub(super) fn remote_line(cpu: usize) {
    let c = cpu_id();
    with(|s| {
        if !s.hw_on.remote || cpu == c {
            return;
        }
        let ns = s.hw.line(s.distance[cpu * s.nr_cpus + c]);
        let me = &mut s.cpus[c];
        me.section_ns += ns;
        me.hw_ahead_ns += ns;
        me.hw.remote_ns += ns;
    })
}

/// `Platform::remote_access` (`WakePoller`): `target` polls; it sees the store when the line
/// arrives (the distance's line, with remote lines on; at once otherwise).
pub(super) fn poll_kick(target: usize) {
    let from = cpu_id();
    with(|s| {
        let line = if s.hw_on.remote { s.hw.line(s.distance[from * s.nr_cpus + target]) } else { 0 };
        let at = now() + s.cpus[from].hw_ahead_ns + line;
        let t = &mut s.cpus[target];
        if t.act == (Act::Poll { kicked: false }) {
            t.act = Act::Poll { kicked: true };
            t.step_gen += 1;
            t.hw.poll_wakes += 1;
            let gen = t.step_gen;
            s.queue.push(at, Event::StepEnd { cpu: target, gen });
        }
    })
}

/// `Platform::poll_relax`: wait for a kick or an interrupt (taken here, as
/// the polling loop runs with interrupts on).
pub(super) fn poll_relax() {
    let c = cpu_id();
    let pending = with(|s| {
        let x = &s.cpus[c];
        x.irqs_on && x.guards == 0 && x.hooks_on && (x.pending_ipi || x.pending_timer)
    });
    if !pending {
        match suspend(Req::Poll) {
            Resumed::Done => return,
            Resumed::Irq { .. } => {}
            r => unreachable!("sim: a poll resumed with {r:?}"),
        }
    }
    take_interrupts();
}

/// `Platform::set_working_set`: the running context's working set is now
/// `bytes`; its growth comes cold from memory.
pub(super) fn set_working_set(bytes: u64) {
    let c = cpu_id();
    let h = with(|s| s.cpus[c].running);
    let mut fp = with_ctx(h, |x| x.fp);
    let ns = with(|s| {
        let hw = &s.hw;
        match s.caches.as_mut() {
            Some(caches) => {
                let r = caches.grow(hw, &mut fp, c, bytes);
                s.cpus[c].hw.refill_ns += r.ns;
                s.cpus[c].hw.refills += u64::from(r.ns > 0);
                r.ns
            }
            None => {
                fp.wss = bytes;
                0
            }
        }
    });
    with_ctx(h, |x| {
        x.fp = fp;
        x.refill_owed += ns;
    });
}

/// At a switch on CPU `c` from context `prev` to `next` (`*_idle`: an idle
/// task, which has no working set): `prev`'s footprint starts decaying,
/// `next` owes the refill of its arrival.
pub(super) fn switch(c: usize, prev: usize, prev_idle: bool, next: usize, next_idle: bool) {
    if !with(|s| s.hw_on.refill) {
        return;
    }
    if !prev_idle {
        let mut fp = with_ctx(prev, |x| x.fp);
        with(|s| s.caches.as_ref().expect("the refill model's caches").leave(&mut fp, c));
        with_ctx(prev, |x| x.fp = fp);
    }
    if !next_idle {
        let mut fp = with_ctx(next, |x| x.fp);
        let ns = with(|s| {
            let hw = &s.hw;
            let r = s.caches.as_mut().expect("the refill model's caches").arrive(hw, &mut fp, c);
            s.cpus[c].hw.refill_ns += r.ns;
            s.cpus[c].hw.refills += u64::from(r.ns > 0);
            r.ns
        });
        with_ctx(next, |x| {
            x.fp = fp;
            x.refill_owed += ns;
        });
    }
}

/// Takes the refill the context running here owes.
pub(super) fn take_refill_owed() -> u64 {
    let h = with(|s| s.cpus[cpu_id()].running);
    if h == 0 {
        return 0;
    }
    with_ctx(h, |x| std::mem::take(&mut x.refill_owed))
}

/// Burns the refill the running context owes, if it may suspend here
/// (interrupts on, no section).
pub(super) fn pay_refill() {
    let c = cpu_id();
    if !with(|s| s.hw_on.refill && s.cpus[c].irqs_on && s.cpus[c].guards == 0) {
        return;
    }
    let owed = take_refill_owed();
    if owed > 0 {
        super::burn_ns(owed);
    }
}

/// The `@fw hw`, `@fw hwcost` (per CPU) and `@fw hwlock` (per lock class
/// taken) lines of the run (docs/CONSOLE.md).
pub(super) fn report_lines() -> Vec<String> {
    with(|s| {
        let mut out = vec![format!("@fw hw {}", s.hw.record())];
        for (c, cpu) in s.cpus.iter().enumerate() {
            out.push(format!("@fw hwcost cpu={c} {}", cpu.hw.record()));
        }
        for class in LockClass::ALL {
            let k = s.locks.classes[class as usize];
            if k.acquires > 0 {
                out.push(format!(
                    "@fw hwlock class={} acquires={} contended={} wait_ns={} handoff_ns={} hold_ns={}",
                    class.name(),
                    k.acquires,
                    k.contended,
                    k.wait_ns,
                    k.handoff_ns,
                    k.hold_ns
                ));
            }
        }
        out
    })
}
