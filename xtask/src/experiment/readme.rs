//! `cargo xtask experiment verdicts [--write]`: the README's table of the experiments' verdicts,
//! read from the reports in `docs/experiments/` as they stand (each part's revision, its claims'
//! verdicts with their intervals, each map's verdicts), so that regenerating the reports and then
//! this table leaves no figure in the README that the reports do not hold. Without `--write` the
//! table is printed; with it, the README's generated block [`ID`] is replaced, through the
//! generated blocks of the documentation (`fairway_scenarios::docs`), as `cargo xtask benchmarks
//! --write` replaces its tables.

use std::fmt::Write as _;
use std::path::Path;

use fairway_scenarios::docs;

use super::report::part_revision;
use super::sim::SIM_MARK;

/// The generated block of README.md that holds the table, and the command its marker names.
pub const ID: &str = "experiments-verdicts";
pub const COMMAND: &str = "cargo xtask experiment verdicts --write";

/// One row of a report's claims table: claim, point, runs, effect with interval, claimed, verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimLine {
    pub claim: String,
    pub point: String,
    pub runs: String,
    pub effect: String,
    pub claimed: String,
    pub verdict: String,
}

/// The claims table of one part of a report (the rows after the header
/// `| claim | point | baseline → variant | ...`, up to the first line that is not a row).
pub fn claim_lines(part: &str) -> Vec<ClaimLine> {
    let mut out = Vec::new();
    let mut lines = part.lines().skip_while(|l| !l.starts_with("| claim | point |")).skip(2);
    for l in lines.by_ref() {
        if !l.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
        if cells.len() != 7 {
            continue;
        }
        out.push(ClaimLine {
            claim: cells[0].into(),
            point: cells[1].into(),
            runs: cells[3].into(),
            effect: cells[4].into(),
            claimed: cells[5].into(),
            verdict: cells[6].trim_matches('*').into(),
        });
    }
    out
}

/// Each map of a report's part: its claim and how many grid points gave each verdict, with the
/// runs per grid point (from the map's line and table, `sweep.rs`).
pub fn map_lines(part: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lines: Vec<&str> = part.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix('"') else { continue };
        let Some((claim, tail)) = rest.split_once("\" over ") else { continue };
        let Some(runs) = tail.split_once(" run(s) per cell").map(|(a, _)| a.rsplit('(').next().unwrap_or(a).to_string()) else { continue };
        let axes = tail.split_once(": verdict").map_or(tail, |(a, _)| a);
        let mut counts: Vec<(String, usize)> = Vec::new();
        let mut total = 0;
        for row in lines[i + 1..].iter().skip_while(|r| !r.starts_with("| ")).skip(2).take_while(|r| r.starts_with("| ")) {
            for cell in row.trim_matches('|').split(" | ").skip(1) {
                let cell = cell.trim();
                let verdict = ["reproduced", "opposite", "no effect", "inconclusive"].into_iter().find(|v| cell.starts_with(v)).unwrap_or("did not finish");
                total += 1;
                match counts.iter_mut().find(|(v, _)| v == verdict) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((verdict.to_string(), 1)),
                }
            }
        }
        let counted: Vec<String> = counts.iter().map(|(v, n)| format!("*{v}* at {n}")).collect();
        out.push(format!("\"{claim}\" over {axes}: {} of {total} grid points ({runs} runs each)", counted.join(", ")));
    }
    out
}

/// One part's verdicts in a table cell: per claim line its verdict, effect and the claim's size.
fn verdict_cell(rows: &[ClaimLine]) -> String {
    if rows.is_empty() {
        return "no run at the report's revision".into();
    }
    rows.iter()
        .map(|r| format!("{} ({}, {} runs): *{}* {} (claimed {})", r.claim, r.point, r.runs, r.verdict, r.effect, r.claimed))
        .collect::<Vec<_>>()
        .join("; ")
        .replace('|', "\\|")
}

/// The table of every experiment's report in `dir`.
pub fn table(dir: &Path) -> Result<String, String> {
    let mut s = String::from(
        "| experiment | revision | verdicts, engine `sim` (the debate's machine and hardware profile) | where the claim holds (the map, `--sweep`) | verdicts, engine `qemu` (`-icount`, runs per cell at tick phases) |\n|---|---|---|---|---|\n",
    );
    for spec in super::all() {
        let path = dir.join(format!("{}.md", spec.name));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (qemu, sim) = text.find(SIM_MARK).map_or((text.as_str(), ""), |i| (&text[..i], &text[i..]));
        let rev = |part: &str| part_revision(part).map(|r| format!("`{r}`"));
        let revision = match (rev(qemu), rev(sim)) {
            (Some(a), Some(b)) if a == b => a,
            (Some(a), Some(b)) => format!("qemu {a}, sim {b}"),
            (Some(a), None) => format!("{a} (qemu only)"),
            (None, Some(b)) => format!("{b} (sim only)"),
            (None, None) => "none".into(),
        };
        let maps = map_lines(sim);
        let _ = writeln!(
            s,
            "| [`{n}`](docs/experiments/{n}.md) | {revision} | {} | {} | {} |",
            verdict_cell(&claim_lines(sim)),
            if maps.is_empty() { "no map".into() } else { maps.join("; ").replace('|', "\\|") },
            verdict_cell(&claim_lines(qemu)),
            n = spec.name,
        );
    }
    Ok(s)
}

/// `cargo xtask experiment verdicts [--write]`.
pub fn verdicts(write: bool) -> Result<(), String> {
    let root = crate::workspace_root();
    let t = table(&root.join("docs/experiments"))?;
    if !write {
        print!("{t}");
        return Ok(());
    }
    let path = root.join("README.md");
    let readme = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let new = docs::replace_block(&readme, ID, &t).map_err(|e| format!("xtask: {}: {e} (COMMAND: {COMMAND})", path.display()))?;
    std::fs::write(&path, new).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote the experiments' verdicts into {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PART: &str = "<!-- revision: 0123456789ab -->\n### Claims (sim, `x`)\n\nEach effect ...\n\n\
        | claim | point | baseline → variant | runs | effect [interval] | claimed | verdict |\n|---|---|---|---|---|---|---|\n\
        | wakeup p99 up | threads=2,workers=120 | 220.5 → 156.0 | 10+10 | -29.25% [-35.07, -22.61] | +24% (threshold 12%) | **opposite** |\n\
        | throughput within 1% | threads=2,workers=120 | 16727 → 16847 | 10+10 | +0.72% [+0.68, +0.76] | within ±1% | **reproduced** |\n\n\
        The claims, and where each fails:\n\n\
        \"wakeup p99 up\" over idle exit (idle_exit_ns) and IPI delivery (ipi_base_ns): verdict and effect at each grid point (10 run(s) per cell; 98.75% intervals).\n\n\
        | IPI delivery (ipi_base_ns) \\ idle exit (idle_exit_ns) | 0 | 5000 |\n|---|---|---|\n\
        | 0 | opposite -27.68 [-34.36, -15.53] | inconclusive -16.67 [-30.14, -9.85] |\n\
        | 2000 | inconclusive -33.49 [-39.66, -10.95] | - |\n";

    #[test]
    fn a_reports_claims_and_maps_are_read_row_by_row() {
        let rows = claim_lines(PART);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            ClaimLine {
                claim: "wakeup p99 up".into(),
                point: "threads=2,workers=120".into(),
                runs: "10+10".into(),
                effect: "-29.25% [-35.07, -22.61]".into(),
                claimed: "+24% (threshold 12%)".into(),
                verdict: "opposite".into()
            }
        );
        assert_eq!(rows[1].verdict, "reproduced");
        let maps = map_lines(PART);
        assert_eq!(
            maps,
            vec!["\"wakeup p99 up\" over idle exit (idle_exit_ns) and IPI delivery (ipi_base_ns): *opposite* at 1, *inconclusive* at 2, *did not finish* at 1 of 4 grid points (10 runs each)".to_string()]
        );
        assert!(verdict_cell(&rows).contains("*opposite* -29.25% [-35.07, -22.61] (claimed +24% (threshold 12%))"));
        assert_eq!(verdict_cell(&[]), "no run at the report's revision");
    }

    #[test]
    fn the_readme_block_is_replaced_between_its_marks_or_its_absence_is_named() {
        let (begin, end) = (format!("{}{COMMAND}`: {ID} -->", docs::GENERATED_BY), format!("{}{ID} -->", docs::END));
        let readme = format!("intro\n{begin}\nold table\n{end}\nafter\n");
        assert_eq!(docs::replace_block(&readme, ID, "new\n").unwrap(), format!("intro\n{begin}\nnew\n{end}\nafter\n"));
        assert!(docs::replace_block("no marks", ID, "t").unwrap_err().contains("no generated table `experiments-verdicts`"));
    }

    /// The README holds the table the reports give (checked: editing a verdict in the README
    /// by hand fails it).
    #[test]
    fn the_readme_table_is_the_reports() {
        let root = crate::workspace_root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        let t = table(&root.join("docs/experiments")).unwrap();
        let block = docs::blocks(&readme).unwrap().into_iter().find(|b| b.id == ID).expect("README.md has the experiments' verdicts block");
        assert_eq!(block.by, COMMAND);
        assert!(block.body == t, "README.md's experiments table is not the reports': run `cargo xtask experiment verdicts --write`");
    }
}
