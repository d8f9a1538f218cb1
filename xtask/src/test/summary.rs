//! The closing time summary of `cargo xtask test`: the phases and the slowest jobs.

use super::pool::Verdict;

/// The closing time summary: where the run's wall time went, phase by phase, and the slowest
/// `n` jobs (their own wall time; two run at once, so they add up to about twice the phase).
pub fn time_summary(phases: &[(&str, f64)], verdicts: &[Verdict], n: usize) -> String {
    let mut r = String::from("time:");
    for (i, (what, secs)) in phases.iter().enumerate() {
        r.push_str(&format!("{} {what} {secs:.1} s", if i == 0 { "" } else { "," }));
    }
    r.push('\n');
    let mut by_time: Vec<&Verdict> = verdicts.iter().filter(|v| v.secs > 0.0).collect();
    by_time.sort_by(|a, b| b.secs.total_cmp(&a.secs));
    if !by_time.is_empty() {
        let total: f64 = by_time.iter().map(|v| v.secs).sum();
        r.push_str(&format!(
            "slowest {} of {} QEMU jobs ({total:.1} s of wall time in all):",
            n.min(by_time.len()),
            by_time.len()
        ));
        for v in by_time.iter().take(n) {
            r.push_str(&format!(" {} {:.1} s;", v.name, v.secs));
        }
        r.pop();
        r.push('\n');
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_summary_names_the_phases_and_the_slowest() {
        let v = |name, secs| Verdict { name, passed: true, report: String::new(), secs };
        let vs = [v("quick", 1.0), v("slow", 30.0), v("not-run", 0.0), v("middle", 12.5)];
        let s = time_summary(&[("host tests (build and run)", 100.0), ("kernel build", 24.31)], &vs, 2);
        assert_eq!(
            s,
            "time: host tests (build and run) 100.0 s, kernel build 24.3 s\n\
             slowest 2 of 3 QEMU jobs (43.5 s of wall time in all): slow 30.0 s; middle 12.5 s\n"
        );
        assert_eq!(time_summary(&[("kernel build", 1.0)], &[], 10), "time: kernel build 1.0 s\n");
    }
}
