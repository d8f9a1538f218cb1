//! The checkers and what provokes them: `sched_debug=`, `lockdep=`,
//! `watchdog_thresh=`, `hung_task_timeout_secs=`, `nmi_watchdog=`, the
//! deliberate failures (`test_crash=`, `test_lockdep=`, `test_watchdog=`)
//! and fault injection (`fault=`, `fault_seed=`).

use alloc::string::String;
use alloc::vec::Vec;

use super::{parse_range, parse_switch, store, Applied, Crash, Pass};

/// Applies `key=value` if `key` is one of this group's options.
pub(super) fn apply(pass: &mut Pass, key: &str, value: &str) -> Applied {
    let o = &mut pass.options;
    Some(match key {
        "test_crash" => {
            let crash = Crash::ALL.iter().find(|(n, _)| *n == value).map(|(_, c)| Some(*c));
            store(&mut o.test_crash, crash, |kept| {
                message!(
                    "test_crash={value:?} is not one of page_fault, divide_error, invalid_opcode, panic, oom; {}",
                    if kept.is_some() { "keeping the earlier test_crash" } else { "no crash" }
                )
            })
        }
        "sched_debug" => store(&mut o.sched_debug, parse_switch(value), |on| {
            message!("sched_debug={value:?} is not 0 or 1; using sched_debug={}", *on as u8)
        }),
        // A bad value leaves the checker to follow `sched_debug=`, not an
        // earlier word.
        "lockdep" => {
            o.lockdep = parse_switch(value);
            o.lockdep.map(|_| ()).ok_or_else(|| message!("lockdep={value:?} is not 0 or 1; lockdep follows sched_debug"))
        }
        "test_lockdep" => {
            o.test_lockdep = mech::lockdep_provoke::Provoke::ALL.iter().find(|(n, _)| *n == value).map(|(_, p)| *p);
            o.test_lockdep.map(|_| ()).ok_or_else(|| {
                message!("test_lockdep={value:?} is not one of inversion, rq_descending, irqs_on; nothing provoked")
            })
        }
        "nmi_watchdog" => store(&mut o.nmi_watchdog, parse_switch(value), |on| {
            message!("nmi_watchdog={value:?} is not 0 or 1; using nmi_watchdog={}", *on as u8)
        }),
        "watchdog_thresh" => store(&mut o.watchdog_thresh, parse_range(value, 0, 60), |s| {
            message!("watchdog_thresh={value:?} is not a number of seconds from 0 (off) to 60; using watchdog_thresh={s}")
        }),
        "hung_task_timeout_secs" => store(&mut o.hung_task_timeout_secs, parse_range(value, 0, 3600), |s| {
            message!(
                "hung_task_timeout_secs={value:?} is not a number of seconds from 0 (off) to 3600; using hung_task_timeout_secs={s}"
            )
        }),
        "test_watchdog" => {
            o.test_watchdog = mech::watchdog::Provoke::ALL.iter().find(|(n, _)| *n == value).map(|(_, p)| *p);
            o.test_watchdog.map(|_| ()).ok_or_else(|| {
                message!(
                    "test_watchdog={value:?} is not one of soft_lockup, hard_lockup, lost_wakeup, lost_sleep; nothing provoked"
                )
            })
        }
        "fault" => match mech::fault::parse_modes(value) {
            Ok(m) => {
                o.fault = m;
                Ok(())
            }
            Err(bad) => {
                let known: Vec<&str> = mech::fault::MODES.iter().map(|(n, _)| *n).collect();
                let kept = if o.fault == 0 { String::from("no faults") } else { mech::fault::names(o.fault) };
                Err(message!("fault={value:?}: {bad:?} is not a fault mode ({}); injecting {kept}", known.join(", ")))
            }
        },
        "fault_seed" => store(&mut o.fault_seed, value.parse().ok().map(Some), |kept| {
            message!(
                "fault_seed={value:?} is not a number from 0 to 18446744073709551615; using fault_seed={}",
                kept.unwrap_or(mech::fault::DEFAULT_SEED)
            )
        }),
        _ => return None,
    })
}

/// The checks that need every word: a fault seed without a fault mode
/// would be silently ignored.
pub(super) fn after_all(pass: &mut Pass) {
    if let (0, Some(seed)) = (pass.options.fault, pass.options.fault_seed) {
        pass.problems.push(message!("fault_seed={seed} without fault=: no fault is injected"));
    }
}
