//! Scheduler feature switches, named and printed as Linux's `sched_features`.
//!
//! [`Features`] is a bitset over [`Feature`], the switches fairway
//! implements: each changes what the scheduler does, as the Linux feature of
//! its name does. Its text form is Linux's: a space-separated list in which
//! every feature appears once, as `NAME` when enabled and `NO_NAME` when
//! disabled. Parsing a user string (e.g. `"NO_DELAY_DEQUEUE RUN_TO_PARITY"`)
//! applies each token, in order, on top of the defaults
//! ([`Features::default`], the v6.19 defaults of section 1.12).
//!
//! Who reads which: the fair-class policy core the EEVDF features
//! (placement, parity, preemption, buddies, delayed dequeue, util_est);
//! `balance` the wake-placement, balancing and newidle ones (WA_*, SIS_UTIL,
//! LB_MIN, NI_RANDOM) and CACHE_HOT_BUDDY (`balance::migrate::task_hot`);
//! `ttwu` TTWU_QUEUE. The mechanism hands them the one value parsed from the
//! command line.
//!
//! Linux has switches for concepts fairway does not have (a real-time or
//! deadline class, a high-resolution tick, IRQ-time accounting, ...). Their
//! names are known here too, in [`LINUX_ONLY`], each with the reason, so that
//! a token naming one is refused by name ([`Token::LinuxOnly`],
//! [`FeatureError::LinuxOnly`]) rather than reported as unknown or accepted
//! and ignored; they are never printed. Any other name is an error naming
//! the token ([`UnknownFeature`]).
//!
//! New features are added by appending a variant to [`Feature`] and a row
//! to `TABLE` (name and default); bits are assigned by position, up to 64
//! features.

use core::fmt;
use core::str::FromStr;

macro_rules! features {
    ($( $variant:ident = $name:literal, $default:literal; )*) => {
        /// One scheduler feature switch (Linux's name in [`Feature::name`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        #[allow(non_camel_case_types)]
        pub enum Feature { $( $variant, )* }

        /// Every feature, in the order they are printed, with its default.
        const TABLE: &[(Feature, &str, bool)] = &[ $( (Feature::$variant, $name, $default), )* ];
    };
}

features! {
    PlaceLag = "PLACE_LAG", true;
    PlaceDeadlineInitial = "PLACE_DEADLINE_INITIAL", true;
    PlaceRelDeadline = "PLACE_REL_DEADLINE", true;
    RunToParity = "RUN_TO_PARITY", true;
    PreemptShort = "PREEMPT_SHORT", true;
    NextBuddy = "NEXT_BUDDY", false;
    PickBuddy = "PICK_BUDDY", true;
    CacheHotBuddy = "CACHE_HOT_BUDDY", true;
    DelayDequeue = "DELAY_DEQUEUE", true;
    DelayZero = "DELAY_ZERO", true;
    WakeupPreemption = "WAKEUP_PREEMPTION", true;
    TtwuQueue = "TTWU_QUEUE", true;
    SisUtil = "SIS_UTIL", true;
    LbMin = "LB_MIN", false;
    WaIdle = "WA_IDLE", true;
    WaWeight = "WA_WEIGHT", true;
    WaBias = "WA_BIAS", true;
    UtilEst = "UTIL_EST", true;
    NiRandom = "NI_RANDOM", true;
}

/// A Linux `sched_features` name whose concept fairway does not implement,
/// and why: refused on the command line, never printed.
#[derive(Debug, PartialEq, Eq)]
pub struct LinuxOnly {
    /// Linux's name.
    pub name: &'static str,
    /// What fairway has instead (or lacks), for the refusal's message.
    pub why: &'static str,
}

/// Every Linux feature name fairway refuses, in Linux's `features.h` order.
pub const LINUX_ONLY: &[LinuxOnly] = &[
    LinuxOnly {
        name: "HRTICK",
        why: "slices end at the scheduler tick (hz=), with no high-resolution timer per slice",
    },
    LinuxOnly { name: "HRTICK_DL", why: "there is no deadline class" },
    LinuxOnly {
        name: "NONTASK_CAPACITY",
        why: "IRQ and steal time are not accounted, so no IRQ share lowers a CPU's capacity; \
              the cpu_capacity= pressure counts as RT pressure, which lowers it whatever this feature says",
    },
    LinuxOnly {
        name: "WARN_DOUBLE_CLOCK",
        why: "runqueue clock updates are not tracked per lock section (a second update only reads the clock again)",
    },
    LinuxOnly { name: "RT_PUSH_IPI", why: "there is no real-time class" },
    LinuxOnly { name: "RT_RUNTIME_SHARE", why: "there is no real-time class" },
    LinuxOnly {
        name: "ATTACH_AGE_LOAD",
        why: "a task's load joins a queue only at its enqueue: with no other class and no cgroups, \
              nothing attaches it otherwise (fair.c: attach_entity_cfs_rq())",
    },
    LinuxOnly {
        name: "LATENCY_WARN",
        why: "there is no reschedule-latency warning (the soft-lockup watchdog, watchdog_thresh=, reports a CPU that stops switching)",
    },
    LinuxOnly {
        name: "PARANOID_AVG",
        why: "the avg_vruntime sums are 128-bit and cannot overflow (nor is the feature in v6.19)",
    },
];

impl LinuxOnly {
    /// The refused feature called `name` (exact, upper case), if any.
    pub fn from_name(name: &str) -> Option<&'static LinuxOnly> {
        LINUX_ONLY.iter().find(|l| l.name == name)
    }
}

/// One `sched_features` token, `NAME` or `NO_NAME`, read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// Switch a feature fairway implements on or off.
    Set(Feature, bool),
    /// A Linux feature fairway does not implement (either form).
    LinuxOnly(&'static LinuxOnly),
}

impl Token {
    /// Reads `tok`; a name that is neither a [`Feature`] nor in
    /// [`LINUX_ONLY`] is an error naming the token.
    pub fn parse(tok: &str) -> Result<Token, UnknownFeature> {
        let (name, on) = match tok.strip_prefix("NO_") {
            Some(rest) => (rest, false),
            None => (tok, true),
        };
        if let Some(f) = Feature::from_name(name) {
            return Ok(Token::Set(f, on));
        }
        LinuxOnly::from_name(name).map(Token::LinuxOnly).ok_or_else(|| UnknownFeature::new(tok))
    }
}

impl Feature {
    /// Linux's name for the feature.
    pub fn name(self) -> &'static str {
        TABLE[self as usize].1
    }

    /// Whether Linux v6.19 enables it by default.
    pub fn default_enabled(self) -> bool {
        TABLE[self as usize].2
    }

    /// Every known feature in print order.
    pub fn all() -> impl Iterator<Item = Feature> {
        TABLE.iter().map(|e| e.0)
    }

    /// The feature called `name` (exact, upper case), if any.
    pub fn from_name(name: &str) -> Option<Feature> {
        TABLE.iter().find(|e| e.1 == name).map(|e| e.0)
    }

    const fn bit(self) -> u64 {
        1 << (self as u8)
    }
}

/// A set of enabled features.
///
/// Invariant: only bits of known [`Feature`]s are ever set.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features(u64);

impl Features {
    /// No feature enabled.
    pub const fn empty() -> Features {
        Features(0)
    }

    /// Whether `f` is enabled.
    #[inline]
    pub const fn has(self, f: Feature) -> bool {
        self.0 & f.bit() != 0
    }

    /// Enable or disable `f`.
    pub fn set(&mut self, f: Feature, on: bool) {
        if on {
            self.0 |= f.bit();
        } else {
            self.0 &= !f.bit();
        }
    }

    /// `self` with `f` switched to `on`.
    pub fn with(mut self, f: Feature, on: bool) -> Features {
        self.set(f, on);
        self
    }

    /// Apply a `sched_features` string on top of `self`: each
    /// whitespace-separated token `NAME` enables and `NO_NAME` disables a
    /// feature. Nothing is changed when a token is unknown or names a Linux
    /// feature fairway does not implement (the first such token is the
    /// error); the kernel's command line reads token by token instead
    /// ([`Token::parse`]), to apply the others.
    pub fn apply(&mut self, s: &str) -> Result<(), FeatureError> {
        let mut out = *self;
        for tok in s.split_whitespace() {
            match Token::parse(tok).map_err(FeatureError::Unknown)? {
                Token::Set(f, on) => out.set(f, on),
                Token::LinuxOnly(l) => return Err(FeatureError::LinuxOnly(l)),
            }
        }
        *self = out;
        Ok(())
    }
}

impl Default for Features {
    /// The v6.19 defaults (section 1.12).
    fn default() -> Features {
        let mut f = Features::empty();
        for &(feat, _, on) in TABLE {
            f.set(feat, on);
        }
        f
    }
}

impl fmt::Display for Features {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(feat, name, _)) in TABLE.iter().enumerate() {
            if i > 0 {
                out.write_str(" ")?;
            }
            if !self.has(feat) {
                out.write_str("NO_")?;
            }
            out.write_str(name)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "Features({self})")
    }
}

impl FromStr for Features {
    type Err = FeatureError;

    /// The defaults with the string applied on top (see [`Features::apply`]).
    fn from_str(s: &str) -> Result<Features, FeatureError> {
        let mut f = Features::default();
        f.apply(s)?;
        Ok(f)
    }
}

/// Maximum length of a token kept in an [`UnknownFeature`] error.
pub const MAX_FEATURE_NAME: usize = 32;

/// A `sched_features` token that names no known feature.
///
/// Invariant: `len <= MAX_FEATURE_NAME` and `buf[..len]` is the start of the
/// token, cut at a character boundary.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UnknownFeature {
    buf: [u8; MAX_FEATURE_NAME],
    len: u8,
    truncated: bool,
}

impl UnknownFeature {
    fn new(tok: &str) -> UnknownFeature {
        let mut len = tok.len().min(MAX_FEATURE_NAME);
        while !tok.is_char_boundary(len) {
            len -= 1;
        }
        let mut buf = [0u8; MAX_FEATURE_NAME];
        buf[..len].copy_from_slice(&tok.as_bytes()[..len]);
        UnknownFeature { buf, len: len as u8, truncated: len < tok.len() }
    }

    /// The offending token (cut to [`MAX_FEATURE_NAME`] bytes).
    pub fn name(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len as usize]).unwrap_or("")
    }
}

impl fmt::Display for UnknownFeature {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dots = if self.truncated { "..." } else { "" };
        write!(out, "unknown scheduler feature `{}{}`", self.name(), dots)
    }
}

impl fmt::Debug for UnknownFeature {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "UnknownFeature({:?})", self.name())
    }
}

/// Why a `sched_features` string was not applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureError {
    /// A token naming no feature at all.
    Unknown(UnknownFeature),
    /// A token naming a Linux feature fairway does not implement.
    LinuxOnly(&'static LinuxOnly),
}

impl fmt::Display for FeatureError {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeatureError::Unknown(e) => e.fmt(out),
            FeatureError::LinuxOnly(l) => write!(out, "{} is a Linux feature fairway does not implement: {}", l.name, l.why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn defaults_match_v6_19() {
        let f = Features::default();
        for on in [
            Feature::PlaceLag,
            Feature::PlaceDeadlineInitial,
            Feature::PlaceRelDeadline,
            Feature::RunToParity,
            Feature::PreemptShort,
            Feature::PickBuddy,
            Feature::CacheHotBuddy,
            Feature::DelayDequeue,
            Feature::DelayZero,
            Feature::WakeupPreemption,
            Feature::TtwuQueue,
            Feature::SisUtil,
            Feature::WaIdle,
            Feature::WaWeight,
            Feature::WaBias,
            Feature::UtilEst,
            Feature::NiRandom,
        ] {
            assert!(f.has(on), "{} should default on", on.name());
        }
        for off in [Feature::NextBuddy, Feature::LbMin] {
            assert!(!f.has(off), "{} should default off", off.name());
        }
    }

    #[test]
    fn parse_applies_on_top_of_defaults() {
        let f: Features = "NO_DELAY_DEQUEUE RUN_TO_PARITY".parse().unwrap();
        assert!(!f.has(Feature::DelayDequeue));
        assert!(f.has(Feature::RunToParity));
        assert!(f.has(Feature::PlaceLag));
        let g: Features = "  NEXT_BUDDY\tNO_NEXT_BUDDY  ".parse().unwrap();
        assert_eq!(g, Features::default(), "later tokens win");
    }

    #[test]
    fn display_round_trips_and_uses_no_prefix() {
        let f: Features = "NO_PLACE_LAG NO_TTWU_QUEUE".parse().unwrap();
        let s = f.to_string();
        assert!(s.starts_with("NO_PLACE_LAG PLACE_DEADLINE_INITIAL"));
        assert!(s.contains(" NO_TTWU_QUEUE "));
        assert!(s.contains(" NO_NEXT_BUDDY "));
        assert_eq!(s.split(' ').count(), Feature::all().count());
        assert_eq!(s.parse::<Features>().unwrap(), f);
    }

    #[test]
    fn unknown_name_is_reported() {
        let e = "RUN_TO_PARITY NO_SUCH_THING".parse::<Features>().unwrap_err();
        let FeatureError::Unknown(e) = e else { panic!("{e:?}") };
        assert_eq!(e.name(), "NO_SUCH_THING");
        assert_eq!(e.to_string(), "unknown scheduler feature `NO_SUCH_THING`");
        let mut f = Features::default();
        assert!(f.apply("NO_PLACE_LAG place_lag").is_err(), "names are case-sensitive");
        assert_eq!(f, Features::default(), "a failed apply changes nothing");
        let long = "X".repeat(100) + "é";
        let e = Token::parse(&long).unwrap_err();
        assert_eq!(e.name().len(), MAX_FEATURE_NAME);
        assert!(e.to_string().ends_with("...`"));
    }

    /// Linux's v6.19 `features.h` (with tip's PARANOID_AVG), each name once: what
    /// fairway implements and what it refuses.
    const LINUX_NAMES: [&str; 28] = [
        "PLACE_LAG", "PLACE_DEADLINE_INITIAL", "PLACE_REL_DEADLINE", "RUN_TO_PARITY", "PREEMPT_SHORT",
        "NEXT_BUDDY", "PICK_BUDDY", "CACHE_HOT_BUDDY", "DELAY_DEQUEUE", "DELAY_ZERO", "WAKEUP_PREEMPTION",
        "HRTICK", "HRTICK_DL", "NONTASK_CAPACITY", "TTWU_QUEUE", "SIS_UTIL", "WARN_DOUBLE_CLOCK", "RT_PUSH_IPI",
        "RT_RUNTIME_SHARE", "LB_MIN", "ATTACH_AGE_LOAD", "WA_IDLE", "WA_WEIGHT", "WA_BIAS", "UTIL_EST",
        "LATENCY_WARN", "NI_RANDOM", "PARANOID_AVG",
    ];

    #[test]
    fn every_linux_name_acts_or_is_refused_never_both() {
        for name in LINUX_NAMES {
            let acts = Feature::from_name(name).is_some();
            let refused = LinuxOnly::from_name(name).is_some();
            assert!(acts != refused, "{name}: acts {acts}, refused {refused}");
        }
        assert_eq!(Feature::all().count() + LINUX_ONLY.len(), LINUX_NAMES.len());
    }

    #[test]
    fn a_linux_only_name_is_refused_in_both_forms_and_never_printed() {
        let printed = Features::default().to_string();
        for l in LINUX_ONLY {
            for tok in [l.name.to_string(), "NO_".to_string() + l.name] {
                assert_eq!(Token::parse(&tok), Ok(Token::LinuxOnly(l)));
                let mut f = Features::default();
                assert_eq!(f.apply(&("NO_PLACE_LAG ".to_string() + &tok)), Err(FeatureError::LinuxOnly(l)));
                assert_eq!(f, Features::default(), "a refused token applies nothing");
            }
            assert!(!printed.split(' ').any(|t| t.trim_start_matches("NO_") == l.name), "{} printed", l.name);
        }
        let e = "HRTICK".parse::<Features>().unwrap_err().to_string();
        assert!(e.starts_with("HRTICK is a Linux feature fairway does not implement: slices end at the scheduler tick"), "{e}");
    }
}
