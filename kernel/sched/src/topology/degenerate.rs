//! Degenerate-level removal and the per-CPU shortcuts (reference §7.3).
//!
//! Linux's rules, restated:
//! * A domain is degenerate when its span is one CPU, or when it has neither
//!   (a) a `NEEDS_GROUPS` flag together with at least two groups, nor
//!   (b) `SD_WAKE_AFFINE` ([`sd_degenerate`]).
//! * A parent is degenerate relative to its child when it is degenerate
//!   itself, or when both spans are equal and the parent has no flag the
//!   child lacks, where a parent with a single group does not count its
//!   `NEEDS_GROUPS` flags ([`sd_parent_degenerate`]).
//! * [`attach_domain`] walks the chain bottom-up removing every parent that
//!   is degenerate relative to the domain below it (that domain inherits the
//!   parent's `SD_PREFER_SIBLING`), then drops the bottom domain if it is
//!   degenerate (once, as Linux does). Finally every group's `flags` is set to
//!   the flags of the domain directly below its owner (0 for the bottom one);
//!   Linux refreshes only the groups it touches, and before the
//!   PREFER_SIBLING transfer, which differs only in that transferred bit.
//! * Shortcuts ([`Shortcuts`]): `sd_llc` is the highest domain with
//!   `SD_SHARE_LLC`, searching upward and stopping at the first domain
//!   without it (the flag is `SHARED_CHILD`); `sd_numa` is the lowest domain
//!   with `SD_NUMA`.

use alloc::vec::Vec;

use super::domain::SchedDomain;
use super::flags::*;

/// Whether `sd` is useless on its own.
pub fn sd_degenerate(sd: &SchedDomain) -> bool {
    if sd.span.weight() == 1 {
        return true;
    }
    if sd.flags & SD_NEEDS_GROUPS != 0 && sd.groups.len() >= 2 {
        return false;
    }
    sd.flags & SD_WAKE_AFFINE == 0
}

/// Whether `parent` adds nothing over `child`.
pub fn sd_parent_degenerate(child: &SchedDomain, parent: &SchedDomain) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    if child.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags;
    if parent.groups.len() <= 1 {
        pflags &= !SD_NEEDS_GROUPS;
    }
    pflags & !child.flags == 0
}

/// Removes degenerate domains from one CPU's bottom-up chain and refreshes
/// the group flags (see the module docs).
pub fn attach_domain(mut chain: Vec<SchedDomain>) -> Vec<SchedDomain> {
    let mut t = 0;
    while t + 1 < chain.len() {
        if sd_parent_degenerate(&chain[t], &chain[t + 1]) {
            let parent = chain.remove(t + 1);
            chain[t].flags |= parent.flags & SD_PREFER_SIBLING;
        } else {
            t += 1;
        }
    }
    if chain.first().is_some_and(sd_degenerate) {
        chain.remove(0);
    }
    let mut below = 0;
    for sd in chain.iter_mut() {
        for g in sd.groups.iter_mut() {
            g.flags = below;
        }
        below = sd.flags;
    }
    chain
}

/// Indices into one CPU's final chain (Linux's per-CPU `sd_llc`/`sd_numa`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shortcuts {
    pub llc: Option<usize>,
    pub numa: Option<usize>,
}

impl Shortcuts {
    /// Computes the shortcuts of CPU `_cpu` from its final chain.
    pub fn compute(_cpu: usize, chain: &[SchedDomain]) -> Shortcuts {
        let llc = chain
            .iter()
            .take_while(|d| d.flags & SD_SHARE_LLC != 0)
            .count()
            .checked_sub(1);
        let numa = chain.iter().position(|d| d.flags & SD_NUMA != 0);
        Shortcuts { llc, numa }
    }
}
