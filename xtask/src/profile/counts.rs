//! The plugin's counts: the varied parameter, the profile files, their difference, and its
//! attribution to functions and layers.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::symbols::Symbols;

/// First line of a profile written by the plugin.
pub(super) const HEADER: &str = "fairway-qemu-profile v1";
/// Name shown for addresses no symbol covers.
pub const NO_SYMBOL: &str = "[no symbol]";

// ---------------------------------------------------------------------------------------------
// Parameters

/// The base value of a parameter when `--params` does not give one.
pub fn default_base(param: &str) -> Option<u64> {
    match param {
        "rounds" => Some(2000),
        "loops" => Some(20),
        "ms" => Some(200),
        "samples" => Some(100),
        _ => None,
    }
}

/// The value of `key` in `k=v,k=v` (None when absent).
pub fn param_value(params: &str, key: &str) -> Result<Option<u64>, String> {
    for kv in params.split(',').filter(|s| !s.is_empty()) {
        if let Some((k, v)) = kv.split_once('=') {
            if k.trim() == key {
                return v.trim().parse().map(Some).map_err(|_| {
                    format!("xtask profile: --params {key}={v}: not a whole number")
                });
            }
        }
    }
    Ok(None)
}

/// `params` with `key=value`, replacing an existing value or appending it.
pub fn with_param(params: &str, key: &str, value: u64) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut found = false;
    for kv in params.split(',').filter(|s| !s.is_empty()) {
        match kv.split_once('=') {
            Some((k, _)) if k.trim() == key => {
                out.push(format!("{key}={value}"));
                found = true;
            }
            _ => out.push(kv.to_string()),
        }
    }
    if !found {
        out.push(format!("{key}={value}"));
    }
    out.join(",")
}

// ---------------------------------------------------------------------------------------------
// The plugin's output

/// Executions per instruction address of one boot (all vCPUs together: see the plugin's doc on
/// why QEMU 10.0 cannot tell them apart under `-icount`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Profile {
    pub counts: HashMap<u64, u64>,
    pub total: u64,
}

/// Parses what the plugin writes (see tools/qemu-profile/src/lib.rs); rejects another format, a
/// truncated file and counts that do not add up to the `end` line.
pub fn parse_profile(text: &str) -> Result<Profile, String> {
    let mut lines = text.lines().enumerate();
    let head = lines.next().map_or("", |(_, l)| l);
    if head.trim_end() != HEADER {
        return Err(format!("not a profile of tools/qemu-profile (first line {head:?}, expected {HEADER:?})"));
    }
    let mut p = Profile::default();
    for (i, line) in lines {
        let bad = || format!("line {}: bad profile line {line:?}", i + 1);
        if let Some(rest) = line.strip_prefix("end ") {
            let insns: u64 = rest.trim().strip_prefix("insns=").and_then(|v| v.parse().ok()).ok_or_else(bad)?;
            if insns != p.total {
                return Err(format!("the counts add up to {}, the end line says {insns}", p.total));
            }
            return Ok(p);
        }
        let mut f = line.split_whitespace();
        let (Some(pc), Some(n), None) = (f.next(), f.next(), f.next()) else {
            return Err(bad());
        };
        let pc = u64::from_str_radix(pc, 16).map_err(|_| bad())?;
        let n: u64 = n.parse().map_err(|_| bad())?;
        *p.counts.entry(pc).or_default() += n;
        p.total += n;
    }
    Err("truncated profile (no `end` line): did QEMU exit normally?".into())
}

/// `b − a` per address, zeros left out, sorted by address.
pub fn subtract(a: &Profile, b: &Profile) -> Vec<(u64, i64)> {
    let mut keys: Vec<u64> = a.counts.keys().chain(b.counts.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let d = *b.counts.get(&k).unwrap_or(&0) as i64 - *a.counts.get(&k).unwrap_or(&0) as i64;
            (d != 0).then_some((k, d))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Attribution

/// Where a function belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The policy crate (`kernel/sched`, lib `sched`).
    Policy,
    /// The kernel binary (`fairway_kernel`).
    Kernel,
    /// Other Rust crates: core, alloc, spin, x86_64, x2apic, ...
    Library,
    /// Unmangled symbols: assembly stubs (`isr_common`, ...), `memcpy`, compiler builtins.
    Other,
    /// No symbol covers the address.
    NoSymbol,
}

impl Layer {
    pub fn label(self) -> &'static str {
        match self {
            Layer::Policy => "policy crate (sched::)",
            Layer::Kernel => "kernel (fairway_kernel::)",
            Layer::Library => "Rust libraries (core, alloc, spin, ...)",
            Layer::Other => "assembly stubs and other unmangled symbols",
            Layer::NoSymbol => "no symbol",
        }
    }
}

/// The crate a demangled name starts with: `sched` for `sched::eevdf::pick`, `fairway_kernel`
/// for `<fairway_kernel::rq::Rq as core::fmt::Debug>::fmt`, None for `memcpy`.
pub fn crate_of(name: &str) -> Option<&str> {
    let mut s = name;
    loop {
        let t = s
            .trim_start_matches(['<', '&', '[', '(', '*'])
            .trim_start_matches("mut ")
            .trim_start_matches("const ")
            .trim_start_matches("dyn ");
        if t.len() == s.len() {
            break;
        }
        s = t;
    }
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    (end > 0 && s[end..].starts_with("::")).then(|| &s[..end])
}

pub fn layer_of(name: &str) -> Layer {
    if name == NO_SYMBOL {
        return Layer::NoSymbol;
    }
    match crate_of(name) {
        Some("sched") => Layer::Policy,
        Some("fairway_kernel") => Layer::Kernel,
        Some(_) => Layer::Library,
        None => Layer::Other,
    }
}

/// One function's share of the difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FnCount {
    pub name: String,
    pub layer: Layer,
    /// Instructions added by the second run.
    pub insns: i64,
}

/// Sums the differences per symbol (`NO_SYMBOL` where none covers the address), largest first.
pub fn attribute(delta: &[(u64, i64)], syms: &Symbols) -> Vec<FnCount> {
    let mut by: HashMap<&str, FnCount> = HashMap::new();
    for &(pc, d) in delta {
        let name = syms.lookup(pc).map_or(NO_SYMBOL, |(n, _)| n);
        by.entry(name)
            .or_insert_with(|| FnCount { name: name.to_string(), layer: layer_of(name), insns: 0 })
            .insns += d;
    }
    let mut v: Vec<FnCount> = by.into_values().collect();
    v.sort_by(|a, b| b.insns.cmp(&a.insns).then_with(|| a.name.cmp(&b.name)));
    v
}

/// Totals per layer (largest first), and per library crate within `Library`.
pub fn group(fns: &[FnCount]) -> (Totals<Layer>, Totals<String>) {
    let mut layers: BTreeMap<Layer, i64> = BTreeMap::new();
    let mut crates: BTreeMap<String, i64> = BTreeMap::new();
    for f in fns {
        *layers.entry(f.layer).or_default() += f.insns;
        if f.layer == Layer::Library {
            *crates.entry(crate_of(&f.name).unwrap_or("?").to_string()).or_default() += f.insns;
        }
    }
    (by_size(layers), by_size(crates))
}

/// Instructions per key, largest first.
pub type Totals<K> = Vec<(K, i64)>;

/// The entries of a map, largest value first (ties in key order: the sort is stable).
pub(super) fn by_size<K>(m: BTreeMap<K, i64>) -> Totals<K> {
    let mut v: Totals<K> = m.into_iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    v
}
