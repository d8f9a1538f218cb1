//! `cargo xtask benchmarks [--write] [--only TABLE]`: the figures of docs/BENCHMARKS.md that
//! `-icount` makes exact, rerun. Under `-icount` a boot is a function of the kernel image and its
//! command line (docs/BENCHMARKS.md, "What is deterministic"), so these tables are the kernel's
//! own: the pipe round trip, yield, the boot, and hackbench, tbench and schbench (at `-smp 2` over
//! eight tick phases, whose spread is the figure's). The command prints the tables, says which
//! differ from the document's, and with `--write` rewrites them between their markers
//! (`fairway_scenarios::docs`), each naming the kernel's commit and every row its exact command,
//! so that the document cannot go stale. The figures that cannot be rerun cheaply (wall clock,
//! Linux, the simulator's host time) are written by hand with their command and commit.
//!
//! `cargo xtask test` runs the `pipe` and `yield` tables as the job `benchmarks-current` (all of
//! them with `--long`) against the kernel built without the lock-order checker, the one
//! `cargo xtask run` boots.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use fairway_scenarios::docs;
use fairway_scenarios::Log;

use crate::bench::{self, Boot};
use crate::stats;

#[derive(clap::Args)]
pub struct BenchmarksArgs {
    /// Rewrite the generated tables of docs/BENCHMARKS.md (refused while kernel/ or boot/ has
    /// uncommitted changes: every table names the commit its figures come from).
    #[arg(long)]
    pub write: bool,
    /// Only this table (repeatable): pipe, yield, boot, hackbench, tbench, schbench.
    #[arg(long, value_name = "TABLE")]
    pub only: Vec<String>,
}

/// The document the tables live in, relative to the workspace root.
pub const DOC: &str = "docs/BENCHMARKS.md";

/// The sources whose changes move these figures: the kernel (mechanism, policy, workloads) and
/// its boot code.
pub const KERNEL_SOURCES: [&str; 2] = ["kernel", "boot"];

/// Runs at `-smp 2` of the tables that sample the tick phase (`bench --phases`).
const PHASES: usize = 8;

/// What a figure is read from in a boot's log.
#[derive(Clone, Copy, Debug)]
enum Read {
    /// A field of an `@fw KIND` record, printed with `decimals`.
    Record { kind: &'static str, field: &'static str, decimals: usize },
    /// An `@fw result` metric.
    Result { metric: &'static str, decimals: usize },
    /// The guest time (µs) of the `log=debug` line containing this text.
    Stamp(&'static str),
}

/// One row: a label, the machine, the command line, and whether it runs once or once per tick
/// phase (the median and range then).
struct RowSpec {
    label: &'static str,
    smp: &'static str,
    append: &'static str,
    phases: bool,
}

/// One table: its id (the marker's), its column heads after the label's and the command's, the
/// figures of each row, and its rows.
struct TableSpec {
    id: &'static str,
    label_head: &'static str,
    heads: &'static [&'static str],
    reads: &'static [Read],
    rows: &'static [RowSpec],
}

const fn row(label: &'static str, smp: &'static str, append: &'static str, phases: bool) -> RowSpec {
    RowSpec { label, smp, append, phases }
}

const TABLES: [TableSpec; 6] = [
    TableSpec {
        id: "pipe",
        label_head: "pipe round trip",
        heads: &["guest instructions (ns)"],
        reads: &[Read::Record { kind: "pipe", field: "ns_per_round_trip", decimals: 0 }],
        rows: &[
            row("one CPU", "1", "workload=pipe,rounds=20000,mode=same", false),
            row("one CPU of two", "2", "workload=pipe,rounds=20000,mode=same", false),
            row("across CPUs 0 and 1", "2", "workload=pipe,rounds=20000,mode=cross", false),
        ],
    },
    TableSpec {
        id: "yield",
        label_head: "yield",
        heads: &["guest instructions (ns) per context switch"],
        reads: &[Read::Record { kind: "yield", field: "ns_per_switch", decimals: 0 }],
        rows: &[row("two threads on one CPU", "1", "workload=yield,rounds=20000", false)],
    },
    TableSpec {
        id: "boot",
        label_head: "-smp",
        heads: &["kernel entry to the last CPU online (µs)", "kernel entry to the workload (µs)"],
        reads: &[Read::Record { kind: "cpus", field: "boot_us", decimals: 0 }, Read::Stamp("the workload starts")],
        rows: &[
            row("1", "1", "workload=pipe,rounds=1 log=debug", false),
            row("2", "2", "workload=pipe,rounds=1 log=debug", false),
            row("4", "4", "workload=pipe,rounds=1 log=debug", false),
            row("8", "8", "workload=pipe,rounds=1 log=debug", false),
        ],
    },
    TableSpec {
        id: "hackbench",
        label_head: "-smp",
        heads: &["time (s of guest time)"],
        reads: &[Read::Result { metric: "time", decimals: 3 }],
        rows: &[row("1", "1", "workload=hackbench", false), row("2", "2", "workload=hackbench", true)],
    },
    TableSpec {
        id: "tbench",
        label_head: "-smp",
        heads: &["throughput (MB/s)", "max latency (ms)"],
        reads: &[Read::Result { metric: "throughput", decimals: 1 }, Read::Result { metric: "max_latency", decimals: 3 }],
        rows: &[row("1", "1", "workload=tbench", false), row("2", "2", "workload=tbench", true)],
    },
    TableSpec {
        id: "schbench",
        label_head: "-smp",
        heads: &["wakeup p99 (µs)", "request p99 (µs)", "requests/s"],
        reads: &[
            Read::Result { metric: "wakeup_p99", decimals: 0 },
            Read::Result { metric: "request_p99", decimals: 0 },
            Read::Result { metric: "rps", decimals: 1 },
        ],
        rows: &[row("1", "1", "workload=schbench", false), row("2", "2", "workload=schbench", true)],
    },
];

/// The ids of every table, in the document's order.
pub fn table_ids() -> Vec<&'static str> {
    TABLES.iter().map(|t| t.id).collect()
}

/// The tables a `--only` list names (every table for an empty one); an unknown name is refused
/// with the list.
pub fn select(only: &[String]) -> Result<Vec<&'static str>, String> {
    if only.is_empty() {
        return Ok(table_ids());
    }
    let mut out = Vec::new();
    for o in only.iter().flat_map(|o| o.split(',')) {
        let id = table_ids()
            .into_iter()
            .find(|id| *id == o)
            .ok_or_else(|| format!("xtask: no benchmark table `{o}` (the tables: {})", table_ids().join(", ")))?;
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

/// The exact command a row's figure comes from, as a user types it.
fn command(r: &RowSpec) -> String {
    if r.phases {
        let workload = r.append.strip_prefix("workload=").unwrap_or(r.append);
        format!("cargo xtask bench {workload} --smp {} --icount --runs {PHASES} --phases", r.smp)
    } else {
        format!("cargo xtask run --icount --smp {} --append \"{}\"", r.smp, r.append)
    }
}

/// `1234567.891` with `decimals` as `1,234,567.891`.
pub fn grouped(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let (int, frac) = s.split_once('.').map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut g = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            g.push(',');
        }
        g.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{g}.{f}"),
        None => format!("{sign}{g}"),
    }
}

/// The guest time in µs of the first line containing `text`, from its `[    0.054217]` stamp.
fn stamp_us(log: &Log, text: &str) -> Option<f64> {
    let raw = log.raw();
    let line = raw.lines().find(|l| l.contains(text))?;
    let inner = line.trim_start().strip_prefix('[')?.split(']').next()?.trim();
    let (s, frac) = inner.split_once('.')?;
    Some(s.parse::<f64>().ok()? * 1e6 + frac.parse::<f64>().ok()? * 10f64.powi(6 - frac.len() as i32))
}

/// One figure of a boot's log.
fn read(log: &Log, r: Read) -> Result<f64, String> {
    match r {
        Read::Record { kind, field, .. } => log
            .records(kind)
            .next()
            .and_then(|rec| rec.get(field))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no `@fw {kind} {field}=` in the log")),
        Read::Result { metric, .. } => log
            .records("result")
            .find(|rec| rec.get("metric") == Some(metric))
            .and_then(|rec| rec.get("value"))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no `@fw result metric={metric}` in the log")),
        Read::Stamp(text) => stamp_us(log, text).ok_or_else(|| format!("no `{text}` line with a time stamp in the log")),
    }
}

fn decimals(r: Read) -> usize {
    match r {
        Read::Record { decimals, .. } | Read::Result { decimals, .. } => decimals,
        Read::Stamp(_) => 0,
    }
}

/// What the tables' figures were measured with: the kernel's commit and date, and QEMU's version.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// The last commit that changed [`KERNEL_SOURCES`] (7 hex digits), `+uncommitted` when the
    /// working tree changes them further.
    pub commit: String,
    pub date: String,
    pub qemu: String,
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(crate::workspace_root()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Provenance {
    pub fn of(qemu: &Path) -> Provenance {
        let mut log = vec!["log", "-1", "--format=%h %cs", "--abbrev=7", "--"];
        log.extend(KERNEL_SOURCES);
        let (id, date) = git(&log)
            .and_then(|s| s.split_once(' ').map(|(a, b)| (a.to_string(), b.to_string())))
            .unwrap_or_else(|| ("unknown".into(), "unknown".into()));
        let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
        status.extend(KERNEL_SOURCES);
        let dirty = !matches!(git(&status), Some(s) if s.is_empty());
        let qemu = crate::install::qemu_version(qemu).map_or_else(|| "unknown".to_string(), |v| v.to_string());
        Provenance { commit: if dirty { format!("{id}+uncommitted") } else { id }, date, qemu }
    }

    pub fn committed(&self) -> bool {
        !self.commit.contains('+') && self.commit != "unknown"
    }
}

/// One table, measured: its id and the Markdown between its markers.
#[derive(Clone, Debug)]
pub struct Generated {
    pub id: &'static str,
    pub body: String,
}

/// Boots every row of table `id` with the kernel at `elf` and QEMU at `qemu`; `progress` hears
/// each boot.
pub fn measure(id: &str, elf: &Path, qemu: &Path, prov: &Provenance, progress: &mut dyn FnMut(&str)) -> Result<Generated, String> {
    let t = TABLES.iter().find(|t| t.id == id).ok_or_else(|| format!("xtask: no benchmark table `{id}`"))?;
    let mut rows = Vec::new();
    for r in t.rows {
        let mut boot = Boot::with_kernel(elf.to_path_buf(), r.smp, true, 300)?;
        boot.qemu = qemu.to_path_buf();
        let runs = if r.phases { PHASES } else { 1 };
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); t.reads.len()];
        for i in 0..runs {
            let line = if r.phases { bench::with_phase(r.append, i, runs) } else { r.append.to_string() };
            progress(&format!("{id}: -smp {} {line}", r.smp));
            let (rec, log) = boot.run(i, &line)?;
            if !rec.ok {
                return Err(format!("xtask: `{}` (run {i}) did not finish: {}", command(r), rec.exit));
            }
            for (k, rd) in t.reads.iter().enumerate() {
                values[k].push(read(&log, *rd).map_err(|e| format!("xtask: `{}`: {e}", command(r)))?);
            }
        }
        let cells: Vec<String> = t
            .reads
            .iter()
            .zip(&values)
            .map(|(rd, v)| {
                let d = decimals(*rd);
                if v.len() == 1 {
                    grouped(v[0], d)
                } else {
                    format!("{} ({}–{})", grouped(stats::median(v), d), grouped(stats::min(v), d), grouped(stats::max(v), d))
                }
            })
            .collect();
        rows.push((r, cells));
    }
    Ok(Generated { id: t.id, body: render(t, prov, &rows) })
}

fn render(t: &TableSpec, prov: &Provenance, rows: &[(&RowSpec, Vec<String>)]) -> String {
    let mut s = format!(
        "Kernel at `{}` ({}, the last commit that changed `kernel/` or `boot/`), QEMU {}, `-icount`: one guest instruction per ns.",
        prov.commit, prov.date, prov.qemu
    );
    if rows.iter().any(|(r, _)| r.phases) {
        let _ = write!(s, " At `-smp 2`: the median (min–max) of {PHASES} runs, run i starting its workload i/{PHASES} of a tick late.");
    }
    s.push_str("\n\n");
    let _ = writeln!(s, "| {} | command | {} |", t.label_head, t.heads.join(" | "));
    let _ = writeln!(s, "|---|---|{}", "---|".repeat(t.heads.len()));
    for (r, cells) in rows {
        let _ = writeln!(s, "| {} | `{}` | {} |", r.label, command(r), cells.join(" | "));
    }
    s
}

/// The rows of `id` in the document that differ from `g`'s: one line per difference, empty when
/// they agree (the commit aside: another commit that prints the same figures agrees).
pub fn differences(doc: &str, g: &Generated) -> Result<Vec<String>, String> {
    let blocks = docs::blocks(doc)?;
    let Some(b) = blocks.iter().find(|b| b.id == g.id) else {
        return Ok(vec![format!("{DOC} has no generated table `{}`", g.id)]);
    };
    let (old, new) = (docs::table_rows(b.body), docs::table_rows(&g.body));
    let mut out = Vec::new();
    for (i, n) in new.iter().enumerate() {
        match old.get(i) {
            Some(o) if o == n => {}
            Some(o) => out.push(format!("{} `{}`: {DOC} (kernel at `{}`) says {}, this kernel prints {}", g.id, n[0], docs::commit_in(b.body).unwrap_or("?"), o[2..].join(" / "), n[2..].join(" / "))),
            None => out.push(format!("{} `{}`: not in {DOC}", g.id, n[0])),
        }
    }
    if old.len() > new.len() {
        out.push(format!("{}: {DOC} has {} rows, the command {}", g.id, old.len(), new.len()));
    }
    Ok(out)
}

fn doc_path() -> PathBuf {
    crate::workspace_root().join(DOC)
}

pub fn benchmarks(a: BenchmarksArgs) -> Result<(), String> {
    let ids = select(&a.only)?;
    let elf = crate::cargo::build_kernel()?;
    let qemu = crate::install::ensure(false)?;
    let prov = Provenance::of(&qemu);
    if a.write && !prov.committed() {
        return Err(format!(
            "xtask: --write needs a committed kernel: the tables name the commit their figures come from, and kernel/ or boot/ has uncommitted changes ({}); commit them, or run without --write",
            prov.commit
        ));
    }
    let mut doc = std::fs::read_to_string(doc_path()).map_err(|e| format!("{DOC}: {e}"))?;
    let mut differing = 0;
    let boots: usize = TABLES.iter().filter(|t| ids.contains(&t.id)).flat_map(|t| t.rows).map(|r| if r.phases { PHASES } else { 1 }).sum();
    let pb = bench::progress(boots as u64);
    for id in ids {
        let g = measure(id, &elf, &qemu, &prov, &mut |m| {
            pb.set_message(m.to_string());
            pb.inc(1);
        })?;
        let diff = differences(&doc, &g)?;
        pb.suspend(|| {
            println!("{}\n{}", g.id, g.body);
            for d in &diff {
                println!("differs: {d}");
            }
        });
        differing += usize::from(!diff.is_empty());
        if a.write {
            doc = docs::replace_block(&doc, g.id, &g.body).map_err(|e| format!("xtask: {DOC}: {e}"))?;
        }
    }
    pb.finish_and_clear();
    if a.write {
        std::fs::write(doc_path(), &doc).map_err(|e| format!("{DOC}: {e}"))?;
        println!("wrote {DOC} (kernel at `{}`)", prov.commit);
        return Ok(());
    }
    if differing > 0 {
        return Err(format!("xtask: {differing} table(s) differ from {DOC}: rerun with --write (and commit) to make the document this kernel's"));
    }
    println!("{DOC}: every table rerun agrees");
    Ok(())
}

/// The name of `cargo xtask test`'s job that reruns the tables.
pub const TEST_JOB: &str = "benchmarks-current";

/// The tables the test job reruns: the fast paths' (a few seconds) by default, every one with
/// `--long` (about two minutes).
pub fn test_tables(long: bool) -> Vec<&'static str> {
    if long { table_ids() } else { vec!["pipe", "yield"] }
}

/// Where `cargo xtask test` keeps the kernel the tables are measured with (built without the
/// lock-order checker, as `cargo xtask run` and this command build it), apart from the test
/// kernel that the scenarios boot, which the build of the other feature set would replace. The
/// file keeps the name `fairway-kernel`: QEMU is given `./fairway-kernel`, and the name is part
/// of the command line the figures depend on.
pub fn test_kernel_path() -> PathBuf {
    crate::cargo::target_dir().join("benchmarks-kernel").join(crate::cargo::KERNEL_PACKAGE)
}

/// Copies the kernel just built at `elf` to [`test_kernel_path`].
pub fn keep_test_kernel(elf: &Path) -> Result<PathBuf, String> {
    let to = test_kernel_path();
    let dir = to.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::copy(elf, &to).map_err(|e| format!("copying {} to {}: {e}", elf.display(), to.display()))?;
    Ok(to)
}

/// `cargo xtask test`'s job: reruns `tables` with the kernel at `elf` and fails, naming each
/// row, when a figure differs from docs/BENCHMARKS.md's.
pub fn test_job(elf: PathBuf, qemu: PathBuf, tables: Vec<&'static str>) -> crate::test::Job {
    let boots = TABLES.iter().filter(|t| tables.contains(&t.id)).flat_map(|t| t.rows).map(|r| if r.phases { PHASES } else { 1 }).sum::<usize>();
    crate::test::Job {
        slots: 1,
        boots: boots as u32,
        run: Box::new(move || {
            let t = std::time::Instant::now();
            let verdict = |passed: bool, report: String| crate::test::Verdict { name: TEST_JOB, passed, report, secs: t.elapsed().as_secs_f64() };
            let doc = match std::fs::read_to_string(doc_path()) {
                Ok(d) => d,
                Err(e) => return verdict(false, format!("FAIL {TEST_JOB} ({DOC}: {e})\n")),
            };
            let prov = Provenance::of(&qemu);
            let mut diff = Vec::new();
            for id in &tables {
                match measure(id, &elf, &qemu, &prov, &mut |_| {}).and_then(|g| differences(&doc, &g)) {
                    Ok(d) => diff.extend(d),
                    Err(e) => return verdict(false, format!("FAIL {TEST_JOB} ({e})\n")),
                }
            }
            let secs = t.elapsed().as_secs_f64();
            if diff.is_empty() {
                verdict(true, format!("PASS {TEST_JOB} ({secs:.1} s, tables {})\n", tables.join(", ")))
            } else {
                verdict(
                    false,
                    format!(
                        "FAIL {TEST_JOB} ({} figure(s) of {DOC} are not this kernel's, {secs:.1} s)\n  {}\n  run `cargo xtask benchmarks --write` on the committed kernel and commit {DOC}, then update any README or docs/ sentence quoting the old figures\n",
                        diff.len(),
                        diff.join("\n  ")
                    ),
                )
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_grouped_by_thousands() {
        assert_eq!(grouped(2882.0, 0), "2,882");
        assert_eq!(grouped(4601.97, 1), "4,602.0");
        assert_eq!(grouped(0.0314, 3), "0.031");
        assert_eq!(grouped(1234567.5, 1), "1,234,567.5");
        assert_eq!(grouped(999.0, 0), "999");
    }

    #[test]
    fn the_tables_are_selected_by_name() {
        assert_eq!(select(&[]).unwrap(), table_ids());
        assert_eq!(select(&["yield".into(), "pipe,yield".into()]).unwrap(), vec!["yield", "pipe"]);
        assert!(select(&["pipes".into()]).unwrap_err().contains("no benchmark table `pipes` (the tables: pipe, yield"));
    }

    #[test]
    fn a_stamp_is_read_in_microseconds() {
        let log = Log::parse("[    0.054217] cpu0 DEBUG the workload starts\n");
        assert_eq!(stamp_us(&log, "the workload starts"), Some(54_217.0));
        assert_eq!(stamp_us(&log, "absent"), None);
    }

    /// The rendered table is what the document's parser reads back, and a changed figure is a
    /// difference while a changed commit is not.
    #[test]
    fn a_table_round_trips_through_the_document() {
        let prov = Provenance { commit: "abc1234".into(), date: "2026-12-05".into(), qemu: "10.0.2".into() };
        let t = &TABLES[0];
        let rows: Vec<(&RowSpec, Vec<String>)> = t.rows.iter().zip(["2,882", "3,232", "4,614"]).map(|(r, v)| (r, vec![v.to_string()])).collect();
        let g = Generated { id: "pipe", body: render(t, &prov, &rows) };
        let doc = format!("# B\n\n{}pipe -->\n{}{}pipe -->\n", docs::BEGIN, g.body, docs::END);
        assert!(differences(&doc, &g).unwrap().is_empty());
        let rows = docs::table_rows(&g.body);
        assert_eq!(rows[0], vec!["one CPU", "`cargo xtask run --icount --smp 1 --append \"workload=pipe,rounds=20000,mode=same\"`", "2,882"]);
        let moved = doc.replace("4,614", "2,500");
        let d = differences(&moved, &g).unwrap();
        assert_eq!(d.len(), 1);
        assert!(d[0].contains("across CPUs 0 and 1") && d[0].contains("says 2,500, this kernel prints 4,614"), "{}", d[0]);
        assert!(differences(&doc.replace("abc1234", "def5678"), &g).unwrap().is_empty());
        assert!(differences("# no tables\n", &g).unwrap()[0].contains("has no generated table `pipe`"));
        // the phase rows name bench's command
        let hb = &TABLES[3];
        assert_eq!(command(&hb.rows[1]), "cargo xtask bench hackbench --smp 2 --icount --runs 8 --phases");
    }
}
