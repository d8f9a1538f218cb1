//! Runs a child (QEMU) with a hard timeout, streaming its stdout line by line.
//!
//! The child never outlives the harness: a guard kills it on drop (early return, panic), the
//! timeout kills it, and on Linux `PR_SET_PDEATHSIG` kills it if the harness itself dies.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use fairway_scenarios::{Log, QemuExit};

/// Kills and reaps the child when dropped, unless it was already reaped.
pub struct ChildGuard {
    child: Option<Child>,
}

impl ChildGuard {
    pub fn new(child: Child) -> Self {
        ChildGuard { child: Some(child) }
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        match self.child.as_mut() {
            Some(c) => {
                let s = c.try_wait()?;
                if s.is_some() {
                    self.child = None;
                }
                Ok(s)
            }
            None => Ok(None),
        }
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) -> Option<ExitStatus> {
        let mut c = self.child.take()?;
        let _ = c.kill();
        c.wait().ok()
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct RunResult {
    pub exit: QemuExit,
    /// The stdout lines, with the wall time at which each arrived.
    pub log: Log,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Sees each stderr line as it arrives (on the reader thread).
pub type StderrSink = Box<dyn FnMut(&str) + Send>;

enum Msg {
    Line(String, Duration),
    Eof,
}

/// Spawns `cmd` (stdin closed, stdout and stderr piped) and runs it for at most `timeout`.
/// `on_line` sees each stdout line as it arrives; `on_stderr` each stderr line.
pub fn run(
    mut cmd: Command,
    timeout: Duration,
    on_line: &mut dyn FnMut(&str),
    on_stderr: Option<StderrSink>,
) -> RunResult {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: prctl and getppid are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1); // the harness already died
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let prog = cmd.get_program().to_string_lossy().into_owned();
            return RunResult {
                exit: QemuExit::SpawnFailed(format!("{prog}: {e}")),
                log: Log::default(),
                stderr: String::new(),
                elapsed: start.elapsed(),
            };
        }
    };
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut guard = ChildGuard::new(child);

    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf)
                        .trim_end_matches(['\n', '\r'])
                        .to_string();
                    if tx.send(Msg::Line(line, start.elapsed())).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = tx.send(Msg::Eof);
    });
    let (etx, erx) = mpsc::channel();
    thread::spawn(move || {
        let mut on_stderr = on_stderr;
        let mut all = String::new();
        let mut r = BufReader::new(stderr);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf).into_owned();
                    if let Some(f) = on_stderr.as_mut() {
                        f(line.trim_end_matches(['\n', '\r']));
                    }
                    all.push_str(&line);
                }
            }
        }
        let _ = r.read_to_end(&mut buf);
        let _ = etx.send(all);
    });

    let deadline = start + timeout;
    let mut log = Log::default();
    let mut timed_out = false;
    let mut status = None;
    // Phase 1: stream stdout until EOF or the deadline.
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::Line(l, at)) => {
                on_line(&l);
                log.push(&l, Some(at));
            }
            Ok(Msg::Eof) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                status = guard.kill();
                break;
            }
        }
    }
    // Phase 2: stdout closed; wait for the exit, still bounded by the deadline.
    while status.is_none() && !timed_out {
        match guard.try_wait() {
            Ok(Some(s)) => status = Some(s),
            Ok(None) if Instant::now() >= deadline => {
                timed_out = true;
                status = guard.kill();
            }
            Ok(None) => thread::sleep(Duration::from_millis(10)),
            Err(_) => {
                status = guard.kill();
                break;
            }
        }
    }
    // Lines already read before the kill still belong to the log.
    while let Ok(Msg::Line(l, at)) = rx.recv_timeout(Duration::from_millis(200)) {
        on_line(&l);
        log.push(&l, Some(at));
    }
    let stderr = erx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
    let exit = QemuExit::decode(
        status.and_then(|s| s.code()),
        status.and_then(|s| s.signal()),
        timed_out,
    );
    RunResult {
        exit,
        log,
        stderr,
        elapsed: start.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(cmd: Command, timeout: Duration) -> RunResult {
        run(cmd, timeout, &mut |_| {}, None)
    }

    fn alive(pid: i32) -> bool {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn timeout_kills_the_child() {
        let mut cmd = Command::new("sleep");
        cmd.arg("100");
        let t = Instant::now();
        let r = quiet(cmd, Duration::from_millis(500));
        assert_eq!(r.exit, QemuExit::Timeout);
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "took {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn timeout_while_printing_keeps_the_lines() {
        let mut cmd = Command::new("sh");
        // exec: sh becomes the sleeping process, so the kill reaches it.
        cmd.args([
            "-c",
            "echo '@fw stage name=entry'; echo '@fw stage name=console'; exec sleep 100",
        ]);
        let mut seen = Vec::new();
        let r = run(
            cmd,
            Duration::from_millis(1500),
            &mut |l| seen.push(l.to_string()),
            None,
        );
        assert_eq!(r.exit, QemuExit::Timeout);
        assert_eq!(seen.len(), 2);
        assert_eq!(r.log.last_stage(), Some("console"));
        assert_eq!(r.log.next_stage(), Some("bootinfo"));
        assert!(r.log.lines[0].at.is_some());
    }

    #[test]
    fn guard_kills_on_drop() {
        let child = Command::new("sleep").arg("100").spawn().unwrap();
        let pid = child.id() as i32;
        assert!(alive(pid));
        drop(ChildGuard::new(child));
        assert!(!alive(pid), "child {pid} survived its guard");
    }

    #[test]
    fn exit_codes_are_decoded() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "printf 'a\\r\\nb\\nno newline'; echo err >&2; exit 33",
        ]);
        let r = quiet(cmd, Duration::from_secs(10));
        assert_eq!(
            r.exit,
            QemuExit::Kernel(fairway_scenarios::Outcome::Success)
        );
        let lines: Vec<_> = r.log.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(lines, vec!["a", "b", "no newline"]);
        assert_eq!(r.stderr, "err\n");

        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exit 1"]);
        assert_eq!(
            quiet(cmd, Duration::from_secs(10)).exit,
            QemuExit::QemuError
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "kill -TERM $$"]);
        assert_eq!(
            quiet(cmd, Duration::from_secs(10)).exit,
            QemuExit::Signal(15)
        );
    }

    #[test]
    fn missing_program() {
        let r = quiet(
            Command::new("/nonexistent/qemu-system-x86_64"),
            Duration::from_secs(5),
        );
        assert!(matches!(r.exit, QemuExit::SpawnFailed(ref e) if e.contains("/nonexistent")));
    }
}
