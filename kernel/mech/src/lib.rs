//! fairway's scheduler mechanism: tasks, runqueues and their locks, the
//! switch, wakeups and wake lists, the tick and NOHZ, idle, the balance
//! drivers, fork and exit, wait queues, pipes, schedstat and trace.
//!
//! The policy (EEVDF, PELT, topology, balancing decisions) is the `sched`
//! crate; this crate drives it on real CPUs. It reaches the machine only
//! through [`platform`] (this CPU's id, the `current` slot, interrupt
//! masking, task contexts and the switch, the reschedule IPI, the one-shot
//! timer, the clock, stacks, the console): the kernel binds its x86_64
//! implementation with [`set_platform!`], a host test or the simulator its
//! own. Layers and lock order: docs/DESIGN.md.
#![cfg_attr(not(test), no_std)]
#![deny(unsafe_code)]

extern crate alloc;

#[macro_use]
mod macros;

#[allow(unsafe_code)]
pub mod platform;

pub mod percpu;

pub mod balance;
pub mod clock;
pub mod debug;
pub mod entry;
pub mod fault;
pub mod idle;
pub mod idle_loop;
pub mod inject;
pub mod lock;
pub mod lockdep_provoke;
pub mod resched;
pub mod rq;
pub mod schedstat;
pub mod schedule;
pub mod setattr;
pub mod stats;
pub mod sync;
pub mod task;
pub mod thread;
pub mod tick;
pub mod timer;
pub mod trace;
pub mod wakeup;
pub mod watchdog;

/// The most CPUs fairway runs: the policy crate's mask size, the one bound.
pub const MAX_CPUS: usize = sched::cpumask::MAX_CPUS;

/// The most sched-domain levels a CPU has (SMT, MC, PKG, NODE and the NUMA
/// levels): the per-level counters' size.
pub const MAX_LEVELS: usize = 8;
