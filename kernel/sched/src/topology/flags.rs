//! Scheduling-domain flags (Linux's `SD_*`) and their metadata.
//!
//! The bit positions follow Linux's declaration order; that order is also the
//! order in which [`write_flag_names`] prints them (`@fw sd ... flags=`).
//!
//! Metadata (reference §5.1):
//! * `SHARED_CHILD`: if a domain has the flag, every domain below it must
//!   have it too (so a walk upward can stop at the first domain without it).
//! * `SHARED_PARENT`: if a domain has the flag, every domain above it must
//!   have it too.
//! * `NEEDS_GROUPS`: the flag only means something when the domain has at
//!   least two groups; the degeneration test (§7.3) uses this.

use core::fmt;

pub const SD_BALANCE_NEWIDLE: u32 = 1 << 0;
pub const SD_BALANCE_EXEC: u32 = 1 << 1;
pub const SD_BALANCE_FORK: u32 = 1 << 2;
pub const SD_BALANCE_WAKE: u32 = 1 << 3;
pub const SD_WAKE_AFFINE: u32 = 1 << 4;
pub const SD_ASYM_CPUCAPACITY: u32 = 1 << 5;
pub const SD_ASYM_CPUCAPACITY_FULL: u32 = 1 << 6;
pub const SD_SHARE_CPUCAPACITY: u32 = 1 << 7;
pub const SD_CLUSTER: u32 = 1 << 8;
pub const SD_SHARE_LLC: u32 = 1 << 9;
pub const SD_SERIALIZE: u32 = 1 << 10;
pub const SD_ASYM_PACKING: u32 = 1 << 11;
pub const SD_PREFER_SIBLING: u32 = 1 << 12;
pub const SD_OVERLAP: u32 = 1 << 13;
pub const SD_NUMA: u32 = 1 << 14;

/// Flags that must also be set on every child domain.
pub const SD_SHARED_CHILD: u32 = SD_BALANCE_NEWIDLE
    | SD_BALANCE_EXEC
    | SD_BALANCE_FORK
    | SD_BALANCE_WAKE
    | SD_WAKE_AFFINE
    | SD_SHARE_CPUCAPACITY
    | SD_SHARE_LLC;

/// Flags that must also be set on every parent domain.
pub const SD_SHARED_PARENT: u32 =
    SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL | SD_SERIALIZE | SD_OVERLAP | SD_NUMA;

/// Flags that only matter on a domain with at least two groups (Linux's
/// `SD_DEGENERATE_GROUPS_MASK`): every flag except `SD_WAKE_AFFINE`.
pub const SD_NEEDS_GROUPS: u32 = SD_ALL & !SD_WAKE_AFFINE;

/// Every defined flag.
pub const SD_ALL: u32 = (1 << 15) - 1;

/// `(flag, name)` in bit order, the printing order.
pub const SD_FLAG_NAMES: [(u32, &str); 15] = [
    (SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
    (SD_BALANCE_EXEC, "SD_BALANCE_EXEC"),
    (SD_BALANCE_FORK, "SD_BALANCE_FORK"),
    (SD_BALANCE_WAKE, "SD_BALANCE_WAKE"),
    (SD_WAKE_AFFINE, "SD_WAKE_AFFINE"),
    (SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
    (SD_ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"),
    (SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
    (SD_CLUSTER, "SD_CLUSTER"),
    (SD_SHARE_LLC, "SD_SHARE_LLC"),
    (SD_SERIALIZE, "SD_SERIALIZE"),
    (SD_ASYM_PACKING, "SD_ASYM_PACKING"),
    (SD_PREFER_SIBLING, "SD_PREFER_SIBLING"),
    (SD_OVERLAP, "SD_OVERLAP"),
    (SD_NUMA, "SD_NUMA"),
];

/// Writes the names of the set flags in bit order, joined by `|` (nothing
/// for 0; bits outside [`SD_ALL`] are ignored).
pub fn write_flag_names<W: fmt::Write + ?Sized>(w: &mut W, flags: u32) -> fmt::Result {
    let mut first = true;
    for (bit, name) in SD_FLAG_NAMES {
        if flags & bit != 0 {
            if !first {
                w.write_char('|')?;
            }
            first = false;
            w.write_str(name)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    #[test]
    fn topology_flag_names_and_metadata() {
        let mut s = String::new();
        write_flag_names(&mut s, SD_NUMA | SD_BALANCE_NEWIDLE | SD_SHARE_LLC).unwrap();
        assert_eq!(s, "SD_BALANCE_NEWIDLE|SD_SHARE_LLC|SD_NUMA");
        let mut all = 0;
        for (i, (bit, _)) in SD_FLAG_NAMES.iter().enumerate() {
            assert_eq!(*bit, 1 << i);
            all |= bit;
        }
        assert_eq!(all, SD_ALL);
        assert_eq!(SD_NEEDS_GROUPS & SD_WAKE_AFFINE, 0);
        assert_eq!(SD_SHARED_CHILD & SD_SHARED_PARENT, 0);
    }
}
