//! Spin locks and their order: the interrupt-off lock ([`IrqMutex`]) with
//! its level in its type, the levels outer to inner (`level.rs`), and the
//! runtime lock-order checker (`lockdep.rs`). docs/DESIGN.md, "Locks and
//! their order", is the table of them.

pub mod irq_mutex;
pub mod level;
pub mod lockdep;

pub use irq_mutex::{Held, Holds, IrqGuard, IrqMutex};
