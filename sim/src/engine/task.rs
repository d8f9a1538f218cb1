//! Simulated tasks: each one a stackful host coroutine (`corosensei`) whose
//! body is ordinary Rust code calling the operations of [`TaskCtx`].
//!
//! Each operation suspends the coroutine with a [`Request`] and the engine
//! decides what happens and when the task runs again; a body never switches to
//! another task itself, so which task runs on which simulated CPU is always the
//! engine's (in time: the scheduler's) decision. Stackful, not `async`: the
//! kernel's workload code is synchronous Rust that blocks deep inside calls,
//! and it is to run here unchanged.

use std::cell::Cell;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, Yielder};

/// A task's index in the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub usize);

/// What a task asks of the engine when it suspends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Execute for this many virtual ns (interruptible while interrupts are enabled).
    Burn(u64),
    /// Sleep until woken (returns at once if a wakeup came since the last block).
    Block,
    /// Give the CPU to the scheduler, staying runnable.
    Yield,
    /// Wake another task.
    Wake(TaskId),
    /// Mask this CPU's interrupts (they stay pending until enabled).
    IrqDisable,
    /// Unmask them; pending ones are taken before the task continues.
    IrqEnable,
}

/// What the engine hands a task when it resumes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resumed {
    pub now_ns: u64,
    pub cpu: usize,
}

pub(crate) type TaskCoroutine = Coroutine<Resumed, Request, (), DefaultStack>;

/// The body of a task.
pub type TaskBody = Box<dyn FnOnce(&TaskCtx)>;

/// A task's view of the engine, passed to its body.
pub struct TaskCtx<'a> {
    yielder: &'a Yielder<Resumed, Request>,
    id: TaskId,
    last: Cell<Resumed>,
}

impl TaskCtx<'_> {
    fn ask(&self, r: Request) {
        self.last.set(self.yielder.suspend(r));
    }

    /// This task.
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// Virtual time when the task last resumed (no time passes inside a body
    /// between two operations).
    pub fn now_ns(&self) -> u64 {
        self.last.get().now_ns
    }

    /// The CPU the task is running on.
    pub fn cpu(&self) -> usize {
        self.last.get().cpu
    }

    /// Execute for `ns` virtual nanoseconds of CPU time. An interrupt may cut
    /// in, and the scheduler may switch the task out and back in, on this or
    /// another CPU; the call returns once `ns` of execution have been done.
    pub fn burn(&self, ns: u64) {
        if ns > 0 {
            self.ask(Request::Burn(ns));
        }
    }

    /// Sleep until another task wakes this one; a wakeup that came while the
    /// task was still running is kept and makes this return at once.
    pub fn block(&self) {
        self.ask(Request::Block);
    }

    /// Offer the CPU to the scheduler.
    pub fn yield_now(&self) {
        self.ask(Request::Yield);
    }

    /// Wake task `t`.
    pub fn wake(&self, t: TaskId) {
        self.ask(Request::Wake(t));
    }

    /// Mask interrupts on this CPU.
    pub fn irq_disable(&self) {
        self.ask(Request::IrqDisable);
    }

    /// Unmask interrupts on this CPU; pending ones are taken first.
    pub fn irq_enable(&self) {
        self.ask(Request::IrqEnable);
    }
}

pub(crate) fn make_coroutine(id: TaskId, stack_bytes: usize, body: TaskBody) -> TaskCoroutine {
    let stack = DefaultStack::new(stack_bytes).unwrap_or_else(|e| panic!("sim: no stack of {stack_bytes} bytes for a task: {e}"));
    Coroutine::with_stack(stack, move |y: &Yielder<Resumed, Request>, first: Resumed| {
        let ctx = TaskCtx { yielder: y, id, last: Cell::new(first) };
        body(&ctx);
    })
}
