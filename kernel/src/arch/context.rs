//! Saved execution contexts and the switch between them.
//!
//! fairway switches tasks only with interrupts off, on the CPU's handler
//! stack: a preemption comes from the timer or the reschedule IPI, and a task
//! that blocks or yields calls `give_up_cpu` (`schedule_call`, boot/isr.S).
//! Every interrupt arrives on IST1, which points at the end of the running
//! task's `Context` frame, so the CPU and the stub (`irq_common`) save every
//! register and the FPU/SSE state straight into the task, then run the handler
//! on the CPU's own handler stack; `schedule_call` writes the same frame in
//! the same place (what a C call must preserve, and a return point). A switch copies nothing: it points IST1 at
//! the incoming task's frame and hands that frame to the stub, which restores
//! it before `iretq`. The interrupted task's own stack is never written, so
//! its red zone survives.
//!
//! Invariant (the `on_cpu` protocol, as Linux's `p->on_cpu`): a context's
//! frame is written only by the CPU that is running it (by interrupt entry
//! or `schedule_call`, while IST1 points at it), and read only by the CPU that has claimed it
//! with the `on_cpu` compare-exchange. The CPU that switches a task out moves
//! IST1 away from its frame before it releases `on_cpu` (Release), and the
//! stub has finished writing the frame before the handler runs; the claimer
//! (Acquire) points IST1 at the frame before it leaves the handler. So no two
//! CPUs ever touch one frame at the same time, and a task never runs on two
//! CPUs.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::trap::{TrapFrame, KERNEL_CS, KERNEL_SS};

/// One task's saved registers and FPU/SSE state.
///
/// The frame's address is stable (a `Context` lives in its `Task`, behind an
/// `Arc`, for as long as any CPU can run it) because IST1 points into it.
pub struct Context {
    frame: UnsafeCell<TrapFrame>,
    on_cpu: AtomicBool,
    /// CPU running it (meaningful while `on_cpu`).
    running_on: AtomicUsize,
}

// SAFETY: the frame is only accessed under the on_cpu protocol above.
unsafe impl Sync for Context {}
// SAFETY: as above; the frame holds plain data.
unsafe impl Send for Context {}

/// Interrupts enabled, reserved bit 1 set.
const RFLAGS_IF: u64 = 0x202;

/// How long `switch_frames` waits for a context that another CPU is still
/// saving before it declares that the task runs on two CPUs.
const CLAIM_SPINS: u64 = 200_000_000;

impl Context {
    /// The context of code already running on this CPU (a CPU's boot flow,
    /// which becomes its idle task): claimed, frame filled at the first switch.
    pub fn running_here(cpu: usize) -> Context {
        Context {
            frame: UnsafeCell::new(TrapFrame::zeroed()),
            on_cpu: AtomicBool::new(true),
            running_on: AtomicUsize::new(cpu),
        }
    }

    /// A new thread that will start at `entry(arg)` on the stack whose top
    /// (exclusive, 16-byte aligned) is `stack_top`, interrupts on.
    pub fn new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> Context {
        let mut f = TrapFrame::zeroed();
        // Default x87 control word and MXCSR (all exceptions masked).
        f.fx[0..2].copy_from_slice(&0x037fu16.to_le_bytes());
        f.fx[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
        f.rip = entry as usize as u64;
        f.rdi = arg as u64;
        // A zero "return address" ends backtraces; rsp is then 8 mod 16, as
        // at the entry of any function.
        let rsp = stack_top - 8;
        // SAFETY: the stack belongs to the new thread, which has not run yet;
        // the slot is inside it (stack_top is exclusive).
        unsafe { (rsp as *mut u64).write(0) };
        f.rsp = rsp;
        f.rbp = 0;
        f.cs = KERNEL_CS;
        f.ss = KERNEL_SS;
        f.rflags = RFLAGS_IF;
        Context { frame: UnsafeCell::new(f), on_cpu: AtomicBool::new(false), running_on: AtomicUsize::new(0) }
    }

    /// Whether some CPU is running (or still saving) this context.
    pub fn on_cpu(&self) -> bool {
        self.on_cpu.load(Ordering::Acquire)
    }
}

/// Why a switch could not happen.
#[derive(Debug)]
pub enum SwitchError {
    /// `next` stayed claimed by another CPU: it would run on two CPUs.
    RunningElsewhere { cpu: usize },
}

/// Makes `ctx` (created by `running_here` on this CPU) the context that this
/// CPU's interrupts save into: from now on the code running here is `ctx`'s.
/// Interrupts must be off.
pub fn adopt_here(ctx: &Context) {
    super::descriptors::set_irq_frame(ctx.frame.get());
}

/// Switches this CPU from `prev` (the context running here, whose frame the
/// interrupt stub has just saved: `current`) to `next`, another context
/// (the switch calls this only when they differ, `mech::platform`'s
/// contract: the claim below would spin on `next` as on a context running
/// elsewhere): claims `next`, makes interrupts save into it, releases
/// `prev`, and returns the frame the stub must restore. Interrupts must be
/// off (it runs on the interrupt path).
pub fn switch_frames(current: &mut TrapFrame, prev: &Context, next: &Context) -> Result<*mut TrapFrame, SwitchError> {
    debug_assert!(!core::ptr::eq(prev, next), "a switch to the running context");
    debug_assert!(core::ptr::eq(current, prev.frame.get()), "the interrupt did not save into the running context");
    let me = super::percpu::cpu_id();
    let mut spins = 0u64;
    while next.on_cpu.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        spins += 1;
        if spins > CLAIM_SPINS {
            return Err(SwitchError::RunningElsewhere { cpu: next.running_on.load(Ordering::Relaxed) });
        }
        core::hint::spin_loop();
    }
    next.running_on.store(me, Ordering::Relaxed);
    // From here on, interrupts on this CPU save into `next`; `prev`'s frame
    // was completely written by the stub before this handler ran.
    super::descriptors::set_irq_frame(next.frame.get());
    prev.on_cpu.store(false, Ordering::Release);
    Ok(next.frame.get())
}

extern "C" {
    /// boot/isr.S: saves the calling task's frame as the schedule interrupt
    /// would and runs the scheduler; returns when the task runs again.
    fn schedule_call();
}

/// Gives up the CPU (the caller set its state first): saves this task's
/// context into its frame and switches, as the `SCHEDULE_VECTOR` interrupt
/// does, but by a call: a C call only has to preserve rbx, rbp, r12-r15 and
/// the FPU control state, so the entry writes those and the return point
/// instead of pushing every register through the interrupt gate (about 40
/// instructions less per blocking switch). Returns when the task is
/// switched back in. Before this CPU's scheduler runs it does nothing (as
/// the interrupt's handler did).
pub fn give_up_cpu() {
    if !super::percpu::sched_running_here() {
        return;
    }
    // The scheduler runs here, so the frame area (gs:24, the running task's
    // `Context` frame, see the module invariant) and the handler stack
    // (gs:16) are set up.
    // SAFETY: `schedule_call` follows the C ABI: it returns, callee-saved
    // registers and stack intact, when this task resumes from its frame.
    unsafe { schedule_call() };
}

/// `give_up_cpu` unless this CPU holds interrupt-off guards: then their
/// count, without switching (0 also before the CPU's scheduler runs, when
/// it does nothing). One load tests both (`percpu::switch_gate_open`).
#[inline(always)]
pub fn give_up_cpu_unheld() -> u32 {
    if !super::percpu::switch_gate_open() {
        return super::percpu::irq_guards_held();
    }
    // SAFETY: as in `give_up_cpu`; the gate said the scheduler runs here,
    // so the frame area, handler stack and hook are set up.
    unsafe { schedule_call() };
    0
}
