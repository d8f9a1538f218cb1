//! NUMA distances (ACPI SLIT), validated the way Linux validates a SLIT
//! before trusting it.
//!
//! The kernel passes the SLIT's matrix; [`NumaDistances`] rejects tables that
//! cannot be real (see its invariants) with a [`TopologyError`]. Without a
//! SLIT the domain builder assumes [`LOCAL_DISTANCE`] within a node and
//! [`REMOTE_DISTANCE`] between nodes.

use alloc::vec::Vec;

use super::TopologyError;

/// ACPI's distance of a node to itself.
pub const LOCAL_DISTANCE: u8 = 10;
/// Distance between two nodes assumed when no SLIT was given.
pub const REMOTE_DISTANCE: u8 = 20;

/// A validated NUMA distance matrix (ACPI SLIT).
///
/// Invariants: `1 ≤ nodes ≤ 256`; square; symmetric; `d(i,i) == 10`;
/// `d(i,j) > 10` for `i ≠ j` (the checks Linux applies before trusting a
/// SLIT).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaDistances {
    nodes: usize,
    table: Vec<u8>,
}

impl NumaDistances {
    /// From a SLIT body: `nodes` localities and `nodes²` row-major entries.
    pub fn from_slit(nodes: usize, entries: &[u8]) -> Result<Self, TopologyError> {
        if nodes == 0 || nodes > 256 {
            return Err(TopologyError::BadNodeCount { nodes });
        }
        if entries.len() != nodes * nodes {
            let row = entries.len() / nodes;
            return Err(TopologyError::DistanceNotSquare {
                nodes,
                row,
                len: entries.len() % nodes,
            });
        }
        Self::validated(nodes, entries.to_vec())
    }

    /// From rows of a square matrix.
    pub fn from_rows(rows: &[&[u8]]) -> Result<Self, TopologyError> {
        let nodes = rows.len();
        if nodes == 0 || nodes > 256 {
            return Err(TopologyError::BadNodeCount { nodes });
        }
        let mut table = Vec::with_capacity(nodes * nodes);
        for (row, r) in rows.iter().enumerate() {
            if r.len() != nodes {
                return Err(TopologyError::DistanceNotSquare {
                    nodes,
                    row,
                    len: r.len(),
                });
            }
            table.extend_from_slice(r);
        }
        Self::validated(nodes, table)
    }

    fn validated(nodes: usize, table: Vec<u8>) -> Result<Self, TopologyError> {
        for a in 0..nodes {
            for b in 0..nodes {
                let ab = table[a * nodes + b];
                if a == b && ab != LOCAL_DISTANCE {
                    return Err(TopologyError::DistanceBadLocal {
                        node: a,
                        distance: ab,
                    });
                }
                if a != b && ab <= LOCAL_DISTANCE {
                    return Err(TopologyError::DistanceBadRemote { a, b, distance: ab });
                }
                let ba = table[b * nodes + a];
                if ab != ba {
                    return Err(TopologyError::DistanceAsymmetric { a, b, ab, ba });
                }
            }
        }
        Ok(NumaDistances { nodes, table })
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Distance from node `a` to node `b`, `None` outside the table.
    pub fn distance(&self, a: usize, b: usize) -> Option<u8> {
        if a < self.nodes && b < self.nodes {
            self.table.get(a * self.nodes + b).copied()
        } else {
            None
        }
    }
}
