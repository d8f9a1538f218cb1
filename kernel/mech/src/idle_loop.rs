//! The idle task's loop (Linux's `kernel/sched/idle.c: do_idle()` and
//! `cpu_idle_poll()`): halt until an interrupt, or with `idle=poll` spin
//! with the polling flag up (`resched.rs`) until there is work, then take
//! it. When the tick stops is `idle.rs`'s.

use core::sync::atomic::{fence, Ordering};

use crate::platform::cpu_id;
use crate::{idle, resched, rq};

/// The idle loop every CPU runs when it has nothing else (its idle task).
pub fn idle_loop() -> ! {
    if resched::polls() {
        poll_loop();
    }
    // The idle task never leaves its CPU: its id once, not at each pass.
    let cpu = cpu_id();
    loop {
        crate::platform::irq_disable();
        if resched::need_resched(cpu) {
            crate::platform::irq_enable();
            crate::schedule::schedule();
        } else {
            // Fault injection acts here (`fault=idle_irqs_off` keeps
            // interrupts off a while: a wakeup then comes between the look
            // above and the wait below).
            if crate::inject::idle_before_wait(cpu, true) {
                // IPIs this CPU holds back (`fault=ipi_delay`) are not due
                // yet: no halt before they are out; look again, interrupts on.
                crate::platform::irq_enable();
                core::hint::spin_loop();
                continue;
            }
            let since = idle::idle_since(cpu);
            crate::platform::wait_for_interrupt();
            // Back in this idle period (not in a new one after a switch
            // away and back): it may have outlasted a tick.
            if idle::idle_since(cpu) == since {
                idle::still_idle(cpu);
            }
        }
    }
}

/// `idle=poll`'s idle loop: spin until there is work, then take it.
fn poll_loop() -> ! {
    // The idle task never leaves its CPU.
    let cpu = cpu_id();
    // Interrupts stay on while polling (the boot flow that becomes the idle
    // task arrives here with them off).
    crate::platform::irq_enable();
    loop {
        // IPIs this CPU holds back (`fault=ipi_delay`) go out before it
        // polls, or at the ticks of the task it runs instead.
        while crate::inject::idle_before_wait(cpu, false)
            && !resched::need_resched(cpu)
            && !rq::wake_list_pending(cpu)
        {
            core::hint::spin_loop();
        }
        resched::set_polling(cpu, true);
        // The flag before the checks: a waker that missed it sends an IPI.
        fence(Ordering::SeqCst);
        // A switch away (an interrupt's) clears the flag: then stop too, and
        // set it again first, since the CPU ran something else meanwhile.
        while resched::polling(cpu)
            && !resched::need_resched(cpu)
            && !rq::wake_list_pending(cpu)
        {
            crate::platform::poll_relax();
        }
        resched::set_polling(cpu, false);
        fence(Ordering::SeqCst);
        // Wakeups queued while the flag was set came without an IPI.
        crate::wakeup::process_wake_list_polled();
        if resched::need_resched(cpu) {
            crate::schedule::schedule();
        }
    }
}
