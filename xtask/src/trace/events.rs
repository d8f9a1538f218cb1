//! The scheduler events of a trace, read from the `@fw trace*` records (`Trace`), the run
//! intervals they make (`Slice`) and the Chrome/Perfetto JSON: what `cargo xtask trace` writes
//! and what `plot` draws. Below both, so the drawing does not import the command.

use std::collections::BTreeMap;

use fairway_scenarios::{Log, Record};
use serde_json::{json, Value};

/// One scheduler event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Switch { prev: u64, prev_state: String, next: u64 },
    Wakeup { pid: u64, target: u64 },
    /// `curr`: what the wakeup found running (`None` in logs from before the kernel said).
    Enqueue { pid: u64, preempt: bool, curr: Option<Running> },
    Migrate { pid: u64, from: u64, to: u64 },
    Tick,
    NewidleStart,
    NewidleEnd { pulled: u64 },
    AlbRequest { src: u64, dst: u64, idle: String },
}

/// The task an `enqueue` found running on its CPU, as the wakeup-preemption check saw it:
/// `eligible` and `protected` (RUN_TO_PARITY) are `None` when no fair entity ran (the idle
/// task, pid 0) or the running task was the wakee itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub pid: u64,
    pub eligible: Option<bool>,
    pub protected: Option<bool>,
}

/// A `0`/`1` flag of a trace record, or `-` for none.
fn flag(r: &Record, key: &str) -> Result<Option<bool>, String> {
    match r.field(key)? {
        "0" => Ok(Some(false)),
        "1" => Ok(Some(true)),
        "-" => Ok(None),
        other => Err(format!("`{r}`: {key}={other:?} is not 0, 1 or -")),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub cpu: u64,
    pub ts: u64,
    pub kind: Kind,
}

/// Everything a trace dump contains.
#[derive(Debug, Default)]
pub struct Trace {
    pub tasks: BTreeMap<u64, String>,
    /// cpu → (events, lost).
    pub cpus: BTreeMap<u64, (u64, u64)>,
    pub events: Vec<Event>,
}

impl Trace {
    pub fn parse(log: &Log) -> Result<Trace, String> {
        let mut t = Trace::default();
        for r in log.records("trace_task") {
            t.tasks.insert(r.num("pid")?, r.field("name")?.to_string());
        }
        for r in log.records("trace_cpu") {
            t.cpus.insert(r.num("cpu")?, (r.num("events")?, r.num("lost")?));
        }
        for r in log.records("trace") {
            let kind = match r.field("ev")? {
                "switch" => Kind::Switch {
                    prev: r.num("prev")?,
                    prev_state: r.field("prev_state")?.to_string(),
                    next: r.num("next")?,
                },
                "wakeup" => Kind::Wakeup { pid: r.num("pid")?, target: r.num("target")? },
                "enqueue" => Kind::Enqueue {
                    pid: r.num("pid")?,
                    preempt: match r.field("preempt")? {
                        "0" => false,
                        "1" => true,
                        other => return Err(format!("`{r}`: preempt={other:?} is not 0 or 1")),
                    },
                    curr: match r.field("curr") {
                        Err(_) => None,
                        Ok(_) => Some(Running {
                            pid: r.num("curr")?,
                            eligible: flag(r, "curr_eligible")?,
                            protected: flag(r, "curr_protected")?,
                        }),
                    },
                },
                "migrate" => Kind::Migrate { pid: r.num("pid")?, from: r.num("from")?, to: r.num("to")? },
                "tick" => Kind::Tick,
                "newidle_start" => Kind::NewidleStart,
                "newidle_end" => Kind::NewidleEnd { pulled: r.num("pulled")? },
                "alb_request" => Kind::AlbRequest { src: r.num("src")?, dst: r.num("dst")?, idle: r.field("idle")?.to_string() },
                other => return Err(format!("`{r}`: unknown trace event {other:?}")),
            };
            t.events.push(Event { cpu: r.num("cpu")?, ts: r.num("ts")?, kind });
        }
        t.events.sort_by_key(|e| (e.ts, e.cpu));
        Ok(t)
    }

    pub fn name(&self, pid: u64) -> String {
        match (pid, self.tasks.get(&pid)) {
            (0, _) => "idle".into(),
            (_, Some(n)) => n.clone(),
            (_, None) => format!("pid{pid}"),
        }
    }

    /// First and last timestamp.
    pub fn span(&self) -> (u64, u64) {
        (self.events.first().map_or(0, |e| e.ts), self.events.last().map_or(0, |e| e.ts))
    }
}

/// A task running on a CPU from `start` to `end` (ns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    pub cpu: u64,
    pub pid: u64,
    pub start: u64,
    pub end: u64,
}

/// The run intervals of every non-idle task: from a switch to it until the
/// next switch on that CPU. A CPU's first interval starts at its first
/// event (the ring may have lost what came before); the last ends at the
/// trace's last event.
pub fn slices(t: &Trace) -> Vec<Slice> {
    let end = t.span().1;
    let mut cur: BTreeMap<u64, (u64, u64)> = BTreeMap::new(); // cpu → (pid, since)
    let mut out = Vec::new();
    for e in &t.events {
        let first = !cur.contains_key(&e.cpu);
        if let Kind::Switch { prev, next, .. } = &e.kind {
            let (pid, since) = if first { (*prev, e.ts) } else { cur[&e.cpu] };
            if pid != 0 && e.ts > since {
                out.push(Slice { cpu: e.cpu, pid, start: since, end: e.ts });
            }
            cur.insert(e.cpu, (*next, e.ts));
        } else if first {
            cur.insert(e.cpu, (u64::MAX, e.ts)); // running something unknown
        }
    }
    for (cpu, (pid, since)) in cur {
        if pid != 0 && pid != u64::MAX && end > since {
            out.push(Slice { cpu, pid, start: since, end });
        }
    }
    // Intervals that began before a CPU's first switch ran an unknown task.
    out.retain(|s| s.pid != u64::MAX);
    out.sort_by_key(|s| (s.cpu, s.start));
    out
}

/// Per task: (enqueues, those with preempt=0).
pub fn enqueue_counts(t: &Trace) -> BTreeMap<u64, (u64, u64)> {
    let mut out: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for e in &t.events {
        if let Kind::Enqueue { pid, preempt, .. } = e.kind {
            let c = out.entry(pid).or_default();
            c.0 += 1;
            c.1 += u64::from(!preempt);
        }
    }
    out
}

/// Why wakeups preempted or not: over the `enqueue`s that found a fair task running (other
/// than the wakee), how many found it ineligible, eligible in its protected slice, or eligible
/// past it, and how many of each preempted. `None` when no enqueue says (an older log) or none
/// found a task running.
pub fn running_summary(t: &Trace) -> Option<String> {
    // [ineligible, eligible and protected, eligible and unprotected] x (enqueues, preempting)
    let mut n = [(0u64, 0u64); 3];
    for e in &t.events {
        if let Kind::Enqueue { preempt, curr: Some(Running { eligible: Some(el), protected: Some(pr), .. }), .. } = e.kind {
            let k = match (el, pr) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => 2,
            };
            n[k].0 += 1;
            n[k].1 += u64::from(preempt);
        }
    }
    let total: u64 = n.iter().map(|c| c.0).sum();
    if total == 0 {
        return None;
    }
    Some(format!(
        "wakeups that found a task running: {total}; it was ineligible in {} ({} preempted it), eligible \
         in its protected slice in {} ({} preempted it), eligible past it in {} ({} preempted it)",
        n[0].0, n[0].1, n[1].0, n[1].1, n[2].0, n[2].1
    ))
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The Chrome trace-event JSON that ui.perfetto.dev and chrome://tracing open.
pub fn chrome_json(t: &Trace) -> Value {
    let mut ev = vec![json!({"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "fairway"}})];
    for (&cpu, &(n, lost)) in &t.cpus {
        ev.push(json!({"ph": "M", "pid": 0, "tid": cpu, "name": "thread_name", "args": {"name": format!("CPU {cpu}")}}));
        ev.push(json!({"ph": "M", "pid": 0, "tid": cpu, "name": "thread_sort_index", "args": {"sort_index": cpu}}));
        ev.push(json!({"ph": "i", "s": "t", "pid": 0, "tid": cpu, "ts": us(t.span().0), "name": "trace ring",
                       "args": {"events": n, "lost": lost}}));
    }
    for s in slices(t) {
        ev.push(json!({"ph": "X", "pid": 0, "tid": s.cpu, "ts": us(s.start), "dur": us(s.end - s.start),
                       "name": t.name(s.pid), "cat": "run", "args": {"pid": s.pid}}));
    }
    for e in &t.events {
        let (name, args) = match &e.kind {
            Kind::Wakeup { pid, target } => (format!("wakeup {}", t.name(*pid)), json!({"pid": pid, "target_cpu": target})),
            Kind::Enqueue { pid, preempt, curr } => {
                let mut args = json!({"pid": pid, "preempt": preempt});
                if let Some(c) = curr {
                    args["curr"] = json!(c.pid);
                    args["curr_eligible"] = json!(c.eligible);
                    args["curr_protected"] = json!(c.protected);
                }
                (format!("enqueue {}{}", t.name(*pid), if *preempt { "" } else { " (no preempt)" }), args)
            }
            Kind::Migrate { pid, from, to } => (format!("migrate {}", t.name(*pid)), json!({"pid": pid, "from": from, "to": to})),
            Kind::NewidleStart => ("newidle_start".to_string(), json!({})),
            Kind::NewidleEnd { pulled } => ("newidle_end".to_string(), json!({"pulled": pulled})),
            Kind::AlbRequest { src, dst, idle } => {
                ("alb_request".to_string(), json!({"src": src, "dst": dst, "idle": idle}))
            }
            Kind::Switch { .. } | Kind::Tick => continue,
        };
        ev.push(json!({"ph": "i", "s": "t", "pid": 0, "tid": e.cpu, "ts": us(e.ts), "name": name, "cat": "sched", "args": args}));
    }
    json!({"traceEvents": ev, "displayTimeUnit": "ns"})
}
