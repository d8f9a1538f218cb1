//! The watchdogs and the lock checker, each provoked on purpose; running out of memory.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        // The watchdogs and the lock checker, each provoked on purpose (tests/src/watchdog_checks.rs).
        Scenario {
            name: "watchdog-soft-lockup",
            smp: "2",
            append: SOFT_LOCKUP,
            expect: Outcome::Watchdog,
            check: check_soft_lockup,
            ..BASE
        },
        Scenario {
            name: "watchdog-hard-lockup",
            smp: "2",
            append: HARD_LOCKUP,
            expect: Outcome::Watchdog,
            check: check_hard_lockup,
            ..BASE
        },
        Scenario {
            name: "watchdog-lost-wakeup",
            smp: "2",
            append: LOST_WAKEUP,
            expect: Outcome::Watchdog,
            check: check_lost_wakeup,
            ..BASE
        },
        Scenario {
            name: "watchdog-lost-sleep",
            smp: "2",
            append: LOST_SLEEP,
            expect: Outcome::Watchdog,
            check: check_lost_sleep,
            ..BASE
        },
        Scenario {
            name: "lockdep-inversion",
            smp: "2",
            append: LOCKDEP_INVERSION,
            expect: Outcome::Panic,
            check: check_lockdep_inversion,
            ..BASE
        },
        Scenario {
            name: "lockdep-rq-descending",
            smp: "2",
            append: LOCKDEP_RQ_DESCENDING,
            expect: Outcome::Panic,
            check: check_lockdep_rq_descending,
            ..BASE
        },
        Scenario {
            name: "lockdep-irqs-on",
            smp: "2",
            append: LOCKDEP_IRQS_ON,
            expect: Outcome::Panic,
            check: check_lockdep_irqs_on,
            ..BASE
        },
        Scenario {
            name: "lockdep-schedule-held",
            smp: "2",
            append: LOCKDEP_SCHEDULE_HELD,
            expect: Outcome::Panic,
            check: check_lockdep_schedule_held,
            ..BASE
        },
        Scenario {
            name: "crash-oom",
            smp: "2",
            append: "test_crash=oom",
            expect: Outcome::Oom,
            check: check_oom,
            ..BASE
        },
    ]
}
