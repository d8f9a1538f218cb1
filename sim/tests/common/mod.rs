//! Helpers of the tests that run fairway's mechanism on the simulator
//! (`fairway_sim::platform`). The mechanism's state is per process, so
//! each test file holds one test, and a test that needs several runs (seeds)
//! starts this test binary again once per run (`in_child`).
#![allow(dead_code)]

use std::process::Command;

/// Runs `run` in a fresh process of this test binary (its `test_name`
/// filtered, `SIM_CHILD=arg` in the environment) and returns what the child
/// printed between `@child-begin` and `@child-end`; panics with the child's
/// output if it failed.
pub fn in_child(test_name: &str, arg: &str) -> String {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env("SIM_CHILD", arg)
        .output()
        .expect("start the child test process");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child run {arg} failed: {}\n--- stdout\n{stdout}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let begin = stdout.find("@child-begin\n").unwrap_or_else(|| panic!("child {arg} printed no result:\n{stdout}"));
    let end = stdout.find("@child-end").expect("the end of the child's result");
    stdout[begin + "@child-begin\n".len()..end].to_string()
}

/// The child's argument, if this process is a child run.
pub fn child_arg() -> Option<String> {
    std::env::var("SIM_CHILD").ok()
}

/// Prints a child's result for `in_child`.
pub fn child_result(text: &str) {
    println!("@child-begin\n{text}@child-end");
}
