//! Per-CPU variables: one instance per CPU, each on cache lines of its own,
//! declared by the module that owns it (Linux's `DEFINE_PER_CPU`).
//!
//! Each module of the mechanism keeps its per-CPU part's type, fields and
//! invariants in its own file and declares its own `PerCpu` static
//! (`static CPUS: PerCpu<RqCpu> = per_cpu!(RqCpu::new());`), found by
//! indexing it with the CPU id (`CPUS[cpu]`). No structure gathers the
//! parts, so no module needs to name another's part to find its own (Linux
//! gathers the core's in `struct rq`, kernel/sched/sched.h, and keeps the
//! rest in per-CPU variables of their own).
//!
//! Each CPU's instance starts on its own cache line (`align(64)`), so CPUs
//! share no line of a part. Indexing costs one mask, a multiply or shift of
//! the CPU id by the padded size and an add, as an array of any structure
//! does, without a bounds check.

use core::ops::Index;

use crate::MAX_CPUS;

/// One CPU's instance, alone on its cache lines.
#[repr(align(64))]
pub struct CacheLine<T>(pub(crate) T);

/// A variable with one instance per possible CPU (`MAX_CPUS`); declare it
/// with `per_cpu!`, which builds every instance with the same constant
/// expression.
pub struct PerCpu<T>(pub(crate) [CacheLine<T>; MAX_CPUS]);

const _: () = assert!(MAX_CPUS.is_power_of_two(), "PerCpu masks the CPU id");

impl<T> Index<usize> for PerCpu<T> {
    type Output = T;
    /// `cpu`'s instance (`cpu < MAX_CPUS`). The id is masked rather than
    /// bounds-checked (`MAX_CPUS` is a power of two): every caller passes a
    /// CPU id, and the hot paths index several variables per operation.
    #[inline(always)]
    fn index(&self, cpu: usize) -> &T {
        debug_assert!(cpu < MAX_CPUS);
        &self.0[cpu & (MAX_CPUS - 1)].0
    }
}

/// A [`PerCpu`] whose every instance is the constant expression `$init`.
macro_rules! per_cpu {
    ($init:expr) => {
        $crate::percpu::PerCpu([const { $crate::percpu::CacheLine($init) }; $crate::MAX_CPUS])
    };
}
pub(crate) use per_cpu;
