//! fairway's scheduler policy core.
//!
//! The fair class (EEVDF with PELT), as Linux v6.19 defines it, in a pure
//! `no_std` + `alloc` crate that the kernel uses unchanged and the host
//! tests, property-tests and benchmarks. See `README.md` for the API
//! contract.
//!
//! Design principles:
//! - No `unsafe`, no floating point, no dependency on kernel or arch code.
//! - No panic on any input: bad handles and states are `SchedError`s;
//!   fixed-point arithmetic has a stated bound (module docs) and is widened
//!   (`u128`/`i128`) or saturating where the bound is not structural.
//! - Virtual times are wrapping `u64`, compared only through `time`'s
//!   helpers.
//! - Every type states its invariants in its doc comment.
//! - Linux's names where the concept is Linux's (`avg_vruntime`,
//!   `entity_eligible`, `update_curr`, `place_entity`, `pick_eevdf`,
//!   `calc_delta_fair`, ...); historical variants stay selectable
//!   (`tunables`).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod cpumask;
pub mod topology;

pub mod avg_vruntime;
pub mod balance;
mod combined;
mod delay;
pub mod entity;
pub mod fair_rq;
pub mod features;
pub mod flags;
pub mod pelt;
mod pick;
mod place;
pub mod preempt;
pub mod sim;
pub mod time;
pub mod tree;
pub mod ttwu;
pub mod tunables;
pub mod weight;

pub use entity::{EntityId, Policy, SchedEntity};
pub use fair_rq::{DequeueFlags, DequeueOutcome, EnqueueFlags, FairRq, SchedError, WakeFlags};
pub use features::{Feature, FeatureError, Features, LinuxOnly, UnknownFeature};
pub use tunables::Tunables;
pub use weight::{LoadWeight, Nice};
