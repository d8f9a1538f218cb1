//! Host tests for NUMA sched domains: NUMA levels built from CPU nodes with
//! and without a SLIT distance table, NODE kept when a package spans nodes,
//! several NUMA levels from distinct distances, and the NUMA flags
//! (`SD_SERIALIZE`, `SD_OVERLAP`, `SD_NUMA`) and groups.

use crate::topology_common;

use sched::topology::*;
use topology_common::{check_invariants, s3, shape, two_nodes, Qemu};

#[test]
fn domains_two_numa_nodes() {
    let slit = NumaDistances::from_rows(&[&[10, 21], &[21, 10]]).unwrap();
    for sds in [
        SchedDomains::build(&two_nodes(), None).unwrap(),
        SchedDomains::build(&two_nodes(), Some(&slit)).unwrap(),
    ] {
        check_invariants(&sds);
        assert_eq!(
            shape(&sds, 0),
            [s3("MC", "0-3", "0/1/2/3"), s3("NUMA", "0-7", "0-3/4-7")]
        );
        assert_eq!(
            shape(&sds, 6),
            [s3("MC", "4-7", "6/7/4/5"), s3("NUMA", "0-7", "4-7/0-3")]
        );
        let numa = &sds.per_cpu(0)[1];
        assert_eq!(
            numa.flags,
            SD_BALANCE_NEWIDLE
                | SD_BALANCE_EXEC
                | SD_BALANCE_FORK
                | SD_WAKE_AFFINE
                | SD_SERIALIZE
                | SD_OVERLAP
                | SD_NUMA
        );
        assert_eq!((numa.cache_nice_tries, numa.imbalance_pct), (2, 117));
        assert_eq!(numa.groups[1].balance_cpu, 4);
        assert_eq!(numa.groups[0].capacity, 4096);
        assert_eq!(sds.sd_numa(0).map(|d| d.level), Some(Level::Numa(1)));
        // PKG removed onto MC: MC keeps PREFER_SIBLING.
        assert_ne!(sds.per_cpu(0)[0].flags & SD_PREFER_SIBLING, 0);
    }
}

#[test]
fn domains_numa_in_package_drops_pkg_keeps_node() {
    // One socket, 8 cores, an LLC per pair of cores, nodes 0-3 and 4-7.
    let layout = ApicIdLayout::from_shifts(0, 3, Some(1));
    let cpus: Vec<CpuTopology> = (0..8)
        .map(|i| layout.decode(i, i as u32, (i / 4) as u32))
        .collect();
    let sds = SchedDomains::build(&cpus, None).unwrap();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 5),
        [
            s3("MC", "4-5", "5/4"),
            s3("NODE", "4-7", "4-5/6-7"),
            s3("NUMA", "0-7", "4-7/0-3")
        ]
    );
}

#[test]
fn domains_four_nodes_two_numa_levels() {
    // 4 sockets × 2 cores, node = socket; nodes {0,1} and {2,3} are close (20),
    // the pairs are far (40 > node_reclaim_distance).
    let cpus = Qemu::new(4, 2, 1).topology(|i| i / 2);
    let slit = NumaDistances::from_rows(&[
        &[10, 20, 40, 40],
        &[20, 10, 40, 40],
        &[40, 40, 10, 20],
        &[40, 40, 20, 10],
    ])
    .unwrap();
    let sds = SchedDomains::build(&cpus, Some(&slit)).unwrap();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 0),
        [
            s3("MC", "0-1", "0/1"),
            s3("NUMA", "0-3", "0-1/2-3"),
            s3("NUMA2", "0-7", "0-3/4-7")
        ]
    );
    assert_eq!(
        shape(&sds, 7),
        [
            s3("MC", "6-7", "7/6"),
            s3("NUMA", "4-7", "6-7/4-5"),
            s3("NUMA2", "0-7", "4-7/0-3")
        ]
    );
    let far = &sds.per_cpu(0)[2];
    assert_eq!(
        far.flags,
        SD_BALANCE_NEWIDLE | SD_SERIALIZE | SD_OVERLAP | SD_NUMA
    );
    assert_eq!(
        sds.sd_numa(7).map(|d| d.span.to_string()),
        Some("4-7".into())
    );
}
