//! Operation flags, outcomes and errors of the run-queue API.

use core::fmt;
use core::ops::BitOr;

use crate::entity::EntityId;

macro_rules! flag_set {
    ($(#[$doc:meta])* $name:ident { $( $(#[$fdoc:meta])* $flag:ident = $bit:expr; )* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub struct $name(u32);
        impl $name {
            /// No flag.
            pub const NONE: $name = $name(0);
            $( $(#[$fdoc])* pub const $flag: $name = $name(1 << $bit); )*
            /// Whether every flag of `other` is set.
            pub const fn contains(self, other: $name) -> bool { self.0 & other.0 == other.0 }
        }
        impl BitOr for $name {
            type Output = $name;
            fn bitor(self, rhs: $name) -> $name { $name(self.0 | rhs.0) }
        }
    };
}

flag_set! {
    /// Why an entity is enqueued.
    EnqueueFlags {
        /// It woke up.
        WAKEUP = 0;
        /// It is new (fork): gets half a slice with PLACE_DEADLINE_INITIAL.
        INITIAL = 1;
        /// It arrives from another CPU.
        MIGRATED = 2;
    }
}

flag_set! {
    /// Why an entity is dequeued.
    DequeueFlags {
        /// It goes to sleep (otherwise: migration or attribute change, and
        /// the remaining deadline is kept relative with PLACE_REL_DEADLINE).
        SLEEP = 0;
        /// A special sleep (stopped, traced, frozen, dead) that must not be
        /// delayed.
        SPECIAL = 1;
        /// The final dequeue of a delayed entity.
        DELAYED = 2;
    }
}

flag_set! {
    /// Wakeup context, as Linux's `WF_*`.
    WakeFlags {
        /// The wakee was just forked.
        FORK = 0;
        /// The waker is about to sleep.
        SYNC = 1;
        /// This run-queue was chosen by wakeup placement.
        RQ_SELECTED = 2;
    }
}

/// Result of a dequeue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequeueOutcome {
    /// The entity left the queue.
    Dequeued,
    /// It sleeps but stays queued (DELAY_DEQUEUE) until picked or woken.
    Delayed,
}

/// An operation refused because of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedError {
    /// The handle names no live entity of this queue.
    NoSuchEntity(EntityId),
    /// Enqueue of an entity that is already queued (and not delayed).
    AlreadyQueued(EntityId),
    /// The operation needs a queued entity.
    NotQueued(EntityId),
    /// Removal of an entity that is queued or current.
    Busy(EntityId),
    /// The arena could not grow.
    OutOfMemory,
    /// More than `u32::MAX - 1` entities.
    TooManyEntities,
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::NoSuchEntity(id) => write!(f, "no entity {}", id.0),
            SchedError::AlreadyQueued(id) => write!(f, "entity {} is already queued", id.0),
            SchedError::NotQueued(id) => write!(f, "entity {} is not queued", id.0),
            SchedError::Busy(id) => write!(f, "entity {} is queued or running", id.0),
            SchedError::OutOfMemory => f.write_str("out of memory"),
            SchedError::TooManyEntities => f.write_str("too many entities"),
        }
    }
}
