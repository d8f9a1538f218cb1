//! `--summary` of `cargo xtask run` and `cargo xtask sim`: the end-of-run statistics of a machine
//! of hundreds of CPUs, one table per record instead of one line per CPU.
//!
//! The kernel prints most of its statistics per CPU (`@fw schedstat cpu=N ...`, `@fw newidle_sd
//! cpu=N level=SMT ...`, Linux's `/proc/schedstat` layout, the `sched_debug`-style domain
//! listing): schbench on the 240 CPUs of `dd-2024` prints 7,230 lines, 7,000 of them per CPU. With
//! `--summary` CPU 0's lines still print as they come (an example of each record, in place), the
//! other CPUs' are held back, and at the end each record gets one table: per numeric field the sum
//! over the CPUs, the smallest value and its CPU, the median and the largest value and its CPU;
//! the topology record (`@fw cpu`) gets how many distinct values each field takes. Nothing the
//! kernel prints is parsed differently elsewhere: this only changes what the terminal shows.
//!
//! A record is `(kind, the values of its key fields)`, the key fields being those that name a
//! part of a CPU (`level=` of a sched domain). When a CPU prints the same record twice, its last
//! line counts (the end-of-run figure).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Fields that name which part of a CPU a line is about rather than measure it.
const KEY_FIELDS: &[&str] = &["level"];

/// One record's lines, per CPU: its numeric fields in first-seen order, and other fields' values.
#[derive(Default)]
struct Record {
    fields: Vec<String>,
    /// cpu -> (field -> value); a BTreeMap so that ties go to the lowest CPU.
    cpus: BTreeMap<u32, BTreeMap<String, Value>>,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Value {
    Num(i128),
    Text(String),
}

/// Which CPU a line of a multi-line per-CPU block belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    /// Linux's schedstat layout: `cpuN ...` then its `domainN ...` lines.
    Schedstat(u32),
    /// `CPUN attaching sched-domain(s):` then its indented lines.
    Domains(u32),
}

/// The filter: [`PerCpuSummary::line`] for each line as it comes, [`PerCpuSummary::finish`] at
/// the end.
///
/// Invariant: every record in `records` holds at least one CPU; `held` counts the lines
/// `line` returned `false` for.
pub struct PerCpuSummary {
    records: BTreeMap<(String, Vec<(String, String)>), Record>,
    /// Records in the order they first appeared (the kernel's order).
    order: Vec<(String, Vec<(String, String)>)>,
    block: Block,
    held: usize,
}

impl Default for PerCpuSummary {
    fn default() -> Self {
        Self::new()
    }
}

impl PerCpuSummary {
    pub fn new() -> Self {
        PerCpuSummary { records: BTreeMap::new(), order: Vec::new(), block: Block::None, held: 0 }
    }

    /// Takes one output line; true when it should be printed now (not another CPU's).
    pub fn line(&mut self, line: &str) -> bool {
        let show = self.classify(line);
        if !show {
            self.held += 1;
        }
        show
    }

    fn classify(&mut self, line: &str) -> bool {
        if let Some(cpu) = self.per_cpu_record(line) {
            self.block = Block::None;
            return cpu == 0;
        }
        if let Some(cpu) = numbered(line, "cpu", " ") {
            self.block = Block::Schedstat(cpu);
            return cpu == 0;
        }
        if let Some(cpu) = numbered(line, "CPU", " attaching") {
            self.block = Block::Domains(cpu);
            return cpu == 0;
        }
        match self.block {
            Block::Schedstat(cpu) if numbered(line, "domain", " ").is_some() => cpu == 0,
            Block::Domains(cpu) if line.starts_with([' ', '\t']) => cpu == 0,
            _ => {
                self.block = Block::None;
                true
            }
        }
    }

    /// Records `@fw KIND cpu=N ...` (and the topology's `@fw cpu id=N ...`); its CPU.
    fn per_cpu_record(&mut self, line: &str) -> Option<u32> {
        let rest = line.strip_prefix("@fw ")?;
        let mut words = rest.split_whitespace();
        let kind = words.next()?;
        let first = words.next()?;
        let cpu_field = if kind == "cpu" { "id=" } else { "cpu=" };
        let cpu: u32 = first.strip_prefix(cpu_field)?.parse().ok()?;
        let mut key = Vec::new();
        let mut values = Vec::new();
        for w in words {
            let Some((k, v)) = w.split_once('=') else { continue };
            if KEY_FIELDS.contains(&k) {
                key.push((k.to_string(), v.to_string()));
            } else {
                let v = match v.parse::<i128>() {
                    Ok(n) => Value::Num(n),
                    Err(_) => Value::Text(v.to_string()),
                };
                values.push((k.to_string(), v));
            }
        }
        let id = (kind.to_string(), key);
        if !self.records.contains_key(&id) {
            self.order.push(id.clone());
        }
        let rec = self.records.entry(id).or_default();
        let mine = rec.cpus.entry(cpu).or_default();
        mine.clear();
        for (k, v) in values {
            if !rec.fields.contains(&k) {
                rec.fields.push(k.clone());
            }
            mine.insert(k, v);
        }
        Some(cpu)
    }

    /// Lines held back so far.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.held
    }

    /// The tables, one per record, after a heading saying what was held back.
    pub fn finish(&self) -> String {
        let mut out = String::new();
        if self.order.is_empty() {
            return out;
        }
        let cpus = self.records.values().map(|r| r.cpus.len()).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "--summary: {} lines of CPUs other than 0 held back; per record, over the CPUs that printed it ({cpus} at most): the sum, the smallest (its CPU), the median, the largest (its CPU)",
            self.held
        );
        for id in &self.order {
            let rec = &self.records[id];
            let (kind, key) = id;
            let mut title = kind.clone();
            for (k, v) in key {
                let _ = write!(title, " {k}={v}");
            }
            let _ = writeln!(out, "\n{title} ({} CPUs)", rec.cpus.len());
            if kind == "cpu" {
                for f in &rec.fields {
                    let mut distinct: Vec<&Value> = rec.cpus.values().filter_map(|m| m.get(f)).collect();
                    distinct.sort();
                    distinct.dedup();
                    let _ = writeln!(out, "  {f:<28} {} distinct values", distinct.len());
                }
                continue;
            }
            let width = rec.fields.iter().map(|f| f.len()).max().unwrap_or(0).max(5);
            let stats: Vec<(&String, FieldStats)> = rec.fields.iter().map(|f| (f, field_stats(rec, f))).collect();
            if stats.iter().any(|(_, s)| matches!(s, FieldStats::Numeric { .. })) {
                let _ = writeln!(
                    out,
                    "  {:<width$} {:>18} {:>24} {:>16} {:>24}",
                    "field", "sum", "min (cpu)", "median", "max (cpu)"
                );
            }
            for (f, st) in stats {
                match st {
                    FieldStats::Numeric { sum, min, median, max } => {
                        let _ = writeln!(
                            out,
                            "  {f:<width$} {sum:>18} {:>24} {median:>16} {:>24}",
                            format!("{} ({})", min.0, min.1),
                            format!("{} ({})", max.0, max.1)
                        );
                    }
                    FieldStats::Text { distinct } => {
                        let _ = writeln!(out, "  {f:<width$} {distinct} distinct values (not numbers)");
                    }
                }
            }
        }
        out
    }
}

enum FieldStats {
    /// min and max with the lowest CPU that has them; median is the lower one (a CPU's value).
    Numeric { sum: i128, min: (i128, u32), median: i128, max: (i128, u32) },
    Text { distinct: usize },
}

fn field_stats(rec: &Record, f: &str) -> FieldStats {
    let mut nums: Vec<(i128, u32)> = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    for (&cpu, m) in &rec.cpus {
        match m.get(f) {
            Some(Value::Num(n)) => nums.push((*n, cpu)),
            Some(Value::Text(t)) => texts.push(t),
            None => {}
        }
    }
    if !texts.is_empty() || nums.is_empty() {
        let mut all: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
        all.extend(nums.iter().map(|(n, _)| n.to_string()));
        all.sort();
        all.dedup();
        return FieldStats::Text { distinct: all.len() };
    }
    let sum = nums.iter().map(|(n, _)| n).sum();
    // CPUs ascend in `nums`, so the first of equal values is the lowest CPU.
    let min = *nums.iter().min_by_key(|(n, _)| *n).expect("not empty");
    let max = nums.iter().fold(nums[0], |best, &x| if x.0 > best.0 { x } else { best });
    let mut sorted: Vec<i128> = nums.iter().map(|(n, _)| *n).collect();
    sorted.sort_unstable();
    let median = sorted[(sorted.len() - 1) / 2];
    FieldStats::Numeric { sum, min, median, max }
}

/// `N` of a line starting `{prefix}N{after}` (digits only between them).
fn numbered(line: &str, prefix: &str, after: &str) -> Option<u32> {
    let rest = line.strip_prefix(prefix)?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || !rest[digits..].starts_with(after) {
        return None;
    }
    rest[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> (Vec<String>, PerCpuSummary) {
        let mut s = PerCpuSummary::new();
        let shown = lines.iter().filter(|l| s.line(l)).map(|l| l.to_string()).collect();
        (shown, s)
    }

    #[test]
    fn other_cpus_lines_are_held_and_summed() {
        let (shown, s) = feed(&[
            "@fw boot ok",
            "@fw schedstat cpu=0 sched_count=7 run_delay=5",
            "@fw schedstat cpu=1 sched_count=3 run_delay=9",
            "@fw schedstat cpu=2 sched_count=20 run_delay=5",
            "@fw result workload=pipe value=3",
        ]);
        assert_eq!(shown, ["@fw boot ok", "@fw schedstat cpu=0 sched_count=7 run_delay=5", "@fw result workload=pipe value=3"]);
        assert_eq!(s.held(), 2);
        let t = s.finish();
        assert!(t.contains("schedstat (3 CPUs)"), "{t}");
        let row = t.lines().find(|l| l.trim_start().starts_with("sched_count")).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        // sum, min (cpu), median, max (cpu)
        assert_eq!(cols, ["sched_count", "30", "3", "(1)", "7", "20", "(2)"], "{row}");
        let row = t.lines().find(|l| l.trim_start().starts_with("run_delay")).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols, ["run_delay", "19", "5", "(0)", "5", "9", "(1)"], "ties go to the lowest CPU: {row}");
    }

    #[test]
    fn records_are_kept_apart_by_level_and_a_repeat_replaces() {
        let (_, s) = feed(&[
            "@fw newidle_sd cpu=0 level=SMT attempts=1",
            "@fw newidle_sd cpu=0 level=MC attempts=10",
            "@fw newidle_sd cpu=1 level=SMT attempts=2",
            "@fw newidle_sd cpu=1 level=MC attempts=20",
            "@fw newidle_sd cpu=1 level=MC attempts=30",
        ]);
        let t = s.finish();
        let smt = t.find("newidle_sd level=SMT (2 CPUs)").unwrap();
        let mc = t.find("newidle_sd level=MC (2 CPUs)").unwrap();
        assert!(smt < mc, "in the kernel's order: {t}");
        let mc_row = t[mc..].lines().find(|l| l.trim_start().starts_with("attempts")).unwrap();
        assert_eq!(mc_row.split_whitespace().nth(1), Some("40"), "CPU 1's last line counts: {t}");
    }

    #[test]
    fn linux_layout_and_domain_listing_blocks_follow_their_cpu() {
        let (shown, s) = feed(&[
            "version 17",
            "cpu0 0 0 7",
            "domain0 0003 3 3",
            "cpu1 0 0 1",
            "domain0 0003 1 1",
            "domain1 000f 1 1",
            "CPU0 attaching sched-domain(s):",
            " domain-0: span=0-1 level=SMT",
            "CPU1 attaching sched-domain(s):",
            " domain-0: span=0-1 level=SMT",
            "  groups: 1:{ span=1 }",
            "@fw done",
        ]);
        assert_eq!(
            shown,
            ["version 17", "cpu0 0 0 7", "domain0 0003 3 3", "CPU0 attaching sched-domain(s):", " domain-0: span=0-1 level=SMT", "@fw done"]
        );
        assert_eq!(s.held(), 6);
        assert!(s.finish().is_empty(), "no @fw per-CPU record, no table");
    }

    #[test]
    fn topology_and_text_fields_count_distinct_values() {
        let (_, s) = feed(&[
            "@fw cpu id=0 pkg=0 core=0",
            "@fw cpu id=1 pkg=0 core=1",
            "@fw cpu id=2 pkg=1 core=0",
            "@fw sd cpu=0 level=MC span=0-1 flags=A|B",
            "@fw sd cpu=2 level=MC span=2-3 flags=A|B",
        ]);
        let t = s.finish();
        let row = |f: &str| t.lines().find(|l| l.split_whitespace().next() == Some(f)).unwrap().split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
        assert_eq!(row("pkg"), "2 distinct values", "{t}");
        assert_eq!(row("core"), "2 distinct values", "{t}");
        assert_eq!(row("span"), "2 distinct values (not numbers)", "{t}");
        assert_eq!(row("flags"), "1 distinct values (not numbers)", "{t}");
    }

    #[test]
    fn lines_that_only_look_per_cpu_pass() {
        let (shown, s) = feed(&["@fw cpus_dropped reason=max_cpus", "cpuX 1", "CPU12345", "@fw hist cpu=x value=1"]);
        assert_eq!(shown.len(), 4);
        assert_eq!(s.held(), 0);
    }
}
