//! The console and the clock: `log=`, `hz=`, `selfcheck_ticks=`, `trace=`,
//! `stats_ms=`, `phase_ns=`.


use super::{parse_range, store, Applied, LogLevel, Pass};

/// Applies `key=value` if `key` is one of this group's options.
pub(super) fn apply(pass: &mut Pass, key: &str, value: &str) -> Applied {
    let o = &mut pass.options;
    Some(match key {
        "log" => store(&mut o.log, LogLevel::parse(value), |l| {
            message!(
                "log={value:?} is not a log level (off, error, warn, info, debug, trace); using log={}",
                l.name()
            )
        }),
        "hz" => store(&mut o.hz, parse_range(value, 10, 10_000), |hz| {
            message!("hz={value:?} is not a number from 10 to 10000; using hz={hz}")
        }),
        "selfcheck_ticks" => store(&mut o.selfcheck_ticks, parse_range(value, 1, 1000), |n| {
            message!("selfcheck_ticks={value:?} is not a number from 1 to 1000; using selfcheck_ticks={n}")
        }),
        "trace" => {
            let events = match value.parse::<usize>() {
                Ok(1) => Some(16384),
                Ok(n) if n <= 1 << 20 => Some(n),
                _ => None,
            };
            store(&mut o.trace, events, |n| {
                message!("trace={value:?} is not 0, 1 or an event count up to 1048576; using trace={n}")
            })
        }
        "phase_ns" => store(&mut o.phase_ns, parse_range(value, 0, 100_000_000).map(u64::from), |n| {
            message!("phase_ns={value:?} is not a number of nanoseconds up to 100000000; using phase_ns={n}")
        }),
        "stats_ms" => store(&mut o.stats_ms, parse_range(value, 0, 3_600_000).map(u64::from), |n| {
            message!("stats_ms={value:?} is not a number of milliseconds up to 3600000; using stats_ms={n}")
        }),
        _ => return None,
    })
}
