//! Cache affinity: where a task's working set still is, and what bringing
//! it to the CPU the task runs on costs.
//!
//! Each core's private cache and each last-level cache count the bytes
//! loaded into them (`fill`, only ever growing). A task that leaves a CPU
//! remembers the two counts there; when it runs again, the bytes loaded
//! since into the cache it left are what pushed its lines out. With
//! replacement that picks victims without regard to whose they are, a
//! footprint of F bytes in a cache of C bytes keeps about F·e^(−E/C) of
//! them after E bytes more were loaded (Thiébaut and Stone, "Footprints in
//! the Cache", ACM TOCS 5(4), 1987). So the footprint decays with the work
//! other tasks did on the old CPU, not with time.
//!
//! The task's lines then come from where they are: its own core's cache
//! (free), the old CPU's caches at the distance between the two CPUs
//! (`HwProfile::line`), or memory (the task's home node's: the node it first
//! ran on, `mem_ns`, or another's, `mem_remote_ns`); `refill_mlp` lines at a
//! time. What it brings in is loaded into its new core and LLC, evicting
//! others' footprints in turn.
//!
//! Simplifications, each documented in docs/SIMULATOR.md: the LLC is
//! treated as holding what its cores' private caches hold (inclusive), a
//! line in the old LLC costs a core-to-core transfer at the distance (an
//! upper bound for a clean LLC hit), the whole working set is refilled at
//! the switch (the task touches all of it each time it runs), and a task's
//! own execution evicts nothing but through its refills.

use crate::engine::cost::Distance;
use crate::hw::profile::HwProfile;
use crate::machine::Machine;

const LINE: u64 = 64;

/// Where a task's working set was left (one per context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Bytes the task touches each time it runs (`Platform::set_working_set`).
    pub wss: u64,
    /// The CPU it last ran on, with the fill counts of that CPU's core and
    /// LLC when it left (`None`: it has not run yet).
    left: Option<(usize, u64, u64)>,
    /// The node whose memory holds its data (where it first ran).
    home_node: Option<usize>,
}

impl Footprint {
    pub const fn new(wss: u64) -> Footprint {
        Footprint { wss, left: None, home_node: None }
    }
}

/// The machine's caches: what was loaded into each.
pub struct Caches {
    core_of: Vec<usize>,
    llc_of: Vec<usize>,
    node_of: Vec<usize>,
    core_fill: Vec<u64>,
    llc_fill: Vec<u64>,
    private_bytes: u64,
    llc_bytes: Vec<u64>,
}

/// What a task's arrival cost and brought.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refill {
    pub ns: u64,
    /// Lines from another CPU's caches, and from memory.
    pub cache_lines: u64,
    pub mem_lines: u64,
}

impl Caches {
    pub fn new(m: &Machine, p: &HwProfile) -> Caches {
        let n = m.nr_cpus();
        // A core is (package, LLC, core id): core ids repeat across dies.
        let mut cores: Vec<(u32, u32, u32)> = Vec::new();
        let mut core_of = Vec::with_capacity(n);
        let mut llcs: Vec<u32> = Vec::new();
        let mut llc_of = Vec::with_capacity(n);
        for c in &m.cpus {
            let key = (c.pkg_id, c.llc_id, c.core_id);
            let i = cores.iter().position(|&k| k == key).unwrap_or_else(|| {
                cores.push(key);
                cores.len() - 1
            });
            core_of.push(i);
            let l = llcs.iter().position(|&k| k == c.llc_id).unwrap_or_else(|| {
                llcs.push(c.llc_id);
                llcs.len() - 1
            });
            llc_of.push(l);
        }
        let mut cores_in_llc = vec![0u64; llcs.len()];
        for key in &cores {
            let l = llcs.iter().position(|&k| k == key.1).expect("the core's LLC");
            cores_in_llc[l] += 1;
        }
        Caches {
            core_fill: vec![0; cores.len()],
            llc_fill: vec![0; llcs.len()],
            core_of,
            llc_of,
            node_of: m.cpus.iter().map(|c| c.node as usize).collect(),
            private_bytes: p.private_kb * 1024,
            llc_bytes: cores_in_llc.iter().map(|&k| k * p.llc_kb_per_core * 1024).collect(),
        }
    }

    /// `fp`'s task starts running on `cpu`: what bringing its working set
    /// here costs (the caches' counts take its loads).
    pub fn arrive(&mut self, p: &HwProfile, fp: &mut Footprint, cpu: usize) -> Refill {
        let wss = fp.wss;
        let node = self.node_of[cpu];
        let home = *fp.home_node.get_or_insert(node);
        if wss == 0 {
            return Refill::default();
        }
        let (core, llc) = (self.core_of[cpu], self.llc_of[cpu]);
        // Bytes already in this core's cache, bytes in the old CPU's caches
        // (fetched at `from_ns` a line), bytes new to this LLC.
        let (in_core, in_cache, from_ns, new_to_llc) = match fp.left {
            None => (0, 0, 0, wss),
            Some((old, core_mark, llc_mark)) => {
                let (oc, ol) = (self.core_of[old], self.llc_of[old]);
                let in_old_core = survive(wss.min(self.private_bytes), self.core_fill[oc] - core_mark, self.private_bytes);
                let in_old_llc = survive(wss.min(self.llc_bytes[ol]), self.llc_fill[ol] - llc_mark, self.llc_bytes[ol]);
                let resident = in_old_core.max(in_old_llc);
                if oc == core {
                    (in_old_core, resident - in_old_core, p.line(Distance::SameLlc), wss - resident)
                } else if ol == llc {
                    (0, resident, p.line(Distance::SameLlc), wss - resident)
                } else {
                    let d = if self.node_of[old] == node { Distance::OtherLlc } else { Distance::OtherNode };
                    (0, resident, p.line(d), wss)
                }
            }
        };
        let mem_ns = if node == home { p.mem_ns } else { p.mem_remote_ns };
        let cache_lines = in_cache.div_ceil(LINE);
        let mem_lines = (wss - in_core - in_cache).div_ceil(LINE);
        let ns = (cache_lines * from_ns + mem_lines * mem_ns) / p.refill_mlp * p.refill_pct / 100;
        self.core_fill[core] += wss - in_core;
        self.llc_fill[llc] += new_to_llc;
        Refill { ns, cache_lines, mem_lines }
    }

    /// `fp`'s task leaves `cpu` (its footprint starts decaying there).
    pub fn leave(&self, fp: &mut Footprint, cpu: usize) {
        fp.left = Some((cpu, self.core_fill[self.core_of[cpu]], self.llc_fill[self.llc_of[cpu]]));
    }

    /// `fp`'s task grows its working set to `bytes` where it runs (`cpu`):
    /// the growth comes cold from memory.
    pub fn grow(&mut self, p: &HwProfile, fp: &mut Footprint, cpu: usize, bytes: u64) -> Refill {
        let extra = bytes.saturating_sub(fp.wss);
        fp.wss = bytes;
        if extra == 0 {
            return Refill::default();
        }
        let node = self.node_of[cpu];
        let mem_ns = if *fp.home_node.get_or_insert(node) == node { p.mem_ns } else { p.mem_remote_ns };
        self.core_fill[self.core_of[cpu]] += extra;
        self.llc_fill[self.llc_of[cpu]] += extra;
        let mem_lines = extra.div_ceil(LINE);
        Refill { ns: mem_lines * mem_ns / p.refill_mlp * p.refill_pct / 100, cache_lines: 0, mem_lines }
    }
}

/// Of `footprint` bytes in a cache of `capacity`, what is left after
/// `evicting` more bytes were loaded: footprint·e^(−evicting/capacity), in
/// fixed point (the same bytes on every host: no floating point).
pub fn survive(footprint: u64, evicting: u64, capacity: u64) -> u64 {
    if footprint == 0 || capacity == 0 {
        return 0;
    }
    // x = evicting/capacity in Q16; e^(-x) = 2^(-x·log2(e)).
    let x = ((evicting as u128) << 16) / capacity as u128;
    if x >= 64 << 16 {
        return 0;
    }
    // log2(e) = 1.4426950 = 94548/65536.
    let y = (x * 94_548) >> 16;
    let (int, frac) = ((y >> 16) as u32, (y & 0xffff) as u64);
    if int >= 48 {
        return 0;
    }
    // 2^(-frac/65536) by linear interpolation in a table of 2^(-i/16).
    let i = (frac >> 12) as usize;
    let t = frac & 0xfff;
    let (a, b) = (POW2_NEG[i], POW2_NEG[i + 1]);
    let f = a - (((a - b) * t) >> 12);
    ((footprint as u128 * f as u128) >> (16 + int)) as u64
}

/// 2^(−i/16) in Q16, i = 0..=16.
const POW2_NEG: [u64; 17] = [
    65536, 62757, 60097, 57549, 55109, 52773, 50535, 48393, 46341, 44376, 42495, 40693, 38968, 37316, 35734, 34219, 32768,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_footprint_decays_with_what_was_loaded_after_it() {
        assert_eq!(survive(1000, 0, 1 << 20), 1000);
        // e^-1 = 0.3679, e^-2 = 0.1353, e^-0.5 = 0.6065: within 0.2%.
        for (e, want) in [(1u64 << 20, 367.9), (2 << 20, 135.3), (1 << 19, 606.5)] {
            let got = survive(1000, e, 1 << 20) as f64;
            assert!((got - want).abs() <= want * 0.002 + 1.0, "{e}: {got} vs {want}");
        }
        assert_eq!(survive(1000, 100 << 20, 1 << 20), 0);
        assert_eq!(survive(0, 5, 5), 0);
        // Monotone in what was loaded.
        let mut last = u64::MAX;
        for e in (0..4 << 20).step_by(1 << 16) {
            let s = survive(1 << 20, e, 1 << 20);
            assert!(s <= last);
            last = s;
        }
    }

    fn two_sockets() -> (Machine, HwProfile) {
        // 2 nodes x 2 cores x 2 threads: CPUs 0,1 a core; 0-3 an LLC.
        let m = Machine::from_smp("8,sockets=2,cores=2,threads=2", 2).unwrap();
        let p = HwProfile::named("sis-2021").unwrap();
        (m, p)
    }

    #[test]
    fn a_task_pays_by_where_its_data_is() {
        let (m, p) = two_sockets();
        let mut c = Caches::new(&m, &p);
        let wss = 256 * 1024;
        let lines = wss / 64;
        let mut fp = Footprint::new(wss);
        // First run: all from memory.
        let first = c.arrive(&p, &mut fp, 0);
        assert_eq!((first.mem_lines, first.cache_lines), (lines, 0));
        assert_eq!(first.ns, lines * p.mem_ns / p.refill_mlp);
        c.leave(&mut fp, 0);
        // Back on the same CPU, nothing else ran: free.
        assert_eq!(c.arrive(&p, &mut fp, 0).ns, 0);
        c.leave(&mut fp, 0);
        // Its SMT sibling shares the core's cache: free too.
        assert_eq!(c.arrive(&p, &mut fp, 1).ns, 0);
        c.leave(&mut fp, 1);
        // Another core of the LLC: every line from the old core.
        let same_llc = c.arrive(&p, &mut fp, 2);
        assert_eq!((same_llc.cache_lines, same_llc.ns), (lines, lines * p.line_ns[1] / p.refill_mlp));
        c.leave(&mut fp, 2);
        // The other socket: every line across it.
        let other = c.arrive(&p, &mut fp, 4);
        assert_eq!((other.cache_lines, other.ns), (lines, lines * p.line_ns[3] / p.refill_mlp));
        assert!(other.ns > same_llc.ns);
    }

    #[test]
    fn other_work_on_the_old_cpu_pushes_the_footprint_out() {
        let (m, p) = two_sockets();
        let mut c = Caches::new(&m, &p);
        let mut fp = Footprint::new(256 * 1024);
        c.arrive(&p, &mut fp, 0);
        c.leave(&mut fp, 0);
        // Another task loads its own 4 MiB there.
        let mut other = Footprint::new(4 << 20);
        c.arrive(&p, &mut other, 0);
        c.leave(&mut other, 0);
        let back = c.arrive(&p, &mut fp, 0);
        assert!(back.ns > 0 && back.mem_lines > 0, "{back:?}");
        // Less than a cold start: part of it survived in the LLC.
        assert!(back.ns < 4096 * p.mem_ns / p.refill_mlp, "{back:?}");
    }

    #[test]
    fn memory_on_another_node_costs_more() {
        let (m, p) = two_sockets();
        let mut c = Caches::new(&m, &p);
        let mut fp = Footprint::new(1 << 30);
        c.arrive(&p, &mut fp, 0);
        c.leave(&mut fp, 0);
        // 1 GiB fits nowhere: on the other node it all comes from node 0's memory.
        let far = c.arrive(&p, &mut fp, 4);
        assert!(far.mem_lines > 0);
        let mut fp2 = Footprint::new(1 << 30);
        let near = c.arrive(&p, &mut fp2, 4);
        assert!(far.ns > near.ns, "{far:?} {near:?}");
    }
}
