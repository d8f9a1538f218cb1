//! The kernel's layering rule, checked on its source: every `crate::...` path in a file of
//! `kernel/src`, of the mechanism crate `kernel/mech/src` (keyed `mech/...` here) or of the
//! workloads crate `kernel/workloads/src` (keyed `workloads/...`), and every `mech::...` and
//! `workloads::...` path naming the other crate (in `use` lines, grouped `use crate::{a, b::c}`
//! lines and code, and `super::`
//! paths, which can cross a layer too) must name a module of the file's own layer or of a lower
//! one. The layers and the allowed exceptions are the table and list of `docs/DESIGN.md`'s
//! section "Layers of kernel/src", parsed here, so the document and the check cannot drift.
//!
//! Among the mechanism's own files the same references must form no circle
//! of more than three files (the mechanism is several layers, and inside
//! one layer its files still import one way).
//!
//! Read as text: comments are dropped, and a path is resolved to the longest module prefix that
//! is a file (`crate::balance::periodic::foo` is `balance/periodic.rs`), or to the file that
//! defines the macro it names (`crate::kprintln!` is `console.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One layer of the table: its rank (1 is the lowest), name and paths (files, or folders ending
/// in `/`), relative to `kernel/src`.
#[derive(Debug, Clone)]
pub struct Layer {
    pub rank: u32,
    pub name: String,
    pub paths: Vec<String>,
}

/// The layer table and the allowed upward references (`file -> crate::path`).
#[derive(Debug, Clone)]
pub struct Rules {
    pub layers: Vec<Layer>,
    pub allowed: BTreeSet<(String, String)>,
}

const SECTION: &str = "## Layers of kernel/src";

/// Reads the table (`| rank | name | paths |`, paths in backticks) and the bullet list of
/// allowed references (`` - `FILE` -> `crate::PATH`: why ``) under `SECTION`.
pub fn parse_rules(design: &str) -> Result<Rules, String> {
    let start = design.find(SECTION).ok_or_else(|| format!("DESIGN.md has no section {SECTION:?}"))?;
    let body = &design[start + SECTION.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut layers = Vec::new();
    let mut allowed = BTreeSet::new();
    for line in body.lines() {
        let line = line.trim();
        if let Some(row) = line.strip_prefix('|') {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let Some(Ok(rank)) = cells.first().map(|c| c.parse::<u32>()) else { continue };
            if cells.len() < 3 {
                return Err(format!("layer row {rank} has fewer than 3 cells: {line}"));
            }
            let paths = backticked(cells[2]);
            if paths.is_empty() {
                return Err(format!("layer row {rank} names no path: {line}"));
            }
            layers.push(Layer { rank, name: cells[1].trim_matches('`').to_string(), paths });
        } else if let Some(item) = line.strip_prefix("- ") {
            let ticks = backticked(item);
            if ticks.len() >= 2 && item.contains("->") && (ticks[1].starts_with("crate::") || ticks[1].starts_with("mech::")) {
                allowed.insert((ticks[0].clone(), ticks[1].clone()));
            }
        }
    }
    if layers.is_empty() {
        return Err("the layer table under DESIGN.md's section has no rows".into());
    }
    Ok(Rules { layers, allowed })
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

impl Rules {
    /// The layer of `file` (relative to `kernel/src`): the longest path of the table that is the
    /// file or a folder holding it.
    pub fn layer_of(&self, file: &str) -> Option<&Layer> {
        let mut best: Option<(&Layer, usize)> = None;
        for l in &self.layers {
            for p in &l.paths {
                let hit = if p.ends_with('/') { file.starts_with(p.as_str()) } else { file == p };
                if hit && best.is_none_or(|(_, n)| p.len() > n) {
                    best = Some((l, p.len()));
                }
            }
        }
        best.map(|(l, _)| l)
    }
}

/// One reference of a file to another file of the crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub file: String,
    pub line: usize,
    /// As written, with `super::` resolved: `crate::a::b`.
    pub path: String,
    pub target: String,
}

/// The module path of a file: `balance/mod.rs` is `[balance]`, `main.rs` is `[]`; a file of
/// the mechanism crate has `mech` first (`mech/lib.rs` is `[mech]`, `mech/rq.rs` `[mech, rq]`),
/// one of the workloads crate `workloads` (`workloads/lib.rs` is `[workloads]`).
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let mut segs: Vec<String> = stem.split('/').map(str::to_string).collect();
    if matches!(segs.last().map(String::as_str), Some("mod" | "main" | "lib")) {
        segs.pop();
    }
    segs
}

fn strip_comment(line: &str) -> &str {
    // No `//` inside the kernel's string literals that matter here; a URL in a string would
    // only cut that line short.
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `crate::...`/`super::...`/`mech::...` path of `src`, with its line, grouped `use` lists expanded.
fn paths_in(src: &str) -> Vec<(usize, String)> {
    // Join the lines of a `use` statement that spans several, keeping the first line's number.
    let mut stmts: Vec<(usize, String)> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, raw) in src.lines().enumerate() {
        let line = strip_comment(raw);
        if let Some((_, buf)) = open.as_mut() {
            buf.push(' ');
            buf.push_str(line);
            if line.contains(';') {
                stmts.push(open.take().unwrap());
            }
            continue;
        }
        let t = line.trim_start();
        let is_use = t.starts_with("use ") || t.starts_with("pub use ") || t.starts_with("pub(crate) use ");
        if is_use && !line.contains(';') {
            open = Some((i + 1, line.to_string()));
        } else {
            stmts.push((i + 1, line.to_string()));
        }
    }
    let mut out = Vec::new();
    for (n, stmt) in stmts {
        let bytes: Vec<char> = stmt.chars().collect();
        let mut i = 0;
        while i < bytes.len() {
            let rest: String = bytes[i..].iter().collect();
            let starts = (rest.starts_with("crate::")
                || rest.starts_with("super::")
                || CRATES.iter().any(|c| rest.starts_with(c) && rest[c.len()..].starts_with("::")))
                && (i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != '$' && bytes[i - 1] != ':');
            if !starts {
                i += 1;
                continue;
            }
            // Read `a::b::c`, then a possible `::{...}` group.
            let mut j = i;
            let mut path = String::new();
            loop {
                let seg: String = bytes[j..].iter().take_while(|c| is_ident(**c)).collect();
                j += seg.chars().count();
                path.push_str(&seg);
                let more: String = bytes[j..].iter().take(3).collect();
                if more.starts_with("::") && more.chars().nth(2).is_some_and(is_ident) {
                    path.push_str("::");
                    j += 2;
                } else {
                    break;
                }
            }
            let more: String = bytes[j..].iter().take(3).collect();
            if more == "::{" {
                // Expand one level of grouping: `crate::a::{b, c::d, e::{f}}`.
                let mut depth = 0;
                let mut k = j + 2;
                let mut item = String::new();
                let mut items = Vec::new();
                while k < bytes.len() {
                    let c = bytes[k];
                    match c {
                        '{' => {
                            depth += 1;
                            if depth > 1 {
                                item.push(c)
                            }
                        }
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                items.push(std::mem::take(&mut item));
                                break;
                            }
                            item.push(c);
                        }
                        ',' if depth == 1 => items.push(std::mem::take(&mut item)),
                        _ => item.push(c),
                    }
                    k += 1;
                }
                for it in items {
                    let it = it.trim();
                    let head: String = it.chars().take_while(|c| is_ident(*c) || *c == ':').collect();
                    let head = head.trim_end_matches(':');
                    if head.is_empty() || head == "self" {
                        out.push((n, path.clone()));
                    } else {
                        out.push((n, format!("{path}::{head}")));
                    }
                }
                i = k.max(j) + 1;
            } else {
                out.push((n, path));
                i = j.max(i + 1);
            }
        }
    }
    out
}

/// Every reference of every file in `files` (path relative to `kernel/src`, source text) to
/// another file of them.
pub fn references(files: &BTreeMap<String, String>) -> Vec<Reference> {
    let modules: BTreeMap<Vec<String>, &String> = files.keys().map(|f| (module_of(f), f)).collect();
    // Macros by (crate, name): `kprintln!` is the kernel's console's and the mechanism's own.
    let mut macros: BTreeMap<(&str, String), &String> = BTreeMap::new();
    for (f, src) in files {
        for line in src.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("macro_rules!") {
                let name: String = rest.trim_start().chars().take_while(|c| is_ident(*c)).collect();
                macros.insert((crate_of(f), name), f);
            }
        }
    }
    let mech = vec!["mech".to_string()];
    let mut out = Vec::new();
    for (file, src) in files {
        let me = module_of(file);
        let here = crate_of(file);
        for (line, written) in paths_in(src) {
            let mut segs: Vec<String> = written.split("::").map(str::to_string).collect();
            // `full` is the module path from the kernel crate's root, another crate's under its
            // name (`mech`, `workloads`).
            let full: Vec<String> = if segs[0] == "crate" {
                segs.remove(0);
                if here.is_empty() {
                    segs
                } else {
                    [vec![here.to_string()], segs].concat()
                }
            } else if CRATES.contains(&segs[0].as_str()) {
                if segs[0] == here {
                    // A crate does not name itself this way: not its own path.
                    continue;
                }
                segs
            } else {
                // `super` of a module file `a/b.rs` (module a::b) is `a`; of `a/mod.rs` (module
                // a) it is the root.
                let mut base = me.clone();
                while segs.first().map(String::as_str) == Some("super") {
                    segs.remove(0);
                    base.pop();
                }
                base.extend(segs);
                base
            };
            // The crate the path is in: "" for the kernel's.
            let to = full.first().map(String::as_str).filter(|c| CRATES.contains(c)).unwrap_or("");
            // The longest module the path names, below the crate's root.
            let lookup = |full: &[String]| {
                let below = if full.first().is_some_and(|c| CRATES.contains(&c.as_str())) { 2 } else { 1 };
                (below..=full.len()).rev().find_map(|n| modules.get(&full[..n]).copied())
            };
            let resolved = lookup(&full)
                // The kernel's root re-exports the mechanism's modules (`use mech::rq;`), so a
                // kernel file's `crate::rq` is `mech/rq.rs`.
                .or_else(|| if to.is_empty() { lookup(&[mech.clone(), full.clone()].concat()) } else { None })
                .or_else(|| {
                    let name = if to.is_empty() { full.first() } else { full.get(1) };
                    name.and_then(|m| macros.get(&(to, m.clone())).copied())
                })
                // An item of a crate root (`crate::boot_main`, `crate::MAX_CPUS`) is the root file's.
                .or_else(|| modules.get(if to.is_empty() { &full[..0] } else { &full[..1] }).copied());
            if let Some(target) = resolved {
                if target != file {
                    // As written, relative to the file's own crate.
                    let path = if !written.starts_with("crate::") && !written.starts_with("super::") {
                        full.join("::")
                    } else if here.is_empty() {
                        format!("crate::{}", full.join("::"))
                    } else {
                        format!("crate::{}", full[1..].join("::"))
                    };
                    out.push(Reference { file: file.clone(), line, path, target: target.clone() });
                }
            }
        }
    }
    out
}

/// The crates beside the kernel's, by lib name: a key of [`read_sources`] starting `NAME/` is a
/// file of `kernel/NAME/src`, and a path `NAME::...` names that crate.
const CRATES: [&str; 2] = ["mech", "workloads"];

/// The crate of `file` (a key of [`read_sources`]): one of [`CRATES`], or "" for the kernel's.
fn crate_of(file: &str) -> &'static str {
    CRATES.iter().copied().find(|c| file.strip_prefix(c).is_some_and(|r| r.starts_with('/'))).unwrap_or("")
}

/// Where a file is in the repository: `mech/rq.rs` is `kernel/mech/src/rq.rs`.
pub fn shown(file: &str) -> String {
    match crate_of(file) {
        "" => format!("kernel/src/{file}"),
        c => format!("kernel/{c}/src/{}", &file[c.len() + 1..]),
    }
}

/// The rule's violations, one line each: file, line, path and both layers; and every file the
/// table leaves out.
pub fn violations(rules: &Rules, files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for f in files.keys() {
        if rules.layer_of(f).is_none() {
            out.push(format!("{}: in no layer of DESIGN.md's table", shown(f)));
        }
    }
    for r in references(files) {
        let (Some(from), Some(to)) = (rules.layer_of(&r.file), rules.layer_of(&r.target)) else { continue };
        if to.rank > from.rank && !rules.allowed.contains(&(r.file.clone(), r.path.clone())) {
            out.push(format!(
                "{}:{}: {} (layer {} {}) uses {} in {} (layer {} {}), a higher layer",
                shown(&r.file), r.line, r.file, from.rank, from.name, r.path, shown(&r.target), to.rank, to.name
            ));
        }
    }
    out
}

/// Every `.rs` file of the kernel (`kernel/src`, keyed by its path there) and of the crates
/// beside it (`CRATES`: `kernel/mech/src`, keyed `mech/` and its path there; likewise
/// `workloads/`).
pub fn read_sources(repo: &Path) -> BTreeMap<String, String> {
    let mut files = read_tree(&repo.join("kernel/src"));
    for c in CRATES {
        for (f, src) in read_tree(&repo.join(format!("kernel/{c}/src"))) {
            files.insert(format!("{c}/{f}"), src);
        }
    }
    files
}

/// Every `.rs` file under `dir`, keyed by its path relative to `dir` (`/`-separated).
pub fn read_tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).expect("readable source folder").flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).expect("readable source file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn rules() -> Rules {
        let design = std::fs::read_to_string(repo().join("docs/DESIGN.md")).unwrap();
        parse_rules(&design).unwrap()
    }

    #[test]
    fn kernel_src_imports_only_downwards() {
        let rules = rules();
        let files = read_sources(&repo());
        assert!(files.len() > 40, "read {} files of kernel/src and kernel/mech/src", files.len());
        let v = violations(&rules, &files);
        assert!(v.is_empty(), "upward imports or unplaced files:\n{}", v.join("\n"));
        // The check saw the real structure: arch's files and the scheduler's are where the
        // table says, the scheduler's references reach the platform interface, the kernel's
        // reach the mechanism through its root's re-exports, and arch implements the interface.
        assert_eq!(rules.layer_of("arch/percpu.rs").unwrap().rank, 1);
        assert_eq!(rules.layer_of("mech/rq.rs").unwrap().name, "runqueues");
        let refs = references(&files);
        assert!(refs.iter().any(|r| r.file == "mech/schedule.rs" && r.target == "mech/platform/mod.rs"));
        assert!(refs.iter().any(|r| r.file == "mech/rq.rs" && r.path == "crate::MAX_CPUS" && r.target == "mech/lib.rs"));
        assert!(refs.iter().any(|r| r.file == "mech/debug.rs" && r.path.starts_with("crate::kprintln") && r.target == "mech/macros.rs"));
        assert!(refs.iter().any(|r| r.file == "workloads/pipe.rs" && r.target == "mech/sync/pipe.rs"));
        // The workloads crate: its own `crate::` paths, and the kernel's uses of it.
        assert!(refs.iter().any(|r| r.file == "workloads/budget.rs" && r.path == "crate::cmdline::report_problem" && r.target == "workloads/cmdline/mod.rs"));
        assert!(refs.iter().any(|r| r.file == "workloads/lib.rs" && r.path.starts_with("mech::record") && r.target == "mech/macros.rs"));
        assert!(refs.iter().any(|r| r.file == "main.rs" && r.path == "workloads::run" && r.target == "workloads/lib.rs"));
        assert!(refs.iter().any(|r| r.file == "selfcheck.rs" && r.path.starts_with("workloads::cmdline") && r.target == "workloads/cmdline/mod.rs"));
        assert!(refs.iter().any(|r| r.file == "arch/platform.rs" && r.path == "mech::set_platform" && r.target == "mech/platform/binding.rs"));
    }

    #[test]
    fn arch_and_mem_import_nothing_above_them() {
        let rules = rules();
        let files = read_sources(&repo());
        let mem = rules.layer_of("mem/frame.rs").unwrap().rank;
        for r in references(&files) {
            if r.file.starts_with("arch/") || r.file.starts_with("mem/") {
                let to = rules.layer_of(&r.target).unwrap().rank;
                let allowed = rules.allowed.contains(&(r.file.clone(), r.path.clone()));
                assert!(to <= mem || allowed, "{}:{} uses {}", r.file, r.line, r.path);
            }
        }
    }

    /// The check fails on a deliberate upward import, naming file, line and both layers, for
    /// each way of writing one.
    #[test]
    fn a_deliberate_upward_import_fails_naming_file_line_and_layers() {
        let rules = rules();
        let mut files = read_sources(&repo());
        let cases = [
            ("arch/percpu.rs", "use crate::task::Task;\n", "mech/task.rs"),
            ("arch/percpu.rs", "use crate::{arch::time, rq::{self, Rq}};\n", "mech/rq.rs"),
            ("arch/apic.rs", "use mech::rq::Rq;\n", "mech/rq.rs"),
            ("mem/frame.rs", "fn f() { crate::schedule::schedule(); }\n", "mech/schedule.rs"),
            ("arch/trap.rs", "use super::super::wakeup;\n", "mech/wakeup/mod.rs"),
            ("mech/lock/irq_mutex.rs", "use crate::rq::Rq;\n", "mech/rq.rs"),
            ("mech/lock/lockdep.rs", "fn f() { super::super::task::current(); }\n", "mech/task.rs"),
            ("mech/platform/mod.rs", "use crate::{task::Task, sync::pipe::Pipe};\n", "mech/sync/pipe.rs"),
            ("mech/rq.rs", "use workloads::cmdline::Options;\n", "workloads/cmdline/mod.rs"),
            // Inside the mechanism: a task naming the switch, a runqueue the
            // fault injector, the balancer a wakeup, the wait queues a thread.
            ("mech/task.rs", "use crate::schedule::schedule;\n", "mech/schedule.rs"),
            ("mech/rq.rs", "fn f() { crate::fault::report(); }\n", "mech/fault.rs"),
            ("mech/balance/pull.rs", "use crate::wakeup::try_to_wake_up;\n", "mech/wakeup/mod.rs"),
            ("mech/sync/mod.rs", "use crate::thread::spawn;\n", "mech/thread.rs"),
        ];
        for (file, line, target) in cases {
            let original = files[file].clone();
            files.insert(file.to_string(), format!("{line}{original}"));
            let v = violations(&rules, &files);
            let from = rules.layer_of(file).unwrap();
            let to = rules.layer_of(target).unwrap();
            let want = format!("{}:1: {file} (layer {} {})", shown(file), from.rank, from.name);
            assert!(
                v.iter().any(|l| l.starts_with(&want)
                    && l.contains(&format!("{} (layer {} {})", shown(target), to.rank, to.name))),
                "{line:?} in {file} not reported; got {v:#?}"
            );
            files.insert(file.to_string(), original);
        }
        assert!(violations(&rules, &files).is_empty());
    }

    /// The allowed upward uses are found, and only the list in DESIGN.md lets each pass.
    #[test]
    fn the_allowed_entries_are_needed_and_enough() {
        let rules = rules();
        let files = read_sources(&repo());
        assert!(references(&files)
            .iter()
            .any(|r| r.file == "arch/mod.rs" && r.path == "crate::boot_main" && r.target == "main.rs"));
        assert!(!rules.allowed.is_empty(), "{:?}", rules.allowed);
        for entry in &rules.allowed {
            let mut fewer = rules.clone();
            fewer.allowed.remove(entry);
            let v = violations(&fewer, &files);
            assert!(!v.is_empty(), "{entry:?} is allowed but never used");
            let (file, path) = entry;
            assert!(
                v.iter().all(|l| l.starts_with(&format!("{}:", shown(file))) && l.contains(&format!(" uses {path}"))),
                "{entry:?}: {v:#?}"
            );
        }
        let v = violations(&rules, &files);
        assert!(v.is_empty(), "{v:#?}");
    }

    /// The strongly connected components of more than one file among the
    /// files `keep` accepts (import circles), each sorted.
    fn circles<'a>(refs: &'a [Reference], keep: impl Fn(&str) -> bool) -> Vec<Vec<String>> {
        let mut edges: BTreeMap<&'a str, BTreeSet<&'a str>> = BTreeMap::new();
        for r in refs.iter().filter(|r| keep(&r.file) && keep(&r.target)) {
            edges.entry(&r.file).or_default().insert(&r.target);
            edges.entry(&r.target).or_default();
        }
        // Reachability by repeated expansion (a few dozen files).
        let reach = |from: &'a str| {
            let mut seen = BTreeSet::from([from]);
            let mut todo = vec![from];
            while let Some(f) = todo.pop() {
                for &t in &edges[f] {
                    if seen.insert(t) {
                        todo.push(t);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&str, BTreeSet<&str>> = edges.keys().map(|&f| (f, reach(f))).collect();
        let mut out: BTreeSet<Vec<String>> = BTreeSet::new();
        for (&f, r) in &reaches {
            let scc: Vec<String> = r.iter().filter(|t| reaches[*t].contains(f)).map(|t| t.to_string()).collect();
            if scc.len() > 1 {
                out.insert(scc);
            }
        }
        out.into_iter().collect()
    }

    /// The mechanism is layered inside (not one layer), and its import graph
    /// has no circle of more than three files; the check sees a circle made
    /// on purpose.
    #[test]
    fn the_mechanism_is_layered_without_large_circles() {
        let rules = rules();
        let mut files = read_sources(&repo());
        let mech = |f: &str| f.starts_with("mech/");
        let layers: BTreeSet<u32> = files.keys().filter(|f| mech(f)).map(|f| rules.layer_of(f).unwrap().rank).collect();
        assert!(layers.len() >= 8, "the mechanism's files are in {} layers: {layers:?}", layers.len());
        let found = circles(&references(&files), mech);
        assert!(found.iter().all(|c| c.len() <= 3), "import circles of more than 3 files in kernel/mech/src: {found:#?}");
        // A circle through four files of the core layer, made on purpose.
        for (file, line) in [
            ("mech/wakeup/mod.rs", "use crate::idle::enter;\n"),
            ("mech/idle.rs", "use crate::debug::enable;\n"),
            ("mech/debug.rs", "use crate::setattr::set_slice;\n"),
            ("mech/setattr.rs", "use crate::wakeup::try_to_wake_up;\n"),
        ] {
            let original = files[file].clone();
            files.insert(file.to_string(), format!("{line}{original}"));
        }
        let found = circles(&references(&files), mech);
        assert!(found.iter().any(|c| c.len() > 3 && c.iter().any(|f| f == "mech/setattr.rs")), "{found:#?}");
    }

    /// The unsafe layer's files (`kernel/src/arch`) import each other one way only: no circle
    /// at all (the vector numbers, the wait states and the zeroed frame live in the files below
    /// their users); the check sees a circle made on purpose.
    #[test]
    fn the_arch_layer_has_no_import_circle() {
        let mut files = read_sources(&repo());
        let arch = |f: &str| f.starts_with("arch/");
        let found = circles(&references(&files), arch);
        assert!(found.is_empty(), "import circles in kernel/src/arch: {found:#?}");
        let original = files["arch/vectors.rs"].clone();
        files.insert("arch/vectors.rs".to_string(), format!("use super::trap::TrapFrame;\n{original}"));
        let found = circles(&references(&files), arch);
        assert!(found.iter().any(|c| c.iter().any(|f| f == "arch/vectors.rs")), "{found:#?}");
    }

    #[test]
    fn a_file_in_no_layer_fails() {
        let mut rules = rules();
        rules.layers.retain(|l| !l.paths.iter().any(|p| p == "mech/trace.rs"));
        let files = read_sources(&repo());
        let v = violations(&rules, &files);
        assert!(v.iter().any(|l| l.starts_with("kernel/mech/src/trace.rs: in no layer")), "{v:#?}");
    }

    #[test]
    fn grouped_and_relative_paths_resolve() {
        let src = "use crate::{a::{self, B}, c::d::E};\nuse super::f;\nfn g() { crate::kprintln!(\"x\"); }\n";
        let got: Vec<String> = paths_in(src).into_iter().map(|(n, p)| format!("{n}:{p}")).collect();
        assert_eq!(got, ["1:crate::a", "1:crate::c::d::E", "2:super::f", "3:crate::kprintln"]);
        assert_eq!(module_of("balance/mod.rs"), ["balance"]);
        assert_eq!(module_of("balance/pull.rs"), ["balance", "pull"]);
        assert_eq!(module_of("main.rs"), Vec::<String>::new());
        assert_eq!(module_of("mech/lib.rs"), ["mech"]);
        assert_eq!(module_of("mech/sync/mod.rs"), ["mech", "sync"]);
        let got: Vec<String> = paths_in("use mech::{rq, task::Task};\nfn f() { crate::mech::x(); }\n").into_iter().map(|(_, p)| p).collect();
        assert_eq!(got, ["mech::rq", "mech::task::Task", "crate::mech::x"]);
    }
}
