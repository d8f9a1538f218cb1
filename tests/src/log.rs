//! Parser of fairway's serial console (docs/CONSOLE.md).
//!
//! A machine-readable line is `@fw KIND key=value key=value ...`; values have no spaces except
//! `msg=`, which is always last and runs to the end of the line. Everything else is human text,
//! kept in [`Log::raw`] / [`Log::lines`] for grepping.

use std::fmt;
use std::time::Duration;

/// The boot stages, in the order the kernel reaches them (docs/CONSOLE.md).
pub const STAGES: &[&str] = &[
    "entry",
    "console",
    "bootinfo",
    "memory",
    "heap",
    "cmdline",
    "interrupts",
    "acpi",
    "apic",
    "timer",
    "smp",
    "topology",
    "domains",
    "selfcheck",
    "sched",
    "workload",
    "shutdown",
];

/// The prefix of every machine-readable line.
pub const PREFIX: &str = "@fw ";

/// One `@fw` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Index of the line in [`Log::lines`].
    pub line: usize,
    pub kind: String,
    /// Fields in the order printed. A token without `=` is kept with an empty value.
    pub fields: Vec<(String, String)>,
}

impl Record {
    /// Parses one console line; `None` when it is not a machine-readable line.
    pub fn parse(line_no: usize, line: &str) -> Option<Record> {
        // Tolerate control characters (a stray NUL or escape from firmware) before the prefix.
        let text = line.trim_start_matches(|c: char| c.is_control());
        let rest = text.strip_prefix(PREFIX)?;
        let rest = rest.trim_end_matches(['\r', '\n']);
        let (kind, mut tail) = match rest.find(' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        if kind.is_empty() {
            return None;
        }
        let mut fields = Vec::new();
        while !tail.is_empty() {
            if let Some(msg) = tail.strip_prefix("msg=") {
                fields.push(("msg".to_string(), msg.to_string()));
                break;
            }
            let (tok, next) = match tail.find(' ') {
                Some(i) => (&tail[..i], &tail[i + 1..]),
                None => (tail, ""),
            };
            tail = next;
            if tok.is_empty() {
                continue;
            }
            match tok.split_once('=') {
                Some((k, v)) => fields.push((k.to_string(), v.to_string())),
                None => fields.push((tok.to_string(), String::new())),
            }
        }
        Some(Record {
            line: line_no,
            kind: kind.to_string(),
            fields,
        })
    }

    /// The value of a field, if present (the first one when repeated).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of a field, or an error naming the record.
    pub fn field(&self, key: &str) -> Result<&str, String> {
        self.get(key)
            .ok_or_else(|| format!("`{self}` has no field `{key}=`"))
    }

    /// A numeric field, decimal or `0x` hexadecimal.
    pub fn num(&self, key: &str) -> Result<u64, String> {
        let v = self.field(key)?;
        parse_num(v).ok_or_else(|| format!("`{self}`: field `{key}={v}` is not a number"))
    }

    /// A cpulist field (`0-3,8`), as a sorted list of CPU numbers.
    pub fn cpus(&self, key: &str) -> Result<Vec<u32>, String> {
        let v = self.field(key)?;
        parse_cpulist(v).map_err(|e| format!("`{self}`: field `{key}=`: {e}"))
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", PREFIX, self.kind)?;
        for (k, v) in &self.fields {
            if v.is_empty() && k != "msg" {
                write!(f, " {k}")?;
            } else {
                write!(f, " {k}={v}")?;
            }
        }
        Ok(())
    }
}

/// One console line, with the wall time since QEMU started when the harness recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub at: Option<Duration>,
}

/// A parsed serial log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    pub lines: Vec<Line>,
    pub records: Vec<Record>,
}

impl Log {
    /// Parses a whole log without timing information.
    pub fn parse(text: &str) -> Log {
        let mut log = Log::default();
        for l in text.lines() {
            log.push(l, None);
        }
        log
    }

    /// Appends one line (a trailing `\r` is dropped).
    pub fn push(&mut self, line: &str, at: Option<Duration>) {
        let text = line.trim_end_matches(['\r', '\n']).to_string();
        let n = self.lines.len();
        if let Some(r) = Record::parse(n, &text) {
            self.records.push(r);
        }
        self.lines.push(Line { text, at });
    }

    /// The whole log as text.
    pub fn raw(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&l.text);
            s.push('\n');
        }
        s
    }

    /// All records of a kind, in order.
    pub fn records<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Record> + 'a {
        self.records.iter().filter(move |r| r.kind == kind)
    }

    /// The first record of a kind, or an error saying it is missing.
    pub fn one(&self, kind: &str) -> Result<&Record, String> {
        self.records
            .iter()
            .find(|r| r.kind == kind)
            .ok_or_else(|| format!("no `{PREFIX}{kind}` line"))
    }

    /// Lines (human or machine) that start with `prefix`.
    pub fn lines_starting_with<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = &'a str> + 'a {
        self.lines
            .iter()
            .map(|l| l.text.as_str())
            .filter(move |t| t.starts_with(prefix))
    }

    /// Whether any line contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.lines.iter().any(|l| l.text.contains(needle))
    }

    /// The names of the stages reported, in order.
    pub fn stages(&self) -> Vec<&str> {
        self.records("stage")
            .filter_map(|r| r.get("name"))
            .collect()
    }

    /// The last boot stage reported.
    pub fn last_stage(&self) -> Option<&str> {
        self.stages().last().copied()
    }

    /// The stage after the furthest one reached (in [`STAGES`] order), i.e. the first one the
    /// kernel never reached; `entry` when no stage was reported, `None` when all were.
    pub fn next_stage(&self) -> Option<&'static str> {
        let furthest = self
            .stages()
            .iter()
            .filter_map(|s| STAGES.iter().position(|x| x == s))
            .max();
        match furthest {
            None => Some(STAGES[0]),
            Some(i) => STAGES.get(i + 1).copied(),
        }
    }

    /// One line such as `last stage: smp; never reached: topology`.
    pub fn stage_summary(&self) -> String {
        let last = self.last_stage().unwrap_or("(none)");
        match self.next_stage() {
            Some(n) => format!("last stage reached: {last}; never reached: {n}"),
            None => format!("last stage reached: {last} (all stages reached)"),
        }
    }

    /// The wall time at which the first record of `kind` arrived, if timing was recorded.
    pub fn time_of(&self, kind: &str) -> Option<Duration> {
        let r = self.records.iter().find(|r| r.kind == kind)?;
        self.lines.get(r.line)?.at
    }
}

/// Parses a decimal or `0x`-prefixed hexadecimal number.
pub fn parse_num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Parses Linux's cpulist format (`0-3,8,10-11`) into a sorted, deduplicated list.
pub fn parse_cpulist(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    if s.is_empty() {
        return Err("empty cpulist".into());
    }
    for part in s.split(',') {
        let bad = || format!("bad cpulist `{s}`");
        match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = a.parse().map_err(|_| bad())?;
                let b: u32 = b.parse().map_err(|_| bad())?;
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Formats CPUs (in any order) as a canonical cpulist: sorted, with ranges.
pub fn format_cpulist(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Parses a list of CPU sets separated by `/` (sched groups), keeping their order.
pub fn parse_groups(s: &str) -> Result<Vec<Vec<u32>>, String> {
    s.split('/').map(parse_cpulist).collect()
}

/// Formats groups as the kernel prints them: canonical cpulists joined by `/`.
pub fn format_groups(groups: &[Vec<u32>]) -> String {
    groups
        .iter()
        .map(|g| format_cpulist(g))
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "fairway booting\r\n\
@fw stage name=entry\r\n\
@fw stage name=console\n\
@fw cmdline raw=1 msg=test_crash=panic  log=debug\n\
cmdline: unknown option `bogus`, ignored\n\
@fw stage name=cmdline\n\
@fw cpu id=0 apic=0 pkg=0 core=0 smt=0 llc=0 node=0\n\
@fw sd cpu=5 level=SMT span=4-5 groups=5/4 flags=0x2f\n\
@fw fault cpu=0 vector=14 name=#PF error=0x2 rip=0xffffffff80001234 cr2=0xdead0000\n\
@fw panic cpu=1 msg=panicked at kernel/src/main.rs:10:5: deliberate panic = yes\n\
\x20 @fw not-a-record because of the leading spaces\n\
@fw\n";

    #[test]
    fn parses_records_and_fields() {
        let log = Log::parse(SAMPLE);
        assert_eq!(log.lines.len(), 12);
        assert_eq!(log.lines[1].text, "@fw stage name=entry");
        assert_eq!(log.records.len(), 8);
        let c = log.one("cmdline").unwrap();
        assert_eq!(c.get("raw"), Some("1"));
        assert_eq!(c.get("msg"), Some("test_crash=panic  log=debug"));
        let sd = log.one("sd").unwrap();
        assert_eq!(sd.num("cpu").unwrap(), 5);
        assert_eq!(sd.cpus("span").unwrap(), vec![4, 5]);
        assert_eq!(
            parse_groups(sd.field("groups").unwrap()).unwrap(),
            vec![vec![5], vec![4]]
        );
        let f = log.one("fault").unwrap();
        assert_eq!(f.num("cr2").unwrap(), 0xdead0000);
        assert_eq!(f.num("vector").unwrap(), 14);
        assert_eq!(f.get("name"), Some("#PF"));
        let p = log.one("panic").unwrap();
        assert_eq!(
            p.get("msg"),
            Some("panicked at kernel/src/main.rs:10:5: deliberate panic = yes")
        );
        assert!(log.field_error_mentions_record());
        assert_eq!(log.lines_starting_with("cmdline: ").count(), 1);
        assert!(log.one("oom").is_err());
    }

    impl Log {
        fn field_error_mentions_record(&self) -> bool {
            let e = self.one("cpu").unwrap().field("nope").unwrap_err();
            e.contains("@fw cpu id=0") && e.contains("nope=")
        }
    }

    #[test]
    fn stages() {
        let log = Log::parse(SAMPLE);
        assert_eq!(log.last_stage(), Some("cmdline"));
        assert_eq!(log.next_stage(), Some("interrupts"));
        assert_eq!(
            log.stage_summary(),
            "last stage reached: cmdline; never reached: interrupts"
        );
        let empty = Log::parse("garbage\n");
        assert_eq!(empty.last_stage(), None);
        assert_eq!(empty.next_stage(), Some("entry"));
        let all: String = STAGES
            .iter()
            .map(|s| format!("@fw stage name={s}\n"))
            .collect();
        assert_eq!(Log::parse(&all).next_stage(), None);
    }

    #[test]
    fn control_chars_before_prefix_and_timing() {
        let mut log = Log::default();
        log.push(
            "\u{1b}\u{0}@fw cpus online=2 expected=2 boot_us=10",
            Some(Duration::from_secs(3)),
        );
        assert_eq!(log.time_of("cpus"), Some(Duration::from_secs(3)));
        assert_eq!(log.one("cpus").unwrap().num("online").unwrap(), 2);
    }

    #[test]
    fn cpulists() {
        assert_eq!(parse_cpulist("0-3,8").unwrap(), vec![0, 1, 2, 3, 8]);
        assert_eq!(parse_cpulist("7").unwrap(), vec![7]);
        assert!(parse_cpulist("").is_err());
        assert!(parse_cpulist("3-1").is_err());
        assert!(parse_cpulist("a").is_err());
        assert_eq!(format_cpulist(&[8, 0, 1, 2, 3]), "0-3,8");
        assert_eq!(format_cpulist(&[5]), "5");
        assert_eq!(format_cpulist(&[0, 2, 4, 5]), "0,2,4-5");
        assert_eq!(
            format_groups(&[vec![4, 5, 6, 7], vec![0, 1, 2, 3]]),
            "4-7/0-3"
        );
        assert_eq!(parse_num("0x10"), Some(16));
        assert_eq!(parse_num("10"), Some(10));
        assert_eq!(parse_num("x"), None);
    }
}
