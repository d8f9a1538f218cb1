//! `cargo xtask trace`: turns the `@fw trace*` lines of a `trace=1` boot into
//! (or a `fairway-sim` run's, `--engine sim --machine M`: the simulator runs
//! the same mechanism and prints the same records) a Chrome/Perfetto trace-event JSON (one thread per CPU, a slice per task
//! run interval, instants for wakeups, enqueues, migrations and newidle
//! balancing) and an SVG per-CPU timeline; `@fw hist` lines also give a
//! latency SVG.
//!
//! `wakeup` (on the waker's CPU, Linux's `sched_waking`) and `enqueue` (on the
//! target CPU, Linux's `sched_wakeup`) are both instants in the JSON; an
//! enqueue that did not ask its CPU to switch is named `enqueue TASK (no
//! preempt)`, so the wakeups that waited stand out. The SVG timeline marks no
//! instants (thousands of them would cover its 1400 pixels): it shows run
//! intervals only.

use std::path::PathBuf;

use fairway_scenarios::Log;

use crate::bench::{check_engine, cmdline, Boot, Engine, EngineArgs};

pub mod events;
pub use events::*;
use crate::workload_args::{BootArgs, RevArg};

#[derive(clap::Args)]
pub struct TraceArgs {
    /// Workload to boot with `trace=1` (not needed with --from).
    pub workload: Option<String>,
    /// Convert an existing serial log instead of booting.
    #[arg(long, conflicts_with = "rev")]
    pub from: Option<PathBuf>,
    // Not WorkloadArgs: the workload is optional here (--from boots nothing).
    #[command(flatten)]
    pub boot: BootArgs,
    /// Extra kernel command line (after `trace=1`).
    #[arg(long, default_value = "")]
    pub append: String,
    /// Deterministic instruction-counted time (-icount).
    #[arg(long)]
    pub icount: bool,
    /// `--engine sim --machine M`: trace a `fairway-sim` run instead of a QEMU boot.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output directory (default `target/trace/<timestamp>-<workload>`).
    #[arg(short = 'o', long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub kernel: RevArg,
}

pub fn trace(a: TraceArgs) -> Result<(), String> {
    let (log, name) = match (&a.from, &a.workload) {
        (Some(p), _) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            (Log::parse(&text), p.file_stem().map_or("log".into(), |s| s.to_string_lossy().into_owned()))
        }
        (None, Some(w)) => {
            check_engine(&a.engine, &a.boot.smp, a.icount, false, a.kernel.rev.is_some())?;
            if a.engine.jobs > 1 {
                return Err("xtask: a trace is one run; --jobs is bench's and compare's".into());
            }
            let boot = match (&a.engine.engine, &a.engine.machine) {
                (Engine::Sim, Some(m)) => Boot::simulator(m, a.engine.hw.as_deref())?,
                _ => Boot::prepare_at(&a.kernel, &a.boot.smp, a.icount, a.boot.timeout)?.0,
            };
            let line = cmdline(w, &a.boot.params, &format!("trace=1 {}", a.append));
            eprintln!("xtask: {}", boot.display(&line));
            let (rec, log) = boot.run(0, &line)?;
            eprintln!("xtask: {}", rec.exit);
            if !rec.ok {
                return Err(format!("xtask: the traced run failed: {}\n{}", rec.exit, log.stage_summary()));
            }
            (log, w.clone())
        }
        (None, None) => return Err("xtask trace: give a WORKLOAD or --from LOGFILE".into()),
    };
    let t = Trace::parse(&log)?;
    if t.events.is_empty() {
        return Err("xtask trace: the log has no `@fw trace` lines (was trace=1 given?)".into());
    }
    let dir = match a.out {
        Some(d) => d,
        None => crate::workspace_root().join("target/trace").join(format!("{}-{name}", crate::bench::timestamp())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if a.from.is_none() {
        std::fs::write(dir.join("serial.log"), log.raw()).map_err(|e| e.to_string())?;
    }
    let json = chrome_json(&t);
    std::fs::write(dir.join("trace.json"), serde_json::to_string(&json).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    crate::plot::timeline_svg(&dir.join("timeline.svg"), &t, &slices(&t))?;
    let hist = crate::results::hist(&log);
    if !hist.is_empty() {
        crate::plot::latency_svg(&dir.join("latency.svg"), &name, &hist)?;
    }
    for (cpu, (n, lost)) in &t.cpus {
        println!("CPU {cpu}: {n} events, {lost} lost");
    }
    for (pid, (n, waited)) in enqueue_counts(&t) {
        println!("{} [{pid}]: {n} enqueues, {waited} without preemption", t.name(pid));
    }
    if let Some(s) = running_summary(&t) {
        println!("{s}");
    }
    let (a0, b0) = t.span();
    println!("{} events over {:.3} ms, {} tasks", t.events.len(), (b0 - a0) as f64 / 1e6, t.tasks.len());
    println!("wrote {}/trace.json (open in https://ui.perfetto.dev), timeline.svg{}", dir.display(),
        if hist.is_empty() { "" } else { ", latency.svg" });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub const LOG: &str = "\
@fw trace_task pid=0 name=idle
@fw trace_task pid=5 name=pipe-a
@fw trace_task pid=6 name=pipe-b
@fw trace_cpu cpu=0 events=5 lost=0
@fw trace cpu=0 ts=1000 ev=switch prev=0 prev_state=R next=5
@fw trace cpu=0 ts=1500 ev=wakeup pid=6 target=1
@fw trace cpu=0 ts=2000 ev=switch prev=5 prev_state=S next=0
@fw trace cpu=0 ts=2100 ev=newidle_start
@fw trace cpu=0 ts=2200 ev=newidle_end pulled=0
@fw trace_cpu cpu=1 events=5 lost=2
@fw trace cpu=1 ts=1200 ev=tick
@fw trace cpu=1 ts=1550 ev=enqueue pid=6 preempt=1 curr=0 curr_eligible=- curr_protected=-
@fw trace cpu=1 ts=1600 ev=switch prev=0 prev_state=R next=6
@fw trace cpu=1 ts=1700 ev=migrate pid=5 from=0 to=1
@fw trace cpu=1 ts=1750 ev=enqueue pid=5 preempt=0
";

    #[test]
    fn parses_every_event_kind() {
        let t = Trace::parse(&Log::parse(LOG)).unwrap();
        assert_eq!(t.events.len(), 10);
        assert_eq!(t.cpus[&1], (5, 2));
        assert_eq!(t.name(6), "pipe-b");
        assert_eq!(t.name(9), "pid9");
        assert_eq!(t.events[0].kind, Kind::Switch { prev: 0, prev_state: "R".into(), next: 5 });
        assert!(t.events.iter().any(|e| e.kind == Kind::Migrate { pid: 5, from: 0, to: 1 }));
        let idle = Running { pid: 0, eligible: None, protected: None };
        assert!(t.events.iter().any(|e| e.cpu == 1 && e.kind == Kind::Enqueue { pid: 6, preempt: true, curr: Some(idle) }));
        // a line from before the kernel said what ran
        assert!(t.events.iter().any(|e| e.ts == 1750 && e.kind == Kind::Enqueue { pid: 5, preempt: false, curr: None }));
        assert_eq!(t.span(), (1000, 2200));
        assert!(Trace::parse(&Log::parse("@fw trace cpu=0 ts=1 ev=bogus")).is_err());
        assert!(Trace::parse(&Log::parse("@fw trace cpu=0 ts=1 ev=enqueue pid=3 preempt=2")).is_err());
        assert!(Trace::parse(&Log::parse("@fw trace cpu=0 ts=1 ev=enqueue pid=3")).is_err());
    }

    #[test]
    fn enqueues_are_counted_per_task_with_those_that_waited() {
        let t = Trace::parse(&Log::parse(LOG)).unwrap();
        let c = enqueue_counts(&t);
        assert_eq!(c.into_iter().collect::<Vec<_>>(), vec![(5, (1, 1)), (6, (1, 0))]);
    }

    #[test]
    fn slices_follow_switches_and_end_at_the_trace_end() {
        let t = Trace::parse(&Log::parse(LOG)).unwrap();
        assert_eq!(
            slices(&t),
            vec![Slice { cpu: 0, pid: 5, start: 1000, end: 2000 }, Slice { cpu: 1, pid: 6, start: 1600, end: 2200 }]
        );
    }

    #[test]
    fn chrome_json_has_threads_slices_and_instants() {
        let t = Trace::parse(&Log::parse(LOG)).unwrap();
        let j = chrome_json(&t);
        let ev = j["traceEvents"].as_array().unwrap();
        let of = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).collect::<Vec<_>>();
        let names: Vec<_> = of("M").iter().filter(|e| e["name"] == "thread_name").map(|e| e["args"]["name"].clone()).collect();
        assert_eq!(names, vec![json!("CPU 0"), json!("CPU 1")]);
        let x = of("X");
        assert_eq!(x.len(), 2);
        assert_eq!((x[0]["name"].as_str(), x[0]["ts"].as_f64(), x[0]["dur"].as_f64()), (Some("pipe-a"), Some(1.0), Some(1.0)));
        let inst: Vec<_> = of("i").iter().map(|e| e["name"].as_str().unwrap().to_string()).collect();
        for want in ["wakeup pipe-b", "migrate pipe-a", "newidle_start", "newidle_end"] {
            assert!(inst.iter().any(|n| n == want), "{want} missing from {inst:?}");
        }
        assert!(!inst.iter().any(|n| n.contains("tick")));
        // Enqueues: instants on the target CPU's track, the waiting one named apart.
        let enq: Vec<_> = of("i").into_iter().filter(|e| e["name"].as_str().unwrap().starts_with("enqueue")).collect();
        assert_eq!(enq.len(), 2);
        assert_eq!((enq[0]["name"].as_str(), enq[0]["tid"].as_u64(), enq[0]["ts"].as_f64()), (Some("enqueue pipe-b"), Some(1), Some(1.55)));
        assert_eq!(
            enq[0]["args"],
            json!({"pid": 6, "preempt": true, "curr": 0, "curr_eligible": null, "curr_protected": null}),
            "what it found running, when the log says"
        );
        assert_eq!(enq[1]["name"].as_str(), Some("enqueue pipe-a (no preempt)"));
        assert_eq!(enq[1]["args"], json!({"pid": 5, "preempt": false}));
    }

    #[test]
    fn running_summary_counts_each_case_and_its_preemptions() {
        let log = "@fw trace_task pid=5 name=a\n\
            @fw trace cpu=0 ts=1 ev=enqueue pid=5 preempt=1 curr=6 curr_eligible=0 curr_protected=0\n\
            @fw trace cpu=0 ts=2 ev=enqueue pid=5 preempt=1 curr=6 curr_eligible=0 curr_protected=1\n\
            @fw trace cpu=0 ts=3 ev=enqueue pid=5 preempt=0 curr=6 curr_eligible=1 curr_protected=1\n\
            @fw trace cpu=0 ts=4 ev=enqueue pid=5 preempt=1 curr=6 curr_eligible=1 curr_protected=0\n\
            @fw trace cpu=0 ts=5 ev=enqueue pid=5 preempt=1 curr=0 curr_eligible=- curr_protected=-\n";
        let t = Trace::parse(&Log::parse(log)).unwrap();
        assert_eq!(
            running_summary(&t).unwrap(),
            "wakeups that found a task running: 4; it was ineligible in 2 (2 preempted it), eligible in its \
             protected slice in 1 (0 preempted it), eligible past it in 1 (1 preempted it)"
        );
        // logs without the fields, or with nothing running, have no summary
        assert_eq!(running_summary(&Trace::parse(&Log::parse(LOG)).unwrap()), None);
        let bad = "@fw trace cpu=0 ts=1 ev=enqueue pid=5 preempt=1 curr=6 curr_eligible=yes curr_protected=0";
        assert!(Trace::parse(&Log::parse(bad)).unwrap_err().contains("curr_eligible=\"yes\" is not 0, 1 or -"));
    }

    /// A trace from the simulator (`--engine sim`): `fairway-sim`'s own body
    /// (`fairway_sim::workload::run`, in this process: the only test here that
    /// runs the mechanism) prints the kernel's records, this parser reads them,
    /// and they agree with the same run's schedstat counters and with what the
    /// pipe's inputs imply.
    #[test]
    fn a_simulator_trace_parses_and_agrees_with_its_counters() {
        const R: u64 = 100;
        let m = fairway_sim::machine("2", 0).unwrap();
        let run = fairway_sim::workload::run(&m, 0, &format!("workload=pipe,rounds={R},mode=cross trace=1"), false);
        assert!(run.passed && !run.bad_input && run.report.end == "finished", "{:?}", run.report.end);
        let log = Log::parse(&run.report.output.join("\n"));
        let t = Trace::parse(&log).unwrap();
        let pid = |name: &str| *t.tasks.iter().find(|(_, n)| n.as_str() == name).unwrap().0;
        let (a, b) = (pid("pipe-a"), pid("pipe-b"));
        for cpu in [0u64, 1] {
            let switches = t.events.iter().filter(|e| e.cpu == cpu && matches!(e.kind, Kind::Switch { .. })).count() as u64;
            let sched_count = log.records("schedstat").find(|r| r.num("cpu").unwrap() == cpu).unwrap().num("sched_count").unwrap();
            // Every schedule() of these CPUs switched: the trace has each one.
            assert_eq!(switches, sched_count, "CPU {cpu}");
            assert_eq!(t.cpus[&cpu].1, 0, "CPU {cpu} lost events");
        }
        // pipe-b (CPU 1) runs once per round from idle; pipe-a (CPU 0) once per
        // round plus its start, and init runs before it and after its join.
        let on = |cpu: u64, pid: u64| slices(&t).iter().filter(|s| s.cpu == cpu && s.pid == pid).count() as u64;
        assert_eq!((on(1, b), on(0, a), on(1, a), on(0, b)), (R, R + 1, 0, 0));
        let per_cpu = |cpu: u64| t.events.iter().filter(|e| e.cpu == cpu && matches!(e.kind, Kind::Switch { .. })).count() as u64;
        assert_eq!((per_cpu(0), per_cpu(1)), (2 * R + 4, 2 * R));
        // A `wakeup` is recorded by the waker's CPU, which counts it in its
        // `ttwu_count`: pipe-b wakes pipe-a once per round; pipe-a wakes
        // pipe-b once per round but the first (pipe-b had not slept yet), and
        // init when it exits.
        for cpu in [0u64, 1] {
            let wakeups = t.events.iter().filter(|e| e.cpu == cpu && matches!(e.kind, Kind::Wakeup { .. })).count() as u64;
            let ttwu = log.records("schedstat").find(|r| r.num("cpu").unwrap() == cpu).unwrap().num("ttwu_count").unwrap();
            assert_eq!((wakeups, ttwu), (R, R), "CPU {cpu}");
        }
        // The same picture as a QEMU trace's.
        let dir = std::env::temp_dir().join(format!("xtask-sim-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        crate::plot::timeline_svg(&dir.join("t.svg"), &t, &slices(&t)).unwrap();
        let svg = std::fs::read_to_string(dir.join("t.svg")).unwrap();
        assert!(svg.contains("pipe-a") && svg.contains("pipe-b") && svg.contains("CPU 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn svgs_render() {
        let t = Trace::parse(&Log::parse(LOG)).unwrap();
        let dir = std::env::temp_dir().join(format!("xtask-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        crate::plot::timeline_svg(&dir.join("t.svg"), &t, &slices(&t)).unwrap();
        let svg = std::fs::read_to_string(dir.join("t.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.contains("pipe-a") && svg.contains("CPU 1"));
        let log = Log::parse(
            "@fw hist workload=schbench kind=wakeup lo_us=3 hi_us=4 count=10\n\
             @fw hist workload=schbench kind=request lo_us=128 hi_us=144 count=4\n",
        );
        crate::plot::latency_svg(&dir.join("l.svg"), "schbench", &crate::results::hist(&log)).unwrap();
        let svg = std::fs::read_to_string(dir.join("l.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.contains("wakeup") && svg.contains("request"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
