//! Serial-console renderings of the topology and the domains.
//!
//! Three formats, all written to any `core::fmt::Write`:
//!
//! 1. [`write_sched_domain_debug`]: Linux's sched-domain debug text for one
//!    CPU, every line ending in `\n`:
//!    ```text
//!    CPU0 attaching sched-domain(s):
//!     domain-0: span=0-1 level=SMT
//!      groups: 0:{ span=0 }, 1:{ span=1 }
//!      domain-1: span=0-3 level=MC
//!       groups: 0:{ span=0-1 cap=2048 }, 2:{ span=2-3 cap=2048 }
//!    ```
//!    Domain k is indented k+1 spaces, its groups line k+2. Each group is
//!    `<first cpu>:{ span=<cpulist>[ cap=<capacity>] }`, `cap=` only when the
//!    capacity is not 1024. A CPU without domains prints
//!    `CPU3 attaching NULL sched-domain.`.
//! 2. [`write_sd_line`]: one machine line per CPU and level, no newline:
//!    `@fw sd cpu=0 level=SMT span=0-1 groups=0/1 flags=SD_BALANCE_NEWIDLE|...`
//!    `groups=` lists group spans (cpulist) local first, separated by `/`;
//!    `flags=` names the set flags in bit order (see
//!    [`super::flags::SD_FLAG_NAMES`]) joined by `|` (empty when none).
//! 3. [`write_cpu_line`]: `@fw cpu id=0 apic=0 pkg=0 core=0 smt=0 llc=0 node=0`
//!    (all decimal), no newline.

use core::fmt::{self, Write};

use super::domain::SchedDomain;
use super::domains::{SchedDomains, SCHED_CAPACITY_SCALE};
use super::flags::write_flag_names;
use super::CpuTopology;

/// Linux-style debug text of `cpu`'s domains (several `\n`-terminated lines).
pub fn write_sched_domain_debug<W: Write + ?Sized>(
    w: &mut W,
    sds: &SchedDomains,
    cpu: usize,
) -> fmt::Result {
    let chain = sds.per_cpu(cpu);
    if chain.is_empty() {
        return writeln!(w, "CPU{cpu} attaching NULL sched-domain.");
    }
    writeln!(w, "CPU{cpu} attaching sched-domain(s):")?;
    for (k, sd) in chain.iter().enumerate() {
        writeln!(
            w,
            "{:pad$}domain-{k}: span={} level={}",
            "",
            sd.span,
            sd.level,
            pad = k + 1
        )?;
        write!(w, "{:pad$}groups:", "", pad = k + 2)?;
        for (i, g) in sd.groups.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let first = g.span.first().unwrap_or(g.balance_cpu);
            write!(w, "{sep} {first}:{{ span={}", g.span)?;
            if g.capacity != SCHED_CAPACITY_SCALE {
                write!(w, " cap={}", g.capacity)?;
            }
            w.write_str(" }")?;
        }
        w.write_char('\n')?;
    }
    Ok(())
}

/// The `@fw sd` line of one domain of `cpu` (no trailing newline).
pub fn write_sd_line<W: Write + ?Sized>(w: &mut W, cpu: usize, sd: &SchedDomain) -> fmt::Result {
    write!(
        w,
        "@fw sd cpu={cpu} level={} span={} groups=",
        sd.level, sd.span
    )?;
    for (i, g) in sd.groups.iter().enumerate() {
        if i > 0 {
            w.write_char('/')?;
        }
        write!(w, "{}", g.span)?;
    }
    w.write_str(" flags=")?;
    write_flag_names(w, sd.flags)
}

/// The `@fw cpu` line of one CPU (no trailing newline).
pub fn write_cpu_line<W: Write + ?Sized>(w: &mut W, t: &CpuTopology) -> fmt::Result {
    write!(
        w,
        "@fw cpu id={} apic={} pkg={} core={} smt={} llc={} node={}",
        t.cpu, t.apic_id, t.pkg_id, t.core_id, t.smt_id, t.llc_id, t.node
    )
}
