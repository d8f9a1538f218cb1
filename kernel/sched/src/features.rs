//! Scheduler feature switches, named and printed as Linux's `sched_features`.
//!
//! [`Features`] is a bitset over [`Feature`]. Its text form is Linux's: a
//! space-separated list in which every known feature appears once, as `NAME`
//! when enabled and `NO_NAME` when disabled. Parsing a user string (e.g.
//! `"NO_DELAY_DEQUEUE RUN_TO_PARITY"`) applies each token, in order, on top
//! of the defaults ([`Features::default`], the v6.19 defaults of section
//! 1.12); an unknown name is an error naming the token.
//!
//! The fair-class policy core acts on the EEVDF features (placement, parity,
//! preemption, buddies, delayed dequeue). The other names (wake placement,
//! balancing, capacity, util_est) are recognised here so that one string
//! configures the whole scheduler; the modules that implement those decisions
//! read them from the same value. New features are added by appending a
//! variant to [`Feature`] and a row to `TABLE` (name and default); bits are
//! assigned by position, up to 64 features.

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
    Hrtick = "HRTICK", false;
    HrtickDl = "HRTICK_DL", false;
    NontaskCapacity = "NONTASK_CAPACITY", true;
    TtwuQueue = "TTWU_QUEUE", true;
    SisUtil = "SIS_UTIL", true;
    WarnDoubleClock = "WARN_DOUBLE_CLOCK", false;
    RtPushIpi = "RT_PUSH_IPI", true;
    RtRuntimeShare = "RT_RUNTIME_SHARE", false;
    LbMin = "LB_MIN", false;
    AttachAgeLoad = "ATTACH_AGE_LOAD", true;
    WaIdle = "WA_IDLE", true;
    WaWeight = "WA_WEIGHT", true;
    WaBias = "WA_BIAS", true;
    UtilEst = "UTIL_EST", true;
    LatencyWarn = "LATENCY_WARN", false;
    NiRandom = "NI_RANDOM", true;
    ParanoidAvg = "PARANOID_AVG", false;
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
    /// feature. Nothing is changed when a token is unknown.
    pub fn apply(&mut self, s: &str) -> Result<(), UnknownFeature> {
        let mut out = *self;
        for tok in s.split_whitespace() {
            let (name, on) = match tok.strip_prefix("NO_") {
                Some(rest) => (rest, false),
                None => (tok, true),
            };
            match Feature::from_name(name) {
                Some(f) => out.set(f, on),
                None => return Err(UnknownFeature::new(tok)),
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
    type Err = UnknownFeature;

    /// The defaults with the string applied on top (see [`Features::apply`]).
    fn from_str(s: &str) -> Result<Features, UnknownFeature> {
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
            Feature::NiRandom,
        ] {
            assert!(f.has(on), "{} should default on", on.name());
        }
        for off in [Feature::NextBuddy, Feature::Hrtick, Feature::ParanoidAvg, Feature::LbMin] {
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
        let f: Features = "NO_PLACE_LAG HRTICK".parse().unwrap();
        let s = f.to_string();
        assert!(s.starts_with("NO_PLACE_LAG PLACE_DEADLINE_INITIAL"));
        assert!(s.contains(" HRTICK "));
        assert!(s.contains(" NO_NEXT_BUDDY "));
        assert_eq!(s.split(' ').count(), Feature::all().count());
        assert_eq!(s.parse::<Features>().unwrap(), f);
    }

    #[test]
    fn unknown_name_is_reported() {
        let e = "RUN_TO_PARITY NO_SUCH_THING".parse::<Features>().unwrap_err();
        assert_eq!(e.name(), "NO_SUCH_THING");
        assert_eq!(e.to_string(), "unknown scheduler feature `NO_SUCH_THING`");
        let mut f = Features::default();
        assert!(f.apply("NO_PLACE_LAG place_lag").is_err(), "names are case-sensitive");
        assert_eq!(f, Features::default(), "a failed apply changes nothing");
        let long = "X".repeat(100) + "é";
        let e = long.parse::<Features>().unwrap_err();
        assert_eq!(e.name().len(), MAX_FEATURE_NAME);
        assert!(e.to_string().ends_with("...`"));
    }
}
