//! `workload=overflow`: a thread that recurses without bound, to show that a
//! stack overflow hits the guard page and is reported by the thread's name.

use crate::cmdline::Workload;
use mech::thread::Spawn;

#[inline(never)]
#[allow(unconditional_recursion)]
fn recurse(depth: u64, buf: &mut [u8; 512]) -> u64 {
    let mut local = [0u8; 512];
    local[(depth % 512) as usize] = buf[(depth % 512) as usize].wrapping_add(1);
    core::hint::black_box(&mut local);
    recurse(depth + 1, &mut local) + local[0] as u64
}

pub fn run(_w: &Workload) -> bool {
    let t = super::spawn(Spawn::new("deep-recursion"), || {
        let mut b = [0u8; 512];
        let r = recurse(0, &mut b);
        core::hint::black_box(r);
    });
    if let Some(t) = t {
        mech::thread::join(&t);
    }
    // Not reached: the overflow ends the run with the exception status.
    false
}
