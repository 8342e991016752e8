//! Helpers for the tests that stop a running `lshdb` with a signal: start
//! it with its standard input kept open, send the signal, wait for the end.

use super::Cli;
use std::io::Write;
use std::process::{Child, ChildStdin, Stdio};
use std::time::{Duration, Instant};

impl Cli {
    /// Starts `lshdb ARGS` with its three streams piped and writes `input`
    /// to its standard input, which is returned open (the program then
    /// waits for more).
    pub fn spawn_fed(&self, args: &[&str], input: &str) -> (Child, ChildStdin) {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lshdb");
        let mut stdin = child.stdin.take().expect("stdin");
        // A command that ends before reading its input (a usage error)
        // closes the pipe: that is the command's answer, not the test's.
        let fed = stdin
            .write_all(input.as_bytes())
            .and_then(|()| stdin.flush());
        if let Err(err) = fed {
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::BrokenPipe,
                "write stdin: {err}"
            );
        }
        (child, stdin)
    }
}

/// Sends `signal` (`-INT`, `-KILL`, …) to the child with `kill`.
pub fn send(child: &Child, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill {signal} failed");
}

/// Waits until the child has ended; fails the test with `what` when it
/// still runs after `limit`.
pub fn wait_ended(child: &mut Child, limit: Duration, what: &str) {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(start.elapsed() < limit, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
