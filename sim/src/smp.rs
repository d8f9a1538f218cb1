//! QEMU's `-smp` option, parsed and completed the way QEMU 10 does for the
//! `pc`/`q35` machines (`hw/core/machine-smp.c: machine_parse_smp_config()`),
//! so that a machine given to the simulator as `8,sockets=2,cores=2,threads=2`
//! is the machine the same string gives the kernel in QEMU.
//!
//! The x86 hierarchy is sockets > dies > modules > cores > threads. Omitted
//! counts are computed from the others, preferring cores (QEMU's rule since
//! machine type 6.2): with only a CPU count, all CPUs are cores of one
//! socket. `clusters`, `books` and `drawers` are not x86 levels and are
//! refused, as QEMU refuses them.

use std::fmt;

/// A complete `-smp` topology.
///
/// Invariants (established by [`SmpSpec::parse`]): every count is at least 1;
/// `sockets * dies * modules * cores * threads == maxcpus`; `cpus <= maxcpus`;
/// `cpus <= sched::cpumask::MAX_CPUS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmpSpec {
    /// CPUs present at boot (the first `cpus` of the hierarchy's order).
    pub cpus: u32,
    /// CPUs the hierarchy has room for.
    pub maxcpus: u32,
    /// Packages.
    pub sockets: u32,
    /// Dies per package.
    pub dies: u32,
    /// Modules per die.
    pub modules: u32,
    /// Cores per module.
    pub cores: u32,
    /// Threads per core.
    pub threads: u32,
}

/// Why an `-smp` value was refused (the text says what to change).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmpError(pub String);

impl fmt::Display for SmpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SmpError {}

impl SmpSpec {
    /// Parses `[cpus=]N[,maxcpus=N][,sockets=N][,dies=N][,modules=N][,cores=N][,threads=N]`.
    pub fn parse(spec: &str) -> Result<SmpSpec, SmpError> {
        let bad = |why: String| SmpError(format!("bad -smp value `{spec}`: {why}"));
        let mut given = [None::<u32>; 7]; // cpus maxcpus sockets dies modules cores threads
        const KEYS: [&str; 7] = ["cpus", "maxcpus", "sockets", "dies", "modules", "cores", "threads"];
        for (i, part) in spec.split(',').enumerate() {
            let (key, value) = match part.split_once('=') {
                Some((k, v)) => (k, v),
                None if i == 0 => ("cpus", part),
                None => return Err(bad(format!("`{part}` is not KEY=VALUE"))),
            };
            let slot = match KEYS.iter().position(|k| *k == key) {
                Some(s) => s,
                None if matches!(key, "clusters" | "books" | "drawers") => {
                    return Err(bad(format!("`{key}` is not a level of the x86 CPU topology")))
                }
                None => return Err(bad(format!("unknown key `{key}` (known: {})", KEYS.join(", ")))),
            };
            let n: u32 = value.parse().map_err(|_| bad(format!("`{key}={value}` is not a number")))?;
            if n == 0 {
                return Err(bad(format!("`{key}=0`: every count must be at least 1")));
            }
            if given[slot].replace(n).is_some() {
                return Err(bad(format!("`{key}` given twice")));
            }
        }
        let [cpus, maxcpus, sockets, dies, modules, cores, threads] = given;
        let dies = dies.unwrap_or(1);
        let modules = modules.unwrap_or(1);
        let (sockets, cores, threads) = match (cpus, maxcpus) {
            (None, None) => (sockets.unwrap_or(1), cores.unwrap_or(1), threads.unwrap_or(1)),
            _ => {
                let max = maxcpus.or(cpus).unwrap_or(1);
                // Prefer cores: the first omitted of cores, sockets, threads
                // takes what the others leave.
                let (mut s, mut c, mut t) = (sockets, cores, threads);
                if c.is_none() {
                    let (s1, t1) = (s.unwrap_or(1), t.unwrap_or(1));
                    s = Some(s1);
                    t = Some(t1);
                    c = Some(max / (s1 * dies * modules * t1).max(1));
                } else if s.is_none() {
                    let t1 = t.unwrap_or(1);
                    t = Some(t1);
                    s = Some(max / (dies * modules * c.unwrap_or(1) * t1).max(1));
                }
                if t.is_none() {
                    t = Some(max / (s.unwrap_or(1) * dies * modules * c.unwrap_or(1)).max(1));
                }
                (s.unwrap_or(1), c.unwrap_or(1), t.unwrap_or(1))
            }
        };
        let product = sockets as u64 * dies as u64 * modules as u64 * cores as u64 * threads as u64;
        let maxcpus = maxcpus.or(cpus).map_or(product, u64::from);
        let cpus = cpus.map_or(maxcpus, u64::from);
        let shape = format!(
            "sockets ({sockets}) * dies ({dies}) * modules ({modules}) * cores ({cores}) * threads ({threads}) = {product}"
        );
        if sockets == 0 || cores == 0 || threads == 0 {
            return Err(bad(format!("the counts leave no room for {maxcpus} CPUs: {shape}")));
        }
        if product != maxcpus {
            return Err(bad(format!("the hierarchy must hold exactly maxcpus ({maxcpus}) CPUs: {shape}")));
        }
        if cpus > maxcpus {
            return Err(bad(format!("cpus ({cpus}) is more than maxcpus ({maxcpus})")));
        }
        if cpus as usize > sched::cpumask::MAX_CPUS {
            return Err(bad(format!("{cpus} CPUs; fairway handles at most {}", sched::cpumask::MAX_CPUS)));
        }
        Ok(SmpSpec { cpus: cpus as u32, maxcpus: maxcpus as u32, sockets, dies, modules, cores, threads })
    }
}

impl fmt::Display for SmpSpec {
    /// The canonical form, accepted by QEMU and by [`SmpSpec::parse`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},sockets={}", self.cpus, self.sockets)?;
        if self.dies != 1 {
            write!(f, ",dies={}", self.dies)?;
        }
        if self.modules != 1 {
            write!(f, ",modules={}", self.modules)?;
        }
        write!(f, ",cores={},threads={}", self.cores, self.threads)?;
        if self.maxcpus != self.cpus {
            write!(f, ",maxcpus={}", self.maxcpus)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> SmpSpec {
        SmpSpec::parse(s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn shape(s: &SmpSpec) -> (u32, u32, u32, u32, u32) {
        (s.cpus, s.sockets, s.cores, s.threads, s.maxcpus)
    }

    #[test]
    fn a_bare_count_is_cores_of_one_socket() {
        assert_eq!(shape(&p("4")), (4, 1, 4, 1, 4));
        assert_eq!(shape(&p("cpus=6")), (6, 1, 6, 1, 6));
    }

    #[test]
    fn omitted_counts_are_computed_preferring_cores() {
        assert_eq!(shape(&p("8,sockets=2")), (8, 2, 4, 1, 8));
        assert_eq!(shape(&p("8,sockets=2,threads=2")), (8, 2, 2, 2, 8));
        assert_eq!(shape(&p("8,cores=2,threads=2")), (8, 2, 2, 2, 8));
        assert_eq!(shape(&p("8,sockets=2,cores=2")), (8, 2, 2, 2, 8));
        assert_eq!(shape(&p("sockets=2,cores=3,threads=2")), (12, 2, 3, 2, 12));
        assert_eq!(shape(&p("2,maxcpus=8,sockets=2")), (2, 2, 4, 1, 8));
        let d = p("16,sockets=2,dies=2,cores=2,threads=2");
        assert_eq!((d.dies, d.cores), (2, 2));
    }

    #[test]
    fn impossible_topologies_say_why() {
        for (spec, says) in [
            ("8,sockets=3", "must hold exactly maxcpus (8)"),
            ("8,sockets=2,cores=2,threads=3", "must hold exactly maxcpus"),
            ("9,maxcpus=8", "more than maxcpus"),
            ("4,clusters=2", "not a level of the x86"),
            ("4,cores=0", "at least 1"),
            ("4,cores=x", "not a number"),
            ("4,bogus=1", "unknown key"),
            ("4,cores=2,cores=2", "given twice"),
            ("4,2", "not KEY=VALUE"),
            ("1025", "fairway handles at most 1024"),
            ("1040,sockets=2,cores=260,threads=2", "fairway handles at most 1024"),
        ] {
            let e = SmpSpec::parse(spec).expect_err(spec).0;
            assert!(e.contains(says), "{spec}: {e}");
        }
    }

    #[test]
    fn two_socket_servers_of_768_threads_fit() {
        assert_eq!(shape(&p("768,sockets=2,cores=192,threads=2")), (768, 2, 192, 2, 768));
        assert_eq!(shape(&p("1024")), (1024, 1, 1024, 1, 1024));
        let d = p("768,sockets=2,dies=12,cores=16,threads=2");
        assert_eq!((d.dies, d.cores, d.cpus), (12, 16, 768));
    }

    #[test]
    fn the_canonical_form_parses_back_to_itself() {
        for s in ["4", "8,sockets=2,cores=2,threads=2", "2,maxcpus=8,sockets=2", "16,sockets=2,dies=2,cores=2,threads=2"] {
            let spec = p(s);
            assert_eq!(p(&spec.to_string()), spec, "{s} -> {spec}");
        }
    }
}
