//! The hardware cost model: what a machine's caches, interconnect,
//! interrupt delivery and idle states add to the time the mechanism's
//! instructions take (docs/SIMULATOR.md, "The hardware cost model").
//!
//! - [`profile`]: the figures of one machine by name (`--hw NAME[,KEY=VALUE]`),
//!   `icount` (all 0: QEMU's machine) and the debates' machines;
//! - [`cache`]: cache affinity: a task's working set decays in the caches
//!   it left as other tasks load theirs, and comes back by distance;
//! - [`locks`]: lock contention in virtual time and the lock's line moving;
//! - [`HwCpuStats`]: what each cost added on each CPU (the `@fw hwcost` line).
//!
//! The platform (`crate::platform`) applies them where the mechanism tells
//! it what it does (`mech::platform::Platform`'s `lock_acquired`,
//! `lock_released`, `remote_access`, `poll_relax`, `set_working_set`, and
//! its switches, IPIs and halts).

pub mod cache;
pub mod locks;
pub mod profile;

pub use profile::HwProfile;

/// What the hardware model added on one CPU (ns, and how many times).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HwCpuStats {
    /// Working sets refilled for the tasks arriving here.
    pub refill_ns: u64,
    pub refills: u64,
    /// Lines of other CPUs read or taken over: published load figures
    /// (`remote_reads`) and the lines locks brought from their last holder.
    pub remote_ns: u64,
    pub remote_reads: u64,
    /// Time waited for locks other CPUs held.
    pub lock_wait_ns: u64,
    pub lock_waits: u64,
    /// Delivery time of the IPIs this CPU received.
    pub ipi_ns: u64,
    pub ipis: u64,
    /// Time from an interrupt to running again out of a halt.
    pub idle_exit_ns: u64,
    pub idle_exits: u64,
    /// Polling idle waits a waker's store ended (no IPI).
    pub poll_wakes: u64,
}

impl HwCpuStats {
    /// The `@fw hwcost` fields after `cpu=`.
    pub fn record(&self) -> String {
        format!(
            "refill_ns={} refills={} remote_ns={} remote_reads={} lock_wait_ns={} lock_waits={} ipi_ns={} ipis={} idle_exit_ns={} idle_exits={} poll_wakes={}",
            self.refill_ns,
            self.refills,
            self.remote_ns,
            self.remote_reads,
            self.lock_wait_ns,
            self.lock_waits,
            self.ipi_ns,
            self.ipis,
            self.idle_exit_ns,
            self.idle_exits,
            self.poll_wakes
        )
    }
}
