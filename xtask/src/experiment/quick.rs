//! The test suite's hook: each experiment's quick form, booted end to end and its checks read
//! (`experiment-NAME-quick`).

use super::{all, claims, run_matrix, text_view, Mode, Spec};

/// The test suite's hook: the quick form of every experiment whose `experiment-NAME-quick`
/// contains `filter`, booted end to end; passes when every direction check holds.
pub fn quick_jobs(filter: &str, qemu: &std::path::Path, elf: &std::path::Path) -> Vec<crate::test::Job> {
    // One slot each, beside the scenarios: every boot is under -icount, so running beside another
    // changes no figure, only the wall time.
    all()
        .into_iter()
        .filter(|s| format!("experiment-{}-quick", s.name).contains(filter))
        .map(|spec| {
            let (qemu, elf) = (qemu.to_path_buf(), elf.to_path_buf());
            let boots = (spec.quick.points.len() * spec.variants.len()) as u32;
            crate::test::Job {
                slots: 1,
                boots,
                run: Box::new(move || quick_verdict(&spec, &qemu, &elf)),
            }
        })
        .collect()
}

/// One experiment's quick form, booted and read.
fn quick_verdict(spec: &Spec, qemu: &std::path::Path, elf: &std::path::Path) -> crate::test::Verdict {
    let name: &'static str = Box::leak(format!("experiment-{}-quick", spec.name).into_boxed_str());
    let t = std::time::Instant::now();
    match run_matrix(spec, &spec.quick, qemu, elf, Mode::Icount, 1) {
        Err(e) => crate::test::Verdict { name, passed: false, report: format!("FAIL {name}: {e}\n"), secs: t.elapsed().as_secs_f64() },
        Ok(m) => {
            let r = (spec.read)(&m);
            let d = claims::decide_all(&spec.claims, &m, &crate::stats::bootstrap::Bootstrap::default());
            let failed: Vec<&str> = r.checks.iter().filter(|c| !c.holds).map(|c| c.what.as_str()).collect();
            // No check: the effect is too small at the quick size to have a stable direction; the
            // quick form still proves every cell boots and the rules read the matrix.
            if failed.is_empty() {
                crate::test::Verdict {
                    name,
                    passed: true,
                    report: format!("ok   {name} ({:.1} s): {} check(s) hold\n", t.elapsed().as_secs_f64(), r.checks.len()),
                    secs: t.elapsed().as_secs_f64(),
                }
            } else {
                crate::test::Verdict { name, passed: false, report: format!("FAIL {name}: {}\n{}", failed.join("; "), text_view(spec, &m, &r, &d)), secs: t.elapsed().as_secs_f64() }
            }
        }
    }
}

