//! The checks of the boot scenarios (CPUs online, topology IDs, sched domains, self-checks,
//! APIC modes, ACPI, command line, deliberate faults) and the helpers every check uses.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::log::{format_cpulist, format_groups, parse_groups, Log};
use crate::scenarios::CheckResult;
use crate::topology::Topology;

/// The malformed options of `cmdline-malformed`: (whole command line, option names).
/// `cpu_capacity=9:512` names a CPU that is not online: checked only after SMP bring-up, it must
/// be reported like the rest (line and record).
pub const MALFORMED: &str = "bogus=1 log=loud hz=abc idle=sometimes cpu_capacity=9:512";
pub const MALFORMED_OPTIONS: [&str; 5] = ["bogus", "log", "hz", "idle", "cpu_capacity"];

// ---------------------------------------------------------------------------------------------
// Building blocks, usable by any scenario.

/// The unmapped address `test_crash=page_fault` reads: 0xdead0000 moved above
/// the kernel's 4 GiB identity map (kernel/src/selfcheck.rs `CRASH_ADDRESS`), so
/// that reading it really faults.
pub const CRASH_ADDRESS: u64 = 0x1_dead_0000;

pub(crate) fn ensure(cond: bool, msg: impl FnOnce() -> String) -> CheckResult {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// `@fw cpus online=N expected=N`.
pub fn cpus_online(log: &Log, n: u64) -> CheckResult {
    let r = log.one("cpus")?;
    let (online, expected) = (r.num("online")?, r.num("expected")?);
    ensure(online == n && expected == n, || {
        format!("`{r}`: expected online={n} expected={n}")
    })
}

/// Exactly one `@fw cpu` line for each of CPUs 0..n, and no others.
pub fn cpu_lines(log: &Log, n: u32) -> CheckResult {
    let mut seen = BTreeMap::new();
    for r in log.records("cpu") {
        *seen.entry(r.num("id")?).or_insert(0u32) += 1;
    }
    for id in 0..n as u64 {
        match seen.get(&id) {
            Some(1) => {}
            Some(k) => return Err(format!("CPU {id} has {k} `@fw cpu` lines")),
            None => return Err(format!("CPU {id} has no `@fw cpu` line")),
        }
    }
    let extra: Vec<_> = seen.keys().filter(|&&id| id >= n as u64).collect();
    ensure(extra.is_empty(), || {
        format!("`@fw cpu` lines for CPUs that should not exist: {extra:?}")
    })
}

/// At least one `@fw selfcheck`, all `result=ok`.
pub fn selfchecks_ok(log: &Log) -> CheckResult {
    let mut n = 0;
    for r in log.records("selfcheck") {
        n += 1;
        ensure(r.get("result") == Some("ok"), || {
            format!("self-check failed: `{r}`")
        })?;
    }
    ensure(n > 0, || "no `@fw selfcheck` line".into())
}

/// Every CPU's `@fw sd` lines are exactly the levels, spans and groups computed from the
/// topology, bottom-up; CPUs with no domains print none.
pub fn domains(log: &Log, topo: &Topology) -> CheckResult {
    let mut got: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for r in log.records("sd") {
        let cpu = r.num("cpu")?;
        // Canonicalize spans and groups so `0,1,2,3` and `0-3` compare equal.
        let span = format_cpulist(&r.cpus("span")?);
        let groups =
            format_groups(&parse_groups(r.field("groups")?).map_err(|e| format!("`{r}`: {e}"))?);
        got.entry(cpu).or_default().push(format!(
            "level={} span={span} groups={groups}",
            r.field("level")?
        ));
    }
    for cpu in 0..topo.cpus() {
        let want: Vec<String> = topo
            .expected_levels(cpu)
            .iter()
            .map(|l| l.describe())
            .collect();
        let have = got.remove(&(cpu as u64)).unwrap_or_default();
        if want != have {
            return Err(format!(
                "CPU {cpu}: sched domains differ\n  expected: {}\n  got:      {}",
                if want.is_empty() {
                    "(none)".into()
                } else {
                    want.join(" | ")
                },
                if have.is_empty() {
                    "(none)".into()
                } else {
                    have.join(" | ")
                },
            ));
        }
    }
    ensure(got.is_empty(), || {
        format!(
            "`@fw sd` lines for CPUs that do not exist: {:?}",
            got.keys()
        )
    })
}

/// Each `@fw cpu` line's topology IDs agree with the topology: `apic=` (QEMU's APIC ID layout),
/// `pkg=`, `core=` (within the package), `smt=` (within the core), `llc=` (the LLC is shared by
/// the package) and `node=`.
pub fn cpu_placement(log: &Log, topo: &Topology) -> CheckResult {
    for r in log.records("cpu") {
        let id = r.num("id")? as u32;
        let want = [
            ("apic", topo.apic_id(id)),
            ("pkg", topo.socket_of(id)),
            ("core", topo.core_of(id)),
            ("smt", topo.thread_of(id)),
            ("llc", topo.socket_of(id)),
            ("node", topo.node_of(id)),
        ];
        for (key, v) in want {
            num_is(r, key, v as u64).map_err(|_| {
                let all: Vec<String> = want.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("`{r}`: expected {}", all.join(" "))
            })?;
        }
    }
    Ok(())
}

/// The whole check of a healthy boot with the given `-smp` and NUMA nodes.
pub fn healthy_boot(log: &Log, smp: &str, nodes: u32) -> CheckResult {
    let topo = Topology::from_smp(smp, nodes)?;
    cpus_online(log, topo.cpus() as u64)?;
    cpu_lines(log, topo.cpus())?;
    cpu_placement(log, &topo)?;
    domains(log, &topo)?;
    sim_model_agrees(log, smp, nodes)?;
    selfchecks_ok(log)
}

/// The simulator's model of the machine (`fairway_sim::Machine`, which builds the domains with
/// the policy crate's code) places every CPU and spans every domain as the kernel booted with the
/// same `-smp` and NUMA nodes: what the simulator runs on is the machine QEMU gives. Compared are
/// the `@fw cpu` lines whole and each `@fw sd` line's CPU, level, span and groups (its flags come
/// from the same policy code on both sides).
pub fn sim_model_agrees(log: &Log, smp: &str, nodes: u32) -> CheckResult {
    let model = fairway_sim::Machine::from_smp(smp, nodes).map_err(|e| e.to_string())?;
    let report = model.topology_report().map_err(|e| format!("the simulator's model of -smp {smp}: {e:?}"))?;
    let key = |r: &crate::log::Record| -> Result<String, String> {
        Ok(match r.kind.as_str() {
            "cpu" => ["id", "apic", "pkg", "core", "smt", "llc", "node"]
                .iter()
                .map(|k| r.num(k).map(|v| format!("{k}={v}")))
                .collect::<Result<Vec<_>, _>>()?
                .join(" "),
            _ => format!(
                "cpu={} level={} span={} groups={}",
                r.num("cpu")?,
                r.field("level")?,
                format_cpulist(&r.cpus("span")?),
                format_groups(&parse_groups(r.field("groups")?)?)
            ),
        })
    };
    let model_log = Log::parse(&report);
    for kind in ["cpu", "sd"] {
        let mut want = model_log.records(kind).map(key).collect::<Result<Vec<_>, _>>()?;
        let mut got = log.records(kind).map(key).collect::<Result<Vec<_>, _>>()?;
        want.sort_unstable();
        got.sort_unstable();
        if let Some(line) = want.iter().find(|l| !got.contains(l)) {
            return Err(format!("the simulator's model of -smp {smp} has `@fw {kind} {line}`, the kernel does not"));
        }
        if let Some(line) = got.iter().find(|l| !want.contains(l)) {
            return Err(format!("the kernel prints `@fw {kind} {line}`, the simulator's model of -smp {smp} does not"));
        }
    }
    Ok(())
}

/// Whether `line` names `word` as a whole word (not inside a longer identifier).
pub fn names_word(line: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Parses a hexadecimal or decimal field and compares it with `want`.
pub(crate) fn num_is(r: &crate::log::Record, key: &str, want: u64) -> CheckResult {
    let v = r.num(key)?;
    ensure(v == want, || {
        format!("`{r}`: expected {key}={want:#x} ({want})")
    })
}

pub(crate) fn backtrace(log: &Log, min_frames: usize) -> CheckResult {
    let frames: Vec<_> = log.records("bt").collect();
    ensure(frames.len() >= min_frames, || {
        format!(
            "expected at least {min_frames} `@fw bt` frames, got {}",
            frames.len()
        )
    })?;
    for f in frames {
        f.num("addr")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The scenarios' checks.

pub(crate) fn check_boot<const N: u32>(log: &Log) -> CheckResult {
    healthy_boot(log, &N.to_string(), 0)?;
    crate::boot_image::booted_by_qemu(log)
}

/// Wall time within which 64 CPUs must be online.
pub const SMP64_ONLINE_WITHIN: Duration = Duration::from_secs(60);

pub(crate) fn check_smp64(log: &Log) -> CheckResult {
    healthy_boot(log, "64", 0)?;
    match log.time_of("cpus") {
        Some(t) => ensure(t <= SMP64_ONLINE_WITHIN, || {
            format!(
                "64 CPUs came online after {:.1} s of wall time (limit {} s)",
                t.as_secs_f64(),
                SMP64_ONLINE_WITHIN.as_secs()
            )
        }),
        None => Ok(()), // a log without timing (parsed from text): nothing to measure
    }
}

/// Two sockets of 72 cores and 2 threads: more CPUs than QEMU's pc machine takes, and APIC
/// IDs above 255 (socket 1's start at 256).
pub const SMP_288: &str = "288,sockets=2,cores=72,threads=2";

/// Every one of 288 CPUs online, placed and balanced as the simulator's model of the same
/// `-smp` says, in x2APIC mode, with APIC IDs above 255 among them.
pub(crate) fn check_smp288(log: &Log) -> CheckResult {
    healthy_boot(log, SMP_288, 0)?;
    let r = log.one("apic")?;
    ensure(r.get("mode") == Some("x2apic"), || format!("`{r}`: expected mode=x2apic"))?;
    let highest = log.records("cpu").map(|c| c.num("apic")).collect::<Result<Vec<_>, _>>()?.into_iter().max();
    ensure(highest.is_some_and(|a| a > 255), || format!("the highest APIC ID is {highest:?}, not above 255"))
}

pub(crate) fn check_topo_2s2c2t(log: &Log) -> CheckResult {
    healthy_boot(log, "8,sockets=2,cores=2,threads=2", 0)
}

pub(crate) fn check_topo_1s4c2t(log: &Log) -> CheckResult {
    healthy_boot(log, "8,sockets=1,cores=4,threads=2", 0)
}

pub(crate) fn check_topo_4s1c1t(log: &Log) -> CheckResult {
    healthy_boot(log, "4,sockets=4,cores=1,threads=1", 0)
}

pub(crate) fn check_topo_numa2(log: &Log) -> CheckResult {
    healthy_boot(log, "8,sockets=2,cores=4", 2)?;
    let acpi = log.one("acpi")?;
    num_is(acpi, "numa_nodes", 2)
}

pub(crate) fn apic_mode(log: &Log, mode: &str) -> CheckResult {
    let r = log.one("apic")?;
    ensure(r.get("mode") == Some(mode), || {
        format!("`{r}`: expected mode={mode}")
    })?;
    cpus_online(log, 8)?;
    cpu_lines(log, 8)
}

pub(crate) fn check_xapic(log: &Log) -> CheckResult {
    apic_mode(log, "xapic")
}

pub(crate) fn check_x2apic(log: &Log) -> CheckResult {
    apic_mode(log, "x2apic")
}

pub(crate) fn check_no_acpi(log: &Log) -> CheckResult {
    let r = log.one("acpi")?;
    ensure(r.get("none") == Some("1"), || {
        format!("`{r}`: expected none=1")
    })?;
    cpus_online(log, 1)?;
    cpu_lines(log, 1)
}

/// One `cmdline: ` line and one `@fw cmdline_problem` record per bad option (a line alone is
/// read by people, not by `bench`/`compare`, which then take the run's figures).
/// The kernel's heap need (kernel/src/mem/mod.rs `heap_need`), bytes: 5 MiB, 192 KiB per CPU and
/// 256 bytes per pair of CPUs.
pub fn heap_need_bytes(cpus: u64) -> u64 {
    (5 << 20) + cpus * (192 << 10) + cpus * cpus * 256
}

/// [`heap_need_bytes`] in KiB, rounded down as the kernel prints it.
pub fn heap_need_kib(cpus: u64) -> u64 {
    heap_need_bytes(cpus) / 1024
}

/// The usable memory (KiB) `cpus` CPUs need, from the boot's `@fw memory usable_kib= free_kib=`:
/// what is not free (the image, the low MiB) and four times the heap need (the heap is a
/// quarter of the free memory; valid above 16 CPUs, where the need passes the heap's 8 MiB
/// minimum).
pub fn usable_need_kib(cpus: u64, usable_kib: u64, free_kib: u64) -> u64 {
    usable_kib.saturating_sub(free_kib) + (4 * heap_need_bytes(cpus)).div_ceil(1024)
}

/// The usable memory need computed from this boot's `@fw memory` record, in MiB (rounded up),
/// and the usable MiB the boot had.
fn memory_need(log: &Log, cpus: u64) -> Result<(u64, u64), String> {
    let m = log.one("memory")?;
    let (usable, free) = (m.num("usable_kib")?, m.num("free_kib")?);
    Ok((usable_need_kib(cpus, usable, free).div_ceil(1024), usable / 1024))
}

/// `-smp 31 -m 32`: the heap cannot hold what 31 CPUs take. The kernel says so before starting
/// any other CPU, with the need computed from its own memory figures, and exits `oom`; nothing
/// ran out of memory first.
pub(crate) fn check_memory_too_small(log: &Log) -> CheckResult {
    let (need, usable) = memory_need(log, 31)?;
    ensure(usable < need, || format!("{usable} MiB usable is not below the need {need} MiB: the scenario tests nothing"))?;
    let f = log.one("boot_fatal")?;
    let want = format!("{usable} MiB is too small for 31 CPUs: need at least {need} MiB");
    ensure(f.get("msg").is_some_and(|m| m.starts_with(&want)), || format!("`{f}`: expected msg= to start `{want}`"))?;
    ensure(log.records("cpus").next().is_none(), || "other CPUs were started (`@fw cpus`)".into())?;
    ensure(log.records("oom").next().is_none(), || "the heap ran out (`@fw oom`) before the check".into())
}

/// `-smp 31` with the memory the refusal names, and a little more: the boot is healthy and the
/// workload runs.
pub(crate) fn check_memory_enough(log: &Log) -> CheckResult {
    let (need, usable) = memory_need(log, 31)?;
    ensure(usable >= need, || format!("{usable} MiB usable is below the need {need} MiB: give the scenario more"))?;
    ensure(log.records("boot_fatal").next().is_none(), || "the boot was refused".into())?;
    healthy_boot(log, "31", 0)?;
    let done = log.one("workload_done")?;
    ensure(done.get("ok") == Some("1"), || format!("`{done}`: expected ok=1"))
}

/// The command line of `machine-microvm`: a short workload with its own checks.
pub const MICROVM_APPEND: &str = "workload=pipe,rounds=1000";
/// The TSC rates the kernel's calibration accepts (kernel/src/arch/time.rs `TSC_HZ_PLAUSIBLE`).
pub const TSC_HZ_PLAUSIBLE: std::ops::RangeInclusive<u64> = 100_000_000..=100_000_000_000;
/// The line saying the PIT's channel 2 (port 0x61) gave nothing and channel 0 is used.
pub const CHANNEL0_FALLBACK: &str = "measuring against channel 0";

/// `-machine microvm` has no port 0x61: the first calibration is refused, the second (PIT
/// channel 0) is plausible, and then the machine works: every CPU online, every self-check ok,
/// the workload done.
pub(crate) fn check_microvm(log: &Log) -> CheckResult {
    let n = log.lines_starting_with("timer: ").filter(|l| l.contains(CHANNEL0_FALLBACK)).count();
    ensure(n == 1, || format!("expected one line `... {CHANNEL0_FALLBACK}`, found {n}"))?;
    let t = log.one("timer")?;
    let hz = t.num("tsc_hz")?;
    ensure(TSC_HZ_PLAUSIBLE.contains(&hz), || format!("`{t}`: tsc_hz outside {TSC_HZ_PLAUSIBLE:?}"))?;
    cpus_online(log, 4)?;
    selfchecks_ok(log)?;
    let done = log.one("workload_done")?;
    ensure(done.get("ok") == Some("1"), || format!("`{done}`: expected ok=1"))
}

/// No PIT: both calibrations are implausible, and the kernel says so (`@fw boot_fatal` naming
/// the PIT) and exits before starting any other CPU, instead of running with a clock 1000x off.
pub(crate) fn check_no_pit(log: &Log) -> CheckResult {
    let f = log.one("boot_fatal")?;
    ensure(f.get("msg").is_some_and(|m| m.contains("no working PIT")), || {
        format!("`{f}`: expected msg= to say there is no working PIT")
    })?;
    ensure(log.records("timer").next().is_none(), || "a TSC rate was accepted (`@fw timer`)".into())?;
    ensure(log.records("cpus").next().is_none(), || "the boot went on to start CPUs".into())
}

pub(crate) fn check_malformed_cmdline(log: &Log) -> CheckResult {
    let lines: Vec<&str> = log.lines_starting_with("cmdline: ").collect();
    let records: Vec<&str> = log.records("cmdline_problem").filter_map(|r| r.get("msg")).collect();
    for opt in MALFORMED_OPTIONS {
        let n = lines.iter().filter(|l| names_word(l, opt)).count();
        ensure(n == 1, || {
            format!("expected one `cmdline: ` line naming `{opt}`, found {n}: {lines:#?}")
        })?;
        let n = records.iter().filter(|m| names_word(m, opt)).count();
        ensure(n == 1, || {
            format!("expected one `@fw cmdline_problem` naming `{opt}`, found {n}: {records:#?}")
        })?;
    }
    ensure(records.len() == MALFORMED_OPTIONS.len(), || {
        format!("expected {} `@fw cmdline_problem` records, found {records:#?}", MALFORMED_OPTIONS.len())
    })?;
    ensure(lines.len() == MALFORMED_OPTIONS.len(), || {
        format!(
            "expected {} `cmdline: ` lines (one per bad option), found {}: {lines:#?}",
            MALFORMED_OPTIONS.len(),
            lines.len()
        )
    })?;
    let c = log.one("cmdline")?;
    ensure(c.get("msg").is_some_and(|m| m.contains(MALFORMED)), || {
        format!("`{c}`: expected msg= to hold the command line `{MALFORMED}`")
    })?;
    cpus_online(log, 4)?;
    selfchecks_ok(log)
}

pub(crate) fn fault(log: &Log, vector: u64, name: &str) -> CheckResult {
    let f = log.one("fault")?;
    num_is(f, "vector", vector)?;
    ensure(f.get("name") == Some(name), || {
        format!("`{f}`: expected name={name}")
    })?;
    ensure(f.num("rip")? != 0, || format!("`{f}`: rip=0"))?;
    Ok(())
}

pub(crate) fn check_page_fault(log: &Log) -> CheckResult {
    fault(log, 14, "#PF")?;
    num_is(log.one("fault")?, "cr2", CRASH_ADDRESS)?;
    let text = log.raw().to_ascii_lowercase();
    for reg in ["rax", "rbx", "rsp", "rbp"] {
        ensure(names_word(&text, reg), || {
            format!("register `{reg}` is not printed")
        })?;
    }
    backtrace(log, 2)
}

pub(crate) fn check_divide_error(log: &Log) -> CheckResult {
    fault(log, 0, "#DE")?;
    backtrace(log, 1)
}

pub(crate) fn check_panic(log: &Log) -> CheckResult {
    let p = log.one("panic")?;
    num_is(p, "cpu", 0)?;
    ensure(
        p.get("msg").is_some_and(|m| m.contains("deliberate panic")),
        || format!("`{p}`: expected msg= to contain `deliberate panic`"),
    )?;
    backtrace(log, 2)
}

/// Heap exhaustion: the failed request is named and a backtrace follows.
pub(crate) fn check_oom(log: &Log) -> CheckResult {
    let o = log.one("oom")?;
    ensure(o.num("size")? > 0, || {
        format!("`{o}`: expected size= of the failed request")
    })?;
    ensure(o.num("heap_size")? > 0, || {
        format!("`{o}`: expected heap_size=")
    })?;
    ensure(log.raw().contains("OUT OF MEMORY"), || {
        "no `OUT OF MEMORY` report line".to_string()
    })?;
    backtrace(log, 2)
}
