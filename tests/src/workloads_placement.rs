//! Wakeup placement by its effect (`workload=wakeplace`, kernel/workloads/src/wakeplace.rs):
//! where one wakee runs after each of its wakeups, with the CPUs around it made busy on purpose,
//! and what its waker's `select_idle_cpu` scans did (`@fw sis`). The SIS scan depth of SIS_PROP
//! `aged` (5.14–6.6) and of SIS_UTIL (6.0 on), the 2005 rule's `wake_idle` on an SMT sibling, and
//! the waker's load in a sync `wake_affine_weight`.

use super::{ensure, num_is, workload_ran};
use crate::log::{Log, Record};
use crate::scenarios::CheckResult;

/// Linux's `imbalance_pct` of an MC (LLC) domain.
const MC_IMBALANCE_PCT: u64 = 117;

/// The part of a boot's `@fw balance_config msg=` for `key` (`sis_util`, `sis_prop`, ...).
fn balance_config<'a>(log: &'a Log, key: &str) -> Result<&'a str, String> {
    let r = log.one("balance_config")?;
    let msg = r.field("msg")?;
    msg.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .ok_or_else(|| format!("`{r}`: no `{key}=`"))
}

/// The CPUs of a `wakeplace` cpulist field (`-`: none).
fn cpu_set(r: &Record, key: &str) -> Result<Vec<u32>, String> {
    if r.field(key)? == "-" { Ok(Vec::new()) } else { r.cpus(key) }
}

/// The setting of a wakeplace run: (waker, prev, allowed, hogs, light, rounds).
pub struct Wakeplace {
    pub waker: u32,
    pub prev: u32,
    pub allowed: Vec<u32>,
    pub hogs: Vec<u32>,
    pub rounds: u64,
    /// Wakeups the wakee ran after, per CPU (index = CPU).
    pub on: Vec<u64>,
}

/// A wakeplace run on `cpus` CPUs: it ran and finished, with invariant checks, and its per-CPU
/// wakeup lines add up to its rounds. `sis_util` is the `sis_util=` the boot line must show.
pub fn wakeplace(log: &Log, cpus: u32, sis_util: &str) -> Result<Wakeplace, String> {
    workload_ran(log, "wakeplace", cpus, true)?;
    let got = balance_config(log, "sis_util")?;
    ensure(got == sis_util, || {
        format!("`@fw balance_config` says sis_util={got}: expected sis_util={sis_util} (the command line's)")
    })?;
    let r = log.one("wakeplace")?;
    let mut on = vec![0; cpus as usize];
    let mut n = 0;
    for c in log.records("wakeplace_cpu") {
        let cpu = c.num("cpu")? as usize;
        ensure(cpu == n && cpu < on.len(), || format!("`{c}`: expected cpu={n}"))?;
        on[cpu] = c.num("wakeups")?;
        n += 1;
    }
    ensure(n == cpus as usize, || format!("{n} `@fw wakeplace_cpu` lines: expected {cpus}"))?;
    let rounds = r.num("rounds")?;
    let sum: u64 = on.iter().sum();
    ensure(sum == rounds, || format!("the `@fw wakeplace_cpu` wakeups add up to {sum}, not rounds={rounds}"))?;
    wake_remote_counts_every_remote_wakeup(log)?;
    Ok(Wakeplace {
        waker: r.num("waker")? as u32,
        prev: r.num("prev")? as u32,
        allowed: r.cpus("allowed")?,
        hogs: cpu_set(r, "hogs")?,
        rounds,
        on,
    })
}

/// Every CPU's `ttwu_wake_remote`, summed over its domain levels, is exactly its wakeups onto
/// another CPU (`ttwu_count - ttwu_local` of its `@fw schedstat`, both since boot): core.c:
/// ttwu_stat() counts it for every wakeup whose CPU (where the wakee was put) is not the
/// waker's, in the waker's lowest domain spanning that CPU, whatever path the wakeup took (a
/// still-queued wakee, a pinned one that skips select_task_rq()).
pub fn wake_remote_counts_every_remote_wakeup(log: &Log) -> CheckResult {
    for st in log.records("schedstat") {
        let cpu = st.num("cpu")?;
        let remote = st.num("ttwu_count")? - st.num("ttwu_local")?;
        let mut counted = 0;
        for d in log.records("domstat").filter(|d| d.num("cpu").ok() == Some(cpu)) {
            counted += d.num("ttwu_wake_remote")?;
        }
        ensure(counted == remote, || {
            format!(
                "CPU {cpu}: Σ ttwu_wake_remote over its domains is {counted}, but it woke {remote} tasks onto \
                 another CPU (ttwu_count - ttwu_local)"
            )
        })?;
    }
    Ok(())
}

/// The waker's `@fw sis` line.
fn sis(log: &Log, cpu: u32) -> Result<&Record, String> {
    log.records("sis")
        .find(|r| r.num("cpu").ok() == Some(cpu as u64))
        .ok_or_else(|| format!("no `@fw sis cpu={cpu}`"))
}

/// At least 95% of `w`'s wakeups ran on one of `want`.
fn mostly_on(w: &Wakeplace, want: &[u32], why: &str) -> CheckResult {
    let hit: u64 = want.iter().map(|&c| w.on[c as usize]).sum();
    ensure(hit * 100 >= w.rounds * 95, || {
        format!("the wakee ran on CPUs {want:?} after {hit} of {} wakeups (per CPU {:?}): expected >= 95% ({why})", w.rounds, w.on)
    })
}

// ---------------------------------------------------------------------------------------------
// SIS_PROP aged: the depth follows the waker CPU's wake_avg_idle (two boots)

/// One boot of `sis-prop-aged-depth` on `CPUS` CPUs (one LLC): `sis_util=off sis_prop=aged`, the
/// waker on CPU 0, the wakee's prev CPU 1, hogs on every CPU but 0 and the last. Every wakeup
/// reaches select_idle_cpu (target, prev and recent CPU all busy) and SIS_PROP limits it.
/// Each scan it kept follows 5.14's formula from its own inputs (`sis_prop_scans`).
pub fn check_sis_aged<const CPUS: u32>(log: &Log) -> CheckResult {
    let w = wakeplace(log, CPUS, "off")?;
    let prop = balance_config(log, "sis_prop")?;
    ensure(prop == "aged", || format!("sis_prop={prop}: expected aged"))?;
    let s = sis(log, w.waker)?;
    let scans = scans_of_rounds(log, s, w.rounds)?;
    num_is(s, "limited", scans)?;
    num_is(s, "no_scan", 0)?;
    num_is(s, "idle_core_scans", 0)?;
    // 5.14's accounting: every scan not cut short, none that was.
    num_is(s, "accounted", scans - s.num("truncated")?)?;
    // Each kept scan's depth and cost, from its own wake_avg_idle and avg_scan_cost.
    sis_prop_scans::<CPUS>(log, &w).map(|_| ())
}

/// (`busy_us=0` boot, `busy_us=20000` boot) of `sis-prop-aged-depth`. The waker sleeps 1 ms before
/// each wakeup, so its CPU wakes from idle with `wake_avg_idle = avg_idle / 2` (5.14–6.6
/// `ttwu_do_activate`). Woken right away, the predicted idle time is hundreds of microseconds and
/// the depth `LLC × wake_avg_idle / (avg_scan_cost + 1)` far above the LLC: each scan goes from
/// CPU 1 to the idle last CPU (examining every other CPU) and the wakee runs there. Spinning 20 ms
/// first, the prediction halves each jiffy to 0 and the depth is the minimum, 4: three CPUs
/// examined (all busy), the scan cut short, and the wakee queued on the waker's CPU (the target).
pub fn compare_sis_aged<const CPUS: u32>(fresh: &Log, aged: &Log) -> CheckResult {
    let last = CPUS - 1;
    let (wf, wa) = (wakeplace(fresh, CPUS, "off")?, wakeplace(aged, CPUS, "off")?);
    let (sf, sa) = (sis(fresh, wf.waker)?, sis(aged, wa.waker)?);
    let n = wf.rounds;
    num_is(sf, "found", n)?;
    num_is(sf, "truncated", 0)?;
    num_is(sf, "scanned", n * (CPUS as u64 - 1))?;
    let depth = sf.num("depth_sum")?;
    ensure(depth >= n * CPUS as u64, || {
        format!("`{sf}`: depth_sum={depth}: expected every depth >= {CPUS} (nr - 1 CPUs examined reach CPU {last})")
    })?;
    mostly_on(&wf, &[last], "the deep scan finds the idle last CPU")?;
    // Every scan of the aged boot, the joiner's wakeup at the end included when it scanned
    // (`nearly_every_round`), has depth 4.
    let m = scans_of_rounds(aged, sa, wa.rounds)?;
    num_is(sa, "depth_sum", 4 * m)?;
    num_is(sa, "truncated", m)?;
    num_is(sa, "found", 0)?;
    num_is(sa, "scanned", 3 * m)?;
    mostly_on(&wa, &[wa.waker], "depth 4 stops before the idle CPU; the target is the waker's CPU")
}

// ---------------------------------------------------------------------------------------------
// SIS_PROP's accounting variants: each scan's depth and the cost it learns, from the run's inputs

/// Linux's `update_avg` (fair.c): `avg + (sample - avg) / 8`, the division truncating toward 0.
fn update_avg(avg: u64, sample: u64) -> u64 {
    (avg as i128 + (sample as i128 - avg as i128) / 8) as u64
}

/// The SIS_PROP depth `nr` that `variant` gives for one `@fw sis_scan` record's inputs (5.x
/// fair.c: select_idle_cpu(), counted as its loop counts: at most `nr - 1` CPUs examined):
/// `legacy` takes `span · (avg_idle / 512)`, `aged` (5.14) `span · wake_avg_idle`, divided by
/// `avg_scan_cost + 1` when above four times it, else 4; `per_cpu_cost` is legacy's plus one
/// (Peter Zijlstra's loop examined up to its `nr`); `altscan` takes `(avg_idle / 512) /
/// (avg_scan_cost + 1)`, at least 4 (Mel Gorman's, without the span).
pub fn sis_prop_nr(variant: &str, s: &Record) -> Result<u64, String> {
    let cost = s.num("avg_scan_cost")? as u128 + 1;
    let span = s.num("span")? as u128;
    let prop = |idle: u128| if span * idle > 4 * cost { (span * idle / cost) as u64 } else { 4 };
    Ok(match variant {
        "legacy" => prop(s.num("avg_idle")? as u128 / 512),
        "per_cpu_cost" => prop(s.num("avg_idle")? as u128 / 512) + 1,
        "aged" => prop(s.num("wake_avg_idle")? as u128),
        "altscan" => ((s.num("avg_idle")? as u128 / 512 / cost) as u64).max(4),
        v => return Err(format!("sis_prop={v}: no SIS_PROP depth")),
    })
}

/// What `variant` folds into `avg_scan_cost` for one scan (`None`: nothing): `legacy` and
/// `aged` the loop's time unless the depth ran out (5.x's `if (!--nr) return -1` leaves before
/// the accounting), `per_cpu_cost` the time per CPU examined, `altscan` every scan's time over
/// Mel Gorman's loop counter: 4 × the CPUs examined after a success, the CPUs examined plus
/// one otherwise.
fn sis_prop_fold(variant: &str, s: &Record) -> Result<Option<u64>, String> {
    let (time, scanned) = (s.num("time_ns")?, s.num("scanned")?);
    let (found, truncated) = (s.num("found")? == 1, s.num("truncated")? == 1);
    Ok(match variant {
        "legacy" | "aged" => (!truncated).then_some(time),
        "per_cpu_cost" => Some(time / scanned.max(1)),
        "altscan" => Some(time / if found { 4 * scanned.max(1) } else { scanned.max(1) + 1 }),
        v => return Err(format!("sis_prop={v}: no SIS_PROP accounting")),
    })
}

/// A `wakeplace` boot with `sis_util=off sis_prop=VARIANT` on `CPUS` CPUs (one LLC), the waker
/// on CPU 0 and hogs on CPUs 1 to `CPUS - 2`: every wakeup scans from CPU 1 and the only idle CPU
/// is the last (with a hog on the last CPU too, none is idle: each scan examines up to all `CPUS`
/// and finds none). For each scan the waker kept (`@fw sis_scan`, its last 64), recomputed from the
/// run's own `avg_idle` (or `wake_avg_idle`) and `avg_scan_cost`: the depth is the variant's
/// formula; the scan examined `min(nr - 1, CPUS - 1)` CPUs and found the idle last CPU exactly
/// when `nr - 1` reached it; the scan was accounted as the variant says; and, the waker being the
/// LLC's only scanner, each scan's `avg_scan_cost` is the previous one's with the previous scan
/// folded in by `update_avg`. Returns (the variant, Σ nr, scans kept).
pub fn sis_prop_scans<const CPUS: u32>(log: &Log, w: &Wakeplace) -> Result<(String, u64, u64), String> {
    let variant = balance_config(log, "sis_prop")?.to_string();
    let last = CPUS as u64 - 1;
    let idle_last = !w.hogs.contains(&(last as u32));
    let s = sis(log, w.waker)?;
    let scans = s.num("scans")?;
    let all: u64 = log.records("sis").map(|r| r.num("scans")).sum::<Result<u64, String>>()?;
    ensure(all == scans && scans > 0, || format!("`{s}`: {scans} scans, {all} on all CPUs: expected the waker's only, and some"))?;
    let kept: Vec<&Record> = log.records("sis_scan").filter(|r| r.num("cpu").ok() == Some(w.waker as u64)).collect();
    let want = scans.min(64);
    ensure(kept.len() as u64 == want, || format!("{} `@fw sis_scan cpu={}` records: expected {want}", kept.len(), w.waker))?;
    ensure(log.records("sis_scan").count() == kept.len(), || "`@fw sis_scan` records of a CPU that did not scan".into())?;
    let mut nr_sum = 0;
    let mut before: Option<(&Record, Option<u64>)> = None;
    for (k, r) in kept.iter().enumerate() {
        num_is(r, "i", scans - want + k as u64)?;
        num_is(r, "span", CPUS as u64)?;
        let nr = sis_prop_nr(&variant, r)?;
        num_is(r, "nr", nr)?;
        nr_sum += nr;
        // With the last CPU idle the scan stops there, after `last` CPUs; with a hog there too
        // it goes round the whole LLC (the target last) and finds none.
        let end = if idle_last { last } else { CPUS as u64 };
        let reach = nr.saturating_sub(1).min(end);
        num_is(r, "scanned", reach)?;
        num_is(r, "found", (idle_last && nr > last) as u64)?;
        num_is(r, "truncated", (nr - 1 < end) as u64)?;
        let fold = sis_prop_fold(&variant, r)?;
        num_is(r, "accounted", fold.is_some() as u64)?;
        if let Some((p, pf)) = before {
            let c = p.num("avg_scan_cost")?;
            num_is(r, "avg_scan_cost", pf.map_or(c, |x| update_avg(c, x)))
                .map_err(|e| format!("{e} (the cost `{p}` left, with {variant}'s accounting)"))?;
        }
        before = Some((r, fold));
    }
    Ok((variant, nr_sum, want))
}

/// One boot of `sis-prop-cost-legacy-vs-per-cpu`: `sis_prop_scans` holds, and the wakee ran on
/// the last CPU after exactly the wakeups whose scan found it.
pub fn check_sis_prop_scans<const CPUS: u32>(log: &Log) -> CheckResult {
    let w = wakeplace(log, CPUS, "off")?;
    sis_prop_scans::<CPUS>(log, &w)?;
    let s = sis(log, w.waker)?;
    let scans = scans_of_rounds(log, s, w.rounds)?;
    num_is(s, "idle_core_scans", 0)?;
    let found = s.num("found")?;
    // A wakeup that did not scan (its wakee still queued) ran the wakee where it was queued,
    // which may be the last CPU.
    let on_last = w.on[CPUS as usize - 1];
    ensure(found <= on_last && on_last <= found + (w.rounds - scans), || {
        format!(
            "`{s}`: {found} scans found the idle CPU {}, but the wakee ran there after {on_last} wakeups ({} did not scan)",
            CPUS - 1,
            w.rounds - scans
        )
    })
}

/// The waker's `select_idle_cpu` scans in a `wakeplace` run of `rounds` wakeups.
fn scans_of_rounds(log: &Log, s: &Record, rounds: u64) -> Result<u64, String> {
    nearly_every_round(log, s, "scans", s.num("scans")?, rounds)
}

/// `n` (named `what`, from record `s`) counts the wakeups of a `wakeplace` run of `rounds` that
/// reached select_idle_cpu. Every wakeup is placed but one that finds its wakee still queued:
/// a delayed sleeper requeued where it slept (`@fw delayed requeued=`; Linux's `ttwu_runnable()`
/// places nothing), which code layout decides a few times a run. So `n` must be at least 98% of
/// the rounds less the requeues, and the requeues at most a tenth of the rounds (a run that
/// requeued everything would test nothing). One wakeup more may scan: the waker's exit wakes the
/// thread that joins it, and whether that wakeup reaches select_idle_cpu depends on where the
/// joiner's CPU is at that instant (code layout moves it). Returns `n`.
fn nearly_every_round(log: &Log, s: &Record, what: &str, n: u64, rounds: u64) -> Result<u64, String> {
    let mut requeued = 0;
    for d in log.records("delayed") {
        requeued += d.num("requeued")?;
    }
    let placed = rounds.saturating_sub(requeued);
    ensure(requeued * 10 <= rounds && n <= placed + 1 && n * 50 >= placed * 49, || {
        format!("`{s}`: {what} = {n}: expected the {placed} of rounds={rounds} not requeued ({requeued} requeued, at most a tenth), at least 98% of them (and the joiner's wakeup at most)")
    })?;
    Ok(n)
}

/// (`sis_prop=legacy` boot, `sis_prop=per_cpu_cost` boot) of `sis-prop-cost-legacy-vs-per-cpu`:
/// the same formula, `span · (avg_idle / 512) / (avg_scan_cost + 1)`, but the per-CPU cost is
/// the whole scan's divided by the CPUs it examined, so the depth must be larger (Mel Gorman's
/// 2021 objection: deeper scans of a busy LLC), and the wakee must find the idle CPU at least as
/// often. Not strictly more often: legacy does not learn from a truncated scan, so it is
/// bistable. If its first scans truncate, the cost it starts from stays and it keeps scanning
/// short (1 of 100 found); if an early scan reaches the idle CPU, it learns that scan's small cost
/// and scans as deep as per_cpu_cost from then on (100 of 100, in a clean-clone run at
/// `d74b886`). Code layout decides which, so only the depth is compared strictly.
pub fn compare_sis_prop_cost<const CPUS: u32>(legacy: &Log, per_cpu: &Log) -> CheckResult {
    let (wl, wp) = (wakeplace(legacy, CPUS, "off")?, wakeplace(per_cpu, CPUS, "off")?);
    let (vl, dl, nl) = sis_prop_scans::<CPUS>(legacy, &wl)?;
    let (vp, dp, np) = sis_prop_scans::<CPUS>(per_cpu, &wp)?;
    ensure(vl == "legacy" && vp == "per_cpu_cost", || format!("sis_prop={vl} and {vp}: expected legacy, then per_cpu_cost"))?;
    ensure(dp * nl > dl * np, || format!("mean depth {dl}/{nl} (legacy), {dp}/{np} (per_cpu_cost): expected deeper per CPU"))?;
    let last = CPUS as usize - 1;
    let (fl, fp) = (sis(legacy, wl.waker)?.num("found")?, sis(per_cpu, wp.waker)?.num("found")?);
    ensure(fp >= fl && wp.on[last] >= wl.on[last], || {
        format!("scans that found CPU {last}: {fl} (legacy), {fp} (per_cpu_cost); wakeups run there {}, {}: expected at least as many per CPU", wl.on[last], wp.on[last])
    })
}

/// (`hog_mask` leaving the last CPU idle, `hog_mask` on every CPU but the waker's) of
/// `sis-prop-altscan`, both `sis_prop=altscan`: each boot holds `sis_prop_scans` (every kept
/// scan's depth `(avg_idle / 512) / (avg_scan_cost + 1)` and the cost it folds in recomputed from
/// its own inputs); where every scan found the idle CPU, every scan folded its time over 4 × the
/// CPUs it examined, where none found one, over the CPUs examined plus one. So the cost the LLC
/// learns per ns of scanning, Σ `avg_scan_cost` / Σ `time_ns` over the kept scans, is near what
/// those folds give (an EWMA of them: within a factor of 2), and smaller after successes by
/// more than half: Mel Gorman's `loops <<= 2` scans deeper after successes.
pub fn compare_sis_altscan<const CPUS: u32>(found: &Log, none: &Log) -> CheckResult {
    let (wf, wn) = (wakeplace(found, CPUS, "off")?, wakeplace(none, CPUS, "off")?);
    let last = CPUS - 1;
    ensure(!wf.hogs.contains(&last) && wn.hogs.contains(&last), || {
        format!("hogs {:?}, then {:?}: expected CPU {last} idle in the first boot only", wf.hogs, wn.hogs)
    })?;
    let mut per_ns = Vec::new();
    for (log, w, all_found) in [(found, &wf, true), (none, &wn, false)] {
        let (variant, _, kept) = sis_prop_scans::<CPUS>(log, w)?;
        ensure(variant == "altscan", || format!("sis_prop={variant}: expected altscan"))?;
        let scans: Vec<&Record> = log.records("sis_scan").collect();
        let n_found = scans.iter().map(|r| r.num("found")).sum::<Result<u64, String>>()?;
        ensure(n_found == if all_found { kept } else { 0 }, || {
            format!("{n_found} of {kept} kept scans found an idle CPU: expected {}", if all_found { "all" } else { "none" })
        })?;
        let cost: u64 = scans.iter().map(|r| r.num("avg_scan_cost")).sum::<Result<u64, String>>()?;
        let time: u64 = scans.iter().map(|r| r.num("time_ns")).sum::<Result<u64, String>>()?;
        let folded: u64 = scans.iter().map(|r| sis_prop_fold("altscan", r).map(|f| f.unwrap_or(0))).sum::<Result<u64, String>>()?;
        ensure(cost * 2 >= folded && cost <= folded * 2, || {
            format!(
                "Σ avg_scan_cost {cost} of the kept scans: expected Σ of their folds {folded} within a factor of 2 ({}; Σ time_ns {time})",
                if all_found { "every scan found the idle CPU" } else { "no scan found one" }
            )
        })?;
        per_ns.push((cost, time));
    }
    let ((cf, tf), (cn, tn)) = (per_ns[0], per_ns[1]);
    ensure(cf * tn * 2 < cn * tf, || {
        format!("learnt cost per ns scanned {cf}/{tf} (found) and {cn}/{tn} (none found): expected less than half where scans succeed")
    })
}

// ---------------------------------------------------------------------------------------------
// SIS_UTIL: the depth falls as the LLC gets busy (two boots)

/// SIS_UTIL's `nr_idle_scan` for a summed util of an LLC of `w` CPUs (fair.c:
/// `update_idle_cpu_scan()`): `w · (1 − min(1, (u/w)² · pct² / (10⁴ · 1024)))`.
pub fn nr_idle_scan(sum_util: u64, w: u64) -> u64 {
    let x = sum_util / w;
    let t = (x * x * MC_IMBALANCE_PCT * MC_IMBALANCE_PCT / (10_000 * 1024)).min(1024);
    (1024 - t) * w / 1024
}

/// One boot of `sis-util-depth-by-load` on `CPUS` CPUs (one LLC, default features): with `k`
/// hogs, the LLC's util is between `k · 900` (hogs whose PELT util has settled near 1000 after
/// `warm_ms`, as the last periodic balance of the LLC sampled it) and `(k + 1) · 1024` (plus the
/// waker and the wakee), so the mean depth `nr = nr_idle_scan + 1` of the wakeups that reach
/// select_idle_cpu (a refused scan counts as `nr = 1`) lies between the formula's values there.
pub fn check_sis_util<const CPUS: u32>(log: &Log) -> CheckResult {
    let w = wakeplace(log, CPUS, "on")?;
    let s = sis(log, w.waker)?;
    let k = w.hogs.len() as u64;
    let attempts = nearly_every_round(log, s, "scans + no_scan", s.num("scans")? + s.num("no_scan")?, w.rounds)?;
    num_is(s, "limited", s.num("scans")?)?;
    let nr_sum = s.num("depth_sum")? + s.num("no_scan")?;
    let (lo, hi) = (nr_idle_scan((k + 1) * 1024, CPUS as u64) + 1, nr_idle_scan(k * 900, CPUS as u64) + 1);
    ensure(lo * attempts <= nr_sum && nr_sum <= hi * attempts, || {
        format!("`{s}`: mean depth {nr_sum}/{attempts}: expected between {lo} and {hi} with {k} hogs of {CPUS} CPUs")
    })
}

/// (2 hogs, 6 hogs) of `sis-util-depth-by-load`: the busier LLC's mean depth is lower, and the
/// effect follows: with 2 hogs (CPUs 1, 2) the scan from CPU 1 reaches an idle CPU and the wakee
/// runs on one of CPUs 3..; with 6 (CPUs 1..6) it stops before the idle last CPU, or does not
/// scan, and the wakee runs on the waker's CPU.
pub fn compare_sis_util<const CPUS: u32>(light: &Log, busy: &Log) -> CheckResult {
    let (wl, wb) = (wakeplace(light, CPUS, "on")?, wakeplace(busy, CPUS, "on")?);
    let mean = |log: &Log, w: &Wakeplace| -> Result<(u64, u64), String> {
        let s = sis(log, w.waker)?;
        Ok((s.num("depth_sum")? + s.num("no_scan")?, s.num("scans")? + s.num("no_scan")?))
    };
    let ((dl, nl), (db, nb)) = (mean(light, &wl)?, mean(busy, &wb)?);
    ensure(wl.hogs.len() < wb.hogs.len() && dl * nb > db * nl, || {
        format!("mean depth {dl}/{nl} with {} hogs, {db}/{nb} with {}: expected lower with more", wl.hogs.len(), wb.hogs.len())
    })?;
    let idle: Vec<u32> = (0..CPUS).filter(|c| *c != wl.waker && !wl.hogs.contains(c)).collect();
    mostly_on(&wl, &idle, "a light LLC is scanned deep enough to reach an idle CPU")?;
    mostly_on(&wb, &[wb.waker], "a busy LLC is barely scanned; the target is the waker's CPU")
}

// ---------------------------------------------------------------------------------------------
// The 2005 rule: wake_idle(prev) on the skip path

/// `wake_balance=idle_only` at `-smp 4,sockets=2,cores=1,threads=2` (SMT pairs 0-1, 2-3): the
/// waker on CPU 0, a hog on CPU 1 (so the waker's core has no idle CPU and the wakee is not
/// balanced toward it), the wakee's prev CPU 2 busy with a hog. The 2005 `try_to_wake_up` still
/// ran `wake_idle(prev)`: prev's SMT sibling (CPU 3) takes the wakee when it is idle and allowed;
/// otherwise it stays on prev.
///
/// When the sibling is not allowed, the run has no delayed dequeue (`sched_features=
/// NO_DELAY_DEQUEUE`; the 2005 kernel had none), so that every wakeup is placed: no task is
/// requeued. A delayed wakee is requeued where it slept (`ttwu_runnable()`), which asks nothing
/// of the rule, and there the waker's CPU may pull it away legitimately: CPU 3's balance, finding
/// neither of CPU 2's tasks allowed on it, marks their group imbalanced (`sgc->imbalance`), and
/// the waker's CPU goes newly idle right after the requeue. Under `-icount` QEMU runs the vCPUs
/// one at a time, so that pull wins over CPU 2's reschedule IPI whenever the flag is up, which
/// depends on the kernel's instruction counts, not on the rule.
pub fn check_wake_2005(log: &Log) -> CheckResult {
    let w = wakeplace(log, 4, "on")?;
    let wb = balance_config(log, "wake_balance")?;
    ensure(wb == "idle_only", || format!("wake_balance={wb}: expected idle_only"))?;
    let sibling = w.prev ^ 1;
    ensure(w.hogs.contains(&(w.waker ^ 1)) && w.hogs.contains(&w.prev), || {
        format!("hogs {:?}: the scenario needs the waker's sibling and prev busy", w.hogs)
    })?;
    if !w.allowed.contains(&sibling) {
        for r in log.records("delayed") {
            ensure(r.num("requeued")? == 0, || format!("`{r}`: expected no task requeued (NO_DELAY_DEQUEUE: every wakeup placed)"))?;
        }
    }
    if w.allowed.contains(&sibling) && !w.hogs.contains(&sibling) {
        mostly_on(&w, &[sibling], "prev busy, its SMT sibling idle and allowed: wake_idle picks the sibling")
    } else {
        mostly_on(&w, &[w.prev], "the sibling is busy or not allowed: prev")
    }
}

// ---------------------------------------------------------------------------------------------
// Sync wake_affine_weight discounts the waker's load, not its weight

/// `-smp 2`: the waker on CPU 0 beside a nice-0 hog, the wakee's prev CPU 1 beside a nice-5 hog
/// (weight 335), sync wakeups. WA_IDLE has no opinion (both CPUs busy, two tasks on the waker's);
/// WA_WEIGHT compares CPU 0's load less the waker's `task_h_load` (its PELT load, small: it sleeps
/// 1 ms per round) plus the wakee's, about 1024, with CPU 1's, about 335: prev stays. Discounting
/// the waker's nice weight (1024) instead made CPU 0 look empty and pulled the wakee onto it.
pub fn check_wake_affine_sync(log: &Log) -> CheckResult {
    let w = wakeplace(log, 2, "on")?;
    ensure(w.hogs == [w.waker] && w.prev != w.waker, || format!("hogs {:?}: expected the waker's CPU only", w.hogs))?;
    mostly_on(&w, &[w.prev], "the waker's CPU is the heavier one once the waker's own small load is discounted")
}

// ---------------------------------------------------------------------------------------------
// sis_util= and sched_features= contradicting each other

/// The command line of `cmdline-sis-util-contradiction`: `sis_util=off`, then
/// `sched_features=SIS_UTIL`, on the busy-LLC wakeplace run of `sis-util-depth-by-load`.
pub const SIS_UTIL_CONTRADICTION: &str =
    "sched_debug=1 sis_util=off sched_features=SIS_UTIL workload=wakeplace,waker=0,prev=1,hog_mask=126,rounds=100";

/// `cmdline-sis-util-contradiction`: both ways of setting SIS_UTIL act in command-line order, so
/// the later `sched_features=SIS_UTIL` wins; exactly one complaint says so (a `cmdline:` line and
/// its `@fw cmdline_problem`); the boot line and `@fw sched_features` agree that SIS_UTIL is on;
/// and it acts: the wakeups' scan depth is SIS_UTIL's for a busy LLC.
pub fn check_sis_util_contradiction(log: &Log) -> CheckResult {
    let want = "sched_features=SIS_UTIL contradicts sis_util=off given earlier; the later one wins: sis_util=on (SIS_UTIL)";
    let lines: Vec<&str> = log.lines_starting_with("cmdline: ").collect();
    ensure(lines == [format!("cmdline: {want}").as_str()], || format!("`cmdline: ` lines {lines:?}: expected exactly `cmdline: {want}`"))?;
    let probs: Vec<&Record> = log.records("cmdline_problem").collect();
    ensure(probs.len() == 1 && probs[0].get("msg") == Some(want), || {
        format!("{} `@fw cmdline_problem` records: expected one with msg={want}", probs.len())
    })?;
    let f = log.one("sched_features")?.field("msg")?;
    ensure(f.split_whitespace().any(|t| t == "SIS_UTIL"), || format!("`@fw sched_features msg={f}`: expected SIS_UTIL on"))?;
    check_sis_util::<8>(log)
}
