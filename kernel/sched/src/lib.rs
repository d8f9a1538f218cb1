//! fairway's scheduler policy core.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod cpumask;
pub mod topology;
