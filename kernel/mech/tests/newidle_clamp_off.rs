//! The constructed clamp run (`clamp_case`) with `newidle=off`: no attempt,
//! no pull, and CPU 0 idles through every period while free tasks wait.

mod clamp_case;
mod common;

#[test]
fn newidle_off_pulls_nothing_and_idles_while_tasks_wait() {
    let want = clamp_case::expect(None);
    assert_eq!((want.attempts, want.pulled, want.idle_wait_ns), (0, 0, 5 * 200_000));
    assert_eq!(clamp_case::run(None), want);
}
