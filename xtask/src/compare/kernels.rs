//! The two sides' kernels of `compare`: a git revision's when `--base-rev`/`--new-rev` names
//! one (`revision.rs` builds it), else the working tree's; how the charts and notes name them.

use crate::revision::{self, Kernel, Revision};

/// The kernels of the two sides: a revision's when its side names one, else the working tree's
/// (built only when some side needs it).
pub fn side_kernels(base_rev: Option<&str>, new_rev: Option<&str>) -> Result<[Kernel; 2], String> {
    // Both resolved first: a misspelt revision is refused before anything is built.
    let revs = [
        base_rev.map(|r| Revision::resolve("--base-rev", r)).transpose()?,
        new_rev.map(|r| Revision::resolve("--new-rev", r)).transpose()?,
    ];
    let tree = match revs {
        [Some(_), Some(_)] => None,
        _ => Some(revision::working_tree(crate::cargo::build_kernel()?)),
    };
    let side = |r: &Option<Revision>| match r {
        Some(r) => r.kernel(),
        None => Ok(tree.clone().expect("the working tree is built when a side names no revision")),
    };
    Ok([side(&revs[0])?, side(&revs[1])?])
}

/// A note when `--base-rev`/`--new-rev` leave both sides on one commit's tree: the table then
/// compares the settings only.
pub fn same_kernel_note(kernels: &[Kernel; 2]) -> String {
    match (&kernels[0].tree_of, &kernels[1].tree_of) {
        (Some(a), Some(b)) if a == b => format!(
            "note: both kernels are built from commit {} (its code is the same either way), so only the settings differ\n",
            revision::short_id(a)
        ),
        _ => String::new(),
    }
}

/// How charts name a side: its settings, and with `--base-rev`/`--new-rev` its kernel too.
pub fn side_desc(settings: &str, kernel: &Kernel, by_revision: bool) -> String {
    if !by_revision {
        return settings.to_string();
    }
    let what = if settings.is_empty() { "(no extra settings)" } else { settings };
    format!("{what} on {}", kernel.short())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_name_the_kernel_only_when_a_side_names_a_revision() {
        let tree = Kernel {
            elf: "k".into(),
            label: "working tree (HEAD 0123456789ab)".into(),
            commit: None,
            source_root: "/ws".into(),
            tree_of: Some("0123456789abcdef".into()),
        };
        let rev = Kernel {
            elf: "r".into(),
            label: "0123456789ab subject".into(),
            commit: Some("0123456789abcdef".into()),
            source_root: "/ws/target/revs/0123456789abcdef/src".into(),
            tree_of: Some("0123456789abcdef".into()),
        };
        assert_eq!(side_desc("hz=100", &tree, false), "hz=100");
        assert_eq!(side_desc("", &tree, false), "", "the charts say (no extra settings) themselves");
        assert_eq!(side_desc("", &rev, true), "(no extra settings) on 0123456789ab");
        assert_eq!(side_desc("hz=100", &tree, true), "hz=100 on working tree");
        // a clean working tree at the revision's commit: the same kernel on both sides
        assert_eq!(
            same_kernel_note(&[rev.clone(), tree.clone()]),
            "note: both kernels are built from commit 0123456789ab (its code is the same either way), so only the settings differ\n"
        );
        let edited = Kernel { tree_of: None, ..tree.clone() };
        assert_eq!(same_kernel_note(&[rev.clone(), edited]), "", "uncommitted changes: another kernel");
        let other = Kernel { tree_of: Some("fedcba".into()), ..rev.clone() };
        assert_eq!(same_kernel_note(&[rev, other]), "");
    }
}
