//! The scheduler's options: `sched_features=`, `nohz=`, `idle=`,
//! `cpu_capacity=`, and the balancing switches the policy crate parses
//! (`sched::balance::BalanceConfig::apply`).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use super::{capacity::parse_capacities, store, Applied, Pass};
use sched::features::Token;

/// Applies `key=value` if `key` is one of this group's options (the
/// balancing switches excepted: [`apply_switch`] takes every key no group
/// knows).
pub(super) fn apply(pass: &mut Pass, key: &str, value: &str) -> Applied {
    let o = &mut pass.options;
    Some(match key {
        "sched_features" => sched_features(pass, value),
        "nohz" => {
            let on = match value {
                "on" => Some(true),
                "off" => Some(false),
                _ => None,
            };
            store(&mut o.nohz, on, |on| {
                message!("nohz={value:?} is not on or off; using nohz={}", if *on { "on" } else { "off" })
            })
        }
        "idle" => match value {
            "halt" | "poll" | "last_polls" => {
                (o.idle_poll, o.idle_last_polls) = (value == "poll", value == "last_polls");
                Ok(())
            }
            _ => Err(message!("idle={value:?} is not halt, poll or last_polls; using idle={}", o.idle_name())),
        },
        "cpu_capacity" => store(&mut o.cpu_capacity, parse_capacities(value), |_| {
            message!(
                "cpu_capacity={value:?} is not a list of CPU:CAPACITY pairs (e.g. 1:512,3:768, capacity 1..1024); all CPUs keep 1024"
            )
        }),
        _ => return None,
    })
}

/// `sched_features=NAME,NO_NAME,...`. An unknown name rejects the whole
/// option; a Linux feature fairway does not implement is refused alone (one
/// problem each), the others apply.
fn sched_features(pass: &mut Pass, value: &str) -> Result<(), String> {
    let tokens: Result<Vec<_>, _> =
        value.split(',').filter(|t| !t.is_empty()).map(|t| Token::parse(t).map(|read| (t, read))).collect();
    let tokens = tokens.map_err(|e| {
        message!("sched_features: unknown feature {:?}; keeping the features as they were", e.name())
    })?;
    for (tok, read) in tokens {
        match read {
            Token::Set(feat, on) => {
                pass.options.sched_features.set(feat, on);
                if let Some(msg) = pass.ledger.note(feat, on, false) {
                    pass.problems.push(msg);
                }
            }
            Token::LinuxOnly(l) => pass.problems.push(message!(
                "sched_features: {} is a Linux feature fairway does not implement ({}); ignoring {}, the other features apply",
                l.name, l.why, tok
            )),
        }
    }
    Ok(())
}

/// A balancing switch (`avg_idle_clamp=`, `sis_util=`, ...), or, when the
/// policy crate knows no such key either, an unknown option (`word` as given).
/// A switch that is also a feature sets the feature.
pub(super) fn apply_switch(pass: &mut Pass, key: &str, value: &str, word: &str) -> Result<(), String> {
    let o = &mut pass.options;
    match o.balance.apply(key, value) {
        Ok(true) => {
            if let Some(&(_, feat)) = sched::balance::config::SHARED_SWITCHES.iter().find(|(k, _)| *k == key) {
                let on = o.balance.features.has(feat);
                o.sched_features.set(feat, on);
                if let Some(msg) = pass.ledger.note(feat, on, true) {
                    pass.problems.push(msg);
                }
            }
            Ok(())
        }
        Ok(false) => Err(message!("unknown option {word:?} ignored")),
        Err(e) => Err(message!("{e}; keeping {key}={}", balance_value(&o.balance, key))),
    }
}

/// The current value of a balancing switch, for the "keeping" message.
fn balance_value(cfg: &sched::balance::BalanceConfig, key: &str) -> String {
    let mut all = String::new();
    let _ = write!(all, "{}", cfg);
    all.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')).map(String::from))
        .unwrap_or_else(|| String::from("its default"))
}
