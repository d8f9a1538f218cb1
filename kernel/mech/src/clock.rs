//! The tick's period (`hz=`) and jiffies, the unit the balancer's intervals
//! count in. Below everything that reads them: the timer that ticks, idle's
//! prediction, the balancer, the watchdog.

use core::sync::atomic::{AtomicU64, Ordering};

/// The tick's period in ns (1000 Hz until `set_hz`).
static TICK_NS: AtomicU64 = AtomicU64::new(1_000_000);

/// Sets the tick rate (from `hz=`).
pub fn set_hz(hz: u32) {
    TICK_NS.store(1_000_000_000 / hz.max(1) as u64, Ordering::Relaxed);
}

/// The tick's period (ns).
pub fn tick_ns() -> u64 {
    TICK_NS.load(Ordering::Relaxed)
}

/// Jiffies: ticks of `hz` since boot (the unit of balance intervals).
pub fn jiffies() -> u64 {
    crate::platform::uptime_ns() / tick_ns().max(1)
}
