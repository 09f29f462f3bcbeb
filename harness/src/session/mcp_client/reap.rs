//! What a server started that left its process group: a process that calls `setsid`
//! (a daemon, a language server started "detached") escapes the group kill, and once
//! the server is gone nobody would stop it. On Linux, the harness therefore
//!
//! - becomes a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`, the first time it
//!   starts a server), so an orphaned descendant is re-parented to the harness rather
//!   than to init, and the harness can reap it;
//! - marks each server with a token in its environment ([`TOKEN_VAR`]), which every
//!   descendant inherits whatever session or group it moves to; and
//! - when a session ends, after the group kill, [`sweep`]s: every process carrying the
//!   session's token is SIGKILLed, and every zombie that was re-parented to the harness
//!   from this session (or from any escaped session: a session id other than ours) is
//!   reaped. Only those: the harness's other children (other lanes' servers, `git`,
//!   `pip`) are waited for by the code that started them.
//!
//! An external agent's command (`crate::policy::agent_cmd`) is marked and swept the same way.
//!
//! A descendant that clears its whole environment and leaves the session is not
//! recognised; a cgroup would catch it, but needs privileges a benchmark should not.
//! Elsewhere than Linux, [`sweep`] does nothing beyond the group kill.

use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks a session's processes.
pub const TOKEN_VAR: &str = "NAVBENCH_SESSION";

/// A token no other session of any navbench process uses: our pid, the time this
/// process first asked, and a counter.
pub(crate) fn new_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static EPOCH: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    let epoch = EPOCH.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    });
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{}-{epoch:x}-{n}", std::process::id())
}

/// Makes this process the child subreaper of its descendants (once; Linux only).
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: prctl(2) with integer arguments; no memory is involved.
            let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
            if rc != 0 {
                tracing::warn!(
                    "cannot become a child subreaper ({}); a server's detached descendants are stopped but left to init to reap",
                    std::io::Error::last_os_error()
                );
            }
        });
    }
}

/// Kills what is left of a session after its group kill and reaps what was
/// re-parented to us: processes carrying `token`, members of process group `group`,
/// and zombies of escaped sessions. `server` (reaped by its owner) is left alone.
/// Blocks for at most about a second.
pub(super) fn sweep(token: &str, group: Option<u32>, server: Option<u32>) {
    #[cfg(target_os = "linux")]
    linux::sweep(token, group, server);
    #[cfg(not(target_os = "linux"))]
    let _ = (token, group, server);
}

/// [`sweep`] on a thread of its own (for `Drop`, which cannot wait).
pub(super) fn sweep_in_background(token: String, group: Option<u32>, server: Option<u32>) {
    let spawned = std::thread::Builder::new()
        .name("navbench-reap".to_string())
        .spawn(move || sweep(&token, group, server));
    if let Err(e) = spawned {
        tracing::warn!("cannot start the thread that reaps a server's descendants: {e}");
    }
}

/// [`sweep`] without blocking the async runtime.
pub(crate) async fn sweep_async(token: &str, group: Option<u32>, server: Option<u32>) {
    let token = token.to_string();
    let _ = tokio::task::spawn_blocking(move || sweep(&token, group, server)).await;
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashSet;
    use std::time::Duration;

    use super::TOKEN_VAR;

    /// Rounds of a sweep, and the pause between them.
    const ROUNDS: usize = 100;
    const PAUSE: Duration = Duration::from_millis(10);

    /// The fields of `/proc/PID/stat` a sweep needs.
    struct Stat {
        zombie: bool,
        ppid: i32,
        pgrp: i32,
        session: i32,
    }

    fn stat(pid: i32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid pgrp session ...`; comm may hold spaces and parentheses.
        let (_, rest) = text.rsplit_once(')')?;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let mut num = || fields.next()?.parse::<i32>().ok();
        Some(Stat {
            zombie: state == "Z",
            ppid: num()?,
            pgrp: num()?,
            session: num()?,
        })
    }

    /// Whether `pid`'s environment holds exactly `entry` (`VAR=value`).
    fn carries(pid: i32, entry: &[u8]) -> bool {
        std::fs::read(format!("/proc/{pid}/environ"))
            .map(|env| env.split(|b| *b == 0).any(|e| e == entry))
            .unwrap_or(false)
    }

    fn pids() -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect()
    }

    pub(super) fn sweep(token: &str, group: Option<u32>, server: Option<u32>) {
        let me = std::process::id() as i32;
        // SAFETY: getsid(2) on ourselves; no memory is involved.
        let our_session = unsafe { libc::getsid(0) };
        let entry = format!("{TOKEN_VAR}={token}").into_bytes();
        let group = group.and_then(|g| i32::try_from(g).ok());
        let server = server.and_then(|s| i32::try_from(s).ok());
        let mut killed: HashSet<i32> = HashSet::new();
        for _ in 0..ROUNDS {
            let mut waiting = false;
            for pid in pids() {
                if pid == me || Some(pid) == server {
                    continue;
                }
                let Some(p) = stat(pid) else { continue };
                // The group's leader is the server; its other members were killed by
                // the group kill and, once the server is gone, are ours to reap.
                let member = Some(p.pgrp) == group && Some(pid) != group;
                if p.zombie {
                    let ours = p.ppid == me;
                    if ours && (killed.contains(&pid) || member || p.session != our_session) {
                        let mut status = 0;
                        // SAFETY: waitpid(2) on a zombie child of ours that no other
                        // code waits for (see the module doc).
                        unsafe {
                            libc::waitpid(pid, &mut status, libc::WNOHANG);
                        }
                    } else if killed.contains(&pid) {
                        // Its parent dies too; then it is re-parented to us.
                        waiting = true;
                    }
                    continue;
                }
                if member || carries(pid, &entry) {
                    // SAFETY: kill(2) with a pid; no memory is involved.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    killed.insert(pid);
                    waiting = true;
                }
            }
            if !waiting {
                return;
            }
            std::thread::sleep(PAUSE);
        }
        tracing::warn!(
            token,
            "some processes a server started were still there a second after they were killed"
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("{}-", std::process::id())), "{a}");
    }

    #[test]
    fn a_detached_process_with_the_token_is_killed_and_reaped() {
        become_subreaper();
        let token = new_token();
        // `sh` starts a new session (setsid) running sleep, and exits: the sleep is
        // orphaned, re-parented to us, and out of any group we know.
        let out = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!"])
            .env(TOKEN_VAR, &token)
            .output()
            .expect("sh");
        let pid: i32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("pid");
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        // Another token is not ours to kill.
        sweep(&new_token(), None, None);
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        sweep(&token, None, None);
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} still there (running, or a zombie never reaped)"
        );
    }
}
