//! The machines of the debates fairway reruns (`cargo xtask experiment`), as
//! presets: the topology each argument was made on, which QEMU on two host
//! cores cannot emulate at speed.
//!
//! | preset | machine | from |
//! |---|---|---|
//! | `avg-idle-2013` | 8 sockets x 10 cores x 2 threads, 8 NUMA nodes (160 CPUs) | Jason Low's "Reduce overestimating avg_idle" (AIM7 on an 8-socket server) |
//! | `sis-2021` | 2 sockets x 20 cores x 2 threads, 2 nodes (80 CPUs, an LLC of 40 per socket) | Mel Gorman and Vincent Guittot on `select_idle_cpu()`'s cost accounting ("2-socket (40 cores, 80 threads)") |
//! | `dd-2024` | 2 sockets x 60 cores x 2 threads, 2 nodes (240 CPUs) | Chen Yu's schbench figures on EEVDF's delayed dequeue |
//! | `wake-2005` | 2 sockets x 1 core x 2 threads (4 CPUs) | Ken Chen and Nick Piggin on SD_WAKE_AFFINE / SD_WAKE_BALANCE (a dual Xeon with HT) |
//! | `capacity-2014` | 2 clusters x 2 cores: CPUs 0-1 little (capacity 512), 2-3 big (1024) | Vincent Guittot's cpu_capacity consolidation (big.LITTLE) |
//!
//! No preset has a SLIT: nodes are 10 apart from themselves and 20 from each
//! other, as QEMU presents `-numa` nodes without `-numa dist`. The little
//! CPUs' 512 is the value fairway's `cpu_capacity=` scenarios use (ARM's TC2
//! rated its Cortex-A7 at roughly 0.4-0.5 of its Cortex-A15).

use crate::machine::Machine;
use crate::smp::SmpError;

/// A named machine.
pub struct Preset {
    /// The name `--machine` takes.
    pub name: &'static str,
    /// The `-smp` value.
    pub smp: &'static str,
    /// NUMA nodes.
    pub numa: u32,
    /// `(cpu, capacity)` of the CPUs below full capacity.
    pub capacity: &'static [(usize, u32)],
    /// What the machine stands for.
    pub about: &'static str,
}

/// Every preset.
pub const PRESETS: &[Preset] = &[
    Preset { name: "avg-idle-2013", smp: "160,sockets=8,cores=10,threads=2", numa: 8, capacity: &[],
             about: "Jason Low's 8-socket server (avg_idle, 2013)" },
    Preset { name: "sis-2021", smp: "80,sockets=2,cores=20,threads=2", numa: 2, capacity: &[],
             about: "the 2 x 20 x 2 machine of the select_idle_cpu cost debate (2021)" },
    Preset { name: "dd-2024", smp: "240,sockets=2,cores=60,threads=2", numa: 2, capacity: &[],
             about: "the 240-CPU machine of the delayed-dequeue schbench figures (2024)" },
    Preset { name: "wake-2005", smp: "4,sockets=2,cores=1,threads=2", numa: 0, capacity: &[],
             about: "a dual Xeon with Hyper-Threading (wake balancing, 2005)" },
    Preset { name: "capacity-2014", smp: "4,sockets=2,cores=2,threads=1", numa: 0, capacity: &[(0, 512), (1, 512)],
             about: "two little and two big CPUs (cpu_capacity consolidation, 2014)" },
];

/// The machine named `name`: a preset, or an `-smp` value with `numa` nodes.
/// A name that is neither says which presets exist.
pub fn machine(name: &str, numa: u32) -> Result<Machine, SmpError> {
    if let Some(p) = PRESETS.iter().find(|p| p.name == name) {
        if numa != 0 {
            return Err(SmpError(format!("--numa cannot be combined with the preset `{name}` (it has {} node(s))", p.numa.max(1))));
        }
        let mut m = Machine::from_smp(p.smp, p.numa)?;
        m.name = p.name.to_string();
        for &(cpu, cap) in p.capacity {
            m.capacity[cpu] = cap;
        }
        return Ok(m);
    }
    let starts_like_smp = name.starts_with(|c: char| c.is_ascii_digit()) || name.contains('=');
    if !starts_like_smp {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        return Err(SmpError(format!("unknown machine `{name}`: give a preset ({}) or an -smp value such as 8,sockets=2,cores=2,threads=2", names.join(", "))));
    }
    Machine::from_smp(name, numa)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sched::topology::Level;

    #[test]
    fn every_preset_builds_its_domains() {
        for p in PRESETS {
            let m = machine(p.name, 0).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let d = m.domains().unwrap_or_else(|e| panic!("{}: {e:?}", p.name));
            assert_eq!(d.online().weight() as usize, m.nr_cpus(), "{}", p.name);
        }
    }

    #[test]
    fn the_seed_machines_have_the_debates_shapes() {
        let dd = machine("dd-2024", 0).unwrap();
        assert_eq!(dd.nr_cpus(), 240);
        let d = dd.domains().unwrap();
        // SMT pairs, a 120-CPU LLC per socket, and the two sockets as nodes.
        assert_eq!(d.per_cpu(0)[0].span.weight(), 2);
        assert_eq!(d.sd_llc_size(0), 120);
        assert_eq!(d.per_cpu(0).last().unwrap().span.weight(), 240);

        let avg = machine("avg-idle-2013", 0).unwrap();
        let chain = avg.domains().unwrap().per_cpu(0).to_vec();
        assert_eq!(chain.first().unwrap().level, Level::Smt);
        assert_eq!(chain.last().unwrap().span.weight(), 160);
        assert_eq!(avg.cpus[159].node, 7);

        // Mel Gorman's "2-socket (40 cores, 80 threads)": an LLC of 40 CPUs per socket.
        let sis = machine("sis-2021", 0).unwrap();
        assert_eq!(sis.nr_cpus(), 80);
        let d = sis.domains().unwrap();
        assert_eq!(d.sd_llc_size(0), 40);
        assert_eq!(d.per_cpu(0).last().unwrap().span.weight(), 80);

        let cap = machine("capacity-2014", 0).unwrap();
        assert_eq!(cap.capacity, [512, 512, 1024, 1024]);
        assert!(cap.describe().contains("capacity 0:512,1:512"));
    }

    #[test]
    fn unknown_names_list_the_presets() {
        let e = machine("big-box", 0).unwrap_err().0;
        assert!(e.contains("dd-2024") && e.contains("-smp value"), "{e}");
        assert!(machine("dd-2024", 2).unwrap_err().0.contains("cannot be combined"));
        assert_eq!(machine("4,sockets=2", 2).unwrap().nodes, 2);
    }
}
