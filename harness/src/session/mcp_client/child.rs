//! The server's child process: spawned as the leader of a process group of its own,
//! marked with a session token ([`super::reap`]), its output copied into a bounded
//! tail for error messages, signalled and reaped as a group, and what left the group
//! swept up after it, so nothing it starts outlives the session. The process-group
//! helpers also serve an external agent's command (`crate::policy::agent_cmd`), which must not
//! outlive its pair either.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use super::{McpError, ServerSpec, reap};

/// How much of a server's stderr is kept for error messages.
const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// How long to wait for a failed server's exit status and last stderr output.
pub(super) const FAILURE_GRACE: Duration = Duration::from_millis(500);

/// The last bytes a child wrote to stderr.
#[derive(Debug, Clone, Default)]
pub(super) struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let Ok(mut buf) = self.0.lock() else { return };
        buf.extend(bytes);
        let excess = buf.len().saturating_sub(STDERR_TAIL_BYTES);
        buf.drain(..excess);
    }

    pub(super) fn text(&self) -> String {
        let Ok(buf) = self.0.lock() else {
            return String::new();
        };
        let (a, b) = buf.as_slices();
        let mut bytes = a.to_vec();
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A server child just spawned, with tasks copying its output into [`StderrTail`].
pub(super) struct Spawned {
    pub child: Child,
    pub pid: Option<u32>,
    /// The token in the environment of the server and everything it starts.
    pub token: String,
    pub stderr: StderrTail,
    /// One task per pipe read (stderr; and stdout when it is not the MCP channel).
    pub readers: Vec<JoinHandle<()>>,
}

impl Spawned {
    /// Kills the child, its process group and what left the group, and returns the
    /// end of its output.
    pub async fn kill(mut self) -> String {
        let _ = self.child.kill().await;
        end_all(self.pid, &self.token).await;
        drain_output(self.readers).await;
        self.stderr.text()
    }
}

/// Spawns `spec`'s program as the leader of its own process group, stdin and stdout
/// piped (the MCP channel), stderr read into a tail. With `urls`, stdout is not MCP: it is read into
/// the tail too, and the first `http(s)://` URL printed on either stream is sent.
pub(super) fn spawn(
    spec: &ServerSpec,
    urls: Option<tokio::sync::watch::Sender<Option<String>>>,
) -> Result<Spawned, McpError> {
    let command = spec.display();
    let mut cmd = Command::new(&spec.program);
    // Over HTTP, stdin is not a channel: a server must not wait on it.
    let stdin = if urls.is_some() {
        Stdio::null()
    } else {
        Stdio::piped()
    };
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    own_process_group(&mut cmd);
    reap::become_subreaper();
    let token = reap::new_token();
    cmd.env(reap::TOKEN_VAR, &token);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    let mut child = cmd.spawn().map_err(|source| McpError::Spawn {
        command: command.clone(),
        source,
    })?;
    let pid = child.id();
    let stderr = StderrTail::default();
    let mut readers = Vec::new();
    if let Some(pipe) = child.stderr.take() {
        readers.push(read_output(
            pipe,
            stderr.clone(),
            command.clone(),
            urls.clone(),
        ));
    }
    if let Some(urls) = urls
        && let Some(pipe) = child.stdout.take()
    {
        readers.push(read_output(pipe, stderr.clone(), command, Some(urls)));
    }
    Ok(Spawned {
        child,
        pid,
        token,
        stderr,
        readers,
    })
}

/// Copies one output pipe of the child into `tail` (and the `trace` log); with
/// `urls`, also sends the first URL seen on a whole line.
fn read_output(
    mut pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    tail: StderrTail,
    name: String,
    urls: Option<tokio::sync::watch::Sender<Option<String>>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        let mut line = Vec::new();
        while let Ok(n) = pipe.read(&mut buf).await {
            if n == 0 {
                break;
            }
            tail.push(&buf[..n]);
            tracing::trace!(server = %name, "output: {}", String::from_utf8_lossy(&buf[..n]).trim_end());
            let Some(urls) = &urls else { continue };
            for &b in &buf[..n] {
                if b != b'\n' {
                    // A line is scanned for a URL only up to 4 KiB.
                    if line.len() < 4096 {
                        line.push(b);
                    }
                    continue;
                }
                if urls.borrow().is_none()
                    && let Some(url) = printed_url(&String::from_utf8_lossy(&line))
                {
                    let _ = urls.send(Some(url));
                }
                line.clear();
            }
        }
    })
}

/// Waits up to `grace` for the child to exit, kills it otherwise, and reaps it.
/// Returns a description of how it ended.
/// Whatever the server left running in its process group (grandchildren) is killed
/// too.
pub(super) async fn wait_or_kill(child: &mut Child, grace: Duration) -> String {
    let pid = child.id();
    let ended = async {
        if let Ok(Some(status)) = child.try_wait() {
            return format!("it exited with {status}");
        }
        if !grace.is_zero()
            && let Ok(Ok(status)) = tokio::time::timeout(grace, child.wait()).await
        {
            return format!("it exited with {status}");
        }
        match child.kill().await {
            Ok(()) => "it was killed".to_string(),
            Err(e) => format!("killing it failed: {e}"),
        }
    }
    .await;
    kill_group(pid);
    ended
}

/// Starts the server as the leader of a process group of its own, so that
/// [`kill_group`] reaches whatever it spawns, and (on Linux) asks the kernel to kill
/// it if the harness dies, so a SIGKILLed run leaves no server behind.
pub(crate) fn own_process_group(cmd: &mut Command) {
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the forked child before exec and only calls
    // `prctl`, which is async-signal-safe. The death signal follows the thread that
    // spawned the child: sessions start on runtime worker threads, which live as long
    // as the runtime.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// SIGKILLs the process group led by `pid` (the server and anything it left behind).
/// Harmless when the group is already empty.
pub(super) fn kill_group(pid: Option<u32>) {
    signal_group(pid, Signal::Kill);
}

/// Ends a session's processes: the group led by `pid`, then whatever carries `token`
/// (started by the server, then moved out of its group), each reaped when it was
/// re-parented to us. The server itself is left to its `Child`.
pub(super) async fn end_all(pid: Option<u32>, token: &str) {
    kill_group(pid);
    reap::sweep_async(token, pid, pid).await;
}

/// The signals sent to a server's process group.
#[derive(Clone, Copy)]
pub(crate) enum Signal {
    Term,
    Kill,
}

pub(crate) fn signal_group(pid: Option<u32>, signal: Signal) {
    #[cfg(unix)]
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok())
        && pid > 0
    {
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is
        // involved.
        unsafe {
            libc::kill(-pid, sig);
        }
    }
    #[cfg(not(unix))]
    let _ = (pid, signal);
}

/// Lets the output readers catch the last output of an exited child (bounded wait).
pub(super) async fn drain_output(tasks: Vec<JoinHandle<()>>) {
    let deadline = tokio::time::Instant::now() + FAILURE_GRACE;
    for mut task in tasks {
        if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
            task.abort();
        }
    }
}

/// The first `http://` or `https://` URL in `line`, without trailing punctuation.
fn printed_url(line: &str) -> Option<String> {
    let start = match (line.find("http://"), line.find("https://")) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    let rest = &line[start..];
    let scheme = rest.find("//").map_or(0, |i| i + 2);
    let end = rest
        .find(|c: char| c.is_whitespace() || "\"'<>()[]{}`".contains(c))
        .unwrap_or(rest.len());
    let url = rest[..end].trim_end_matches(['.', ',', ';', ':']);
    (url.len() > scheme).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::printed_url;

    #[test]
    fn finds_the_url_a_server_prints() {
        assert_eq!(
            printed_url("navbench-retrieval: listening on http://127.0.0.1:40123/mcp").as_deref(),
            Some("http://127.0.0.1:40123/mcp")
        );
        assert_eq!(
            printed_url("INFO: Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)")
                .as_deref(),
            Some("http://0.0.0.0:8000")
        );
        assert_eq!(
            printed_url("serving at <https://localhost:9/mcp>.").as_deref(),
            Some("https://localhost:9/mcp")
        );
        assert_eq!(printed_url("no url here"), None);
        assert_eq!(printed_url("just http://"), None);
        assert_eq!(printed_url("at http://x").as_deref(), Some("http://x"));
        assert_eq!(
            printed_url("https://a/mcp or http://b/mcp").as_deref(),
            Some("https://a/mcp")
        );
    }
}
