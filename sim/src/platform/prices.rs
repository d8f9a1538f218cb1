//! What the mechanism's own work costs a simulated CPU, in guest
//! instructions (`Platform::mechanism_work`; one ns each at
//! [`super::NS_PER_INSTRUCTION`]): the figures the kernel spends under QEMU's
//! `-icount shift=0`. The mechanism says what it did (`mech::platform::Work`),
//! a real CPU spends the time by doing it, and only this platform prices it
//! (docs/SIMULATOR.md, "The cost model", has the commands and the algebra).

use mech::platform::Work;

/// One pipe read or write of fewer than `mech::sync::pipe::SMALL_COPY`
/// bytes (the pipe's byte loop), apart from any wakeup it makes: the lock,
/// the byte loop, the counts and the caller's loop around it. Measured
/// under `-icount` from hackbench at `-smp 1` (`engine::cost::IcountFigures`
/// checks the figure).
pub const PIPE_OP_INSTRUCTIONS_SMALL: u64 = 135;
/// The same for a bulk copy (`SMALL_COPY` bytes or more): the fixed part...
pub const PIPE_OP_INSTRUCTIONS_BULK: u64 = 174;
/// ...and the copy's thousandths of an instruction per byte.
pub const PIPE_OP_MILLI_INSTRUCTIONS_PER_BYTE: u64 = 217;

/// One balance pass over a domain apart from its CPUs: the environment, the
/// plan, the groups' sums. From `-icount` at `-smp 2`: the least
/// contaminated `@fw newidle time_ns=` per attempt, 2,289, less two CPUs at
/// [`BALANCE_INSTRUCTIONS_PER_CPU`]; an upper bound.
pub const BALANCE_PASS_INSTRUCTIONS: u64 = 1950;
/// ...and per CPU of the domain's span whose snapshot the pass reads: the
/// `select_idle_cpu()` loop's figure per CPU examined (170), the same kind
/// of work (a remote CPU's state read and tested). Wakeup placement pays
/// it per CPU it reads on a wide span too.
pub const BALANCE_INSTRUCTIONS_PER_CPU: u64 = 170;

/// A pipe read or write of `bytes` bytes.
pub const fn pipe_op_instructions(bytes: usize) -> u64 {
    if bytes < mech::sync::pipe::SMALL_COPY {
        PIPE_OP_INSTRUCTIONS_SMALL
    } else {
        PIPE_OP_INSTRUCTIONS_BULK + bytes as u64 * PIPE_OP_MILLI_INSTRUCTIONS_PER_BYTE / 1000
    }
}

/// One balance pass over a span of `cpus` CPUs.
pub const fn balance_pass_instructions(cpus: u64) -> u64 {
    BALANCE_PASS_INSTRUCTIONS + cpus * BALANCE_INSTRUCTIONS_PER_CPU
}

/// What `work` costs, in guest instructions.
pub const fn instructions(work: Work) -> u64 {
    match work {
        Work::PipeCopy { bytes } => pipe_op_instructions(bytes),
        Work::BalancePass { cpus } => balance_pass_instructions(cpus as u64),
        Work::PlacementCpuRead => BALANCE_INSTRUCTIONS_PER_CPU,
    }
}
