//! Building the scheduling-domain hierarchy (reference §5.1, §7.2).
//!
//! # Levels
//!
//! Bottom-up, as x86 Linux builds them (CLS, the L2-cluster level, is not
//! built: QEMU's L2 is per core so it would always be degenerate):
//!
//! | level | CPUs of CPU c's domain (before widening) | present when |
//! |---|---|---|
//! | `SMT` | same `pkg_id` and `core_id` | some core has ≥ 2 threads |
//! | `MC` | same `llc_id` | always |
//! | `PKG` | same NUMA `node` (Linux's `cpu_node_mask`, not the socket) | no package contains CPUs of two nodes |
//! | `NODE` | same NUMA `node` (Linux's NUMA identity level) | ≥ 2 distinct distances |
//! | `NUMA(k)`, k ≥ 1 | nodes within the k-th smallest distinct distance | ≥ 2 distinct distances |
//!
//! Every span is intersected with the online CPUs and widened to contain the
//! span of the level below. As in Linux, a CPU stops building levels once one
//! spans all online CPUs. `NODE` is always degenerate when `PKG` exists (same
//! span and flags) and so only survives when `PKG` was dropped; it is printed
//! `NODE`. NUMA levels print as `NUMA` for k = 1 and `NUMA<k>` (`NUMA2`, ...)
//! above, so every level name is unique per CPU.
//!
//! Distinct distances come from the whole SLIT ([`NumaDistances`]), or, without
//! one, are 10 (local) and 20 (remote, when the CPUs are on ≥ 2 nodes).
//!
//! # Parameters (§5.1)
//!
//! Flags: all levels start from `BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK
//! | WAKE_AFFINE | PREFER_SIBLING`; `SMT` adds `SHARE_CPUCAPACITY |
//! SHARE_LLC`, `MC` adds `SHARE_LLC`; `NUMA(k)` drops `PREFER_SIBLING` and adds
//! `NUMA | SERIALIZE | OVERLAP`, and when its distance exceeds 30
//! (`node_reclaim_distance`) also drops `BALANCE_EXEC | BALANCE_FORK |
//! WAKE_AFFINE`. `imbalance_pct` is 110 for SMT and 117 elsewhere;
//! `cache_nice_tries` 0 for SMT, 2 for NUMA, 1 otherwise. `min_interval_ms` =
//! `balance_interval_ms` = the weight of the level's CPU set before widening,
//! `max_interval_ms` twice that, `busy_factor` 16.
//!
//! # Groups (§7.2)
//!
//! For CPU c's domain, the span is walked from c, wrapping; each CPU i not yet
//! covered contributes a group equal to i's own child-level span (just `{i}`
//! at the bottom level), so the local group comes first. `NUMA(k)` levels
//! build overlapping groups the way Linux's overlap builder does: i's domain
//! at this level is first descended while its child would reach outside c's
//! span, then while its child has the same span; the group is that domain's
//! child span. A CPU i that stopped building levels below this one (its
//! span already covered every online CPU) is skipped by Linux, which can leave
//! it in no group; here it contributes its largest domain that fits inside
//! the span (or `{i}`), so the groups always cover the span. Groups are
//! always clipped to the domain span (a no-op for consistent topologies).
//! Capacity starts at `1024 × |group|`; `balance_cpu` is the first CPU of the
//! group (for overlap groups: of the CPUs whose own child span equals the
//! group, falling back to the first CPU).

use alloc::vec;
use alloc::vec::Vec;

use super::degenerate::{attach_domain, Shortcuts};
use super::domain::{Level, SchedDomain, SchedGroup};
use super::flags::*;
use super::numa::{NumaDistances, LOCAL_DISTANCE, REMOTE_DISTANCE};
use super::{CpuTopology, TopologyError};
use crate::cpumask::{CpuMask, MAX_CPUS};

/// `SCHED_CAPACITY_SCALE`: the capacity of one full-speed CPU.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;

/// Distances above this turn off exec/fork balancing and wake-affine
/// (Linux's `node_reclaim_distance`).
pub const NODE_RECLAIM_DISTANCE: u32 = 30;

/// Which CPUs a level groups together, before widening.
#[derive(Clone, Copy, Debug)]
enum Span {
    Core,
    Llc,
    Node,
    /// Nodes within this distance.
    Within(u32),
}

#[derive(Clone, Copy, Debug)]
struct LevelDesc {
    level: Level,
    span: Span,
    flags: u32,
    imbalance_pct: u32,
    cache_nice_tries: u32,
    overlap: bool,
}

const BASE_FLAGS: u32 =
    SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;

fn desc(level: Level, span: Span, distance: u32) -> LevelDesc {
    let (flags, imbalance_pct, cache_nice_tries, overlap) = match level {
        Level::Smt => (
            BASE_FLAGS | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
            110,
            0,
            false,
        ),
        Level::Mc => (BASE_FLAGS | SD_SHARE_LLC, 117, 1, false),
        Level::Pkg | Level::Node => (BASE_FLAGS, 117, 1, false),
        Level::Numa(_) => {
            let mut f = (BASE_FLAGS & !SD_PREFER_SIBLING) | SD_NUMA | SD_SERIALIZE | SD_OVERLAP;
            if distance > NODE_RECLAIM_DISTANCE {
                f &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
            }
            (f, 117, 2, true)
        }
    };
    LevelDesc {
        level,
        span,
        flags,
        imbalance_pct,
        cache_nice_tries,
        overlap,
    }
}

/// The per-CPU domain hierarchies of a machine.
///
/// Invariants: `per_cpu(c)` is empty for CPUs not in [`Self::online`]; for
/// online CPUs it is the final bottom-up chain (spans strictly growing after
/// degeneration; no degenerate domain left).
#[derive(Clone, Debug)]
pub struct SchedDomains {
    online: CpuMask,
    per_cpu: Vec<Vec<SchedDomain>>,
    shortcuts: Vec<Shortcuts>,
}

struct Machine<'a> {
    by_cpu: Vec<Option<&'a CpuTopology>>,
    online: CpuMask,
    distances: Option<&'a NumaDistances>,
}

impl Machine<'_> {
    fn distance(&self, a: u32, b: u32) -> u32 {
        match self.distances {
            Some(d) => d
                .distance(a as usize, b as usize)
                .map_or(u32::MAX, u32::from),
            None if a == b => LOCAL_DISTANCE as u32,
            None => REMOTE_DISTANCE as u32,
        }
    }

    fn cpus(&self) -> impl Iterator<Item = &CpuTopology> + '_ {
        self.by_cpu.iter().filter_map(|t| *t)
    }

    fn mask(&self, me: &CpuTopology, span: Span) -> CpuMask {
        self.cpus()
            .filter(|o| match span {
                Span::Core => o.pkg_id == me.pkg_id && o.core_id == me.core_id,
                Span::Llc => o.llc_id == me.llc_id,
                Span::Node => o.node == me.node,
                Span::Within(d) => self.distance(me.node, o.node) <= d,
            })
            .map(|o| o.cpu)
            .collect()
    }
}

fn validate<'a>(
    cpus: &'a [CpuTopology],
    distances: Option<&'a NumaDistances>,
) -> Result<Machine<'a>, TopologyError> {
    if cpus.is_empty() {
        return Err(TopologyError::NoCpus);
    }
    if cpus.len() > MAX_CPUS {
        return Err(TopologyError::TooManyCpus { count: cpus.len() });
    }
    let mut by_cpu: Vec<Option<&CpuTopology>> = Vec::new();
    let mut online = CpuMask::new();
    for t in cpus {
        if t.cpu >= MAX_CPUS {
            return Err(TopologyError::CpuIndexOutOfRange { cpu: t.cpu });
        }
        if online.contains(t.cpu) {
            return Err(TopologyError::DuplicateCpu { cpu: t.cpu });
        }
        online.set(t.cpu);
        if by_cpu.len() <= t.cpu {
            by_cpu.resize(t.cpu + 1, None);
        }
        by_cpu[t.cpu] = Some(t);
        if let Some(d) = distances {
            if t.node as usize >= d.nodes() {
                return Err(TopologyError::NodeWithoutDistance {
                    cpu: t.cpu,
                    node: t.node,
                    nodes: d.nodes(),
                });
            }
        }
    }
    for (i, a) in cpus.iter().enumerate() {
        if let Some(b) = cpus[i + 1..].iter().find(|b| b.apic_id == a.apic_id) {
            return Err(TopologyError::DuplicateApicId {
                apic_id: a.apic_id,
                first_cpu: a.cpu,
                second_cpu: b.cpu,
            });
        }
    }
    Ok(Machine {
        by_cpu,
        online,
        distances,
    })
}

/// The level list for this machine (§5.1 and the table in the module docs).
fn levels(m: &Machine<'_>) -> Vec<LevelDesc> {
    let mut smt = false;
    let mut numa_in_package = false;
    for a in m.cpus() {
        for b in m.cpus().filter(|b| b.cpu != a.cpu && b.pkg_id == a.pkg_id) {
            smt |= b.core_id == a.core_id;
            numa_in_package |= b.node != a.node;
        }
    }
    let mut dist: Vec<u32> = match m.distances {
        Some(d) => (0..d.nodes())
            .flat_map(|a| (0..d.nodes()).map(move |b| (a, b)))
            .filter_map(|(a, b)| d.distance(a, b).map(u32::from))
            .collect(),
        None => m
            .cpus()
            .map(|c| m.distance(m.cpus().next().map_or(0, |f| f.node), c.node))
            .collect(),
    };
    dist.push(LOCAL_DISTANCE as u32);
    dist.sort_unstable();
    dist.dedup();

    let mut out = Vec::new();
    if smt {
        out.push(desc(Level::Smt, Span::Core, 0));
    }
    out.push(desc(Level::Mc, Span::Llc, 0));
    if !numa_in_package {
        out.push(desc(Level::Pkg, Span::Node, 0));
    }
    if dist.len() > 1 {
        out.push(desc(Level::Node, Span::Node, 0));
        for (k, &d) in dist.iter().enumerate().skip(1) {
            let k = u8::try_from(k).unwrap_or(u8::MAX);
            out.push(desc(Level::Numa(k), Span::Within(d), d));
        }
    }
    out
}

/// One CPU's domain before groups: its span and the weight used for the
/// balancing intervals.
#[derive(Clone, Copy)]
struct Raw {
    span: CpuMask,
    weight: u32,
}

fn groups_for(cpu: usize, li: usize, desc: &LevelDesc, raw: &[Vec<Raw>]) -> Vec<SchedGroup> {
    let span = raw[cpu][li].span;
    let mut covered = CpuMask::new();
    let mut groups = Vec::new();
    for i in span.iter_wrap(cpu) {
        if covered.contains(i) {
            continue;
        }
        let chain = raw.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let (gspan, balance) = if !desc.overlap {
            let g = if li == 0 {
                CpuMask::single(i)
            } else {
                chain.get(li - 1).map_or(CpuMask::single(i), |r| r.span)
            };
            (g.intersection(&span), None)
        } else {
            // `d` indexes i's domain we build the group from ("sibling");
            // the group is its child's span, chain[d - 1].
            let built_here = chain.len() > li;
            let mut d = li.min(chain.len());
            while d > 0 && !chain[d - 1].span.is_subset(&span) {
                d -= 1;
            }
            if built_here {
                while d > 0 && chain[d - 1].span == chain[d].span {
                    d -= 1;
                }
            }
            let g = match (d, chain.first()) {
                (0, Some(bottom)) if built_here => bottom.span,
                (0, _) => CpuMask::single(i),
                (d, _) => chain[d - 1].span,
            }
            .intersection(&span);
            // CPUs that would build this very group from their own child.
            let balance = g.iter().find(|&j| {
                li > 0
                    && raw
                        .get(j)
                        .and_then(|c| c.get(li - 1))
                        .is_some_and(|r| r.span == g)
            });
            (g, balance)
        };
        if gspan.is_empty() {
            continue;
        }
        covered = covered.union(&gspan);
        groups.push(SchedGroup {
            span: gspan,
            capacity: SCHED_CAPACITY_SCALE.saturating_mul(gspan.weight()),
            balance_cpu: balance.or(gspan.first()).unwrap_or(i),
            flags: 0,
            cores: 0,
        });
    }
    groups
}

fn make_domain(desc: &LevelDesc, raw: Raw, groups: Vec<SchedGroup>) -> SchedDomain {
    SchedDomain {
        level: desc.level,
        span: raw.span,
        groups,
        flags: desc.flags,
        imbalance_pct: desc.imbalance_pct,
        cache_nice_tries: desc.cache_nice_tries,
        min_interval_ms: raw.weight,
        max_interval_ms: raw.weight.saturating_mul(2),
        busy_factor: 16,
        balance_interval_ms: raw.weight,
        span_weight: raw.span.weight(),
    }
}

impl SchedDomains {
    /// Builds the domains of the online CPUs `cpus` (any order; each `cpu`
    /// index once) with an optional SLIT. See the module docs for the rules
    /// and [`TopologyError`] for what is rejected.
    pub fn build(
        cpus: &[CpuTopology],
        distances: Option<&NumaDistances>,
    ) -> Result<SchedDomains, TopologyError> {
        let m = validate(cpus, distances)?;
        let levels = levels(&m);
        let n = m.by_cpu.len();

        // Spans, bottom-up, per CPU.
        let mut raw: Vec<Vec<Raw>> = vec![Vec::new(); n];
        for me in m.cpus() {
            let mut prev: Option<CpuMask> = None;
            for d in &levels {
                let own = m.mask(me, d.span);
                let span = prev.map_or(own, |p| own.union(&p));
                raw[me.cpu].push(Raw {
                    span,
                    weight: own.weight(),
                });
                if span == m.online {
                    break;
                }
                prev = Some(span);
            }
        }

        let mut per_cpu = vec![Vec::new(); n];
        for me in m.cpus() {
            let chain: Vec<SchedDomain> = raw[me.cpu]
                .iter()
                .enumerate()
                .map(|(li, r)| {
                    make_domain(&levels[li], *r, groups_for(me.cpu, li, &levels[li], &raw))
                })
                .collect();
            per_cpu[me.cpu] = attach_domain(chain);
        }
        Ok(Self::finish(m.online, per_cpu))
    }

    /// The fallback when [`Self::build`] fails: one `PKG`-flagged domain over
    /// all of `online` per CPU, with one single-CPU group per CPU (local
    /// first); no domain when fewer than two CPUs are online.
    pub fn flat(online: CpuMask) -> SchedDomains {
        let n = online.iter().last().map_or(0, |c| c + 1);
        let d = desc(Level::Pkg, Span::Node, 0);
        let mut per_cpu = vec![Vec::new(); n];
        if online.weight() >= 2 {
            for cpu in online.iter() {
                let groups = online
                    .iter_wrap(cpu)
                    .map(|i| SchedGroup {
                        span: CpuMask::single(i),
                        capacity: SCHED_CAPACITY_SCALE,
                        balance_cpu: i,
                        flags: 0,
                        cores: 0,
                    })
                    .collect();
                let raw = Raw {
                    span: online,
                    weight: online.weight(),
                };
                per_cpu[cpu] = attach_domain(vec![make_domain(&d, raw, groups)]);
            }
        }
        Self::finish(online, per_cpu)
    }

    fn finish(online: CpuMask, mut per_cpu: Vec<Vec<SchedDomain>>) -> SchedDomains {
        let shortcuts = per_cpu
            .iter()
            .enumerate()
            .map(|(c, ch)| Shortcuts::compute(c, ch))
            .collect();
        // Each group's cores, from the final SMT spans (a CPU without an SMT
        // domain is its own core).
        let smt: Vec<CpuMask> = per_cpu
            .iter()
            .enumerate()
            .map(|(c, ch)| match ch.first() {
                Some(sd) if sd.level == Level::Smt => sd.span,
                _ => CpuMask::single(c),
            })
            .collect();
        for sd in per_cpu.iter_mut().flatten() {
            for g in &mut sd.groups {
                g.cores = g
                    .span
                    .iter()
                    .filter(|&c| smt.get(c).is_none_or(|m| m.intersection(&g.span).first() == Some(c)))
                    .count() as u32;
            }
        }
        SchedDomains {
            online,
            per_cpu,
            shortcuts,
        }
    }

    /// The CPUs the domains were built for.
    pub fn online(&self) -> CpuMask {
        self.online
    }

    /// CPU `cpu`'s domains, bottom-up, after degeneration (empty for a CPU
    /// without domains or not online).
    pub fn per_cpu(&self, cpu: usize) -> &[SchedDomain] {
        self.per_cpu.get(cpu).map_or(&[], Vec::as_slice)
    }

    /// Highest domain of `cpu` sharing the LLC (Linux `sd_llc`).
    pub fn sd_llc(&self, cpu: usize) -> Option<&SchedDomain> {
        let i = self.shortcuts.get(cpu)?.llc?;
        self.per_cpu(cpu).get(i)
    }

    /// Weight of `sd_llc` (1 without one).
    pub fn sd_llc_size(&self, cpu: usize) -> u32 {
        self.sd_llc(cpu).map_or(1, |d| d.span_weight)
    }

    /// First CPU of `sd_llc`'s span (`cpu` itself without one).
    pub fn sd_llc_id(&self, cpu: usize) -> usize {
        self.sd_llc(cpu).and_then(|d| d.span.first()).unwrap_or(cpu)
    }

    /// Lowest NUMA domain of `cpu` (Linux `sd_numa`).
    pub fn sd_numa(&self, cpu: usize) -> Option<&SchedDomain> {
        let i = self.shortcuts.get(cpu)?.numa?;
        self.per_cpu(cpu).get(i)
    }

    /// Whether `a` and `b` share a last-level cache (true when `a == b`).
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.sd_llc_id(a) == self.sd_llc_id(b)
    }
}
