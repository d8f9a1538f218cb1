//! Where an experiment's runs come from and where their logs go: the provenance every saved
//! log carries (the sources' revision and the binary that ran), local runs N at a time, and a
//! job list (`--jobs-file`) of one shell command per run that any batch runner can execute,
//! its logs read back with `--from`.
//!
//! Every log an experiment saves starts with `@xtask provenance revision=R binary=B` and ends
//! with `@xtask status=N` (the process's exit status), whether xtask ran it or a job did, so a
//! report read from logs knows what ran them and whether each run finished; a report refuses to
//! mix logs of different revisions or binaries.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use fairway_scenarios::Log;

use super::{cmdline, log_name, point_params, Form, Mode, Runner, Spec, Variant};

/// The sources whose changes move the figures: the kernel (mechanism, policy, workloads), its
/// boot code, and the simulator.
pub const FIGURE_SOURCES: [&str; 3] = ["kernel", "boot", "sim"];

/// What produced a log: the revision of [`FIGURE_SOURCES`] (the last commit that changed them,
/// `+uncommitted` when the working tree changes them further) and a hash of the binary that
/// ran (the kernel ELF or `fairway-sim`). Empty fields: a log saved before logs carried them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    pub revision: String,
    pub binary: String,
}

const PROVENANCE: &str = "@xtask provenance ";
const STATUS: &str = "@xtask status=";

impl Provenance {
    /// The provenance of runs of `binary` from this working tree.
    pub fn of(binary: &Path) -> Result<Provenance, String> {
        Ok(Provenance { revision: sources_revision(), binary: file_hash(binary)? })
    }

    /// The header line of a saved log.
    pub fn line(&self) -> String {
        format!("{PROVENANCE}revision={} binary={}", self.revision, self.binary)
    }

    /// The provenance a log's header names, if it has one.
    pub fn parse(text: &str) -> Option<Provenance> {
        let line = text.lines().find(|l| l.starts_with(PROVENANCE))?;
        let field = |k: &str| line.split_whitespace().find_map(|w| w.strip_prefix(k)).unwrap_or("").to_string();
        Some(Provenance { revision: field("revision="), binary: field("binary=") })
    }

    /// The revision as a report names it: the commit with its date (not its subject: a report
    /// says what ran, and `git show` tells the rest).
    pub fn describe(&self) -> String {
        if self.revision.is_empty() {
            return "unknown (logs saved before they named their revision)".into();
        }
        let (id, dirty) = self.revision.split_once('+').map_or((self.revision.as_str(), false), |(id, _)| (id, true));
        let date = git(&["log", "-1", "--format=%cs", id]).unwrap_or_default();
        format!(
            "{} at `{id}`{}{}",
            FIGURE_SOURCES.map(|d| format!("{d}/")).join(", "),
            if date.is_empty() { String::new() } else { format!(" ({date})") },
            if dirty { ", with uncommitted changes" } else { "" }
        )
    }
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(crate::workspace_root()).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The last commit that changed [`FIGURE_SOURCES`] (12 hex digits), with `+uncommitted` when
/// the working tree changes them further; `unknown` outside a git checkout.
pub fn sources_revision() -> String {
    let mut args = vec!["log", "-1", "--format=%h", "--abbrev=12", "--"];
    args.extend(FIGURE_SOURCES);
    let Some(id) = git(&args).filter(|s| !s.is_empty()) else { return "unknown".into() };
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(FIGURE_SOURCES);
    match git(&status) {
        Some(s) if s.is_empty() => id,
        _ => format!("{id}+uncommitted"),
    }
}

/// FNV-1a over the file's bytes, 16 hex digits: names a binary, not a security hash.
pub fn file_hash(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    Ok(format!("{h:016x}"))
}

/// A log as saved: the provenance line, the run's output, its exit status.
pub fn saved_log(p: &Provenance, output: &str, status: i32) -> String {
    let mut s = p.line();
    s.push('\n');
    s.push_str(output);
    if !output.ends_with('\n') && !output.is_empty() {
        s.push('\n');
    }
    let _ = writeln!(s, "{STATUS}{status}");
    s
}

/// The exit status a saved log ends with, if it has one.
pub fn saved_status(text: &str) -> Option<i32> {
    text.lines().rev().find_map(|l| l.strip_prefix(STATUS)?.trim().parse().ok())
}

/// The exit status of a run that finished: QEMU's `isa-debug-exit` with the kernel's success
/// code ((0x10 << 1) | 1), or the simulator's 0.
pub fn success_status(mode: Mode) -> i32 {
    if matches!(mode, Mode::Sim(_)) { 0 } else { 33 }
}

/// Whether a saved log is a finished run: its status says so, or (a log saved before logs
/// carried a status) the kernel's exit record does.
pub fn finished(text: &str, mode: Mode) -> bool {
    match saved_status(text) {
        Some(s) => s == success_status(mode),
        None => matches!(mode, Mode::Sim(_)) || Log::parse(text).records("exit").any(|r| r.get("code") == Some("success")),
    }
}

/// The provenance shared by every log of a set, or why there is none: logs of two revisions
/// or binaries do not make one report.
pub fn common_provenance<'a>(logs: impl IntoIterator<Item = (&'a Path, Provenance)>) -> Result<Provenance, String> {
    let mut seen: Vec<(Provenance, &Path)> = Vec::new();
    for (path, p) in logs {
        if !seen.iter().any(|(q, _)| *q == p) {
            seen.push((p, path));
        }
    }
    match seen.len() {
        0 => Ok(Provenance::default()),
        1 => Ok(seen.remove(0).0),
        _ => Err(format!(
            "xtask: these logs come from {} different revisions or binaries, and one report holds one: {}",
            seen.len(),
            seen.iter()
                .map(|(p, path)| format!("revision {} binary {} (e.g. {})", or_unknown(&p.revision), or_unknown(&p.binary), path.display()))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "unknown" } else { s }
}

/// A string as one shell word.
pub fn shell_word(s: &str) -> String {
    crate::qemu::shell_quote(s)
}

/// Writes the job list of `spec`'s `form` into `jobs`: one line per run, each `cd` into `dir`
/// (where the binary is copied, so the directory holds all a job needs but QEMU), running
/// the cell and writing its log under the name `--from` reads. Returns the number of jobs.
pub fn write_jobs(spec: &Spec, form: &Form, runner: &Runner, mode: Mode, dir: &Path, jobs: &mut String) -> Result<usize, String> {
    write_cell_jobs(spec, &spec.variants, form, runner, mode, dir, jobs)
}

/// [`write_jobs`] of these variants (a sweep's).
pub fn write_cell_jobs(spec: &Spec, variants: &[Variant], form: &Form, runner: &Runner, mode: Mode, dir: &Path, jobs: &mut String) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (binary, copied) = match runner {
        Runner::Qemu { elf, .. } => (elf.clone(), dir.join("fairway-kernel")),
        Runner::Sim { bin, .. } => (bin.clone(), dir.join("fairway-sim")),
    };
    let prov = Provenance::of(&binary)?;
    if !copied.exists() {
        // A copy (a later build must not change what the jobs run); a sweep's grid cell, below
        // the run's directory, links to the run's copy instead of holding its own.
        let name = copied.file_name().expect("a file name");
        match dir.ancestors().skip(1).take(3).map(|d| d.join(name)).find(|c| c.is_file()) {
            Some(shared) => std::os::unix::fs::symlink(&shared, &copied).map_err(|e| format!("{} -> {}: {e}", shared.display(), copied.display()))?,
            None => {
                std::fs::copy(&binary, &copied).map_err(|e| format!("{} -> {}: {e}", binary.display(), copied.display()))?;
            }
        }
    }
    let mut n = 0;
    for pt in form.points {
        let (workload, params) = point_params(spec, form, pt);
        for run in 0..mode.boots() {
            for (vi, v) in variants.iter().enumerate() {
                let line = super::run_cmdline(&cmdline(workload, &params, v.append), mode, run);
                let command = match runner {
                    Runner::Qemu { qemu, .. } => {
                        let mut cfg = crate::qemu::QemuConfig::new(qemu.clone(), copied.clone());
                        cfg.smp = v.smp(form).into();
                        cfg.icount = mode.icount();
                        cfg.append = line;
                        let args: Vec<String> = cfg.args()?.iter().map(|a| shell_word(a)).collect();
                        format!("timeout {} {} {}", form.timeout_s.max(1), shell_word(&qemu.to_string_lossy()), args.join(" "))
                    }
                    Runner::Sim { hw, .. } => {
                        let hw = hw.as_ref().map(|h| format!("--hw {} ", shell_word(h))).unwrap_or_default();
                        let extra: String = v.sim_args.split_whitespace().map(|a| format!("{} ", shell_word(a))).collect();
                        format!("./fairway-sim --machine {} --seed {run} {hw}{extra}-- {}", shell_word(v.smp(form)), shell_word(&line))
                    }
                };
                let _ = writeln!(
                    jobs,
                    "cd {} && {{ echo {}; {command}; echo \"{STATUS}$?\"; }} > {} 2>&1",
                    shell_word(&dir.to_string_lossy()),
                    shell_word(&prov.line()),
                    shell_word(&log_name(pt, vi, mode, run))
                );
                n += 1;
            }
        }
    }
    Ok(n)
}

/// The head of a job list: what it is and how to run and read it.
pub fn jobs_header(n: usize, dirs: &[PathBuf], read_back: &str) -> String {
    format!(
        "# {n} runs, one shell command per line; each writes its log into {}.\n\
         # Run them anywhere that sees that directory at that path: `parallel -j N < FILE` (GNU parallel), `grep -v '^#' FILE | xargs -d '\\n' -P N -n 1 sh -c`,\n\
         # or a Slurm array (`sbatch --array=1-{n}` running `sed -n \"$((SLURM_ARRAY_TASK_ID + {}))p\" FILE | sh`).\n\
         # Then read the logs: {read_back}\n",
        dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" and "),
        JOBS_HEADER_LINES
    )
}

/// The comment lines [`jobs_header`] writes before the first job.
pub const JOBS_HEADER_LINES: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_log_names_what_ran_it_and_how_it_ended() {
        let p = Provenance { revision: "0123456789ab".into(), binary: "feedfacecafebeef".into() };
        let text = saved_log(&p, "fairway booting\n@fw exit status=33 code=success", 33);
        assert!(text.starts_with("@xtask provenance revision=0123456789ab binary=feedfacecafebeef\nfairway booting\n"));
        assert_eq!(Provenance::parse(&text), Some(p));
        assert_eq!(saved_status(&text), Some(33));
        assert!(finished(&text, Mode::Icount) && !finished(&text, Mode::Sim(3)));
        assert!(finished(&saved_log(&Provenance::default(), "sim: ...", 0), Mode::Sim(1)));
        // a log saved before logs carried a status: the kernel's exit record decides
        assert!(finished("@fw exit status=33 code=success\n", Mode::Icount));
        assert!(!finished("@fw exit status=35 code=failure\n", Mode::Icount));
        assert_eq!(Provenance::parse("no header"), None);
    }

    #[test]
    fn logs_of_two_revisions_do_not_make_one_report() {
        let a = Provenance { revision: "aaa".into(), binary: "1".into() };
        let b = Provenance { revision: "bbb".into(), binary: "1".into() };
        let (pa, pb) = (Path::new("/x/a.log"), Path::new("/y/b.log"));
        assert_eq!(common_provenance([(pa, a.clone()), (pa, a.clone())]).unwrap(), a);
        let e = common_provenance([(pa, a.clone()), (pb, b)]).unwrap_err();
        assert!(e.contains("2 different revisions") && e.contains("revision aaa") && e.contains("revision bbb") && e.contains("/y/b.log"), "{e}");
        // another binary of the same revision (uncommitted changes) is another run too
        let c = Provenance { binary: "2".into(), ..a.clone() };
        assert!(common_provenance([(pa, a), (pb, c)]).is_err());
    }

    #[test]
    fn files_hash_by_content() {
        let dir = std::env::temp_dir().join(format!("fairway-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, b"kernel").unwrap();
        std::fs::write(&b, b"kernel").unwrap();
        assert_eq!(file_hash(&a).unwrap(), file_hash(&b).unwrap());
        std::fs::write(&b, b"kernel2").unwrap();
        assert_ne!(file_hash(&a).unwrap(), file_hash(&b).unwrap());
        assert_eq!(file_hash(&a).unwrap().len(), 16);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
