//! QEMU's exit status, decoded in one place (docs/CONSOLE.md, "Exit status").

use std::fmt;

/// What the kernel reported through `isa-debug-exit` (the `code=` of `@fw exit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Success,
    Failure,
    Panic,
    Exception,
    Oom,
    Watchdog,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::Success,
        Outcome::Failure,
        Outcome::Panic,
        Outcome::Exception,
        Outcome::Oom,
        Outcome::Watchdog,
    ];

    /// The value the kernel writes to port 0xf4.
    pub fn port_value(self) -> u32 {
        match self {
            Outcome::Success => 0x10,
            Outcome::Failure => 0x11,
            Outcome::Panic => 0x12,
            Outcome::Exception => 0x13,
            Outcome::Oom => 0x14,
            Outcome::Watchdog => 0x15,
        }
    }

    /// QEMU's exit status for this outcome: `(v << 1) | 1`.
    pub fn qemu_status(self) -> i32 {
        ((self.port_value() << 1) | 1) as i32
    }

    /// The `code=` word of `@fw exit`.
    pub fn code(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Panic => "panic",
            Outcome::Exception => "exception",
            Outcome::Oom => "oom",
            Outcome::Watchdog => "watchdog",
        }
    }

    pub fn from_code(code: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.code() == code)
    }

    /// What the outcome means, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Outcome::Success => "kernel reported success",
            Outcome::Failure => "kernel reported failure (a self-check or workload check failed)",
            Outcome::Panic => "kernel panicked",
            Outcome::Exception => "kernel took an unexpected CPU exception",
            Outcome::Oom => "kernel ran out of memory",
            Outcome::Watchdog => "a kernel watchdog fired (soft or hard lockup, or a hung task)",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// How a QEMU run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QemuExit {
    /// The kernel exited through isa-debug-exit.
    Kernel(Outcome),
    /// Status 0: the guest reset or shut down without reporting (a triple fault under -no-reboot).
    GuestReset,
    /// Status 1: QEMU itself failed to start or run.
    QemuError,
    /// Any other status (an odd value the kernel is not supposed to write, or something else).
    Unknown(i32),
    /// QEMU was killed by a signal the harness did not send.
    Signal(i32),
    /// The harness killed QEMU after its timeout.
    Timeout,
    /// QEMU could not be spawned at all.
    SpawnFailed(String),
}

impl QemuExit {
    /// Decodes a wait status: `code` is the exit code if QEMU exited, `signal` the signal if it was
    /// killed; `timed_out` says whether the harness killed it for running too long.
    pub fn decode(code: Option<i32>, signal: Option<i32>, timed_out: bool) -> QemuExit {
        if timed_out {
            return QemuExit::Timeout;
        }
        match (code, signal) {
            (Some(0), _) => QemuExit::GuestReset,
            (Some(1), _) => QemuExit::QemuError,
            (Some(c), _) => Outcome::ALL
                .into_iter()
                .find(|o| o.qemu_status() == c)
                .map(QemuExit::Kernel)
                .unwrap_or(QemuExit::Unknown(c)),
            (None, Some(s)) => QemuExit::Signal(s),
            (None, None) => QemuExit::Unknown(-1),
        }
    }

    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            QemuExit::Kernel(o) => Some(*o),
            _ => None,
        }
    }

    pub fn is_success(&self) -> bool {
        *self == QemuExit::Kernel(Outcome::Success)
    }

    /// Whether a boot-stage summary helps explain this ending (everything but success).
    pub fn wants_stage_summary(&self) -> bool {
        !self.is_success()
    }
}

impl fmt::Display for QemuExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QemuExit::Kernel(o) => write!(
                f,
                "{} (exit status {}, code={})",
                o.describe(),
                o.qemu_status(),
                o
            ),
            QemuExit::GuestReset => f.write_str(
                "guest reset or shut down without reporting (triple fault?) (exit status 0)",
            ),
            QemuExit::QemuError => f.write_str("QEMU itself failed (exit status 1)"),
            QemuExit::Unknown(c) => write!(f, "unexpected QEMU exit status {c}"),
            QemuExit::Signal(s) => write!(f, "QEMU was killed by signal {s}"),
            QemuExit::Timeout => f.write_str("timeout: the harness killed QEMU"),
            QemuExit::SpawnFailed(e) => write!(f, "QEMU could not be started: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_match_the_protocol_table() {
        let got: Vec<i32> = Outcome::ALL.iter().map(|o| o.qemu_status()).collect();
        assert_eq!(got, vec![33, 35, 37, 39, 41, 43]);
        for o in Outcome::ALL {
            assert_eq!(
                QemuExit::decode(Some(o.qemu_status()), None, false),
                QemuExit::Kernel(o)
            );
            assert_eq!(Outcome::from_code(o.code()), Some(o));
        }
    }

    #[test]
    fn qemu_own_statuses() {
        assert_eq!(QemuExit::decode(Some(0), None, false), QemuExit::GuestReset);
        assert!(QemuExit::GuestReset.to_string().contains("triple fault"));
        assert_eq!(QemuExit::decode(Some(1), None, false), QemuExit::QemuError);
        assert_eq!(QemuExit::decode(Some(3), None, false), QemuExit::Unknown(3));
        assert_eq!(
            QemuExit::decode(Some(45), None, false),
            QemuExit::Unknown(45)
        );
        assert_eq!(QemuExit::decode(None, Some(9), false), QemuExit::Signal(9));
        assert_eq!(QemuExit::decode(None, Some(9), true), QemuExit::Timeout);
        assert_eq!(QemuExit::decode(Some(33), None, true), QemuExit::Timeout);
        assert!(QemuExit::decode(Some(33), None, false).is_success());
        assert!(!QemuExit::decode(Some(35), None, false).is_success());
        assert_eq!(Outcome::from_code("bogus"), None);
    }
}
