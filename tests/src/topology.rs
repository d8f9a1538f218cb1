//! The expected scheduling-domain hierarchy of a QEMU machine, computed from the topology rules
//! (not copied from kernel output), so the scenarios can check every CPU's `@fw sd` lines exactly.
//!
//! Rules (Linux's default x86 topology and its degenerate-domain removal):
//! * CPU numbering follows QEMU: CPU `i` is thread `i % T` of core `(i / T) % C` of socket
//!   `i / (T * C)`; NUMA nodes (when more than one) split the CPUs evenly in contiguous ranges.
//! * Levels before removal, bottom-up: SMT (the core's threads), MC (the package's CPUs, i.e. the
//!   LLC, within the node), PKG (the node's CPUs; all CPUs without NUMA), NUMA (all CPUs; only
//!   with more than one node).
//! * A level's groups are the spans of the level below it (before removal) for the CPUs of its
//!   span; the lowest level's groups are single CPUs. They are listed local group first, then in
//!   the order met when walking the span upwards from the local CPU and wrapping around.
//! * A level is removed when its span has one CPU or equals the span of the kept level below it.

use crate::log::{format_cpulist, format_groups};

/// A machine's CPU topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub sockets: u32,
    pub cores: u32,
    pub threads: u32,
    /// NUMA nodes; 0 and 1 both mean no NUMA.
    pub nodes: u32,
}

/// One expected level of one CPU's hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    pub name: &'static str,
    pub span: Vec<u32>,
    pub groups: Vec<Vec<u32>>,
}

impl Level {
    /// `level=SMT span=4-5 groups=5/4`, the fields as the kernel prints them.
    pub fn describe(&self) -> String {
        format!(
            "level={} span={} groups={}",
            self.name,
            format_cpulist(&self.span),
            format_groups(&self.groups)
        )
    }
}

impl Topology {
    /// Parses QEMU's `-smp` value (`8`, `8,sockets=2,cores=2,threads=2`, `cpus=4,...`) and applies
    /// QEMU 10's defaults for what is left out (one socket, one thread, cores fill the rest).
    pub fn from_smp(spec: &str, nodes: u32) -> Result<Topology, String> {
        let (mut cpus, mut sockets, mut cores, mut threads) = (None, None, None, None);
        for (i, part) in spec.split(',').enumerate() {
            let (k, v) = match part.split_once('=') {
                Some((k, v)) => (k, v),
                None if i == 0 => ("cpus", part),
                None => return Err(format!("bad -smp `{spec}`")),
            };
            let n: u32 = v
                .parse()
                .map_err(|_| format!("bad -smp `{spec}`: `{part}`"))?;
            match k {
                "cpus" => cpus = Some(n),
                "sockets" => sockets = Some(n),
                "cores" => cores = Some(n),
                "threads" => threads = Some(n),
                "maxcpus" => {}
                "dies" | "clusters" | "modules" | "books" | "drawers" if n == 1 => {}
                _ => return Err(format!("-smp `{spec}`: `{k}` is not modelled here")),
            }
        }
        let sockets = sockets.unwrap_or(1);
        let threads = threads.unwrap_or(1);
        let cores = match (cores, cpus) {
            (Some(c), _) => c,
            (None, Some(n)) => n / (sockets * threads).max(1),
            (None, None) => 1,
        };
        let t = Topology {
            sockets,
            cores,
            threads,
            nodes,
        };
        if t.cpus() == 0 || cpus.is_some_and(|n| n != t.cpus()) {
            return Err(format!(
                "-smp `{spec}`: cpus do not match sockets*cores*threads"
            ));
        }
        if nodes > 1 && !t.cpus().is_multiple_of(nodes) {
            return Err(format!(
                "{} CPUs do not split evenly into {nodes} nodes",
                t.cpus()
            ));
        }
        Ok(t)
    }

    pub fn cpus(&self) -> u32 {
        self.sockets * self.cores * self.threads
    }

    pub fn socket_of(&self, cpu: u32) -> u32 {
        cpu / (self.threads * self.cores)
    }

    pub fn core_of(&self, cpu: u32) -> u32 {
        (cpu / self.threads) % self.cores
    }

    pub fn thread_of(&self, cpu: u32) -> u32 {
        cpu % self.threads
    }

    /// QEMU's APIC ID: thread, core and socket fields, each as wide as its count needs.
    pub fn apic_id(&self, cpu: u32) -> u32 {
        let bits = |n: u32| n.max(1).next_power_of_two().trailing_zeros();
        let (tb, cb) = (bits(self.threads), bits(self.cores));
        (self.socket_of(cpu) << (tb + cb)) | (self.core_of(cpu) << tb) | self.thread_of(cpu)
    }

    pub fn node_of(&self, cpu: u32) -> u32 {
        if self.nodes <= 1 {
            0
        } else {
            cpu / (self.cpus() / self.nodes)
        }
    }

    fn all(&self) -> impl Iterator<Item = u32> + Clone {
        0..self.cpus()
    }

    /// The levels before degenerate removal: (name, span function).
    fn raw_span(&self, level: usize, cpu: u32) -> Vec<u32> {
        let s = self.socket_of(cpu);
        let n = self.node_of(cpu);
        match level {
            0 => self
                .all()
                .filter(|&c| self.socket_of(c) == s && self.core_of(c) == self.core_of(cpu))
                .collect(),
            1 => self
                .all()
                .filter(|&c| self.socket_of(c) == s && self.node_of(c) == n)
                .collect(),
            2 => self.all().filter(|&c| self.node_of(c) == n).collect(),
            _ => self.all().collect(),
        }
    }

    fn raw_levels(&self) -> &'static [&'static str] {
        if self.nodes > 1 {
            &["SMT", "MC", "PKG", "NUMA"]
        } else {
            &["SMT", "MC", "PKG"]
        }
    }

    /// Groups of raw level `level` for `cpu`, local first, wrapping upwards from `cpu`.
    fn raw_groups(&self, level: usize, cpu: u32) -> Vec<Vec<u32>> {
        let span = self.raw_span(level, cpu);
        let start = span.iter().position(|&c| c >= cpu).unwrap_or(0);
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for i in 0..span.len() {
            let c = span[(start + i) % span.len()];
            if groups.iter().any(|g| g.contains(&c)) {
                continue;
            }
            groups.push(if level == 0 {
                vec![c]
            } else {
                self.raw_span(level - 1, c)
            });
        }
        groups
    }

    /// The hierarchy the kernel must print for `cpu`, bottom-up, after degenerate removal.
    pub fn expected_levels(&self, cpu: u32) -> Vec<Level> {
        let mut out: Vec<Level> = Vec::new();
        for (i, name) in self.raw_levels().iter().enumerate() {
            let span = self.raw_span(i, cpu);
            let below = out.last().map(|l| l.span.len()).unwrap_or(1);
            if span.len() <= 1 || span.len() == below {
                continue;
            }
            out.push(Level {
                name,
                span,
                groups: self.raw_groups(i, cpu),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(t: &Topology, cpu: u32) -> Vec<String> {
        t.expected_levels(cpu).iter().map(Level::describe).collect()
    }

    #[test]
    fn parse_smp() {
        let t = Topology::from_smp("8,sockets=2,cores=2,threads=2", 1).unwrap();
        assert_eq!((t.sockets, t.cores, t.threads), (2, 2, 2));
        let t = Topology::from_smp("16", 1).unwrap();
        assert_eq!((t.sockets, t.cores, t.threads), (1, 16, 1));
        let t = Topology::from_smp("8,sockets=2,cores=4", 2).unwrap();
        assert_eq!((t.sockets, t.cores, t.threads, t.nodes), (2, 4, 1, 2));
        assert!(Topology::from_smp("8,sockets=3,cores=2", 1).is_err());
        assert!(Topology::from_smp("6", 4).is_err());
        assert!(Topology::from_smp("8,dies=2", 1).is_err());
    }

    #[test]
    fn two_sockets_two_cores_two_threads() {
        let t = Topology::from_smp("8,sockets=2,cores=2,threads=2", 1).unwrap();
        assert_eq!(
            show(&t, 5),
            vec![
                "level=SMT span=4-5 groups=5/4",
                "level=MC span=4-7 groups=4-5/6-7",
                "level=PKG span=0-7 groups=4-7/0-3",
            ]
        );
        assert_eq!(
            show(&t, 2),
            vec![
                "level=SMT span=2-3 groups=2/3",
                "level=MC span=0-3 groups=2-3/0-1",
                "level=PKG span=0-7 groups=0-3/4-7",
            ]
        );
        assert_eq!(show(&t, 7)[1], "level=MC span=4-7 groups=6-7/4-5");
    }

    #[test]
    fn one_socket_four_cores_two_threads() {
        let t = Topology::from_smp("8,sockets=1,cores=4,threads=2", 1).unwrap();
        assert_eq!(
            show(&t, 3),
            vec![
                "level=SMT span=2-3 groups=3/2",
                "level=MC span=0-7 groups=2-3/4-5/6-7/0-1"
            ]
        );
    }

    #[test]
    fn four_sockets_single_cpu() {
        let t = Topology::from_smp("4,sockets=4,cores=1,threads=1", 1).unwrap();
        assert_eq!(show(&t, 0), vec!["level=PKG span=0-3 groups=0/1/2/3"]);
        assert_eq!(show(&t, 2), vec!["level=PKG span=0-3 groups=2/3/0/1"]);
    }

    #[test]
    fn numa_two_nodes() {
        let t = Topology::from_smp("8,sockets=2,cores=4", 2).unwrap();
        assert_eq!(
            show(&t, 1),
            vec![
                "level=MC span=0-3 groups=1/2/3/0",
                "level=NUMA span=0-7 groups=0-3/4-7"
            ]
        );
        assert_eq!(
            show(&t, 6),
            vec![
                "level=MC span=4-7 groups=6/7/4/5",
                "level=NUMA span=0-7 groups=4-7/0-3"
            ]
        );
        assert_eq!(t.node_of(3), 0);
        let odd = Topology::from_smp("12,sockets=2,cores=3,threads=2", 1).unwrap();
        // 2 threads: 1 bit; 3 cores: 2 bits. CPU 7 = socket 1, core 0, thread 1.
        assert_eq!(odd.apic_id(7), 0b1001);
        assert_eq!(odd.apic_id(5), 0b0101);
        assert_eq!(t.node_of(4), 1);
    }

    #[test]
    fn plain_smp() {
        let t = Topology::from_smp("4", 1).unwrap();
        assert_eq!(show(&t, 1), vec!["level=MC span=0-3 groups=1/2/3/0"]);
        let one = Topology::from_smp("1", 1).unwrap();
        assert!(one.expected_levels(0).is_empty());
        let t = Topology::from_smp("64", 1).unwrap();
        let l = t.expected_levels(63);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].groups.len(), 64);
        assert_eq!(l[0].groups[0], vec![63]);
        assert_eq!(l[0].groups[1], vec![0]);
    }
}
