//! `fairway-sim`: the simulator's machines.
//!
//! Some of the debates fairway reruns were argued on machines that QEMU on two
//! host cores cannot emulate at a useful speed (160 and 240 CPUs). The
//! simulator runs fairway's own scheduler code on such machines, in virtual
//! time:
//!
//! - [`smp`]: QEMU's `-smp` option, parsed and completed as QEMU does;
//! - [`machine`](mod@machine): the CPUs of a machine with their topology IDs, NUMA nodes
//!   and capacities, and the sched domains the policy crate builds over them
//!   (the same function, `sched::topology::SchedDomains::build`, the kernel
//!   calls at boot); a QEMU scenario checks that the kernel and the model
//!   print the same topology for the same `-smp`;
//! - [`presets`]: the debates' machines by name;
//! - [`hw`]: the hardware cost model (caches, remote lines, lock
//!   contention, IPI and idle-exit latency) by machine profile, which the
//!   platform adds to the engine's costs (`--hw PROFILE`);
//! - [`engine`]: the deterministic discrete-event engine in virtual time that
//!   runs the scheduler mechanism as its platform: CPUs, interrupts,
//!   timers, IPIs, coroutine tasks and the cost model calibrated from the
//!   kernel's `-icount` figures (its own tests drive it with a FIFO test
//!   double);
//! - [`platform`]: fairway's mechanism (`kernel/mech`) and policy, unchanged,
//!   on N simulated CPUs: the second `mech::platform::Platform`, whose
//!   contexts are the engine's coroutines (docs/SIMULATOR.md, "The mechanism
//!   on the engine");
//! - [`workload`]: one kernel command line's workload on one machine, as
//!   the kernel's `init` runs it (the `fairway-sim` binary's body).
//!
//! `cargo xtask sim --machine NAME|SMP [--numa N]` prints a machine's topology
//! and domains in the kernel's format.

pub mod engine;
pub mod hw;
pub mod machine;
pub mod platform;
pub mod presets;
pub mod smp;
pub mod workload;

pub use machine::Machine;
pub use presets::{machine, PRESETS};
pub use smp::{SmpError, SmpSpec};
