//! Which QEMU jobs a run takes: the scenarios whose name contains the filter (the long ones
//! only with `--long`) and the experiments' quick forms (`experiment-NAME-quick` on QEMU,
//! `experiment-NAME-sim-quick` on the simulator) by the same filter.

use fairway_scenarios::Scenario;

/// What a filter selects.
pub struct Selection {
    pub scenarios: Vec<Scenario>,
    /// Long scenarios the filter matched but the run leaves out (without `--long`).
    pub long_left_out: usize,
    /// Whether any experiment's quick form matches the filter.
    pub experiments: bool,
}

/// The selection of `filter` from `all` scenarios and the experiments named `experiments`.
pub fn select(all: Vec<Scenario>, experiments: &[&str], filter: &str, long: bool) -> Selection {
    let long_left_out = if long { 0 } else { all.iter().filter(|s| s.long && s.name.contains(filter)).count() };
    let scenarios = all.into_iter().filter(|s| s.name.contains(filter) && (long || !s.long)).collect();
    let experiments = experiments
        .iter()
        .any(|e| format!("experiment-{e}-quick").contains(filter) || format!("experiment-{e}-sim-quick").contains(filter));
    Selection { scenarios, long_left_out, experiments }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairway_scenarios::BASE;

    #[test]
    fn the_filter_and_long_choose_the_jobs() {
        let all = || vec![Scenario { name: "smp-4", ..BASE }, Scenario { name: "smp-8-long", long: true, ..BASE }, Scenario { name: "topo", ..BASE }];
        let names = |s: &Selection| s.scenarios.iter().map(|s| s.name).collect::<Vec<_>>();
        let s = select(all(), &["avg-idle"], "smp-", false);
        assert_eq!((names(&s), s.long_left_out, s.experiments), (vec!["smp-4"], 1, false));
        let s = select(all(), &["avg-idle"], "smp-", true);
        assert_eq!((names(&s), s.long_left_out, s.experiments), (vec!["smp-4", "smp-8-long"], 0, false));
        let s = select(all(), &["avg-idle"], "", false);
        assert_eq!((names(&s), s.long_left_out, s.experiments), (vec!["smp-4", "topo"], 1, true));
        let s = select(all(), &["avg-idle"], "avg-idle-q", false);
        assert_eq!((names(&s).len(), s.experiments), (0, true));
        let s = select(all(), &["avg-idle"], "avg-idle-sim-q", false);
        assert_eq!((names(&s).len(), s.experiments), (0, true));
    }
}
