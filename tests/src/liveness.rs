//! The liveness table of docs/CONSOLE.md ("Liveness: every balancing and placement action,
//! proven by its effect") against the scenario list: every balancing and placement action has a
//! row, and every row names scenarios that exist, in which the action must act and must stay
//! quiet, unless it is on [`PENDING`] (its scenarios are not written yet), so that a mechanism
//! that goes quiet fails CI.

/// The actions the table must list, in its order.
pub const ACTIONS: [&str; 12] = [
    "newidle pull",
    "periodic pull, CPU_IDLE",
    "periodic pull, CPU_NOT_IDLE",
    "periodic pull, CPU_NEWLY_IDLE",
    "active balance push",
    "NOHZ idle balance",
    "wake_affine choice",
    "select_idle_sibling hit and scan depth",
    "misfit migration",
    "fork placement",
    "delayed dequeue and requeue",
    "capacity pressure",
];

/// The rows whose scenarios are still to be written (none now); their cells say `pending`. Strict both ways: a row here
/// that names scenarios, or a row not here that says `pending`, fails.
pub const PENDING: &[&str] = &[];

/// One row: action, count, effect, acts in, quiet in.
#[derive(Debug)]
pub struct Row {
    pub action: String,
    pub count: String,
    pub effect: String,
    pub acts: String,
    pub quiet: String,
}

/// The table's rows, from the text of docs/CONSOLE.md.
pub fn rows(doc: &str) -> Result<Vec<Row>, String> {
    let start = doc.find("## Liveness").ok_or("docs/CONSOLE.md has no `## Liveness` section")?;
    let section = &doc[start..];
    let section = match section[2..].find("\n## ") {
        Some(end) => &section[..end + 2],
        None => section,
    };
    let mut out = Vec::new();
    for line in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").map(str::trim).collect();
        if cells.first() == Some(&"action") || cells.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == '|')) {
            continue;
        }
        let [action, count, effect, acts, quiet] = cells[..] else {
            return Err(format!("liveness row `{line}`: expected 5 cells, got {}", cells.len()));
        };
        out.push(Row {
            action: action.into(),
            count: count.into(),
            effect: effect.into(),
            acts: acts.into(),
            quiet: quiet.into(),
        });
    }
    Ok(out)
}

/// The `` `names` `` in a cell.
pub fn names(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// Every problem with the table: rows missing, out of order or unknown; a pending row that
/// names scenarios or a row that is pending without being on the list; a scenario that does not
/// exist.
pub fn problems(doc: &str, scenarios: &[&str], pending: &[&str]) -> Vec<String> {
    let rows = match rows(doc) {
        Ok(r) => r,
        Err(e) => return vec![e],
    };
    let mut out = Vec::new();
    let got: Vec<&str> = rows.iter().map(|r| r.action.as_str()).collect();
    if got != ACTIONS {
        out.push(format!("the liveness table lists {got:?}, expected the actions {ACTIONS:?}"));
    }
    for r in &rows {
        let cells = [&r.count, &r.effect, &r.acts, &r.quiet];
        if pending.contains(&r.action.as_str()) {
            if r.acts != "pending" || r.quiet != "pending" {
                out.push(format!(
                    "`{}` is on the pending list but names scenarios (`{}` / `{}`): take it off the list",
                    r.action, r.acts, r.quiet
                ));
            }
            continue;
        }
        if cells.iter().any(|c| c.contains("pending")) {
            out.push(format!("`{}` says pending but is not on the pending list", r.action));
        }
        for (what, cell) in [("acts in", &r.acts), ("quiet in", &r.quiet)] {
            let n = names(cell);
            if n.is_empty() {
                out.push(format!("`{}`: no scenario in `{what}`", r.action));
            }
            for name in n {
                if !scenarios.contains(&name) {
                    out.push(format!("`{}` {what} `{name}`: no such scenario", r.action));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::all;

    const DOC: &str = include_str!("../../docs/CONSOLE.md");

    fn scenario_names() -> Vec<&'static str> {
        all().iter().map(|s| s.name).collect()
    }

    #[test]
    fn liveness_table_names_existing_scenarios() {
        let p = problems(DOC, &scenario_names(), PENDING);
        assert!(p.is_empty(), "{}", p.join("\n"));
    }

    #[test]
    fn liveness_table_test_can_fail() {
        let names = scenario_names();
        let row = "| wake_affine choice | `@fw domstat ttwu_move_affine=` |";
        assert!(DOC.contains(row));
        // a scenario renamed away, a row dropped, a pending row with a name, a row pending
        // without being on the list
        let renamed = DOC.replace("`balance-wake-affine-on-vs-off` (off)", "`balance-wake-affine-gone` (off)");
        assert!(problems(&renamed, &names, PENDING).iter().any(|p| p.contains("balance-wake-affine-gone")));
        let dropped: String = DOC.lines().filter(|l| !l.starts_with(row)).map(|l| format!("{l}\n")).collect();
        assert!(!problems(&dropped, &names, PENDING).is_empty());
        let mut pending = PENDING.to_vec();
        pending.push("wake_affine choice");
        assert!(problems(DOC, &names, &pending).iter().any(|p| p.contains("take it off")));
        let quiet = DOC.replace("`balance-wake-affine-on-vs-off` (off)", "pending");
        assert!(problems(&quiet, &names, PENDING).iter().any(|p| p.contains("not on the pending list")));
    }
}
