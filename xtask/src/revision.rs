//! Kernels built from other git revisions, for `compare --base-rev / --new-rev`: the question a
//! scheduler patch raises ("is my change better than main?") is a comparison of two builds, as
//! mmtests' compare-kernels makes it, not of two command lines of one build.
//!
//! `bench`, `profile` and `trace` take `--rev REV` for the same reason: one revision's figures,
//! profile or trace, e.g. to give `profile --against` its before.
//!
//! A revision's kernel is built from its own tree, exported with `git archive` into
//! `target/revs/<commit>/src` (nothing in the checkout, its index or its worktree list changes),
//! by its own Cargo.toml and toolchain file, into `target/revs/target` (one target directory for
//! all revisions, so their dependencies are built once). The ELF is kept as
//! `target/revs/<commit>/fairway-kernel` and reused later: a commit's kernel never changes. The
//! tree is kept beside it (about 2 MB) because the ELF's DWARF names its files there. The file
//! keeps the name `fairway-kernel` because QEMU is given the kernel as `./fairway-kernel` from
//! its directory (see `qemu.rs`), so a revision's boots see the same multiboot command line as
//! the working tree's. Built from the same commit, the two kernels have the same code and data
//! sections (only the DWARF's paths differ) and print the same figures under `-icount`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cargo::{target_dir, KERNEL_PACKAGE, KERNEL_PROFILE};

/// A kernel to boot and what it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub elf: PathBuf,
    /// How reports name it: `working tree (HEAD 1a2b3c4d5e6f)`, `… with uncommitted changes`,
    /// or `1a2b3c4d5e6f <subject>`.
    pub label: String,
    /// The full commit id of a revision; `None` for the working tree.
    pub commit: Option<String>,
    /// The tree the kernel was built from: where its DWARF's project paths start.
    pub source_root: PathBuf,
    /// The commit whose tree it was built from, when that is exact: a revision's, or HEAD for a
    /// working tree without uncommitted changes to tracked files (untracked files aside).
    pub tree_of: Option<String>,
}

impl Kernel {
    /// The label's first word for charts: the commit's short id, or `working tree`.
    pub fn short(&self) -> String {
        match &self.commit {
            Some(c) => short_id(c).to_string(),
            None => "working tree".to_string(),
        }
    }
}

/// The 12-character short form of a commit id, as reports print it.
pub fn short_id(id: &str) -> &str {
    &id[..12.min(id.len())]
}

/// `git` in `dir`, its standard output on success, or why it failed.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(if err.is_empty() { format!("git {} failed ({})", args.join(" "), out.status) } else { err });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The full commit id `rev` names in the repository at `repo` (a branch, tag, `HEAD~2`, a short
/// id): anything that is not one commit is refused, naming `rev`.
pub fn resolve(repo: &Path, rev: &str) -> Result<String, String> {
    let refuse = |why: &str| format!("`{rev}` is not a commit of {} ({why})", repo.display());
    if rev.is_empty() || rev.starts_with('-') {
        return Err(refuse("give a branch, tag or commit id"));
    }
    let spec = format!("{rev}^{{commit}}");
    match git(repo, &["rev-parse", "--verify", "--quiet", &spec]) {
        Ok(id) if id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit()) => Ok(id),
        Ok(other) => Err(refuse(&format!("git rev-parse printed {other:?}"))),
        Err(e) if e.starts_with("cannot run git") => Err(refuse(&e)),
        Err(e) if e.contains("not a git repository") => Err(refuse("this checkout is not a git repository")),
        Err(_) => Err(refuse("git rev-parse knows no such commit")),
    }
}

/// `<short id> <subject>` of `commit`.
fn describe(repo: &Path, commit: &str) -> String {
    git(repo, &["log", "-1", "--format=%h %s", "--abbrev=12", commit]).unwrap_or_else(|_| short_id(commit).to_string())
}

/// Writes the tree of `commit` into `dest` (created; must not exist yet): `git archive`
/// unpacked by `tar`. The files get the time of the export, not the commit's (`tar -m`): every
/// revision builds in the one `target/revs/target`, where cargo keys a workspace crate the same
/// for every revision, so a source file dated at its commit looked older than another revision's
/// build of it and that build was reused.
pub fn export_tree(repo: &Path, commit: &str, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let mut archive = Command::new("git")
        .args(["archive", "--format=tar", commit])
        .current_dir(repo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git archive: {e}"))?;
    let tar = Command::new("tar")
        .args(["-x", "-m", "-f", "-", "-C"])
        .arg(dest)
        .stdin(archive.stdout.take().expect("piped"))
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    let git_out = archive.wait_with_output().map_err(|e| format!("git archive: {e}"))?;
    if !git_out.status.success() {
        return Err(format!("git archive {commit} failed: {}", String::from_utf8_lossy(&git_out.stderr).trim()));
    }
    if !tar.status.success() {
        return Err(format!("unpacking git archive {commit} failed: {}", String::from_utf8_lossy(&tar.stderr).trim()));
    }
    Ok(())
}

/// Where the kernel of `commit` is kept.
pub fn cached_elf(commit: &str) -> PathBuf {
    target_dir().join("revs").join(commit).join(KERNEL_PACKAGE)
}

/// Where the tree of `commit` is exported and built.
fn source_dir(commit: &str) -> PathBuf {
    target_dir().join("revs").join(commit).join("src")
}

/// The kernel of the working tree, built by [`crate::cargo::build_kernel`], with its label.
pub fn working_tree(elf: PathBuf) -> Kernel {
    let root = crate::workspace_root();
    let (label, tree_of) = match git(&root, &["rev-parse", "HEAD"]) {
        Ok(head) => {
            let short = short_id(&head);
            let dirty = git(&root, &["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
            match dirty {
                Ok(false) => (format!("working tree (HEAD {short})"), Some(head.clone())),
                _ => (format!("working tree (HEAD {short} with uncommitted changes)"), None),
            }
        }
        Err(_) => ("working tree".to_string(), None),
    };
    Kernel { elf, label, commit: None, source_root: root, tree_of }
}

/// A revision named by an option (`flag`, e.g. `--base-rev`), resolved to its commit: resolving
/// first refuses a misspelt name before anything is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    flag: String,
    rev: String,
    commit: String,
}

impl Revision {
    /// `rev` of this repository as [`resolve`] finds it; the error names `flag`.
    pub fn resolve(flag: &str, rev: &str) -> Result<Revision, String> {
        let commit = resolve(&crate::workspace_root(), rev).map_err(|e| format!("xtask: {flag} {e}"))?;
        Ok(Revision { flag: flag.to_string(), rev: rev.to_string(), commit })
    }

    /// Its kernel: reused from `target/revs/` when it was built before, otherwise exported and
    /// built (cargo's output goes to the terminal).
    pub fn kernel(&self) -> Result<Kernel, String> {
        let (flag, rev, commit) = (&self.flag, &self.rev, &self.commit);
        let root = crate::workspace_root();
        let label = describe(&root, commit);
        let (elf, src) = (cached_elf(commit), source_dir(commit));
        if elf.is_file() {
            eprintln!("xtask: {flag} {rev}: the kernel of {label}, built earlier ({})", elf.display());
            return Ok(Kernel { elf, label, tree_of: Some(commit.clone()), commit: Some(commit.clone()), source_root: src });
        }
        let revs = target_dir().join("revs");
        // A previous export or build that did not finish: start again from the commit.
        if src.exists() {
            std::fs::remove_dir_all(&src).map_err(|e| format!("xtask: cannot remove {}: {e}", src.display()))?;
        }
        eprintln!("xtask: {flag} {rev}: building the kernel of {label} in {}", src.display());
        export_tree(&root, commit, &src).map_err(|e| format!("xtask: {flag} {rev}: {e}"))?;
        let built = crate::cargo::build_kernel_in(&src, Some(&revs.join("target"))).map_err(|e| {
            format!(
                "xtask: {flag} {rev}: {label}: {e}; its tree is in {} (a revision from before the kernel was \
                 built as `cargo build --profile {KERNEL_PROFILE} -p {KERNEL_PACKAGE}` cannot be compared this way)",
                src.display()
            )
        })?;
        let dir = elf.parent().expect("cached_elf has a directory");
        std::fs::create_dir_all(dir).map_err(|e| format!("xtask: cannot create {}: {e}", dir.display()))?;
        // Copied under a temporary name and renamed, so a kept ELF is always a whole one.
        let partial = dir.join(format!("{KERNEL_PACKAGE}.partial"));
        std::fs::copy(&built, &partial)
            .and_then(|_| std::fs::rename(&partial, &elf))
            .map_err(|e| format!("xtask: cannot keep {} as {}: {e}", built.display(), elf.display()))?;
        eprintln!("xtask: {flag} {rev}: kept as {}", elf.display());
        Ok(Kernel { elf, label, tree_of: Some(commit.clone()), commit: Some(commit.clone()), source_root: src })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch repository with two commits of `file.txt` ("one", then "two"); returns its
    /// directory and the two commit ids.
    fn scratch_repo(name: &str) -> (PathBuf, String, String) {
        let dir = std::env::temp_dir().join(format!("fairway-revision-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let run = |args: &[&str]| git(&dir, args).unwrap();
        run(&["init", "-q"]);
        let commit = |text: &str| {
            std::fs::write(dir.join("file.txt"), text).unwrap();
            run(&["add", "file.txt"]);
            run(&["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", text]);
            run(&["rev-parse", "HEAD"])
        };
        let first = commit("one");
        let second = commit("two");
        (dir, first, second)
    }

    #[test]
    fn revisions_resolve_to_full_commit_ids_and_anything_else_is_named_and_refused() {
        let (dir, first, second) = scratch_repo("resolve");
        assert_eq!(resolve(&dir, "HEAD").unwrap(), second);
        assert_eq!(resolve(&dir, "HEAD~1").unwrap(), first);
        assert_eq!(resolve(&dir, &first[..8]).unwrap(), first);
        for bad in ["nosuchbranch", "HEAD~5", "", "--all"] {
            let e = resolve(&dir, bad).unwrap_err();
            assert!(e.starts_with(&format!("`{bad}` is not a commit of ")), "{e}");
        }
        // a tree is no commit
        let tree = git(&dir, &["rev-parse", "HEAD^{tree}"]).unwrap();
        assert!(resolve(&dir, &tree).unwrap_err().contains("no such commit"));
        let not_repo = std::env::temp_dir().join(format!("fairway-revision-none-{}", std::process::id()));
        std::fs::create_dir_all(&not_repo).unwrap();
        // (the temporary directory may itself sit inside a repository; only then does this hold)
        if git(&not_repo, &["rev-parse", "--git-dir"]).is_err() {
            assert!(resolve(&not_repo, "HEAD").unwrap_err().contains("not a git repository"));
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&not_repo);
    }

    #[test]
    fn an_exported_tree_is_the_commits_not_the_checkouts() {
        let (dir, first, _) = scratch_repo("export");
        // an uncommitted edit and an untracked file stay out of every export
        std::fs::write(dir.join("file.txt"), "edited").unwrap();
        std::fs::write(dir.join("untracked.txt"), "x").unwrap();
        let dest = dir.join("out");
        export_tree(&dir, &first, &dest).unwrap();
        assert_eq!(std::fs::read_to_string(dest.join("file.txt")).unwrap(), "one");
        assert!(!dest.join("untracked.txt").exists());
        assert!(!dest.join(".git").exists());
        // the files are dated at the export, not at the commit (here: 2001)
        let old = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "old"])
            .env("GIT_COMMITTER_DATE", "2001-01-01T00:00:00Z")
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(old.success());
        let before = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        export_tree(&dir, "HEAD", &dir.join("out3")).unwrap();
        let mtime = std::fs::metadata(dir.join("out3").join("file.txt")).unwrap().modified().unwrap();
        assert!(mtime >= before, "an exported file keeps its commit's date: {mtime:?}");
        let e = export_tree(&dir, "0123456789012345678901234567890123456789", &dir.join("out2")).unwrap_err();
        assert!(e.contains("git archive"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_revisions_kernel_keeps_the_kernels_file_name() {
        // QEMU is given `./fairway-kernel`: a revision's boots must see the same name
        let p = cached_elf("ab12");
        assert_eq!(p.file_name().unwrap(), KERNEL_PACKAGE);
        assert!(p.ends_with("revs/ab12/fairway-kernel"), "{}", p.display());
        assert_eq!(source_dir("ab12").parent(), p.parent(), "the tree beside its kernel");
    }
}
