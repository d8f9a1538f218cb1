//! `workload=NAME[,key=value...]` and `seed=`: what the kernel runs, with
//! the parameters its declaration accepts, and the seed of its draws.

use alloc::string::String;
use alloc::vec::Vec;

use super::{report_problem, store, Applied, Pass};
use crate::{params, params::Param, params::Spec};

/// A workload and its parameters, e.g. `workload=pipe,rounds=1000,mode=cross`.
///
/// Invariant: every parameter in `params` is declared by `spec` and its
/// value is accepted by the declaration (`parse` drops the others, with a
/// message), so reading one never fails.
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub spec: &'static Spec,
    pub params: Vec<(String, String)>,
    /// The run's seed (`seed=`, or the simulator's `--seed`): mixed into
    /// every random stream the workload draws from ([`Workload::rng`]).
    pub seed: u64,
}

impl Workload {
    /// `spec`'s workload with all parameters at their defaults.
    pub fn with_defaults(spec: &'static Spec) -> Workload {
        Workload { name: String::from(spec.name), spec, params: Vec::new(), seed: 0 }
    }

    /// The random stream `stream` of this run: seed 0 gives the stream a
    /// workload drew from before it took a seed (`Rng::new(stream)`), so
    /// runs without `seed=` are the runs they always were; every other seed
    /// gives other draws, the same for the same seed.
    pub fn rng(&self, stream: u64) -> crate::Rng {
        crate::Rng::new(stream ^ self.seed.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    /// The declaration of `key`. A workload reading a parameter it does not
    /// declare is a bug in that workload, not bad input.
    fn declared(&self, key: &str) -> &'static Param {
        match self.spec.param(key) {
            Some(p) => p,
            None => panic!("workload {} reads parameter {:?}, which its declaration lacks", self.name, key),
        }
    }

    /// The numeric parameter `key`: the value given last, or its declared
    /// default.
    pub fn num(&self, key: &str) -> u64 {
        let p = self.declared(key);
        match self.params.iter().rev().find(|(k, _)| k == key) {
            // validated by `parse`: a number within the declared range
            Some((_, v)) => v.parse().unwrap_or(0),
            None => params::num_default(p, mech::rq::online_mask().weight() as u64),
        }
    }

    /// The word parameter `key`: the value given last, or its declared
    /// default (the first choice).
    pub fn text(&self, key: &str) -> &str {
        let p = self.declared(key);
        match self.params.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => v.as_str(),
            None => match p.accepts {
                params::Accepts::Choice(c) => c[0],
                params::Accepts::Num { .. } => "",
            },
        }
    }

    /// The CPU parameter `key`, which must name one of the online `cpus`
    /// (ascending). Its default falls back to the last online CPU quietly
    /// (`cpu=1` on a one-CPU machine is CPU 0, as documented); a CPU given
    /// on the command line that is not online is reported, and the last
    /// online CPU is used.
    pub fn cpu(&self, key: &str, cpus: &[usize]) -> usize {
        let want = self.num(key) as usize;
        let last = cpus.last().copied().unwrap_or(0);
        if cpus.contains(&want) {
            return want;
        }
        if self.params.iter().any(|(k, _)| k == key) {
            report_problem(format_args!(
                "workload={}: {}={} is not an online CPU (online: {} CPUs); using CPU {}",
                self.name,
                key,
                want,
                cpus.len(),
                last
            ));
        }
        last
    }
}

/// Applies `workload=` and `seed=`.
pub(super) fn apply(pass: &mut Pass, key: &str, value: &str) -> Applied {
    let o = &mut pass.options;
    Some(match key {
        "workload" => match parse_workload(value, &mut pass.problems) {
            Ok(w) => {
                o.workload = w;
                Ok(())
            }
            Err(e) => Err(message!("workload={value:?}: {e}; running workload={}", o.workload.name)),
        },
        "seed" => store(&mut o.seed, value.parse().ok().map(Some), |kept| {
            message!("seed={value:?} is not a number from 0 to 18446744073709551615; using seed={}", kept.unwrap_or(0))
        }),
        _ => return None,
    })
}

/// `workload=NAME[,key=value...]`: the workload, with the parameters its
/// declaration accepts; one message per parameter dropped (added to
/// `problems`). An unknown workload or a parameter that is not `key=value`
/// rejects the whole option; an empty parameter (a trailing or doubled
/// comma, `workload=pipe,rounds=5,`) is no parameter and is skipped.
fn parse_workload(value: &str, problems: &mut Vec<String>) -> Result<Workload, String> {
    let mut parts = value.split(',');
    let name = parts.next().unwrap_or("");
    let Some(spec) = crate::spec(name) else {
        let names: Vec<&str> = crate::SPECS.iter().map(|s| s.name).collect();
        return Err(message!("unknown workload (known: {})", names.join(", ")));
    };
    let mut w = Workload::with_defaults(spec);
    for p in parts.filter(|p| !p.is_empty()) {
        let (k, v) = match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => (k, v),
            _ => return Err(message!("parameter {p:?} is not key=value")),
        };
        match spec.param(k) {
            None => {
                let keys: Vec<&str> = spec.all().map(|p| p.key).collect();
                let takes = if keys.is_empty() { String::from("takes no parameters") } else { message!("takes {}", keys.join(", ")) };
                problems.push(message!("workload={name}: unknown parameter {k:?} ({name} {takes}); ignored"));
            }
            Some(decl) => match params::reject(decl, v) {
                None => w.params.push((String::from(k), String::from(v))),
                Some(why) => {
                    problems.push(message!("workload={name}: {why}; using {k}={}", params::describe_default(decl)));
                }
            },
        }
    }
    Ok(w)
}
