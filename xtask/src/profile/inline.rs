//! `profile --inlined`: the profile seen through the kernel's DWARF inline chains.
//!
//! With fat LTO most small functions (lock guards, per-CPU accessors, the policy crate's
//! helpers) are inlined, so the per-symbol table charges their cost to whichever function they
//! landed in. The DWARF debug info still knows, for every instruction, the chain of functions it
//! was inlined through (innermost first, the out-of-line function last) and the source line in
//! each. From that this module builds two inclusive views: per function at any inline depth, and
//! per source line of the project. An instruction counts once for each distinct function and
//! once for each distinct line of its chain, so a row is "instructions executed inside this",
//! and rows overlap (they do not add up to the total).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use addr2line::gimli;
use object::{CompressionFormat, Object, ObjectSection};
use serde::Serialize;

// ---------------------------------------------------------------------------------------------
// Resolving addresses

/// One frame of an address's inline chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Demangled function name (None when DWARF gives none).
    pub function: Option<String>,
    /// Source file and line of the address within this function: for the innermost frame the
    /// instruction's own line, for an outer frame the call site of the next inner one.
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// The frames of one address, innermost first; the last is the out-of-line function. Empty when
/// DWARF does not cover the address (assembly stubs).
pub type Chain = Vec<Frame>;

/// An ELF's DWARF, ready to resolve addresses to inline chains.
pub struct Debuginfo<'data> {
    ctx: addr2line::Context<gimli::EndianSlice<'data, gimli::RunTimeEndian>>,
}

impl<'data> Debuginfo<'data> {
    /// Parses the DWARF sections of the ELF `data` (read from `path`, named in errors). Fails,
    /// saying what to do, when the ELF has no DWARF or compressed DWARF.
    pub fn parse(path: &Path, data: &'data [u8]) -> Result<Debuginfo<'data>, String> {
        let at = |e: &dyn std::fmt::Display| format!("xtask profile --inlined: {}: {e}", path.display());
        let file = object::File::parse(data).map_err(|e| at(&e))?;
        if file.section_by_name(".debug_info").is_none_or(|s| s.size() == 0) {
            return Err(at(&format!(
                "no DWARF debug info (.debug_info is missing or empty), so inlined functions \
                 cannot be told apart. The kernel profile builds with debuginfo (`debug = true`, \
                 inherited from [profile.release] in Cargo.toml){}; rebuild with it, e.g. \
                 CARGO_PROFILE_KERNEL_DEBUG=true CARGO_PROFILE_KERNEL_STRIP=none cargo xtask profile ...",
                overrides()
            )));
        }
        let endian =
            if file.is_little_endian() { gimli::RunTimeEndian::Little } else { gimli::RunTimeEndian::Big };
        let dwarf = gimli::Dwarf::load(|id| -> Result<_, String> {
            let bytes = match file.section_by_name(id.name()) {
                None => &[][..],
                Some(s) => {
                    let compressed = s.compressed_file_range().map_err(|e| at(&e))?.format;
                    if compressed != CompressionFormat::None {
                        return Err(at(&format!(
                            "{} is compressed ({compressed:?}), which this reader does not \
                             support; build without `-C debuginfo-compression`",
                            id.name()
                        )));
                    }
                    s.data().map_err(|e| at(&e))?
                }
            };
            Ok(gimli::EndianSlice::new(bytes, endian))
        })?;
        let ctx = addr2line::Context::from_dwarf(dwarf).map_err(|e| at(&format!("bad DWARF: {e}")))?;
        Ok(Debuginfo { ctx })
    }

    /// The inline chain of one address, innermost first.
    pub fn chain(&self, addr: u64) -> Result<Chain, String> {
        let bad = |e: gimli::Error| format!("xtask profile --inlined: DWARF at {addr:#x}: {e}");
        let mut frames = self.ctx.find_frames(addr).skip_all_loads().map_err(bad)?;
        let mut chain = Vec::new();
        while let Some(f) = frames.next().map_err(bad)? {
            let function = match &f.function {
                Some(n) => Some(format!("{:#}", rustc_demangle::demangle(&n.raw_name().map_err(bad)?))),
                None => None,
            };
            let (file, line) = f.location.map_or((None, None), |l| (l.file.map(str::to_string), l.line));
            chain.push(Frame { function, file, line });
        }
        Ok(chain)
    }

    /// The chains of `addrs`, each resolved once.
    pub fn chains(&self, addrs: impl IntoIterator<Item = u64>) -> Result<HashMap<u64, Chain>, String> {
        let mut out = HashMap::new();
        for a in addrs {
            if let Entry::Vacant(v) = out.entry(a) {
                v.insert(self.chain(a)?);
            }
        }
        Ok(out)
    }
}

/// The cargo environment variables that may have taken the kernel's debuginfo away, as a
/// parenthesised note ("" when none is set).
fn overrides() -> String {
    const VARS: [&str; 4] = [
        "CARGO_PROFILE_KERNEL_DEBUG",
        "CARGO_PROFILE_KERNEL_STRIP",
        "CARGO_PROFILE_RELEASE_DEBUG",
        "CARGO_PROFILE_RELEASE_STRIP",
    ];
    let set: Vec<String> = VARS
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .collect();
    if set.is_empty() {
        String::new()
    } else {
        format!(" but the environment sets {}", set.join(" "))
    }
}

// ---------------------------------------------------------------------------------------------
// Aggregation

/// A function's inclusive count: instructions executed inside it at any inline depth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameCount {
    pub name: String,
    pub insns: i64,
}

/// A source line's inclusive count: instructions whose inline chain passes through it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineCount {
    /// `path:line`, the path relative to the workspace root.
    pub line: String,
    pub insns: i64,
}

/// The two inline-aware tables of a profile (the raw difference, not per unit, like `functions`).
/// Flattened into `profile.json`, hence the `inline_` prefix of the scalars there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inlined {
    /// The out-of-line symbol the tables are restricted to (`--within`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
    /// Instructions considered: all of the difference, or those of the `--within` symbol.
    #[serde(rename = "inline_insns")]
    pub considered: i64,
    /// Addresses considered (with `--within`, 0 means the symbol matched nothing).
    #[serde(rename = "inline_addresses")]
    pub addresses: usize,
    /// Per function, inlined or not, largest first.
    #[serde(rename = "inlined")]
    pub functions: Vec<NameCount>,
    /// Per project source line, largest first.
    pub lines: Vec<LineCount>,
    /// Instructions DWARF has no chain for (counted under their ELF symbol only).
    #[serde(rename = "inline_no_dwarf")]
    pub no_dwarf: i64,
    /// Addresses whose outermost DWARF function is not their ELF symbol (the symbol is used).
    #[serde(rename = "inline_renamed")]
    pub renamed: usize,
}

/// Builds both tables from the per-address difference. `symbol_of` gives an address's ELF
/// symbol (the name the per-symbol table uses); it stands for the chain's outermost frame, so a
/// symbol's inclusive row equals its row in that table. With `within`, only addresses whose
/// symbol is `within` count. Lines are kept only for files under `root`, shown relative to it.
pub fn aggregate<'a>(
    delta: &[(u64, i64)],
    symbol_of: impl Fn(u64) -> &'a str,
    chains: &HashMap<u64, Chain>,
    root: &Path,
    within: Option<&str>,
) -> Inlined {
    let mut fns: HashMap<&str, i64> = HashMap::new();
    let mut lines: HashMap<(String, u32), i64> = HashMap::new();
    let (mut considered, mut addresses, mut no_dwarf, mut renamed) = (0, 0, 0, 0);
    let empty = Chain::new();
    for &(pc, d) in delta {
        let symbol = symbol_of(pc);
        if within.is_some_and(|w| w != symbol) {
            continue;
        }
        considered += d;
        addresses += 1;
        let chain = chains.get(&pc).unwrap_or(&empty);
        if chain.is_empty() {
            no_dwarf += d;
        }
        let (inner, outer) = chain.split_at(chain.len().saturating_sub(1));
        if outer.first().and_then(|f| f.function.as_deref()).is_some_and(|f| f != symbol) {
            renamed += 1;
        }
        let names: BTreeSet<&str> =
            inner.iter().filter_map(|f| f.function.as_deref()).chain(std::iter::once(symbol)).collect();
        for n in names {
            *fns.entry(n).or_default() += d;
        }
        let here: BTreeSet<(String, u32)> = chain
            .iter()
            .filter_map(|f| Some((workspace_relative(f.file.as_deref()?, root)?, f.line?)))
            .collect();
        for l in here {
            *lines.entry(l).or_default() += d;
        }
    }
    let mut functions: Vec<NameCount> =
        fns.into_iter().map(|(name, insns)| NameCount { name: name.to_string(), insns }).collect();
    functions.sort_by(|a, b| b.insns.cmp(&a.insns).then_with(|| a.name.cmp(&b.name)));
    // Sorted by (file, line) first, so equal counts stay in source order.
    let lines: BTreeMap<(String, u32), i64> = lines.into_iter().collect();
    let mut lines: Vec<LineCount> =
        lines.into_iter().map(|((f, l), insns)| LineCount { line: format!("{f}:{l}"), insns }).collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.insns));
    Inlined { within: within.map(str::to_string), considered, addresses, functions, lines, no_dwarf, renamed }
}

/// `file` relative to `root` (`/ws/kernel/src/rq.rs` → `kernel/src/rq.rs`), None for a file
/// outside it (the standard library under `/rustc/`, crates.io sources) or a relative path.
pub fn workspace_relative(file: &str, root: &Path) -> Option<String> {
    let p = Path::new(file);
    if !p.is_absolute() {
        return None;
    }
    Some(p.strip_prefix(root).ok()?.to_string_lossy().into_owned())
}

/// Up to `n` of `names` closest to `wanted`, shortest first: those containing it; failing that,
/// those containing its last path segment (`schedule_irq` of `a::b::schedule_irq`); failing
/// that, those in its module (`a::b::`). What `--within` suggests when its symbol matched nothing.
pub fn closest<'a>(names: impl Iterator<Item = &'a str> + Clone, wanted: &str, n: usize) -> Vec<String> {
    let path = wanted.split('<').next().unwrap_or(wanted);
    let (module, last) = path.rsplit_once("::").map_or(("", path), |(m, l)| (m, l));
    let tiers: [&dyn Fn(&str) -> bool; 3] = [
        &|s| s.contains(wanted),
        &|s| !last.is_empty() && s.contains(last),
        &|s| !module.is_empty() && s.strip_prefix(module).is_some_and(|r| r.starts_with("::")),
    ];
    for keep in tiers {
        let mut hits: Vec<&str> = names.clone().filter(|s| keep(s)).collect();
        if !hits.is_empty() {
            hits.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
            hits.dedup();
            return hits.into_iter().take(n).map(str::to_string).collect();
        }
    }
    Vec::new()
}

// ---------------------------------------------------------------------------------------------
// Rendering

impl Inlined {
    /// The two tables, per unit of `base` (`u` names the unit), `top` rows each. Percentages are
    /// of the instructions considered (the whole difference, or the `--within` symbol's).
    pub fn render(&self, base: u64, u: &str, top: usize) -> String {
        let unit = base as f64;
        let pct = |n: i64| if self.considered != 0 { 100.0 * n as f64 / self.considered as f64 } else { 0.0 };
        let scope = match &self.within {
            Some(w) => format!("within {w}: {:.1} insns/{u}", self.considered as f64 / unit),
            None => format!("all {:.1} insns/{u}", self.considered as f64 / unit),
        };
        let mut s = String::new();
        if let (Some(w), 0) = (&self.within, self.addresses) {
            let _ = writeln!(s, "\nwithin {w}: no instruction of the difference is in this symbol");
            return s;
        }
        // An instruction is in every function and line of its chain: the rows overlap.
        let _ = writeln!(s, "\ninclusive, with inlined functions ({scope}; rows overlap):");
        let _ = writeln!(s, "{:>12} {:>6}  function", format!("insns/{u}"), "%");
        for f in self.functions.iter().take(top) {
            let name = super::report::shorten(&f.name, 110);
            let _ = writeln!(s, "{:>12.1} {:>5.1}%  {name}", f.insns as f64 / unit, pct(f.insns));
        }
        if self.functions.len() > top {
            let _ = writeln!(s, "{:>20}  ({} more functions)", "", self.functions.len() - top);
        }
        let _ = writeln!(s, "\nby source line ({scope}; call sites included, rows overlap):");
        let _ = writeln!(s, "{:>12} {:>6}  line", format!("insns/{u}"), "%");
        for l in self.lines.iter().take(top) {
            let _ = writeln!(s, "{:>12.1} {:>5.1}%  {}", l.insns as f64 / unit, pct(l.insns), l.line);
        }
        if self.lines.len() > top {
            let _ = writeln!(s, "{:>20}  ({} more lines)", "", self.lines.len() - top);
        }
        if self.no_dwarf != 0 {
            let _ = writeln!(
                s,
                "({:.1} insns/{u} have no DWARF (assembly stubs): counted under their symbol only)",
                self.no_dwarf as f64 / unit
            );
        }
        if self.renamed != 0 {
            let _ = writeln!(
                s,
                "({} addresses: DWARF names another outermost function than the ELF symbol; the \
                 symbol's name is used)",
                self.renamed
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(function: &str, file: &str, line: u32) -> Frame {
        Frame { function: Some(function.into()), file: Some(file.into()), line: Some(line) }
    }

    /// Three addresses of `k::outer` and one of `k::other`:
    /// 0x10: lock inlined into guard inlined into outer; 0x14: lock's own code twice on the
    /// chain (a recursive inline) at the same line; 0x18: outer only; 0x20: other, with lock
    /// inlined from a crates.io file. 0x30 is an assembly stub without DWARF.
    fn fixture() -> (Vec<(u64, i64)>, HashMap<u64, Chain>) {
        let delta = vec![(0x10, 10), (0x14, 4), (0x18, 1), (0x20, 100), (0x30, 7)];
        let chains = HashMap::from([
            (
                0x10,
                vec![
                    frame("k::lock", "/ws/kernel/src/sync.rs", 5),
                    frame("k::guard", "/ws/kernel/src/sync.rs", 20),
                    frame("k::outer", "/ws/kernel/src/main.rs", 99),
                ],
            ),
            (
                0x14,
                vec![
                    frame("k::lock", "/ws/kernel/src/sync.rs", 5),
                    frame("k::lock", "/ws/kernel/src/sync.rs", 5),
                    frame("k::outer", "/ws/kernel/src/main.rs", 98),
                ],
            ),
            (0x18, vec![frame("k::outer", "/ws/kernel/src/main.rs", 99)]),
            (
                0x20,
                vec![
                    frame("k::lock", "/home/u/.cargo/registry/src/spin/lib.rs", 7),
                    frame("k::other", "/ws/kernel/src/other.rs", 3),
                ],
            ),
        ]);
        (delta, chains)
    }

    fn symbol_of(pc: u64) -> &'static str {
        match pc {
            0x10..=0x1f => "k::outer",
            0x20..=0x2f => "k::other",
            _ => "isr_common",
        }
    }

    fn get(v: &[NameCount], n: &str) -> i64 {
        v.iter().find(|x| x.name == n).unwrap_or_else(|| panic!("{n} missing: {v:?}")).insns
    }

    #[test]
    fn inclusive_functions_count_each_distinct_function_once() {
        let (delta, chains) = fixture();
        let r = aggregate(&delta, symbol_of, &chains, Path::new("/ws"), None);
        assert_eq!(r.considered, 122);
        assert_eq!(r.addresses, 5);
        // lock: 10 + 4 (once, though twice on 0x14's chain) + 100.
        assert_eq!(get(&r.functions, "k::lock"), 114);
        assert_eq!(get(&r.functions, "k::guard"), 10);
        // An out-of-line function's row is its symbol's figure: 10 + 4 + 1.
        assert_eq!(get(&r.functions, "k::outer"), 15);
        assert_eq!(get(&r.functions, "k::other"), 100);
        assert_eq!(get(&r.functions, "isr_common"), 7);
        assert_eq!(r.functions.len(), 5);
        assert_eq!(r.functions[0].name, "k::lock");
        assert_eq!(r.no_dwarf, 7);
        assert_eq!(r.renamed, 0);
    }

    #[test]
    fn lines_count_every_project_line_of_the_chain_once() {
        let (delta, chains) = fixture();
        let r = aggregate(&delta, symbol_of, &chains, Path::new("/ws"), None);
        let lines: Vec<(&str, i64)> = r.lines.iter().map(|l| (l.line.as_str(), l.insns)).collect();
        assert_eq!(
            lines,
            vec![
                ("kernel/src/other.rs:3", 100),
                // The inlined callee's line and each call site get the instruction; 0x14's
                // line 5 appears twice on its chain and counts once.
                ("kernel/src/sync.rs:5", 14),
                ("kernel/src/main.rs:99", 11),
                ("kernel/src/sync.rs:20", 10),
                ("kernel/src/main.rs:98", 4),
            ]
        );
    }

    #[test]
    fn within_keeps_only_the_symbols_instructions() {
        let (delta, chains) = fixture();
        let r = aggregate(&delta, symbol_of, &chains, Path::new("/ws"), Some("k::outer"));
        assert_eq!(r.within.as_deref(), Some("k::outer"));
        assert_eq!(r.considered, 15);
        assert_eq!(r.functions[0], NameCount { name: "k::outer".into(), insns: 15 });
        assert_eq!(get(&r.functions, "k::lock"), 14);
        assert!(r.functions.iter().all(|f| f.name != "k::other"), "{:?}", r.functions);
        assert!(r.lines.iter().all(|l| !l.line.contains("other.rs")), "{:?}", r.lines);
        let none = aggregate(&delta, symbol_of, &chains, Path::new("/ws"), Some("k::nothing"));
        assert_eq!((none.considered, none.addresses), (0, 0));
        assert!(none.render(2, "round", 5).contains("within k::nothing: no instruction"));
        assert!(none.functions.is_empty() && none.lines.is_empty());
    }

    #[test]
    fn the_elf_symbol_names_the_outermost_frame() {
        // DWARF's outermost function differs from the ELF symbol (e.g. folded functions): the
        // symbol is used, so its row still equals the per-symbol table's, and it is counted.
        let chains = HashMap::from([(0x10, vec![frame("k::a", "/ws/x.rs", 1), frame("k::b", "/ws/x.rs", 2)])]);
        let r = aggregate(&[(0x10, 3)], |_| "k::c", &chains, Path::new("/ws"), None);
        let count = |name: &str| NameCount { name: name.into(), insns: 3 };
        assert_eq!(r.functions, vec![count("k::a"), count("k::c")]);
        assert_eq!(r.renamed, 1);
        // Its location still counts.
        assert_eq!(r.lines.len(), 2);
    }

    #[test]
    fn negative_differences_subtract() {
        let chains = HashMap::from([(0x10, vec![frame("k::a", "/ws/x.rs", 1), frame("k::b", "/ws/x.rs", 2)])]);
        let r = aggregate(&[(0x10, -3), (0x11, 5)], |_| "k::b", &chains, Path::new("/ws"), None);
        assert_eq!(get(&r.functions, "k::b"), 2);
        assert_eq!(get(&r.functions, "k::a"), -3);
        assert_eq!(r.functions.last().unwrap().name, "k::a");
    }

    #[test]
    fn paths_relative_to_the_workspace() {
        let root = Path::new("/tmp/wt");
        let rel = |f| workspace_relative(f, root);
        assert_eq!(rel("/tmp/wt/kernel/src/schedule.rs").as_deref(), Some("kernel/src/schedule.rs"));
        assert_eq!(rel("/tmp/wt-other/kernel/src/x.rs"), None);
        assert_eq!(rel("/rustc/59807616e1/library/core/src/sync/atomic.rs"), None);
        assert_eq!(rel("/root/.cargo/registry/src/index/spin-0.9.8/src/mutex.rs"), None);
        assert_eq!(rel("kernel/src/x.rs"), None);
    }

    #[test]
    fn suggestions_for_an_unknown_symbol() {
        let names = ["a::schedule_irq", "b::schedule_irq::{{closure}}", "a::schedule", "c::pick"];
        let it = names.iter().copied();
        let both = vec!["a::schedule_irq", "b::schedule_irq::{{closure}}"];
        assert_eq!(closest(it.clone(), "schedule_irq", 5), both);
        assert_eq!(closest(it.clone(), "schedule_irq", 1), vec!["a::schedule_irq"]);
        // A full path that does not exist falls back to its last segment.
        assert_eq!(closest(it.clone(), "x::y::pick", 5), vec!["c::pick"]);
        // A misspelt function falls back to its module.
        assert_eq!(closest(it.clone(), "a::schedule_irqq", 5), vec!["a::schedule", "a::schedule_irq"]);
        assert!(closest(it.clone(), "nothing", 5).is_empty());
        assert!(closest(it, "z::nothing", 5).is_empty());
    }

    #[test]
    fn renders_both_tables() {
        let (delta, chains) = fixture();
        let r = aggregate(&delta, symbol_of, &chains, Path::new("/ws"), Some("k::outer"));
        let text = r.render(2, "round", 2);
        assert!(text.contains("inclusive, with inlined functions (within k::outer: 7.5 insns/round;"), "{text}");
        assert!(text.contains("         7.5 100.0%  k::outer\n"), "{text}");
        assert!(text.contains("(1 more functions)"), "{text}");
        assert!(text.contains("         7.0  93.3%  kernel/src/sync.rs:5\n"), "{text}");
        assert!(text.contains("(2 more lines)"), "{text}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["inlined"][0]["name"], "k::outer");
        assert_eq!(j["lines"][0]["line"], "kernel/src/sync.rs:5");
        assert_eq!(j["within"], "k::outer");
        assert_eq!((j["inline_insns"].as_i64(), j["inline_addresses"].as_u64()), (Some(15), Some(3)));
    }

    // --- A real ELF: this test binary's own DWARF (the dev profile has debuginfo).

    #[inline(always)]
    fn dwarf_inner(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(3)
    }

    const OUTER_LINE: u32 = line!() + 2;
    #[inline(never)]
    fn dwarf_outer(x: u64) -> u64 {
        dwarf_inner(std::hint::black_box(x)) + 1
    }

    #[test]
    fn resolves_this_test_binary() {
        assert_eq!(dwarf_outer(2), 7);
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        let dbg = Debuginfo::parse(&exe, &data).unwrap();
        let syms = crate::symbols::Symbols::load(&exe).unwrap();
        let outer = concat!(module_path!(), "::dwarf_outer");
        // The address from the symbol table, not the function pointer: the same whether or not
        // the binary is position-independent.
        let start = syms.address_of(outer).unwrap_or_else(|| panic!("no symbol {outer}"));
        let entry = dbg.chain(start).unwrap();
        let last = entry.last().expect("a frame at the function's entry");
        assert_eq!(last.function.as_deref(), Some(outer));
        let file = last.file.as_deref().unwrap();
        let rel = workspace_relative(file, &crate::workspace_root());
        assert_eq!(rel.as_deref(), Some("xtask/src/profile/inline.rs"));
        let line = last.line.unwrap();
        assert!((OUTER_LINE..OUTER_LINE + 3).contains(&line), "line {line}, fn at {OUTER_LINE}");
        // Somewhere in its body the inlined callee is on the chain, inside (before) the
        // function, which is last and carries the call site's line.
        let inner = concat!(module_path!(), "::dwarf_inner");
        let body = (start..start + 256).take_while(|&a| syms.lookup(a).is_some_and(|(n, _)| n == outer));
        let chains = dbg.chains(body).unwrap();
        let mut addrs: Vec<&u64> = chains.keys().collect();
        addrs.sort();
        let is = |f: &Frame, n: &str| f.function.as_deref() == Some(n);
        let chain = addrs
            .into_iter()
            .map(|a| &chains[a])
            .find(|c| c.iter().any(|f| is(f, inner)))
            .unwrap_or_else(|| panic!("{inner} inlined nowhere: {chains:?}"));
        let at = chain.iter().position(|f| is(f, inner)).unwrap();
        assert_eq!(at, chain.len() - 2, "{chain:?}");
        let caller = chain.last().unwrap();
        assert!(is(caller, outer), "{chain:?}");
        assert!(caller.line.is_some_and(|l| (OUTER_LINE..OUTER_LINE + 3).contains(&l)), "{chain:?}");
    }

    /// The smallest ELF: a 64-bit x86_64 header, no sections (so no DWARF).
    fn bare_elf() -> Vec<u8> {
        let mut h = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        h.extend(2u16.to_le_bytes()); // ET_EXEC
        h.extend(62u16.to_le_bytes()); // EM_X86_64
        h.extend(1u32.to_le_bytes()); // EV_CURRENT
        h.extend([0u8; 24]); // entry, program and section header offsets
        h.extend(0u32.to_le_bytes()); // flags
        for half in [64u16, 56, 0, 64, 0, 0] {
            h.extend(half.to_le_bytes()); // header size, phentsize, phnum, shentsize, shnum, shstrndx
        }
        assert_eq!(h.len(), 64);
        h
    }

    #[test]
    fn an_elf_without_dwarf_is_an_error() {
        let e = Debuginfo::parse(Path::new("/k/fairway-kernel"), &bare_elf()).err().expect("no DWARF is an error");
        assert!(e.contains("/k/fairway-kernel: no DWARF debug info"), "{e}");
        assert!(e.contains("CARGO_PROFILE_KERNEL_DEBUG=true"), "{e}");
        assert!(Debuginfo::parse(Path::new("/etc/os-release"), b"not an elf").is_err());
    }
}
