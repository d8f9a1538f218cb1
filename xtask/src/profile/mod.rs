//! `cargo xtask profile WORKLOAD`: where the guest instructions of a workload go, per kernel
//! function, in the unit the performance goals use (instructions under `-icount`).
//!
//! It builds the TCG plugin in `tools/qemu-profile/` (its own workspace and target directory),
//! boots the kernel twice under `-icount` with the plugin, once with the varied parameter at
//! its base value and once at twice that, and subtracts the per-instruction counts: boot, set-up
//! and shutdown cancel, what remains is the steady-state cost of `base` more units. Each
//! instruction's count goes to the ELF symbol containing it; functions are then grouped by layer.
//! With `--inlined` (or `--within SYMBOL`) the DWARF inline chains of the counted addresses add
//! a per-function view that sees through inlining and a per-source-line view (`inline`). With
//! `--annotate SYMBOL` one function's disassembly follows, each instruction with its count
//! (`annotate`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fairway_scenarios::{Log, QemuExit};

use crate::bench::{cmdline, Boot};
use crate::results;
use crate::symbols::Symbols;
use crate::workload_args::WorkloadArgs;

mod against;
mod annotate;
mod counts;
mod inline;
mod report;

use counts::*;
use report::*;

#[derive(clap::Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub run: WorkloadArgs,
    /// The workload parameter doubled in the second boot; figures are per unit of it. Its value in
    /// --params is the first boot's.
    #[arg(long, default_value = "rounds")]
    pub vary: String,
    /// Functions shown in the table.
    #[arg(long, default_value_t = 40)]
    pub top: usize,
    /// Also write the whole profile (every function) as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also show, from the ELF's DWARF, the instructions inside every function at any inline
    /// depth and per project source line.
    #[arg(long)]
    pub inlined: bool,
    /// Restrict the --inlined tables to the instructions of this out-of-line function (its
    /// demangled ELF symbol, exactly as the per-symbol table shows it); implies --inlined.
    #[arg(long, value_name = "SYMBOL")]
    pub within: Option<String>,
    /// A previous run's profile.json (or its directory): after the report, the total and the
    /// --top functions that changed most, per unit, before and after.
    #[arg(long, value_name = "PATH")]
    pub against: Option<PathBuf>,
    /// Print the disassembly of this out-of-line function (its demangled ELF symbol, exactly as
    /// the per-symbol table shows it; every copy that executed) with each instruction's
    /// executions per unit, and write it to annotate.txt.
    #[arg(long, value_name = "SYMBOL")]
    pub annotate: Option<String>,
    /// With --annotate: runs of at least N instructions the difference does not contain are
    /// shown as one line (0: show every instruction).
    #[arg(long, value_name = "N", default_value_t = 3, requires = "annotate")]
    pub collapse: usize,
}

// ---------------------------------------------------------------------------------------------
// Building and booting

/// Builds tools/qemu-profile (release, no RUSTFLAGS: the workspace's `relocation-model=static`
/// cannot link a shared object) into target/qemu-profile; returns the shared object.
pub fn build_plugin() -> Result<PathBuf, String> {
    let dir = crate::workspace_root().join("tools/qemu-profile");
    let target_dir = crate::cargo::target_dir().join("qemu-profile");
    let st = crate::cargo::cargo_in(&dir)
        .args(["build", "--release", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .args(["--target", crate::cargo::TARGET])
        .env("RUSTFLAGS", "")
        .env("CARGO_ENCODED_RUSTFLAGS", "")
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("xtask: cannot run cargo: {e}"))?;
    if !st.success() {
        return Err(format!(
            "xtask: building the profiling plugin in {} failed ({st}); it needs the crates.io \
             crate qemu-plugin-sys (cargo's errors are above)",
            dir.display()
        ));
    }
    let so = target_dir.join(crate::cargo::TARGET).join("release/libqemu_profile.so");
    if !so.is_file() {
        return Err(format!("xtask: the plugin build succeeded but {} does not exist", so.display()));
    }
    Ok(so)
}

/// Fails unless `qemu -plugin help` works (QEMU built without `--enable-plugins` rejects it).
pub fn check_plugin_support(qemu: &Path) -> Result<(), String> {
    let out = Command::new(qemu)
        .args(["-plugin", "help"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("xtask: cannot run {}: {e}", qemu.display()))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "xtask: {} has no TCG plugin support (`-plugin help` failed: {}{}); `cargo xtask profile` \
         needs a QEMU built with plugins (Debian's qemu-system-x86 is)",
        qemu.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .map_or(String::new(), |l| format!(", {l}"))
    ))
}

/// What is said about a boot that did not end in the kernel's success: which run, how it ended,
/// QEMU's stderr, the boot stages and the tail of the serial log.
pub fn failure_report(
    which: &str,
    exit: &QemuExit,
    timeout_s: u64,
    stderr: &str,
    log: &Log,
    log_path: &Path,
) -> String {
    let mut r = format!("xtask: {which} failed: {exit}");
    if matches!(exit, QemuExit::Timeout) {
        let _ = write!(r, " (timed out after {timeout_s} s; raise --timeout)");
    }
    r.push('\n');
    if !stderr.trim().is_empty() {
        let _ = writeln!(r, "xtask: QEMU's stderr:");
        for l in stderr.lines() {
            let _ = writeln!(r, "    {l}");
        }
    }
    let _ = writeln!(r, "xtask: {}", log.stage_summary());
    const TAIL: usize = 20;
    let skip = log.lines.len().saturating_sub(TAIL);
    let _ = writeln!(
        r,
        "xtask: the last {} of {} serial lines (all in {}):",
        log.lines.len() - skip,
        log.lines.len(),
        log_path.display()
    );
    for l in &log.lines[skip..] {
        let _ = writeln!(r, "    {}", l.text);
    }
    r
}

/// One boot with the plugin writing to `out`; returns the parsed profile and the serial log.
fn boot_once(boot: &Boot, plugin: &Path, append: &str, which: &str, out: &Path) -> Result<(Profile, Log), String> {
    let arg = format!("{},out={}", plugin.display(), out.display());
    if out.to_string_lossy().contains(',') || plugin.to_string_lossy().contains(',') {
        return Err(format!("xtask: QEMU splits plugin arguments at commas: `{arg}` cannot be passed"));
    }
    let _ = std::fs::remove_file(out);
    let mut cfg = boot.config(append);
    cfg.extra = vec!["-plugin".into(), arg];
    let r = crate::runner::run(cfg.command()?, boot.timeout, &mut |_| {}, None);
    let log_path = out.with_extension("log");
    std::fs::write(&log_path, r.log.raw()).map_err(|e| format!("{}: {e}", log_path.display()))?;
    crate::bench::accepted_cmdline(&r.log, append)?;
    if !r.exit.is_success() {
        return Err(failure_report(which, &r.exit, boot.timeout.as_secs(), &r.stderr, &r.log, &log_path));
    }
    let text = std::fs::read_to_string(out).map_err(|e| {
        format!("xtask: {which}: the kernel succeeded but the plugin left no profile at {}: {e}", out.display())
    })?;
    let p = parse_profile(&text).map_err(|e| format!("xtask: {which}: {}: {e}", out.display()))?;
    Ok((p, r.log))
}

pub fn profile(a: ProfileArgs) -> Result<(), String> {
    let w = &a.run;
    let base = match param_value(&w.boot.params, &a.vary)? {
        Some(0) => return Err(format!("xtask profile: --params {}=0: the base value must be positive", a.vary)),
        Some(v) => v,
        None => default_base(&a.vary).ok_or_else(|| {
            format!("xtask profile: give the base value of `{}` in --params ({}=N)", a.vary, a.vary)
        })?,
    };
    // Read before building or booting: a wrong path costs nothing.
    let against = a.against.as_deref().map(against::load).transpose()?;
    let plugin = build_plugin()?;
    let (boot, kernel) = Boot::prepare_at(&w.kernel, &w.boot.smp, true, w.boot.timeout)?;
    check_plugin_support(&boot.qemu)?;
    let syms = Symbols::load(&boot.elf)?;
    if syms.is_empty() {
        return Err(format!("xtask: {} has no function symbols to attribute to", boot.elf.display()));
    }
    // The DWARF and --within are checked before booting, so a mistake costs seconds, not a run.
    let inlined = a.inlined || a.within.is_some();
    let elf_data = if inlined || a.annotate.is_some() {
        std::fs::read(&boot.elf).map_err(|e| format!("{}: {e}", boot.elf.display()))?
    } else {
        Vec::new()
    };
    // --annotate uses the DWARF for source lines when it is there; --inlined needs it.
    let debuginfo = if elf_data.is_empty() {
        None
    } else {
        match inline::Debuginfo::parse(&boot.elf, &elf_data) {
            Ok(d) => Some(d),
            Err(e) if inlined => return Err(e),
            Err(_) => None,
        }
    };
    if let Some(w) = &a.within {
        if syms.address_of(w).is_none() {
            let why = format!("is not a function symbol of {}", boot.elf.display());
            return Err(unknown_symbol("--within", w, &why, "symbol names", syms.names()));
        }
    }
    let copies = match &a.annotate {
        Some(name) => {
            let c = annotate::copies(&elf_data, &syms, name)?;
            if c.is_empty() {
                let why = format!("is not a function symbol of {}", boot.elf.display());
                return Err(unknown_symbol("--annotate", name, &why, "symbol names", syms.names()));
            }
            c
        }
        None => Vec::new(),
    };
    let dir = crate::workspace_root()
        .join("target/profile")
        .join(format!("{}-{}", crate::bench::timestamp(), w.workload));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let values = [base, 2 * base];
    let cmdlines = values.map(|v| cmdline(&w.workload, &with_param(&w.boot.params, &a.vary, v), &w.append));
    eprintln!("xtask: {}", boot.config(&cmdlines[0]).display());
    eprintln!("xtask: booting {v}={} and {v}={} under -icount with the plugin, side by side", values[0], values[1], v = a.vary);
    // -icount runs every vCPU on one host thread, so the two boots fit the machine's 2 cores.
    let results: Vec<Result<(Profile, Log), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let (boot, plugin, line) = (&boot, &plugin, &cmdlines[i]);
                let which = format!("run {} of 2 ({}={})", i + 1, a.vary, values[i]);
                let out = dir.join(format!("{}-{}.profile", a.vary, values[i]));
                s.spawn(move || boot_once(boot, plugin, line, &which, &out))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("xtask: a boot thread panicked".into()))).collect()
    });
    let mut runs = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(x) => runs.push(x),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    let (pa, la) = &runs[0];
    let (pb, lb) = &runs[1];
    let rejected = rejected_options(&[la, lb]);
    if !rejected.is_empty() {
        return Err(format!(
            "xtask profile: the kernel did not run what was asked (logs in {}):\n{}",
            dir.display(),
            rejected.join("\n")
        ));
    }
    let delta = subtract(pa, pb);
    let fns = attribute(&delta, &syms);
    let mut report = Report::new(
        &a,
        base,
        cmdlines.clone(),
        fns,
        [results::figures(la), results::figures(lb)],
        kernel_total_ns(la, &w.workload).zip(kernel_total_ns(lb, &w.workload)).map(|(x, y)| [x, y]),
    );
    if report.total <= 0 {
        return Err(format!(
            "xtask profile: {v}={} executed {} instructions more than {v}={}, nothing to attribute: \
             does `{}` take `{v}`?",
            values[1],
            report.total,
            values[0],
            w.workload,
            v = a.vary
        ));
    }
    if let (true, Some(dbg)) = (inlined, &debuginfo) {
        let chains = dbg.chains(delta.iter().map(|&(pc, _)| pc))?;
        eprintln!("xtask: resolved the inline chains of {} addresses from DWARF", chains.len());
        let symbol_of = |pc| syms.lookup(pc).map_or(NO_SYMBOL, |(n, _)| n);
        // the tree the kernel was built from: the working tree's, or a revision's export
        let root = &kernel.source_root;
        report.inline = Some(inline::aggregate(&delta, symbol_of, &chains, root, a.within.as_deref()));
    }
    report.kernel = kernel.label.clone();
    if let Some((path, before)) = &against {
        report.against = Some(against::compare(path, before, &against::Side::of(&report)));
    }
    print!("{}", report.render(a.top));
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("profile.json"), &json).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(p) = &a.json {
        std::fs::write(p, &json).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let mut annotation = None;
    if let Some(name) = &a.annotate {
        let root = &kernel.source_root;
        let source = |pc| debuginfo.as_ref().and_then(|d| annotate::source_of(d, pc, name, root));
        let copies: Vec<_> = copies.iter().map(|c| annotate::annotate(c, &delta, &syms, &source)).collect();
        let figure = report.functions.iter().find(|f| &f.name == name).map_or(0, |f| f.insns);
        annotation = Some(annotate::render_all(name, &copies, base, unit_name(&a.vary), a.collapse).map(|mut text| {
            if debuginfo.is_none() {
                text.push_str("(the ELF has no DWARF: no source lines)\n");
            }
            let sum: i64 = copies.iter().map(|c| c.total).sum();
            if sum != figure {
                // By construction the copies cover what the per-symbol table charges to the name.
                text.push_str(&format!(
                    "(warning: the copies add up to {sum} instructions, the per-symbol table has {figure})\n"
                ));
            }
            text
        }));
    }
    if let Some(Ok(text)) = &annotation {
        println!("\nannotated (executions per {} beside each instruction):\n", unit_name(&a.vary));
        print!("{text}");
        let p = dir.join("annotate.txt");
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let also = if matches!(annotation, Some(Ok(_))) { ", annotate.txt" } else { "" };
    println!("\nwrote {} (profiles, serial logs, profile.json{also})", dir.display());
    if let (Some(w), Some(inl)) = (&a.within, &report.inline) {
        if inl.addresses == 0 {
            let why = "ran no instruction more or less often in the second boot, so nothing matched";
            let names = report.functions.iter().map(|f| f.name.as_str());
            return Err(unknown_symbol("--within", w, why, "functions of this profile", names));
        }
    }
    if let (Some(name), Some(Err(why))) = (&a.annotate, &annotation) {
        let names = report.functions.iter().map(|f| f.name.as_str());
        return Err(unknown_symbol("--annotate", name, why, "functions of this profile", names));
    }
    Ok(())
}

/// The error for a `--within` or `--annotate` (`option`) symbol that matched nothing: why, and
/// the names among `names` (described by `among`) closest to it.
fn unknown_symbol<'a>(
    option: &str,
    wanted: &str,
    why: &str,
    among: &str,
    names: impl Iterator<Item = &'a str> + Clone,
) -> String {
    let near = inline::closest(names, wanted, 10);
    let mut e = format!("xtask profile {option}: `{wanted}` {why}");
    if near.is_empty() {
        let _ = write!(e, "; none of the {among} is near it (names are demangled, without hashes)");
    } else {
        let _ = write!(e, "; the closest {among}:");
        for n in near {
            let _ = write!(e, "\n    {n}");
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::Parser as _;

    use super::*;

    fn prof(rows: &[(u64, u64)]) -> String {
        let mut s = format!("{HEADER}\n");
        let mut total = 0;
        for (pc, n) in rows {
            s.push_str(&format!("{pc:x} {n}\n"));
            total += n;
        }
        s.push_str(&format!("end insns={total}\n"));
        s
    }

    fn syms() -> Symbols {
        Symbols::from_list([
            (0x1000, 0x100, "_ZN5sched5eevdf4pick17h0123456789abcdefE".to_string()),
            (0x1100, 0x100, "_ZN14fairway_kernel8schedule10__schedule17h0123456789abcdefE".to_string()),
            (0x1200, 0x40, "_ZN4spin5mutex4lock17h0123456789abcdefE".to_string()),
            (0x2000, 0, "isr_common".to_string()),
        ])
    }

    #[test]
    fn params_base_and_doubling() {
        assert_eq!(param_value("rounds=2000,mode=same", "rounds").unwrap(), Some(2000));
        assert_eq!(param_value("mode=same", "rounds").unwrap(), None);
        assert_eq!(param_value("", "rounds").unwrap(), None);
        assert!(param_value("rounds=lots", "rounds").is_err());
        assert_eq!(with_param("rounds=2000,mode=same", "rounds", 4000), "rounds=4000,mode=same");
        assert_eq!(with_param("mode=cross", "rounds", 4000), "mode=cross,rounds=4000");
        assert_eq!(with_param("", "loops", 40), "loops=40");
        assert_eq!(default_base("rounds"), Some(2000));
        assert_eq!(default_base("groups"), None);
    }

    #[test]
    fn parses_the_plugin_output() {
        let p = parse_profile(&prof(&[(0x1010, 5), (0x1014, 7), (0x2000, 1)])).unwrap();
        assert_eq!(p.total, 13);
        assert_eq!(p.counts[&0x1014], 7);
        assert_eq!(p.counts.len(), 3);
        // The prototype's block format and the empty file are not profiles.
        assert!(parse_profile("14a351 10 2000\n").unwrap_err().contains("not a profile"));
        assert!(parse_profile("").is_err());
    }

    #[test]
    fn rejects_bad_profiles() {
        let good = prof(&[(0x1010, 5)]);
        // Truncated: the end line is missing.
        let cut = good.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(parse_profile(&cut).unwrap_err().contains("truncated"));
        // The counts do not add up to the end line.
        assert!(parse_profile(&good.replace("insns=5", "insns=6")).unwrap_err().contains("add up"));
        assert!(parse_profile(&good.replace("insns=5", "insns=")).is_err());
        assert!(parse_profile(&good.replace("1010 5", "xyz 5")).is_err());
        assert!(parse_profile(&good.replace("1010 5", "1010")).is_err());
        assert!(parse_profile(&good.replace("1010 5", "1010 5 9")).is_err());
        assert!(parse_profile(&good.replace("1010 5", "1010 -5")).is_err());
    }

    #[test]
    fn subtraction_keeps_signed_nonzero_differences() {
        let a = parse_profile(&prof(&[(0x1000, 10), (0x1004, 3), (0x1100, 4)])).unwrap();
        let b = parse_profile(&prof(&[(0x1000, 30), (0x1004, 3), (0x1100, 1), (0x1200, 6)])).unwrap();
        assert_eq!(subtract(&a, &b), vec![(0x1000, 20), (0x1100, -3), (0x1200, 6)]);
        assert!(subtract(&a, &a).is_empty());
    }

    #[test]
    fn attribution_to_symbols() {
        let s = syms();
        let delta = vec![
            (0x0800, 2),  // before the first symbol
            (0x1000, 10), // sched::eevdf::pick
            (0x10fc, 5),  // its last bytes
            (0x1100, 7),  // fairway_kernel::schedule::__schedule
            (0x1240, 1),  // past spin's sized symbol, before isr_common
            (0x2400, 4),  // isr_common has no size: up to the end
            (0x1200, -1), // a function that ran less in the second boot
        ];
        let f = attribute(&delta, &s);
        let get = |n: &str| f.iter().find(|x| x.name == n).unwrap_or_else(|| panic!("{n} missing: {f:?}"));
        assert_eq!(get("sched::eevdf::pick").insns, 15);
        assert_eq!(get("sched::eevdf::pick").layer, Layer::Policy);
        assert_eq!(get("fairway_kernel::schedule::__schedule").layer, Layer::Kernel);
        assert_eq!(get(NO_SYMBOL).insns, 3);
        assert_eq!(get(NO_SYMBOL).layer, Layer::NoSymbol);
        assert_eq!(get("isr_common").insns, 4);
        assert_eq!(get("isr_common").layer, Layer::Other);
        assert_eq!(get("spin::mutex::lock").insns, -1);
        // Largest first, the negative last.
        assert_eq!(f[0].name, "sched::eevdf::pick");
        assert_eq!(f.last().unwrap().name, "spin::mutex::lock");
        assert_eq!(f.len(), 5);
        assert_eq!(f.iter().map(|x| x.insns).sum::<i64>(), 28);
    }

    #[test]
    fn layers_and_crates() {
        assert_eq!(crate_of("sched::eevdf::pick"), Some("sched"));
        assert_eq!(crate_of("<fairway_kernel::rq::Rq as core::fmt::Debug>::fmt"), Some("fairway_kernel"));
        assert_eq!(crate_of("<&mut spin::Mutex<u8> as core::ops::Drop>::drop"), Some("spin"));
        assert_eq!(crate_of("core::ptr::drop_in_place<fairway_kernel::task::Task>"), Some("core"));
        assert_eq!(crate_of("<[u8] as core::fmt::Debug>::fmt"), None);
        assert_eq!(crate_of("memcpy"), None);
        assert_eq!(crate_of("isr_common"), None);
        assert_eq!(layer_of("sched::pelt::update"), Layer::Policy);
        assert_eq!(layer_of("fairway_kernel::wakeup::try_to_wake_up"), Layer::Kernel);
        assert_eq!(layer_of("alloc::vec::Vec<T>::push"), Layer::Library);
        assert_eq!(layer_of("memcpy"), Layer::Other);
        assert_eq!(layer_of(NO_SYMBOL), Layer::NoSymbol);
        // A crate merely starting with "sched" is not the policy crate.
        assert_eq!(layer_of("scheduler::x"), Layer::Library);

        let f = |name: &str, insns| FnCount { name: name.into(), layer: layer_of(name), insns };
        let (layers, crates) = group(&[
            f("sched::a", 5),
            f("fairway_kernel::b", 20),
            f("fairway_kernel::c", 1),
            f("core::d", 2),
            f("spin::e", 3),
            f("memcpy", 4),
        ]);
        assert_eq!(layers, vec![(Layer::Kernel, 21), (Layer::Policy, 5), (Layer::Library, 5), (Layer::Other, 4)]);
        assert_eq!(crates, vec![("spin".to_string(), 3), ("core".to_string(), 2)]);
    }

    #[test]
    fn report_per_unit_and_rendering() {
        let a = ProfileArgs {
            run: WorkloadArgs {
                workload: "pipe".into(),
                boot: crate::workload_args::BootArgs { params: "rounds=10".into(), smp: "2".into(), timeout: 1 },
                append: String::new(),
                kernel: Default::default(),
            },
            vary: "rounds".into(),
            top: 1,
            json: None,
            inlined: false,
            within: None,
            against: None,
            annotate: None,
            collapse: 3,
        };
        let fns = attribute(&[(0x1000, 300), (0x1100, 100), (0x2000, 100)], &syms());
        let mut r = Report::new(&a, 10, ["x".into(), "y".into()], fns, [vec![], vec![]], Some([1000, 1520]));
        assert_eq!(r.total, 500);
        assert_eq!(r.per_unit, 50.0);
        assert_eq!(r.layers[0], (Layer::Policy, 30.0));
        let text = r.render(1);
        assert!(text.contains("total: 50.0 instructions per round\n"), "{text}");
        assert!(text.contains("total_ns 1000 and 1520, 52.0 ns per round more"), "{text}");
        assert!(text.contains("insns/round"), "{text}");
        assert!(text.contains("        30.0  60.0%  sched::eevdf::pick\n"), "{text}");
        assert!(text.contains("        20.0  40.0%  (2 more functions)"), "{text}");
        assert!(text.contains("policy crate (sched::)"), "{text}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["functions"][0]["layer"], "policy");
        // Without --inlined neither the tables nor their JSON keys appear.
        assert!(!text.contains("inclusive") && j.get("inlined").is_none() && j.get("lines").is_none(), "{j}");
        // With them, both follow the layers and go into the JSON.
        let chains = HashMap::from([(0x1000, vec![]), (0x1100, vec![]), (0x2000, vec![])]);
        let s = syms();
        let of = |pc| s.lookup(pc).map_or(NO_SYMBOL, |(n, _)| n);
        let delta = [(0x1000, 300), (0x1100, 100), (0x2000, 100)];
        r.inline = Some(inline::aggregate(&delta, of, &chains, Path::new("/ws"), None));
        let text = r.render(1);
        let (plain, inl) = text.split_once("\ninclusive, with inlined functions (all 50.0 insns/round;").unwrap();
        assert!(plain.contains("by layer:") && inl.contains("by source line"), "{text}");
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["inlined"][0]["name"], "sched::eevdf::pick");
        assert_eq!(j["inlined"][0]["insns"], 300);
        assert!(j["lines"].as_array().unwrap().is_empty(), "{j}");
    }

    #[test]
    fn against_follows_the_report_and_goes_into_the_json() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: ProfileArgs,
        }
        let a = Cli::parse_from(["profile", "pipe", "--params", "rounds=10", "--top", "1"]).a;
        let fns = attribute(&[(0x1000, 300), (0x1100, 100), (0x2000, 100)], &syms());
        let mut r = Report::new(&a, 10, ["x".into(), "y".into()], fns, [vec![], vec![]], None);
        let j = serde_json::to_value(&r).unwrap();
        assert!(j.get("against").is_none(), "no key without --against: {j}");
        let mut before = against::Side::of(&r);
        before.functions[0].insns -= 100; // sched::eevdf::pick was 20 per round, is 30
        before.total -= 100;
        r.against = Some(against::compare(Path::new("/old/profile.json"), &before, &against::Side::of(&r)));
        let text = r.render(1);
        let (report, cmp) = text.split_once("\nagainst /old/profile.json (instructions per round):\n").unwrap();
        assert!(report.contains("by layer:"), "{text}");
        assert!(cmp.contains("        40.0         50.0        +10.0  total (+25.0%)\n"), "{text}");
        assert!(cmp.contains("        20.0         30.0        +10.0  sched::eevdf::pick\n"), "{text}");
        assert!(cmp.contains("(2 functions unchanged)"), "{text}");
        let j = serde_json::to_value(&r).unwrap();
        let c = &j["against"];
        assert_eq!(c["path"], "/old/profile.json");
        assert_eq!((c["total"]["before"].as_f64(), c["total"]["after"].as_f64(), c["total"]["diff"].as_f64()), (Some(40.0), Some(50.0), Some(10.0)));
        assert_eq!(c["functions"][0]["name"], "sched::eevdf::pick");
        assert_eq!(c["functions"][0]["diff"], 10.0);
        assert_eq!(c["functions"].as_array().unwrap().len(), 3);
        assert_eq!(c["warnings"].as_array().unwrap().len(), 0);
        // What profile.json holds is what --against reads back.
        assert_eq!(against::parse_side(&j.to_string()).unwrap(), against::Side::of(&r));
    }

    #[test]
    fn failure_report_names_the_run_and_shows_the_tail() {
        let text: String = (0..30).map(|i| format!("line {i}\n")).collect::<String>() + "@fw stage name=entry\n";
        let log = Log::parse(&text);
        let r = failure_report("run 2 of 2 (rounds=4000)", &QemuExit::Timeout, 120, "qemu: oops\n", &log, Path::new("/t/x.log"));
        assert!(r.starts_with("xtask: run 2 of 2 (rounds=4000) failed: "), "{r}");
        assert!(r.contains("timed out after 120 s"), "{r}");
        assert!(r.contains("    qemu: oops"), "{r}");
        assert!(r.contains("the last 20 of 31 serial lines (all in /t/x.log)"), "{r}");
        assert!(r.contains("    line 29\n") && !r.contains("    line 10\n"), "{r}");
    }

    #[test]
    fn units_and_the_kernels_clock() {
        assert_eq!(unit_name("rounds"), "round");
        assert_eq!(unit_name("loops"), "loop");
        assert_eq!(unit_name("ms"), "ms");
        let log = Log::parse("@fw pipe mode=same rounds=2000 total_ns=17175631 ns_per_round_trip=8587\n");
        assert_eq!(kernel_total_ns(&log, "pipe"), Some(17175631));
        assert_eq!(kernel_total_ns(&log, "yield"), None);
        let bad = Log::parse("@fw stage name=cmdline\ncmdline: workload=\"groups\": unknown workload; running workload=demo\n");
        assert_eq!(rejected_options(&[&bad, &bad]).len(), 1);
        assert!(rejected_options(&[&log]).is_empty());
    }

    #[test]
    fn unknown_annotate_symbol_lists_close_names() {
        let names = ["fairway_kernel::sync::WaitQueue::wake_first", "fairway_kernel::sync::WaitQueue::wake_one_with", "sched::pick"];
        let e = unknown_symbol("--annotate", "fairway_kernel::sync::WaitQueue::wake", "is not a function symbol of k", "symbol names", names.iter().copied());
        assert!(e.starts_with("xtask profile --annotate: `fairway_kernel::sync::WaitQueue::wake` is not a function symbol of k; the closest symbol names:\n"), "{e}");
        assert!(e.contains("\n    fairway_kernel::sync::WaitQueue::wake_first") && !e.contains("sched::pick"), "{e}");
        let e = unknown_symbol("--annotate", "nothing", "is not a function symbol of k", "symbol names", names.iter().copied());
        assert!(e.ends_with("none of the symbol names is near it (names are demangled, without hashes)"), "{e}");
        // --collapse only goes with --annotate.
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: ProfileArgs,
        }
        assert!(Cli::try_parse_from(["profile", "pipe", "--collapse", "0"]).is_err());
        let a = Cli::try_parse_from(["profile", "pipe", "--annotate", "k::f"]).unwrap().a;
        assert_eq!((a.annotate.as_deref(), a.collapse), (Some("k::f"), 3));
    }

    #[test]
    fn shortens_long_names() {
        assert_eq!(shorten("abc", 5), "abc");
        assert_eq!(shorten("abcdefgh", 5), "abcd…");
    }
}
