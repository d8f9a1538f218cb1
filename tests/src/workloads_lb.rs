//! Load balancing proven by its effect: each mechanism moved a task, seen in the
//! trace or in the task's own counters, in the boot where it must act, and did nothing in the
//! boot where it must not. Counters alone are never enough: a counter that moves while no task
//! moves is the defect these checks exist to catch.

use std::collections::BTreeMap;

use super::{ensure, workload_ran};
use crate::log::{Log, Record};
use crate::scenarios::CheckResult;

/// The sum of `key=` over the `@fw kind` records (at least one must exist).
pub fn record_sum(log: &Log, kind: &str, key: &str) -> Result<u64, String> {
    let mut sum = 0;
    let mut n = 0;
    for r in log.records(kind) {
        sum += r.num(key)?;
        n += 1;
    }
    ensure(n > 0, || format!("no `@fw {kind}` line"))?;
    Ok(sum)
}

/// One newidle pull as the trace shows it: on CPU `cpu`, between an `ev=newidle_start` and the
/// next `ev=newidle_end pulled=N` (N ≥ 1), an `ev=migrate pid=P from=F to=cpu` with F ≠ cpu,
/// and the next `ev=switch` there runs P.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewidlePull {
    pub cpu: u64,
    pub pid: String,
    pub from: u64,
}

/// Every newidle pull in the `trace=1` dump (see [`NewidlePull`]), and the number of
/// `ev=newidle_start` events.
pub fn newidle_pulls_in_trace(log: &Log) -> Result<(Vec<NewidlePull>, u64), String> {
    let mut per_cpu: BTreeMap<u64, Vec<&Record>> = BTreeMap::new();
    for r in log.records("trace") {
        per_cpu.entry(r.num("cpu")?).or_default().push(r);
    }
    let mut pulls = Vec::new();
    let mut starts = 0;
    for (&cpu, evs) in &per_cpu {
        // In a newidle pass: the tasks it migrated here so far.
        let mut open: Option<Vec<(String, u64)>> = None;
        // A pull waiting for the switch that runs it.
        let mut want: Option<NewidlePull> = None;
        for r in evs {
            match r.field("ev")? {
                "newidle_start" => {
                    starts += 1;
                    open = Some(Vec::new());
                }
                "migrate" if open.is_some() => {
                    let (to, from) = (r.num("to")?, r.num("from")?);
                    if to == cpu && from != cpu {
                        if let Some(v) = open.as_mut() {
                            v.push((r.field("pid")?.to_string(), from));
                        }
                    }
                }
                "newidle_end" => {
                    let moved = open.take().unwrap_or_default();
                    if r.num("pulled")? > 0 {
                        if let Some((pid, from)) = moved.last() {
                            want = Some(NewidlePull { cpu, pid: pid.clone(), from: *from });
                        }
                    }
                }
                "switch" => {
                    if let Some(p) = want.take() {
                        if r.field("next")? == p.pid {
                            pulls.push(p);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok((pulls, starts))
}

/// `newidle=on` boot of `balance-newidle-pull-on-vs-off`: the workload ran, the `@fw newidle`
/// counters pulled tasks, the newidle lb counters of the domain schedstat moved with them
/// (`lb_gained_newidle` = Σ `pulled=`), and the trace shows a CPU going idle that pulled a task
/// from another CPU and ran it next (the task really moved and ran on the pulling CPU).
pub fn check_newidle_pull(log: &Log, cpus: u32, workload: &str) -> CheckResult {
    workload_ran(log, workload, cpus, true)?;
    check_newidle_gate_under_lock(log)?;
    let pulled = record_sum(log, "newidle", "pulled")?;
    ensure(pulled > 0, || "newidle=on: Σ `@fw newidle pulled=` is 0: newidle balancing never pulled".into())?;
    let gained = record_sum(log, "domstat", "lb_gained_newidle")?;
    ensure(gained == pulled, || {
        format!("Σ lb_gained_newidle={gained} of the domain schedstat, but Σ newidle pulled={pulled}")
    })?;
    ensure(record_sum(log, "domstat", "lb_count_newidle")? > 0, || "Σ lb_count_newidle is 0".into())?;
    let (pulls, _) = newidle_pulls_in_trace(log)?;
    let p = pulls.first().ok_or_else(|| {
        "no newidle pull in the trace: no `newidle_start`, `migrate pid=P from=F to=CPU`, \
         `newidle_end pulled>0` on one CPU followed by its switch to P"
            .to_string()
    })?;
    ensure(log.records("trace_task").any(|r| r.get("pid") == Some(p.pid.as_str())), || {
        format!("the pulled pid {} has no `@fw trace_task`", p.pid)
    })
}

/// The newidle gate is decided under the runqueue lock (fair.c: sched_balance_newidle() tests
/// the root domain's overload and `avg_idle` against the lowest domain's `max_newidle_lb_cost`
/// before it unlocks): on every CPU each newidle entry that reached the gate was either refused
/// (`gate_skips=`) or dropped the lock to balance (`lock_drops=`), never both, so
/// `entries = gate_skips + lock_drops`. An entry refused only after the unlock counts in both:
/// a needless unlock and relock. Some entry must have been refused, or the books prove nothing.
pub fn check_newidle_gate_under_lock(log: &Log) -> CheckResult {
    let mut refused = 0;
    for r in log.records("newidle") {
        let (cpu, entries, skips, drops) = (r.num("cpu")?, r.num("entries")?, r.num("gate_skips")?, r.num("lock_drops")?);
        ensure(entries == skips + drops, || {
            format!(
                "CPU {cpu}: {entries} newidle entries, but {skips} gate skips + {drops} lock drops = {}: \
                 {} entries dropped the runqueue lock and were refused by the gate after it",
                skips + drops,
                (skips + drops).saturating_sub(entries)
            )
        })?;
        refused += skips;
    }
    ensure(refused > 0, || "no newidle entry was refused by the gate: the lock books prove nothing".into())
}

/// `newidle=off` boot: no newidle attempt, pull or lb count, no `newidle_start` in the trace.
pub fn check_newidle_off(log: &Log) -> CheckResult {
    for key in ["attempts", "pulled"] {
        let n = record_sum(log, "newidle", key)?;
        ensure(n == 0, || format!("newidle=off: Σ `@fw newidle {key}=` is {n}"))?;
    }
    for key in ["lb_count_newidle", "lb_gained_newidle"] {
        let n = record_sum(log, "domstat", key)?;
        ensure(n == 0, || format!("newidle=off: Σ {key} is {n}"))?;
    }
    let (_, starts) = newidle_pulls_in_trace(log)?;
    ensure(starts == 0, || format!("newidle=off: {starts} `ev=newidle_start` in the trace"))
}

/// A hog of `workload=spread`: id, cpu at the end, migrations, ran_on.
type Hog = (u64, u64, u64, Vec<u32>);

/// The hogs of `workload=spread`.
fn hogs(log: &Log) -> Result<Vec<Hog>, String> {
    log.records("hog")
        .map(|r| Ok((r.num("id")?, r.num("cpu")?, r.num("migrations")?, r.cpus("ran_on")?)))
        .collect()
}

/// `nohz=on` boot of `balance-nohz-pull-on-vs-off` (`workload=spread,hogs=HOGS,start_cpu=0`):
/// the idle CPUs are tickless, so a busy CPU kicked one (Σ `kicks_sent` > 0), which balanced on
/// behalf of another tickless CPU and pulled a hog to it (`pulled_for_others` > 0 on the kicked
/// CPU X); a hog that migrated ended on a CPU Y ∉ {0, X} whose idle balancing gained it
/// (`lb_gained_idle` > 0 there), and the hogs end on distinct CPUs.
pub fn check_nohz_pull<const SMP: u32, const HOGS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "spread", SMP, true)?;
    let kicks = record_sum(log, "nohz", "kicks_sent")?;
    ensure(kicks > 0, || "nohz=on: no NOHZ kick sent".into())?;
    let ilbs: Vec<u64> = log
        .records("nohz")
        .filter(|r| r.num("pulled_for_others").is_ok_and(|n| n > 0))
        .map(|r| r.num("cpu"))
        .collect::<Result<_, _>>()?;
    ensure(!ilbs.is_empty(), || "nohz=on: no CPU pulled a task on behalf of a tickless CPU".into())?;
    let hogs = hogs(log)?;
    ensure(hogs.len() as u64 == HOGS, || format!("expected {HOGS} `@fw hog`, got {}", hogs.len()))?;
    let mut ends: Vec<u64> = hogs.iter().map(|h| h.1).collect();
    ends.sort();
    ends.dedup();
    ensure(ends.len() as u64 == HOGS, || format!("hogs share a CPU at the end: {hogs:?}"))?;
    let gained = |cpu: u64| {
        log.records("domstat")
            .filter(|r| r.num("cpu").ok() == Some(cpu))
            .any(|r| r.num("lb_gained_idle").is_ok_and(|n| n > 0))
    };
    let moved = hogs.iter().any(|(_, cpu, migr, ran)| {
        *migr > 0 && *cpu != 0 && !ilbs.contains(cpu) && ran.contains(&(*cpu as u32)) && gained(*cpu)
    });
    ensure(moved, || {
        format!(
            "no hog migrated to a tickless CPU other than the kicked ones {ilbs:?} that gained it by \
             idle balancing: {hogs:?}"
        )
    })
}

/// (`nohz=on`, `nohz=off`): with the tick on everywhere nobody kicks, runs or pulls for others.
pub fn compare_nohz_on_off(on: &Log, off: &Log) -> CheckResult {
    check_nohz_pull::<NOHZ_PULL_SMP, NOHZ_PULL_HOGS>(on)?;
    workload_ran(off, "spread", NOHZ_PULL_SMP, true)?;
    for key in ["kicks_sent", "ilb_runs", "balanced_for_others", "pulled_for_others"] {
        let n = record_sum(off, "nohz", key)?;
        ensure(n == 0, || format!("nohz=off: Σ `@fw nohz {key}=` is {n}"))?;
    }
    Ok(())
}

/// `-smp` and `hogs=` of `balance-nohz-pull-on-vs-off`.
pub const NOHZ_PULL_SMP: u32 = 4;
pub const NOHZ_PULL_HOGS: u64 = 2;

/// The active balance of `balance-capacity-smp2`: the hog on the half-capacity CPU was running
/// alone there (nothing to detach), so the idle full-capacity CPU asked for a push (Σ
/// `alb_count` > 0) and the push moved it (Σ `alb_pushed` > 0, counted where the switch moves
/// the task, on the pushing CPU's domain).
pub fn check_active_push(log: &Log) -> CheckResult {
    let (count, pushed) = (record_sum(log, "domstat", "alb_count")?, record_sum(log, "domstat", "alb_pushed")?);
    ensure(count > 0, || "no active balance was asked for (Σ alb_count = 0)".into())?;
    ensure(pushed > 0 && pushed <= count, || {
        format!("Σ alb_pushed={pushed} with Σ alb_count={count}: the push must have moved the task")
    })
}

/// (capacity boot, no-capacity boot) of `balance-capacity-smp2`: without the pressure the same
/// hog stays on its CPU 1, never misfit, and no active balance is asked for or pushed; one hog
/// on two CPUs is balanced, so the periodic balance gains nothing of either idle type though
/// the busy CPU ran it (Σ `lb_count_busy` > 0: it looked and found nothing to pull).
pub fn compare_capacity_push(cap: &Log, flat: &Log) -> CheckResult {
    check_active_push(cap)?;
    workload_ran(flat, "spread", 2, true)?;
    let h = hogs(flat)?;
    ensure(h.len() == 1 && h[0].1 == 1 && h[0].2 == 0 && h[0].3 == [1], || {
        format!("no capacity pressure: the hog must stay on CPU 1 (ran_on=1, migrations=0), got {h:?}")
    })?;
    for key in ["alb_count", "alb_pushed", "lb_gained_idle", "lb_gained_busy"] {
        let n = record_sum(flat, "domstat", key)?;
        ensure(n == 0, || format!("no capacity pressure: Σ {key} is {n}"))?;
    }
    let tried = record_sum(flat, "domstat", "lb_count_busy")?;
    ensure(tried > 0, || "no capacity pressure: the busy CPU never balanced (Σ lb_count_busy = 0)".into())
}

/// The periodic balance of one idle type (`ty`: `idle` for CPU_IDLE, `busy` for CPU_NOT_IDLE)
/// moved hogs of `workload=spread` (fair.c: sched_balance_domains() calls
/// sched_balance_rq() with the CPU's idle type; the gain is counted per type as Linux's
/// `lb_gained[idle]`): Σ `lb_gained_<ty>` > 0; the hogs never sleep, so each of their
/// migrations is a balancer's pull or push, and they migrated more often than every other
/// mover counted (the other types' gains, active and fork pushes) could account for; and every
/// CPU whose `lb_gained_<ty>` > 0 is in the `ran_on` of a hog that migrated.
pub fn check_periodic_pull(log: &Log, ty: &str) -> CheckResult {
    let key = format!("lb_gained_{ty}");
    let gained = record_sum(log, "domstat", &key)?;
    ensure(gained > 0, || format!("no periodic pull of type {ty}: Σ {key} is 0"))?;
    let mut others = record_sum(log, "domstat", "alb_pushed")? + record_sum(log, "domstat", "sbf_pushed")?;
    for t in ["idle", "busy", "newidle"].into_iter().filter(|&t| t != ty) {
        others += record_sum(log, "domstat", &format!("lb_gained_{t}"))?;
    }
    let hogs = hogs(log)?;
    let migrations: u64 = hogs.iter().map(|h| h.2).sum();
    ensure(migrations > others, || {
        format!(
            "the hogs migrated {migrations} times, no more than the {others} moves of other kinds \
             (other lb_gained_*, alb_pushed, sbf_pushed): no hog was moved by a {ty} pull"
        )
    })?;
    for r in log.records("domstat") {
        if r.num(&key)? == 0 {
            continue;
        }
        let cpu = r.num("cpu")? as u32;
        ensure(hogs.iter().any(|h| h.2 > 0 && h.3.contains(&cpu)), || {
            format!("`{r}`: CPU {cpu} gained by {ty} balancing but no hog that migrated ran there: {hogs:?}")
        })?;
    }
    Ok(())
}

/// One active balance asked by a newidle pass, as the trace shows it: on CPU `cpu`, between its
/// `ev=newidle_start` and `ev=newidle_end`, an `ev=alb_request src=S dst=cpu idle=newidle`; the
/// next `ev=migrate` there from S to `cpu` moves task `pid`, with no other `alb_request` of that
/// pair in between, and the next `ev=switch` there after the migrate runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewidlePush {
    pub cpu: u64,
    pub src: u64,
    pub pid: String,
}

/// Every push asked by a newidle pass that moved a task which then ran on the asking CPU
/// (see [`NewidlePush`]).
pub fn newidle_pushes_in_trace(log: &Log) -> Result<Vec<NewidlePush>, String> {
    let mut per_cpu: BTreeMap<u64, Vec<&Record>> = BTreeMap::new();
    for r in log.records("trace") {
        per_cpu.entry(r.num("cpu")?).or_default().push(r);
    }
    let mut pushes = Vec::new();
    for (&cpu, evs) in &per_cpu {
        let mut in_pass = false;
        // The source of the last push this CPU asked for, and whether a newidle pass asked.
        let mut asked: Option<(u64, bool)> = None;
        // A push that moved its task, waiting for the switch that runs it.
        let mut want: Option<NewidlePush> = None;
        for r in evs {
            match r.field("ev")? {
                "newidle_start" => in_pass = true,
                "newidle_end" => in_pass = false,
                "alb_request" if r.num("dst")? == cpu => {
                    asked = Some((r.num("src")?, in_pass && r.field("idle")? == "newidle"));
                }
                "migrate" if r.num("to")? == cpu => {
                    let from = r.num("from")?;
                    if let Some((src, by_newidle)) = asked.filter(|(src, _)| *src == from) {
                        asked = None;
                        if by_newidle {
                            want = Some(NewidlePush { cpu, src, pid: r.field("pid")?.to_string() });
                        }
                    }
                }
                "switch" => {
                    if let Some(p) = want.take() {
                        if r.field("next")? == p.pid {
                            pushes.push(p);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(pushes)
}

/// `cpu_capacity=1:512` boot of `balance-newidle-active-push` (`workload=spread,hogs=1,
/// start_cpu=1` beside a sleeper pinned to CPU 0): the hog alone on the half-capacity CPU 1
/// becomes a misfit; CPU 0 goes newly idle at every sleep of its sleeper, and its newidle pass
/// finds the misfit running alone (nothing to detach) and asks CPU 1 to push it (fair.c:
/// sched_balance_rq() calls need_active_balance() for CPU_NEWLY_IDLE too, and
/// need_active_balance() says yes for migrate_misfit). The hog's first migration is that push:
/// the trace shows the request inside a newidle pass, the migrate from 1 to 0 and CPU 0 running
/// the hog next; the hog ends on CPU 0, and the push was counted (Σ `alb_pushed` > 0).
pub fn check_newidle_push(log: &Log) -> CheckResult {
    workload_ran(log, "spread", 2, true)?;
    ensure(log.records("trace_cpu").count() == 2, || "expected two `@fw trace_cpu` lines".into())?;
    for r in log.records("trace_cpu") {
        ensure(r.num("lost")? == 0, || format!("`{r}`: the trace lost events"))?;
    }
    let h = hogs(log)?;
    ensure(h.len() == 1 && h[0].1 == 0 && h[0].3 == [0, 1], || {
        format!("the misfit hog must end on CPU 0 having run on CPU 1 first (ran_on=0-1), got {h:?}")
    })?;
    let hog = h[0].0.to_string();
    let first = log
        .records("trace")
        .filter(|r| r.get("ev") == Some("migrate") && r.get("pid") == Some(hog.as_str()))
        .min_by_key(|r| r.num("ts").unwrap_or(u64::MAX))
        .ok_or_else(|| format!("the hog (pid {hog}) never migrated in the trace"))?;
    ensure(first.get("from") == Some("1") && first.get("to") == Some("0"), || {
        format!("the hog's first migration `{first}` is not from CPU 1 to CPU 0")
    })?;
    let pushes = newidle_pushes_in_trace(log)?;
    ensure(pushes.iter().any(|p| p.cpu == 0 && p.src == 1 && p.pid == hog), || {
        format!(
            "no newidle-asked push of the hog in the trace: CPU 0's `newidle_start`, `alb_request \
             src=1 dst=0 idle=newidle`, `newidle_end`, then `migrate pid={hog} from=1 to=0` and its \
             switch to the hog (pushes found: {pushes:?})"
        )
    })?;
    let requests: Vec<&Record> = log.records("trace").filter(|r| r.get("ev") == Some("alb_request")).collect();
    let before: Vec<&&Record> = requests.iter().filter(|r| r.num("ts").unwrap_or(u64::MAX) <= first.num("ts").unwrap_or(0)).collect();
    ensure(before.last().is_some_and(|r| r.get("idle") == Some("newidle")), || {
        format!("the request that moved the hog was not a newidle pass's: {before:?}")
    })?;
    let pushed = record_sum(log, "domstat", "alb_pushed")?;
    ensure(pushed > 0, || "Σ alb_pushed is 0 though the hog was pushed".into())
}

/// (capacity boot, no-capacity boot) of `balance-newidle-active-push`: without the pressure the
/// hog is never misfit, and no balance asks for a push: it stays on CPU 1 (`migrations=0`), the
/// trace has no `alb_request`, Σ `alb_count` = 0; CPU 0 still went idle at the sleeper's sleeps
/// (`sched_goidle` ≥ half of the `ms / (sleeper_busy_us + sleeper_sleep_us)` cycles: nothing is
/// overloaded, so the newidle pass stops at its first gate), so the quiet is the condition's.
pub fn compare_newidle_push(cap: &Log, flat: &Log) -> CheckResult {
    check_newidle_push(cap)?;
    workload_ran(flat, "spread", 2, true)?;
    let h = hogs(flat)?;
    ensure(h.len() == 1 && h[0].1 == 1 && h[0].2 == 0 && h[0].3 == [1], || {
        format!("no capacity pressure: the hog must stay on CPU 1 (ran_on=1, migrations=0), got {h:?}")
    })?;
    let asked = flat.records("trace").filter(|r| r.get("ev") == Some("alb_request")).count();
    ensure(asked == 0, || format!("no capacity pressure: {asked} `alb_request` in the trace"))?;
    let count = record_sum(flat, "domstat", "alb_count")?;
    ensure(count == 0, || format!("no capacity pressure: Σ alb_count is {count}"))?;
    let idled = super::schedstat(flat, 0)?.num("sched_goidle")?;
    let cycles = NEWIDLE_PUSH_MS * 1000 / NEWIDLE_PUSH_CYCLE_US;
    ensure(idled >= cycles / 2, || {
        format!("no capacity pressure: CPU 0 went idle {idled} times, fewer than half the sleeper's {cycles} sleeps")
    })
}

/// `ms=` and `sleeper_busy_us + sleeper_sleep_us` of `balance-newidle-active-push`.
pub const NEWIDLE_PUSH_MS: u64 = 300;
pub const NEWIDLE_PUSH_CYCLE_US: u64 = 1000;

/// `@fw domstat` lines of `cpu`, bottom-up, as (level, record).
fn domstats(log: &Log, cpu: u64) -> Vec<&Record> {
    log.records("domstat").filter(|r| r.num("cpu").ok() == Some(cpu)).collect()
}

/// Σ `lb_gained_{idle,busy,newidle}` of one `@fw domstat` line.
fn gained(r: &Record) -> Result<u64, String> {
    Ok(r.num("lb_gained_idle")? + r.num("lb_gained_busy")? + r.num("lb_gained_newidle")?)
}

/// `-smp` of the affinity-mask balance scenarios: two packages of two cores, so the top level's
/// groups are the packages {0,1} and {2,3}.
pub const PINNED_SMP: &str = "4,sockets=2,cores=2,threads=1";

/// `balance-dst-pinned-new-dst-cpu` (`workload=spread,hogs=3,start_cpu=0,mask=11`: three hogs
/// started on CPU 0, allowed on CPUs 0, 1 and 3 only). Across the packages only CPU 2 balances
/// for the idle package {2,3} (fair.c: should_we_balance(): the first idle CPU of the group), and
/// no hog may run there: its balance finds them pinned away, and fair.c: can_migrate_task()
/// offers `new_dst_cpu`, CPU 3 of its group, which sched_balance_rq() retries with. The effect:
/// the hogs end one on each of CPUs 0, 1 and 3, each `ran_on` within the mask; CPU 2's domains
/// counted the gain (its balance moved the task) while CPU 3's never gained anything (CPU 3 did
/// not pull it itself).
pub fn check_new_dst_cpu(log: &Log) -> CheckResult {
    workload_ran(log, "spread", 4, true)?;
    let h = hogs(log)?;
    ensure(h.len() == 3, || format!("expected 3 `@fw hog`, got {h:?}"))?;
    ensure(h.iter().all(|x| x.3.iter().all(|c| [0, 1, 3].contains(c))), || {
        format!("a hog ran outside its mask 0,1,3: {h:?}")
    })?;
    let mut ends: Vec<u64> = h.iter().map(|x| x.1).collect();
    ends.sort_unstable();
    ensure(ends == [0, 1, 3], || format!("the hogs must end one on each of CPUs 0, 1, 3: {h:?}"))?;
    let by2: u64 = domstats(log, 2).into_iter().map(gained).sum::<Result<_, _>>()?;
    ensure(by2 > 0, || "CPU 2's balance gained nothing (Σ lb_gained_* of its domains is 0): who moved the hog to CPU 3?".into())?;
    let by3: u64 = domstats(log, 3).into_iter().map(gained).sum::<Result<_, _>>()?;
    ensure(by3 == 0, || format!("CPU 3's own balancing gained {by3}: the move to CPU 3 was not CPU 2's new_dst_cpu retry"))
}

/// `balance-group-imbalanced`'s command line: on [`PINNED_SMP`] (packages {0,1} and {2,3}), a
/// pinned hog on CPU 0 and one on CPU 3, started first, then one free hog started on CPU 3 and
/// allowed on CPUs 1 and 3 (mask 10).
pub const GROUP_IMBALANCED: &str = "sched_debug=1 workload=spread,hogs=1,start_cpu=3,mask=10,pinned_mask=9,ms=300";

/// `balance-group-imbalanced` ([`GROUP_IMBALANCED`]). Each package holds one pinned hog; the
/// free hog shares CPU 3 with the other. The top level sees the packages balanced by count (2
/// tasks against 1, one idle CPU each: fair.c: sched_balance_find_src_group() calls that
/// balanced, and `sibling_imbalance()` is 1, not above 1). Only the child level sees CPU 3's
/// queue, and its balancer, CPU 2, may take neither task (LBF_SOME_PINNED, and no other CPU of
/// its group to retry with), so fair.c: sched_balance_rq() marks package {2,3} imbalanced in the
/// parent (`sgc->imbalance`). Then package {0,1}'s top-level balance classifies it
/// `group_imbalanced` (fair.c: group_classify()), forces the balance and moves one task: the
/// free hog to CPU 1, the only CPU of its mask in package {0,1}. The effect, all from the
/// command line: the free hog ends on CPU 1 having run only on CPUs 1 and 3 and migrated once;
/// alone there it gets more than ¾ of the run (sharing CPU 3 it would get ½); the pinned hogs
/// stayed; the move was counted by the top level of a CPU of package {0,1} (Σ `lb_gained_*` of
/// level PKG = 1), by no MC level, and CPU 2's MC level failed at least once. Without the mark
/// the hog stays on CPU 3 (`ran_on=3`, half the run): the check fails.
pub fn check_group_imbalanced(log: &Log) -> CheckResult {
    workload_ran(log, "spread", 4, true)?;
    let ms = 300;
    let pinned: Vec<(u64, Vec<u32>)> =
        log.records("pinned_hog").map(|r| Ok((r.num("cpu")?, r.cpus("ran_on")?))).collect::<Result<_, String>>()?;
    ensure(pinned == [(0, vec![0]), (3, vec![3])], || {
        format!("pinned hogs (cpu, ran_on) {pinned:?}: expected one that ran only on CPU 0 and one only on CPU 3")
    })?;
    let h = hogs(log)?;
    ensure(h.len() == 1, || format!("expected 1 `@fw hog`, got {h:?}"))?;
    let (_, cpu, migrations, ran_on) = &h[0];
    ensure(*cpu == 1 && *migrations == 1 && ran_on.iter().all(|c| [1, 3].contains(c)) && ran_on.contains(&1), || {
        format!("the free hog (cpu, migrations, ran_on) = ({cpu}, {migrations}, {ran_on:?}): expected it moved once, to CPU 1, and ran only on CPUs 1 and 3")
    })?;
    let runtime = log.records("hog").next().map(|r| r.num("runtime_ns")).transpose()?.unwrap_or(0);
    ensure(runtime * 4 > ms * 1_000_000 * 3, || {
        format!("the free hog ran {runtime} ns of {ms} ms: expected more than 3/4 (alone on CPU 1), not the half of a shared CPU 3")
    })?;
    let mut by_level = [0u64; 2];
    for r in log.records("domstat") {
        let l = match r.field("level")? {
            "MC" => 0,
            "PKG" => 1,
            other => return Err(format!("`{r}`: level {other}: expected MC or PKG on {PINNED_SMP}")),
        };
        by_level[l] += gained(r)?;
    }
    ensure(by_level == [0, 1], || {
        format!("Σ lb_gained_* by level (MC, PKG) = {by_level:?}: expected (0, 1), one move by the top level and none by the child level")
    })?;
    let gained_pkg01: u64 = [0, 1]
        .into_iter()
        .flat_map(|c| domstats(log, c))
        .filter(|r| r.field("level").is_ok_and(|l| l == "PKG"))
        .map(gained)
        .sum::<Result<_, _>>()?;
    ensure(gained_pkg01 == 1, || "the top-level move was not made by a CPU of package {0,1}".into())?;
    let failed2 = domstats(log, 2).first().map(|r| r.num("lb_failed_idle")).transpose()?.unwrap_or(0);
    ensure(failed2 >= 1, || "CPU 2's MC level never failed: the child level did not try CPU 3's queue".into())
}

/// The capacity of the small CPU of `balance-misfit-util-est` (`cpu_capacity=1:512`).
pub const UTILEST_SMALL_CAP: u64 = 512;

/// The least time (µs) a task running without pause on a CPU of capacity `cap` needs for its
/// `util_avg` to grow from `from` to `to` (1024 scale): PELT's half-life is 32 periods of
/// 1024 µs of the invariant clock, which runs at `cap/1024` of the CPU's, and a running
/// entity's util approaches 1024 no faster than `1024 - (1024 - u)·y^t`.
pub fn util_avg_ramp_us(from: u64, to: u64, cap: u64) -> f64 {
    if to <= from {
        return 0.0;
    }
    let halves = ((1024 - from.min(1023)) as f64 / (1024 - to.min(1023)) as f64).log2();
    halves * 32.0 * 1024.0 * 1024.0 / cap as f64
}

/// `balance-misfit-util-est` (`workload=utilest`, `cpu_capacity=1:512`, `-smp 2`): a task that
/// built its util on CPU 0 and slept is woken on the half-capacity CPU 1 with its `util_avg`
/// decayed below the misfit threshold (`fits_capacity`: util·1280 < cap·1024) and its util_est
/// above it. The balancer measures it by `task_util_est()` (fair.c: update_misfit_status()), so
/// it is a misfit at once and moves to CPU 0 sooner than its `util_avg` alone could have grown
/// to the threshold (computed from the `util_avg` it woke with, `util_avg_ramp_us`). Measured
/// by `util_avg` it would stay that long at least: the check fails.
pub fn check_misfit_util_est(log: &Log) -> CheckResult {
    workload_ran(log, "utilest", 2, true)?;
    let r = log.one("utilest")?;
    let (big, small) = (r.num("big")?, r.num("small")?);
    ensure(r.num("woke_cpu")? == small, || format!("`{r}`: the task did not wake on the small CPU {small}"))?;
    let (avg, est) = (r.num("util_avg")?, r.num("util_est")?);
    let cap = UTILEST_SMALL_CAP;
    let threshold = cap * 1024 / 1280;
    ensure(avg * 1280 < cap * 1024, || {
        format!("`{r}`: util_avg={avg} at the wakeup is already a misfit on capacity {cap}: the sleep did not decay it")
    })?;
    ensure(est * 1280 >= cap * 1024, || {
        format!("`{r}`: util_est={est} at the wakeup fits capacity {cap}: the estimate was not kept over the sleep")
    })?;
    let moved = r.field("moved_after_us")?;
    let moved: f64 = moved
        .parse::<u64>()
        .map_err(|_| format!("`{r}`: the task never ran on the big CPU {big} after its wakeup"))? as f64;
    let ramp = util_avg_ramp_us(avg, threshold, cap);
    ensure(moved < ramp, || {
        format!(
            "`{r}`: moved to CPU {big} {moved} µs after the wakeup, no sooner than util_avg={avg} could grow to the \
             misfit threshold {threshold} ({ramp:.0} µs): the misfit was measured by util_avg, not util_est"
        )
    })?;
    let ran = r.cpus("ran_on")?;
    ensure(ran == [big as u32, small as u32] || ran == [small as u32, big as u32], || format!("`{r}`: ran_on should be both CPUs"))
}
