//! The checks of the workload-parameter scenarios: `workload-params-malformed` (the kernel names
//! each bad `workload=` parameter and runs the defaults) and `workload-help` (the parameters the
//! kernel declares, `@fw workload_param`, are exactly those of docs/OPTIONS.md's workload table, with the
//! same defaults).

use std::collections::BTreeMap;

use crate::boot_checks::ensure;
use crate::log::Log;
use crate::scenarios::CheckResult;

/// An unknown key, a value that is no number and a word that is no choice, for `pipe`, and a
/// trailing comma, which is no parameter and must not drop the option.
pub const WORKLOAD_PARAMS_MALFORMED: &str = "workload=pipe,round=5,rounds=abc,mode=crosss,";

/// The complaints a correct kernel prints for [`WORKLOAD_PARAMS_MALFORMED`], each as a
/// `cmdline: ` line and an `@fw cmdline_problem` record (pieces each must contain).
const EXPECTED_COMPLAINTS: [&[&str]; 3] = [
    &["workload=pipe: unknown parameter \"round\"", "pipe takes rounds, mode", "ignored"],
    &["workload=pipe: rounds=\"abc\" is not a number from 1 to", "using rounds=100000"],
    &["workload=pipe: mode=\"crosss\" is not one of same, cross", "using mode=same"],
];

/// The kernel's complaints about its command line, both ways it prints them: the
/// `@fw cmdline_problem` records' messages and the `cmdline: ` lines.
fn complaints(log: &Log) -> (Vec<String>, Vec<&str>) {
    let records = log.records("cmdline_problem").map(|r| r.get("msg").unwrap_or("").to_string()).collect();
    (records, log.lines_starting_with("cmdline: ").collect())
}

/// Each bad parameter named once, on a `cmdline: ` line and in an `@fw cmdline_problem`
/// record, and nothing else complained about; the pipe then ran with its defaults (100000
/// rounds on one CPU) and passed its own checks.
pub fn check_workload_params_malformed(log: &Log) -> CheckResult {
    let (records, lines) = complaints(log);
    ensure(records.len() == EXPECTED_COMPLAINTS.len() && lines.len() == EXPECTED_COMPLAINTS.len(), || {
        format!(
            "expected {} complaints (records and lines), got records {records:#?} and lines {lines:#?}",
            EXPECTED_COMPLAINTS.len()
        )
    })?;
    for pieces in EXPECTED_COMPLAINTS {
        let holds = |s: &str| pieces.iter().all(|p| s.contains(p));
        ensure(records.iter().filter(|m| holds(m)).count() == 1, || {
            format!("expected one `@fw cmdline_problem` holding {pieces:?}, got {records:#?}")
        })?;
        ensure(lines.iter().filter(|l| holds(l)).count() == 1, || {
            format!("expected one `cmdline: ` line holding {pieces:?}, got {lines:#?}")
        })?;
    }
    let p = log.one("pipe")?;
    ensure(p.get("mode") == Some("same") && p.get("rounds") == Some("100000"), || {
        format!("`{p}`: expected the defaults mode=same rounds=100000")
    })?;
    let done = log.one("workload_done")?;
    ensure(done.get("ok") == Some("1"), || format!("`{done}`: expected ok=1"))
}

/// More threads than the kernel has stacks for (hackbench: 10 groups of 20 senders and 20
/// receivers, Linux hackbench's default), at -smp 2 and [`TOO_MANY_THREADS_MIB`], where the
/// stack arena is an eighth of the free memory: about 330 stacks.
pub const WORKLOAD_TOO_MANY_THREADS: &str = "workload=hackbench,groups=10,fds=20,loops=1";
/// The memory (`-m`, MiB) of `workload-too-many-threads`: small enough that the arena's share
/// holds fewer than 400 stacks, large enough that the share, not the floor, decides.
pub const TOO_MANY_THREADS_MIB: u32 = 128;
/// The same 400 threads at the default 512 MiB, where the arena is at its ceiling: they run
/// (`workload-400-threads`). One message per sender and receiver pair keeps it short under TCG.
pub const WORKLOAD_400_THREADS: &str =
    "sched_debug=1 workload=hackbench,groups=10,loops=1,datasize=100,fds=20,pipe_kb=64";
/// More heap than there is (ebizzy: 1024 chunks of 2^20 8-byte records, 8 GiB).
pub const WORKLOAD_TOO_MUCH_HEAP: &str = "workload=ebizzy,chunks=1024,records=1048576,ms=100";

/// A schbench request (100 us of sleep and 1 s of work) ten times the length of the run: no
/// request can end and be woken before the run does, so there could be no sample.
pub const WORKLOAD_SCHBENCH_NO_SAMPLE: &str = "workload=schbench,work_us=1000000,runtime_ms=100";

/// [`WORKLOAD_SCHBENCH_NO_SAMPLE`] is refused before any thread starts, naming the request's
/// parts and the run's length (computed from the command line: sleep_us's default is 100).
pub fn check_schbench_no_sample(log: &Log) -> CheckResult {
    refused(log, "schbench", &["sleep_us=100 + work_us=1000000", "runtime_ms=100", "no sample"])
}

/// A workload whose demand does not fit is refused before it starts anything: exactly one
/// complaint (line and record) naming its parameters, what it needs and `the workload does not
/// run`; no thread was started (no `cannot start thread` line, no thread counters) and the
/// workload reports `ok=0`.
fn refused(log: &Log, name: &str, pieces: &[&str]) -> CheckResult {
    let (records, lines) = complaints(log);
    let holds = |s: &str| pieces.iter().all(|p| s.contains(p)) && s.ends_with("the workload does not run");
    ensure(records.len() == 1 && holds(&records[0]), || {
        format!("expected one `@fw cmdline_problem` holding {pieces:?} and ending `the workload does not run`, got {records:#?}")
    })?;
    ensure(lines.len() == 1 && holds(lines[0]), || format!("expected one such `cmdline: ` line, got {lines:#?}"))?;
    ensure(!log.contains("cannot start thread"), || "a thread was tried before the refusal".to_string())?;
    ensure(log.records("taskstat").next().is_none(), || "threads ran (`@fw taskstat` lines)".to_string())?;
    let done = log.one("workload_done")?;
    ensure(done.get("name") == Some(name) && done.get("ok") == Some("0"), || {
        format!("`{done}`: expected name={name} ok=0")
    })
}

/// KiB of each stack slot in the arena (kernel/src/mem/stack.rs): 32 KiB and a guard page.
pub const STACK_SLOT_KIB: u64 = 36;
/// The arena's ceiling: a workload's `MAX_THREADS` (kernel/workloads/src/params.rs) and the
/// kernel's own init thread.
pub const STACK_CEILING: u64 = 1024 + 1;

/// The stack arena's size and the bound that decided it (`@fw stacks rule=`), as
/// kernel/src/mem/stack.rs's `Sizing::plan` computes them from the memory free when it is made
/// (`@fw stacks free_kib=`) on `cpus` CPUs: an eighth of that memory in slots, at least 256 and 4
/// per CPU, at most [`STACK_CEILING`], and never more than half of that memory.
pub fn stack_rule(free_kib: u64, cpus: u64) -> (u64, &'static str) {
    let (share, floor) = (stack_share(free_kib), stack_floor(cpus));
    let limit = free_kib / 2 / STACK_SLOT_KIB;
    let capped = share.min(STACK_CEILING);
    if capped.max(floor) > limit {
        (limit, "memory")
    } else if floor > capped {
        (floor, "floor")
    } else if share > STACK_CEILING {
        (STACK_CEILING, "ceiling")
    } else {
        (share, "share")
    }
}

/// Stacks an eighth of `free_kib` holds (the rule's share).
fn stack_share(free_kib: u64) -> u64 {
    free_kib / 8 / STACK_SLOT_KIB
}

/// 256 stacks and 4 per CPU (the rule's floor).
fn stack_floor(cpus: u64) -> u64 {
    256 + 4 * cpus
}

/// The `@fw stacks` record on `cpus` CPUs: its size is [`stack_rule`]'s for its own `free_kib=`,
/// decided by `rule` (each scenario picks its memory for one bound), every planned stack was
/// created (`wanted = slots`), its `share`, `floor` and `ceiling` fields are the rule's, and the
/// `thread stacks: ` line gives the same number. Returns (stacks, KiB free).
pub fn check_stacks(log: &Log, cpus: u64, rule: &str) -> Result<(u64, u64), String> {
    let r = log.one("stacks")?;
    let (slots, free_kib) = (r.num("slots")?, r.num("free_kib")?);
    let (want, want_rule) = stack_rule(free_kib, cpus);
    ensure(slots == want && r.get("rule") == Some(want_rule), || {
        format!("`{r}`: the rule gives {want} stacks (rule={want_rule}) for {free_kib} KiB free on {cpus} CPUs")
    })?;
    ensure(want_rule == rule, || format!("`{r}`: expected the {rule} bound to decide at this memory"))?;
    for (k, v) in [("wanted", slots), ("share", stack_share(free_kib)), ("floor", stack_floor(cpus)), ("ceiling", STACK_CEILING)] {
        ensure(r.num(k)? == v, || format!("`{r}`: expected {k}={v}"))?;
    }
    let line = format!("thread stacks: {slots} of 32 KiB, each below an unmapped guard page (");
    ensure(log.lines_starting_with(&line).count() == 1, || format!("expected one line starting `{line}`"))?;
    Ok((slots, free_kib))
}

/// At [`TOO_MANY_THREADS_MIB`] the arena (by the rule) holds fewer than the 400 threads and init,
/// and the refusal says how many are free and why: an eighth of the memory, and that more memory
/// gives more.
pub fn check_too_many_threads(log: &Log) -> CheckResult {
    let (slots, free_kib) = check_stacks(log, 2, "share")?;
    ensure(slots <= 400, || {
        format!("{slots} stacks hold 400 threads and init: `workload-too-many-threads` needs less memory than {TOO_MANY_THREADS_MIB} MiB")
    })?;
    let why = format!(
        "need 400 threads, but {} thread stacks are free ({slots} in all: an eighth of the {} MiB of memory free at boot; more memory gives more, up to {STACK_CEILING})",
        slots - 1,
        free_kib >> 10
    );
    refused(log, "hackbench", &["workload=hackbench: groups=10, fds=20, pipe_kb=64 ", &why])
}

/// Before the arena was sized from memory, 400 threads were refused at -smp 2 (264 stacks).
/// At the default 512 MiB the arena is at its ceiling, and the 400 threads run.
pub fn check_400_threads(log: &Log) -> CheckResult {
    check_stacks(log, 2, "ceiling")?;
    crate::workloads::check_hackbench(log, 2, WORKLOAD_400_THREADS)
}

/// The `@fw stacks` record and `thread stacks: ` line a correct kernel prints with `memory_mib`
/// MiB on `cpus` CPUs (the free memory a rough model of what is left after the kernel image and
/// the heap's quarter).
#[cfg(test)]
pub(crate) fn synthetic_stacks(memory_mib: u32, cpus: u64) -> String {
    let free_kib = (memory_mib as u64 * 1024 - 4392) / 4 * 3;
    let (slots, rule) = stack_rule(free_kib, cpus);
    format!(
        "thread stacks: {slots} of 32 KiB, each below an unmapped guard page (the {rule} bound)\n\
         @fw stacks slots={slots} wanted={slots} rule={rule} free_kib={free_kib} share={} floor={} ceiling={STACK_CEILING}\n",
        stack_share(free_kib),
        stack_floor(cpus)
    )
}

pub fn check_too_much_heap(log: &Log) -> CheckResult {
    refused(log, "ebizzy", &["workload=ebizzy: threads=2, chunks=1024, records=1048576 need 8404992 KiB of heap, but a workload may take "])
}

/// A workload's parameters as docs/OPTIONS.md's table gives them: key → the text in parentheses.
pub type Table = BTreeMap<String, BTreeMap<String, String>>;

/// docs/OPTIONS.md's "Workloads" table: one row per workload, `` | `NAME` | `key` (default), ... | ``.
pub fn readme_workloads(readme: &str) -> Result<Table, String> {
    let section = readme
        .split("## Workloads")
        .nth(1)
        .ok_or("docs/OPTIONS.md has no `## Workloads` section")?;
    let mut table = Table::new();
    // the header row and the separator come first
    let rows = section.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).skip(2);
    for line in rows {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(name), Some(params)) = (cells.get(1), cells.get(2)) else { continue };
        let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) else { continue };
        let mut keys = BTreeMap::new();
        if *params != "—" {
            for item in params.split("), ") {
                let item = item.trim_end_matches(')');
                let (key, default) = item
                    .split_once(" (")
                    .ok_or_else(|| format!("docs/OPTIONS.md row `{name}`: `{item}` is not `key` (default)"))?;
                keys.insert(key.trim_matches('`').to_string(), default.replace('`', ""));
            }
        }
        table.insert(name.to_string(), keys);
    }
    if table.is_empty() {
        return Err("docs/OPTIONS.md's `## Workloads` section has no table rows".into());
    }
    Ok(table)
}

/// The kernel's `@fw workload_param` records and docs/OPTIONS.md's table name the same workloads, the
/// same keys for each, and the same defaults (its text in parentheses starts with the
/// kernel's default, e.g. `same or cross` for `same`, `one per CPU` for `one_per_CPU`).
pub fn check_workload_help(log: &Log) -> CheckResult {
    check_help_against(log, include_str!("../../docs/OPTIONS.md"))
}

pub(crate) fn check_help_against(log: &Log, readme: &str) -> CheckResult {
    let readme = readme_workloads(readme)?;
    let mut kernel = Table::new();
    for r in log.records("workload_param") {
        let (w, k, d) = (r.field("workload")?, r.field("key")?, r.field("default")?);
        kernel.entry(w.to_string()).or_default().insert(k.to_string(), d.replace('_', " "));
    }
    let done = log.one("workload_done")?;
    ensure(done.get("name") == Some("help") && done.get("ok") == Some("1"), || {
        format!("`{done}`: expected name=help ok=1")
    })?;
    let mut problems = Vec::new();
    for (w, keys) in &readme {
        // a workload without parameters prints no records
        let declared = kernel.get(w).cloned().unwrap_or_default();
        for (k, text) in keys {
            match declared.get(k) {
                None => problems.push(format!("docs/OPTIONS.md lists `{w}` parameter `{k}`, which the kernel does not declare")),
                Some(d) if !states_default(text, d) => {
                    problems.push(format!("`{w}` `{k}`: docs/OPTIONS.md says ({text}), the kernel's default is {d}"))
                }
                Some(_) => {}
            }
        }
        for k in declared.keys().filter(|k| !keys.contains_key(*k)) {
            problems.push(format!("the kernel's `{w}` takes `{k}`, which docs/OPTIONS.md's table does not list"));
        }
    }
    for w in kernel.keys().filter(|w| !readme.contains_key(*w)) {
        problems.push(format!("the kernel's workload `{w}` has no row in docs/OPTIONS.md's table"));
    }
    ensure(problems.is_empty(), || problems.join("\n"))
}

/// docs/OPTIONS.md's text in parentheses is `default` itself or begins with it and goes on after a space
/// or `;` (`same or cross`, `1; the last CPU if ...`), so `1000` does not pass for `100000`.
fn states_default(text: &str, default: &str) -> bool {
    text.strip_prefix(default).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ';']))
}

/// The log a correct kernel prints for `workload=help`: docs/OPTIONS.md's table as records.
#[cfg(test)]
pub(crate) fn synthetic_help(cpus: u32) -> String {
    let table = readme_workloads(include_str!("../../docs/OPTIONS.md")).unwrap();
    let mut out = format!("@fw stage name=sched\n@fw stage name=workload\n@fw workload name=help cpus={cpus}\n");
    for (w, keys) in table {
        for (k, text) in keys {
            let default = text.split([' ', ';']).next().unwrap_or("");
            let default = if text.starts_with("one per CPU") { "one_per_CPU".to_string() } else if text.contains(" per CPU") { text.replace(' ', "_") } else { default.to_string() };
            out += &format!("@fw workload_param workload={w} key={k} accepts=0..1 default={default}\n");
        }
    }
    // As kernel/workloads/src/lib.rs ends every workload: the deltas, the verdict, the totals.
    let stat = "yld_count=0 sched_count=0 sched_goidle=0 ttwu_count=0 ttwu_local=0 rq_cpu_time=0 \
                run_delay=0 pcount=0 ticks=11 timer_irqs=11 resched_ipis=0 wake_idle_without_ipi=0";
    for c in 0..cpus {
        out += &format!("@fw schedstat_delta cpu={c} {stat}\n");
    }
    out += "@fw workload_done name=help ok=1\n";
    for c in 0..cpus {
        out += &format!("@fw schedstat cpu={c} {stat}\n");
    }
    out += "@fw stage name=shutdown\n@fw exit status=0x10 code=success\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule against what the kernel printed at -smp 2 with -m 512, 128, 64, 24 and 16.
    #[test]
    fn stack_rule_matches_the_kernel() {
        assert_eq!(stack_rule(390592, 2), (1025, "ceiling"));
        assert_eq!(stack_rule(95680, 2), (332, "share"));
        assert_eq!(stack_rule(46528, 2), (264, "floor"));
        assert_eq!(stack_rule(12884, 2), (178, "memory"));
        assert_eq!(stack_rule(4692, 2), (65, "memory"));
        // more CPUs raise the floor, even above the ceiling (-smp 256: 1280)
        assert_eq!(stack_rule(46528, 64), (512, "floor"));
        assert_eq!(stack_rule(390592 * 4, 256), (1280, "floor"));
    }

    #[test]
    fn readme_table_parses_with_defaults() {
        let t = readme_workloads(include_str!("../../docs/OPTIONS.md")).unwrap();
        assert_eq!(t["pipe"]["rounds"], "100000");
        assert!(t["pipe"]["mode"].starts_with("same"));
        assert!(t["overflow"].is_empty());
        assert!(!t.keys().any(|w| w.contains('=')), "the header row is no workload: {:?}", t.keys());
        assert!(t["hackbench"].contains_key("spread"));
    }

    #[test]
    fn help_check_catches_drift_both_ways() {
        let readme = include_str!("../../docs/OPTIONS.md");
        let good = synthetic_help(2);
        check_help_against(&Log::parse(&good), readme).unwrap();
        // the kernel drops a parameter docs/OPTIONS.md lists
        let dropped = good.replacen("key=rounds ", "key=roundz ", 1);
        let e = check_help_against(&Log::parse(&dropped), readme).unwrap_err();
        assert!(e.contains("does not declare") && e.contains("roundz"), "{e}");
        // a default that differs
        let changed = good.replace("key=rounds accepts=0..1 default=100000", "key=rounds accepts=0..1 default=5");
        assert!(check_help_against(&Log::parse(&changed), readme).is_err());
        // a workload docs/OPTIONS.md does not know
        let extra = good.replace("@fw workload_done", "@fw workload_param workload=newone key=x accepts=0..1 default=1\n@fw workload_done");
        assert!(check_help_against(&Log::parse(&extra), readme).unwrap_err().contains("newone"));
    }
}
