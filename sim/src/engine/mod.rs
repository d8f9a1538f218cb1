//! The simulator's engine: a deterministic discrete-event machine in virtual
//! nanoseconds, on which the scheduler mechanism runs as on a platform
//! (docs/SIMULATOR.md, "The engine", states the contract).
//!
//! - [`queue`]: events by (time, seeded tie key, insertion order);
//! - [`core`]: the CPUs (clock, interrupt flag, pending IPI and timer, the
//!   one-shot timer, `current`), steps of CPU time, interrupt delivery, and
//!   the [`Kernel`] trait through which the engine calls a scheduler;
//! - [`task`]: tasks as stackful coroutines whose bodies call [`TaskCtx`];
//! - [`cost`]: what switches, IPIs, interrupts, wakeups, migrations and
//!   balance scans cost in virtual time, and CPU distances;
//! - [`fifo_double`]: a FIFO stand-in for the scheduler mechanism, a test
//!   double to exercise the engine until the mechanism crate is its platform.
#![forbid(unsafe_code)]

pub mod core;
pub mod cost;
pub mod fifo_double;
pub mod queue;
pub mod speed;
pub mod task;

pub use self::core::{Config, CpuState, CpuStats, Engine, Kernel, PlatformOps, PrevState, TaskState};
pub use self::cost::{CostModel, Distance};
pub use self::task::{TaskCtx, TaskId};

#[cfg(test)]
mod tests;
