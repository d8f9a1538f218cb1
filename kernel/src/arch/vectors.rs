//! The interrupt vectors fairway uses: the local APIC's sources, its IPIs and the software
//! interrupt of a switch. A leaf of `arch`, so that the APIC's setup, the idle wait and the
//! dispatch in `trap` name them without importing each other.

/// The local APIC timer (the tick and the one-shot timers).
pub const TIMER_VECTOR: u8 = 0x20;
/// The boot self-check's IPI (`selfcheck`): counted, nothing else.
pub const TEST_IPI_VECTOR: u8 = 0xF0;
/// Remote wakeups and reschedule requests.
pub const RESCHED_VECTOR: u8 = 0xF1;
/// Wakes the halted poller of `idle=last_polls` so that it polls (`arch::wait`).
pub const POLL_KICK_VECTOR: u8 = 0xF2;
/// Software interrupt a task raises to give up its CPU (`schedule()`).
pub const SCHEDULE_VECTOR: u8 = 0x81;
/// The local APIC's internal errors (a fatal report).
pub const ERROR_VECTOR: u8 = 0xFE;
/// The local APIC's spurious interrupts (ignored).
pub const SPURIOUS_VECTOR: u8 = 0xFF;
