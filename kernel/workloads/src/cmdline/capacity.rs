//! `cpu_capacity=CPU:CAP,...`: the emulated capacities, parsed before the
//! CPUs are counted and checked against them once they are.

use alloc::vec::Vec;

/// One `cpu_capacity=` entry checked once the CPUs are counted (the parser
/// has already checked the capacity's range): `None` when `cpu` is online,
/// else the problem to report (the CPU keeps 1024). The kernel's boot and
/// the simulator both apply the option through it. The problem is a value
/// to display, not a `String`: the kernel's boot formats it straight into
/// its report.
pub fn cpu_capacity_offline(cpu: usize, cap: u64, online: usize) -> Option<CpuCapacityOffline> {
    (cpu >= online).then_some(CpuCapacityOffline { cpu, cap, online })
}

/// A `cpu_capacity=` entry that names a CPU that is not online.
pub struct CpuCapacityOffline {
    cpu: usize,
    cap: u64,
    online: usize,
}

impl core::fmt::Display for CpuCapacityOffline {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let CpuCapacityOffline { cpu, cap, online } = self;
        write!(
            f,
            "cpu_capacity: CPU {cpu} capacity {cap} is not an online CPU (online: {online}) with a capacity of 1..1024; CPU {cpu} keeps 1024"
        )
    }
}

pub(super) fn parse_capacities(value: &str) -> Option<Vec<(usize, u64)>> {
    value
        .split(',')
        .map(|pair| {
            let (cpu, cap) = pair.split_once(':')?;
            let cap: u64 = cap.parse().ok()?;
            ((1..=1024).contains(&cap)).then_some(())?;
            Some((cpu.parse().ok()?, cap))
        })
        .collect()
}

