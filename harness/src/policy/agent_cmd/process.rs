//! Running the agent's command: `sh -c LINE` in the pair's directory, stdin closed, as
//! the leader of a process group of its own (the agent, its model client, any MCP
//! helper it starts), with a deadline. Whatever happens, the whole group is killed
//! and the command reaped before this returns, so nothing an agent starts outlives its
//! pair. stdout is kept up to a limit ([`STDOUT_LIMIT`] for an answer,
//! [`REPORT_STDOUT_LIMIT`] for a CLI's JSON report; its end: the answer comes last),
//! stderr's end for error messages; both are read while the command runs, so a chatty
//! agent never blocks on a full pipe.

use std::collections::VecDeque;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt as _;
use tokio::task::JoinHandle;

use crate::session::mcp_client::{
    Signal, TOKEN_VAR, become_subreaper, new_token, own_process_group, signal_group, sweep_async,
};

/// How much of the command's stdout is kept (its last bytes).
pub const STDOUT_LIMIT: usize = 1024 * 1024;
/// How much of a CLI's JSON report is kept: all of it, in practice (it echoes every
/// tool result), so the tools it ran at the start are still there to check.
pub const REPORT_STDOUT_LIMIT: usize = 64 * 1024 * 1024;
/// How much of its stderr is kept for the row's error (its last bytes).
pub const STDERR_LIMIT: usize = 8 * 1024;
/// How long a timed-out command gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long the output readers may take to finish once the group is gone.
const DRAIN: Duration = Duration::from_millis(500);

/// How the command ended.
#[derive(Debug)]
pub enum Ended {
    Exited(ExitStatus),
    /// Still running at the deadline: it was killed.
    TimedOut,
    /// `sh` could not be started.
    NotStarted(std::io::Error),
}

/// What the command did.
#[derive(Debug)]
pub struct Finished {
    pub ended: Ended,
    /// The end of its stdout (lossy UTF-8); `stdout_cut` when earlier bytes were dropped.
    pub stdout: String,
    pub stdout_cut: bool,
    /// The end of its stderr (lossy UTF-8).
    pub stderr: String,
    pub elapsed: Duration,
}

/// The last `limit` bytes of a stream, and whether earlier ones were dropped.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<(VecDeque<u8>, bool)>>);

impl Tail {
    fn push(&self, bytes: &[u8], limit: usize) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        t.0.extend(bytes);
        let excess = t.0.len().saturating_sub(limit);
        if excess > 0 {
            t.0.drain(..excess);
            t.1 = true;
        }
    }

    fn take(&self) -> (String, bool) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: Vec<u8> = t.0.drain(..).collect();
        (String::from_utf8_lossy(&bytes).into_owned(), t.1)
    }
}

fn read_into(
    mut pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    tail: Tail,
    limit: usize,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            tail.push(&buf[..n], limit);
        }
    })
}

/// Runs `line` with `sh -c` in `cwd` with `env` added, for at most `timeout`,
/// keeping the last `stdout_limit` bytes of its stdout.
pub async fn run(
    line: &str,
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
    stdout_limit: usize,
) -> Finished {
    let started = Instant::now();
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(line)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    own_process_group(&mut cmd);
    // Marked as a server is, so what it starts in a session of its own (`setsid`) is
    // found and reaped after it too.
    become_subreaper();
    let token = new_token();
    cmd.env(TOKEN_VAR, &token);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Finished {
                ended: Ended::NotStarted(e),
                stdout: String::new(),
                stdout_cut: false,
                stderr: String::new(),
                elapsed: started.elapsed(),
            };
        }
    };
    let pid = child.id();
    let (out, err) = (Tail::default(), Tail::default());
    let mut readers = Vec::new();
    if let Some(p) = child.stdout.take() {
        readers.push(read_into(p, out.clone(), stdout_limit));
    }
    if let Some(p) = child.stderr.take() {
        readers.push(read_into(p, err.clone(), STDERR_LIMIT));
    }
    let ended = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => Ended::Exited(status),
        Ok(Err(e)) => Ended::NotStarted(e),
        Err(_) => {
            signal_group(pid, Signal::Term);
            if tokio::time::timeout(TERM_GRACE, child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
            Ended::TimedOut
        }
    };
    // Whatever the command left running (a background helper holding the pipes) goes
    // with it; then the readers see the pipes close.
    signal_group(pid, Signal::Kill);
    let _ = child.wait().await;
    sweep_async(&token, pid, pid).await;
    let deadline = tokio::time::Instant::now() + DRAIN;
    for mut r in readers {
        if tokio::time::timeout_at(deadline, &mut r).await.is_err() {
            r.abort();
        }
    }
    let (stdout, stdout_cut) = out.take();
    let (stderr, _) = err.take();
    Finished {
        ended,
        stdout,
        stdout_cut,
        stderr,
        elapsed: started.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_exit_status_and_environment_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let env = [("NAVBENCH_X".to_string(), "x y".to_string())];
        let f = run(
            "echo \"$NAVBENCH_X\"; pwd; echo oops >&2; exit 3",
            dir.path(),
            &env,
            Duration::from_secs(10),
            STDOUT_LIMIT,
        )
        .await;
        assert!(
            matches!(f.ended, Ended::Exited(s) if s.code() == Some(3)),
            "{f:?}"
        );
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(f.stdout, format!("x y\n{}\n", cwd.display()));
        assert_eq!(f.stderr, "oops\n");
    }

    #[tokio::test]
    async fn a_hanging_command_and_what_it_started_are_killed_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let line = format!(
            "sleep 600 & echo $! > {}; echo started; wait",
            pidfile.display()
        );
        let f = run(
            &line,
            dir.path(),
            &[],
            Duration::from_millis(700),
            STDOUT_LIMIT,
        )
        .await;
        assert!(matches!(f.ended, Ended::TimedOut), "{f:?}");
        assert_eq!(f.stdout, "started\n");
        assert!(f.elapsed < Duration::from_secs(30));
        let bg = std::fs::read_to_string(&pidfile).unwrap();
        assert!(
            dies(bg.trim()).await,
            "the background sleep {bg} survived its command"
        );
    }

    #[tokio::test]
    async fn what_the_command_started_in_a_session_of_its_own_is_killed_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("detached.pid");
        // `setsid` leaves the command's process group, so the group kill misses it.
        let line = format!(
            "python3 -c 'import subprocess; p = subprocess.Popen([\"sleep\", \"600\"], start_new_session=True); print(p.pid)' > {}; echo started",
            pidfile.display()
        );
        let f = run(
            &line,
            dir.path(),
            &[],
            Duration::from_secs(30),
            STDOUT_LIMIT,
        )
        .await;
        assert!(matches!(f.ended, Ended::Exited(s) if s.success()), "{f:?}");
        let detached = std::fs::read_to_string(&pidfile).unwrap();
        assert!(!detached.trim().is_empty(), "{f:?}");
        assert!(
            dies(detached.trim()).await,
            "the detached sleep {detached} survived its command"
        );
    }

    /// True once `pid` is gone or a zombie (killed, waiting for its new parent).
    async fn dies(pid: &str) -> bool {
        if !cfg!(target_os = "linux") {
            return true;
        }
        for _ in 0..100 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat)
                    if stat
                        .rsplit(')')
                        .next()
                        .is_some_and(|s| s.trim_start().starts_with('Z')) =>
                {
                    return true;
                }
                Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        false
    }

    #[tokio::test]
    async fn stdout_keeps_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let line = "head -c 1100000 /dev/zero | tr '\\0' a; echo; echo last";
        let f = run(line, dir.path(), &[], Duration::from_secs(30), STDOUT_LIMIT).await;
        assert!(f.stdout_cut);
        assert_eq!(f.stdout.len(), STDOUT_LIMIT);
        assert!(f.stdout.ends_with("\nlast\n"));
    }
}
