//! The policy crate's integration tests, one test binary (`cargo test -p fairway-sched --test
//! policy`; a file's tests alone: `... --test policy fast_paths::`). Each file was its own
//! binary until the tests' build was measured: 22 binaries linked against proptest took 32 CPU-s
//! of every clean `cargo xtask test`; the policy crate is pure, so nothing is lost by sharing a
//! process, but for `cpumask_words.rs`, a binary of its own: it asserts the mask loops' word bound
//! of a fresh process, a static every CPU mask raises (the mechanism's and the simulator's tests
//! keep a binary each for the same reason: their state is static).

mod common;
mod topology_common;

mod balance_hot;
mod balance_lb;
mod balance_lb_linux;
mod balance_newidle;
mod balance_props;
mod balance_wake;
mod brute_force;
mod combined;
mod cpumask_props;
mod delayed;
mod fairness;
mod fast_paths;
mod linux_order;
mod overflow;
mod pelt;
mod short_slice;
mod topology_cpuid;
mod topology_domains;
mod topology_errors;
mod topology_numa;
mod wakeup;
