//! Runs a child (QEMU) with a hard timeout, streaming its stdout line by line.
//!
//! The child's stdout is an unlinked regular file that a thread here follows, not a pipe. QEMU
//! makes its stdout non-blocking, and a write to a full pipe fails: its serial port then stays
//! busy until QEMU's main loop retries, and the kernel, waiting for the port to take the next
//! byte, spins for as long as the host takes to read. Under `-icount` that spin is guest time,
//! so how fast this process read would move every figure a boot measures (`storm` at `-smp 1`
//! moved by a few timer interrupts between two boots read through a pipe). A write to a regular file never
//! waits for its reader.
//!
//! The child never outlives the harness: a guard kills it on drop (early return, panic), the
//! timeout kills it, and on Linux `PR_SET_PDEATHSIG` kills it if the harness itself dies.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
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

/// A new unlinked regular file: the child's handle (write) and ours (read), two open file
/// descriptions so that each has its own offset.
fn console_file() -> std::io::Result<(File, File)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    loop {
        let path = std::env::temp_dir().join(format!(
            "fairway-console-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        // (a name left by a process that had this pid and died between open and unlink: next)
        let w = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            w => w?,
        };
        let r = File::open(&path);
        let _ = std::fs::remove_file(&path);
        return Ok((w, r?));
    }
}

/// How often the follower looks for more output when it has read everything.
const FOLLOW_POLL: Duration = Duration::from_millis(5);

/// Follows the child's output file as `tail -f` does: hands `line` each line (without its
/// `\r\n`) as soon as it is complete, and the last one even without a newline. Returns when a
/// read that began after `exited` was set found nothing more, or when `line` returns false.
fn follow(file: File, exited: &AtomicBool, line: &mut dyn FnMut(String) -> bool) {
    let emit = |buf: &[u8], line: &mut dyn FnMut(String) -> bool| {
        line(
            String::from_utf8_lossy(buf)
                .trim_end_matches(['\n', '\r'])
                .to_string(),
        )
    };
    let mut r = BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        let done = exited.load(Ordering::Acquire);
        match r.read_until(b'\n', &mut buf) {
            Err(_) => break,
            Ok(_) if buf.ends_with(b"\n") => {
                if !emit(&buf, line) {
                    return;
                }
                buf.clear();
            }
            // The end of what was written so far; a partial line stays in `buf`.
            Ok(_) if done => break,
            Ok(_) => thread::sleep(FOLLOW_POLL),
        }
    }
    if !buf.is_empty() {
        emit(&buf, line);
    }
}

/// Spawns `cmd` (stdin closed, stdout an unlinked regular file followed here, stderr piped) and
/// runs it for at most `timeout`. `on_line` sees each stdout line as it arrives; `on_stderr`
/// each stderr line.
pub fn run(
    mut cmd: Command,
    timeout: Duration,
    on_line: &mut dyn FnMut(&str),
    on_stderr: Option<StderrSink>,
) -> RunResult {
    let start = Instant::now();
    let (out_w, out_r) = match console_file() {
        Ok(f) => f,
        Err(e) => {
            return RunResult {
                exit: QemuExit::SpawnFailed(format!(
                    "cannot create the console file in {}: {e}",
                    std::env::temp_dir().display()
                )),
                log: Log::default(),
                stderr: String::new(),
                elapsed: start.elapsed(),
            }
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(out_w))
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
    // The command still holds our copy of the file's write side; the child has its own.
    drop(cmd);
    let stderr = child.stderr.take().expect("piped stderr");
    let mut guard = ChildGuard::new(child);

    // Set once the child is reaped: from then on, an empty read is the end of its output.
    let exited = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    {
        let exited = exited.clone();
        thread::spawn(move || {
            follow(out_r, &exited, &mut |line| {
                tx.send(Msg::Line(line, start.elapsed())).is_ok()
            });
            let _ = tx.send(Msg::Eof);
        });
    }
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
    let mut last_check: Option<Instant> = None;
    // Stream the lines until the follower has read the last of them; every `FOLLOW_POLL`, see
    // whether the child exited or the deadline passed, and if so tell the follower.
    loop {
        match rx.recv_timeout(FOLLOW_POLL) {
            Ok(Msg::Line(l, at)) => {
                on_line(&l);
                log.push(&l, Some(at));
            }
            Ok(Msg::Eof) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if exited.load(Ordering::Relaxed) || last_check.is_some_and(|t| t.elapsed() < FOLLOW_POLL) {
            continue;
        }
        last_check = Some(Instant::now());
        match guard.try_wait() {
            Ok(Some(s)) => status = Some(s),
            Ok(None) if Instant::now() >= deadline => {
                timed_out = true;
                status = guard.kill();
            }
            Ok(None) => continue,
            Err(_) => status = guard.kill(),
        }
        // Reaped: whatever it wrote is in the file; the lines read so far, and those after,
        // belong to the log.
        exited.store(true, Ordering::Release);
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

    /// QEMU makes its stdout non-blocking; when it was a pipe, a write that found the pipe full
    /// failed with EAGAIN, the serial port stayed busy until QEMU's main loop retried, and the
    /// guest spun on the port for as long as the host took: under `-icount` that spin is guest
    /// time, so a slow reader changed the figures. `dd oflag=nonblock` writing 4 MiB at once is
    /// that writer: it fails on a pipe however fast the reader, and must not here.
    #[test]
    fn a_nonblocking_writer_never_waits_for_the_reader() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "dd if=/dev/zero bs=4M count=1 oflag=nonblock status=none || exit 35; exit 33",
        ]);
        let r = quiet(cmd, Duration::from_secs(30));
        assert_eq!(
            r.exit,
            QemuExit::Kernel(fairway_scenarios::Outcome::Success),
            "dd's stderr: {}",
            r.stderr
        );
        let bytes: usize = r.log.lines.iter().map(|l| l.text.len()).sum();
        assert_eq!(bytes, 4 << 20);
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
