//! [`McpSession`]: one server child process spoken to over MCP — start-up handshake,
//! tool calls under a timeout, shutdown that always reaps the child.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, RequestMetaObject, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError, ServiceExt as _};
use serde::Serialize;
use tokio::process::Child;
use tokio::task::JoinHandle;

use super::child::{
    FAILURE_GRACE, Signal, Spawned, StderrTail, drain_output, end_all, kill_group, signal_group,
    spawn, wait_or_kill,
};
use super::guard::{self, Incident};
use super::progress::{Client, Connected, ProgressSink};
use super::{CallOutcome, McpError, ServerSpec, Transport, stderr_suffix};

/// How long a closed server gets to exit by itself before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Tool definition as an agent's context carries it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentTool<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    input_schema: &'a rmcp::model::JsonObject,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a rmcp::model::JsonObject>,
}

/// A live connection to one server process.
pub struct McpSession {
    command: String,
    call_timeout: Duration,
    service: Option<RunningService<RoleClient, Client>>,
    /// The client handler, for its progress sink.
    client: Client,
    child: Option<Child>,
    pid: Option<u32>,
    /// Marks the server and everything it starts ([`super::reap`]).
    token: String,
    stderr: StderrTail,
    /// The tasks reading the child's output into `stderr`.
    readers: Vec<JoinHandle<()>>,
    tools: Vec<Tool>,
    instructions: Option<String>,
    /// Why the session can no longer be used, once it cannot.
    dead: Option<String>,
    /// How the server broke the stdio transport, once it has ([`guard`]).
    incidents: tokio::sync::watch::Receiver<Option<Incident>>,
    /// Spoken to over HTTP: closing the connection does not tell it to exit.
    over_http: bool,
}

impl std::fmt::Debug for McpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSession")
            .field("command", &self.command)
            .field("pid", &self.pid)
            .field("tools", &self.tools.len())
            .field("dead", &self.dead)
            .finish_non_exhaustive()
    }
}

impl McpSession {
    /// Spawns the server, performs the MCP handshake and `tools/list`, all within
    /// `call_timeout`. The child's stderr is kept in a bounded buffer (and logged at
    /// `trace` level); over stdio, stdout carries only MCP. A server declared with
    /// [`Transport::Http`] is reached over Streamable HTTP instead ([`super::http`]).
    pub async fn start(spec: &ServerSpec, call_timeout: Duration) -> Result<McpSession, McpError> {
        match &spec.transport {
            Transport::Stdio => McpSession::start_stdio(spec, call_timeout).await,
            Transport::Http(url) => {
                let (command, parts, spawned) =
                    super::http::start(spec, url.as_deref(), call_timeout).await?;
                Ok(McpSession::connected(
                    command,
                    call_timeout,
                    parts,
                    spawned,
                    None,
                ))
            }
        }
    }

    async fn start_stdio(
        spec: &ServerSpec,
        call_timeout: Duration,
    ) -> Result<McpSession, McpError> {
        let command = spec.display();
        let mut spawned = spawn(spec, None)?;
        let pipes = (spawned.child.stdout.take(), spawned.child.stdin.take());
        let (Some(stdout), Some(stdin)) = pipes else {
            // Unreachable with piped stdio, but never panic on it.
            let stderr = spawned.kill().await;
            return Err(McpError::Startup {
                command,
                phase: "MCP initialize",
                reason: "the child's stdin/stdout pipes were not available".to_string(),
                status: None,
                stderr,
            });
        };

        let client = Client::navbench();
        let client_info = client.clone();
        let (stdout, stdin, mut incidents) = guard::guard(stdout, stdin);
        let handshake = async {
            let service = client_info
                .serve((stdout, stdin))
                .await
                .map_err(|e| ("MCP initialize", e.to_string()))?;
            let tools = service
                .list_all_tools()
                .await
                .map_err(|e| ("tools/list", e.to_string()))?;
            Ok::<_, (&'static str, String)>((service, tools))
        };
        let started = Instant::now();
        // Incidents first: the guard reports one before rmcp sees the bytes that follow.
        let outcome = tokio::select! {
            biased;
            incident = next_incident(&mut incidents) => Ok(Err(("MCP initialize", incident.message))),
            r = tokio::time::timeout(call_timeout, handshake) => r,
        };
        match outcome {
            Ok(Ok((service, tools))) => {
                tracing::debug!(
                    command = %command,
                    tools = tools.len(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "MCP session started"
                );
                Ok(McpSession::connected(
                    command,
                    call_timeout,
                    (service, client, tools),
                    spawned,
                    Some(incidents),
                ))
            }
            Ok(Err((phase, reason))) => {
                let status = wait_or_kill(&mut spawned.child, FAILURE_GRACE).await;
                Err(McpError::Startup {
                    command,
                    phase,
                    reason,
                    status: Some(status),
                    stderr: spawned.kill().await,
                })
            }
            Err(_elapsed) => Err(McpError::StartupTimeout {
                command,
                timeout: call_timeout,
                stderr: spawned.kill().await,
            }),
        }
    }

    /// A session whose handshake and `tools/list` succeeded. `incidents` come from
    /// the stdio guard; `None` over HTTP, which has no stdio to guard.
    pub(super) fn connected(
        command: String,
        call_timeout: Duration,
        (service, client, tools): Connected,
        spawned: Spawned,
        incidents: Option<tokio::sync::watch::Receiver<Option<Incident>>>,
    ) -> McpSession {
        let over_http = incidents.is_none();
        // Without a guard the sender is dropped at once, so no incident ever comes.
        let incidents = incidents.unwrap_or_else(|| tokio::sync::watch::channel(None).1);
        let instructions = service
            .peer_info()
            .and_then(|info| info.instructions.clone());
        McpSession {
            command,
            call_timeout,
            service: Some(service),
            client,
            child: Some(spawned.child),
            pid: spawned.pid,
            token: spawned.token,
            stderr: spawned.stderr,
            readers: spawned.readers,
            tools,
            instructions,
            dead: None,
            over_http,
            incidents,
        }
    }

    /// The tools the server listed at startup.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool list as a compact JSON array of `{name, description, inputSchema[,
    /// outputSchema]}` objects — what an agent's context carries, so the harness can
    /// count its tokens. Keys appear in that order; schemas as the server sent them.
    pub fn tools_json(&self) -> String {
        let tools: Vec<AgentTool<'_>> = self
            .tools
            .iter()
            .map(|t| AgentTool {
                name: &t.name,
                description: t.description.as_deref(),
                input_schema: &t.input_schema,
                output_schema: t.output_schema.as_deref(),
            })
            .collect();
        serde_json::to_string(&tools).unwrap_or_else(|_| "[]".to_string())
    }

    /// The `instructions` the server sent in its handshake, if any.
    pub fn server_instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The child's process id (while it was running).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// False once a timeout, crash or shutdown has ended the session.
    pub fn is_alive(&self) -> bool {
        self.dead.is_none()
    }

    /// The last few kilobytes the server wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }

    /// Calls `tool` with `args` (a JSON object, or `null` for none) within the call
    /// timeout. Never panics and never returns early with `Err`: every failure is an
    /// outcome with `is_error` set. A timeout kills the server and marks the session
    /// dead; so does a crash. Calls on a dead session fail immediately.
    pub async fn call(&mut self, tool: &str, args: serde_json::Value) -> CallOutcome {
        self.call_within(tool, args, self.call_timeout).await
    }

    /// The timeout of [`McpSession::call`].
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// Sends the server's progress notifications, one line each, to `sink` (e.g. the
    /// run's progress bar) while calls run.
    pub fn on_progress(&self, sink: ProgressSink) {
        self.client.set_sink(sink);
    }

    /// [`McpSession::call`] with its own timeout: for calls that legitimately take
    /// longer than a query, such as indexing a repository.
    pub async fn call_within(
        &mut self,
        tool: &str,
        args: serde_json::Value,
        timeout: Duration,
    ) -> CallOutcome {
        if let Some(reason) = &self.dead {
            return CallOutcome::failure(
                format!(
                    "the session with `{}` is no longer usable ({reason}); start a new session",
                    self.command
                ),
                Duration::ZERO,
            );
        }
        let arguments = match args {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            other => {
                return CallOutcome::failure(
                    format!(
                        "arguments for tool '{tool}' must be a JSON object (or null), not {other}"
                    ),
                    Duration::ZERO,
                );
            }
        };
        let Some(service) = &self.service else {
            return CallOutcome::failure(
                "the session has been shut down".to_string(),
                Duration::ZERO,
            );
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.meta = Some(RequestMetaObject::with_progress_token(Client::token()));
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let started = Instant::now();
        // Incidents first: a response that arrives with one (say, after a stray log
        // line) must not count as a good answer.
        let response = tokio::select! {
            biased;
            incident = next_incident(&mut self.incidents) => {
                return self.broke_transport(tool, incident, started.elapsed()).await;
            }
            r = tokio::time::timeout(timeout, service.call_tool(params)) => r,
        };
        let latency = started.elapsed();
        match response {
            Ok(Ok(result)) => CallOutcome::from_result(result, latency),
            Ok(Err(ServiceError::McpError(e))) => CallOutcome::rpc_failure(tool, e, latency),
            Ok(Err(e)) => {
                let status = match self.child.as_mut() {
                    Some(child) => wait_or_kill(child, FAILURE_GRACE).await,
                    None => "process already gone".to_string(),
                };
                drain_output(std::mem::take(&mut self.readers)).await;
                let reason = format!("server failed during tools/call '{tool}': {e}; {status}");
                self.mark_dead(&reason).await;
                CallOutcome::failure(
                    format!("{reason}{}", stderr_suffix(&self.stderr.text())),
                    latency,
                )
            }
            Err(_elapsed) => {
                let reason = format!(
                    "tools/call '{tool}' timed out after {timeout:?}; the server was killed"
                );
                tracing::warn!(command = %self.command, "{reason}");
                if let Some(child) = self.child.as_mut() {
                    let _ = child.kill().await;
                }
                self.mark_dead(&reason).await;
                CallOutcome::failure(reason, latency)
            }
        }
    }

    /// Why the session died (timeout, crash, broken transport), while it is dead.
    pub fn failure(&self) -> Option<&str> {
        self.dead.as_deref()
    }

    /// Ends a call during which the server broke the stdio transport: the server is
    /// killed and the call fails, naming what it did.
    async fn broke_transport(
        &mut self,
        tool: &str,
        incident: Incident,
        latency: Duration,
    ) -> CallOutcome {
        let reason = format!(
            "tools/call '{tool}': {}; the server was killed",
            incident.message
        );
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill().await;
        }
        self.mark_dead(&reason).await;
        let mut outcome = CallOutcome::failure(reason, latency);
        outcome.response_bytes = incident.bytes;
        outcome
    }

    /// Ends the session for good: drops the connection and reaps the (killed) child.
    async fn mark_dead(&mut self, reason: &str) {
        self.dead = Some(reason.to_string());
        if let Some(service) = self.service.take() {
            let _ = tokio::time::timeout(FAILURE_GRACE, service.cancel()).await;
        }
        if let Some(mut child) = self.child.take() {
            wait_or_kill(&mut child, Duration::ZERO).await;
        }
        // The child may have been reaped already, so its id is gone from it: use ours.
        end_all(self.pid, &self.token).await;
    }

    /// Closes the connection, gives the server a moment to exit on its own, kills it
    /// otherwise, and reaps it. Dropping the session does the same, best effort.
    pub async fn shutdown(mut self) {
        if self.dead.is_none() {
            self.dead = Some("the session was shut down".to_string());
        }
        if let Some(service) = self.service.take() {
            // Cancelling drops the transport, which closes the server's stdin.
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, service.cancel()).await;
        }
        if self.over_http {
            // Its stdin was never a channel: ask it to stop as a terminal would.
            signal_group(self.pid, Signal::Term);
        }
        if let Some(mut child) = self.child.take() {
            let status = wait_or_kill(&mut child, SHUTDOWN_GRACE).await;
            tracing::debug!(command = %self.command, %status, "MCP server stopped");
        }
        end_all(self.pid, &self.token).await;
        drain_output(std::mem::take(&mut self.readers)).await;
    }
}

impl Drop for McpSession {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGKILL now; `kill_on_drop` plus tokio's orphan reaping collect the exit
            // status in the background, so no zombie is left behind.
            let _ = child.start_kill();
            let _ = child.try_wait();
            kill_group(self.pid);
            super::reap::sweep_in_background(std::mem::take(&mut self.token), self.pid, self.pid);
        }
        for task in self.readers.drain(..) {
            task.abort();
        }
    }
}

/// Waits for the guard's first incident (forever if there is none).
async fn next_incident(rx: &mut tokio::sync::watch::Receiver<Option<Incident>>) -> Incident {
    let incident = rx
        .wait_for(Option::is_some)
        .await
        .ok()
        .and_then(|slot| slot.clone());
    match incident {
        Some(incident) => incident,
        // The guard is gone (the transport closed): rmcp reports that itself.
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::mcp_client::locate_server_binary;
    use serde_json::json;
    use std::path::{Path, PathBuf};

    /// A minimal MCP server in Python: answers the handshake and tools/list, then on
    /// tools/call either never answers (`hang`), exits (`crash`) or echoes (`echo`).
    const FAKE_SERVER: &str = r#"
import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"}, "instructions": "be kind"}})
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
            {"name": n, "description": n + " tool", "inputSchema": schema}
            for n in ("echo", "hang", "crash")]}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "crash":
            sys.stderr.write("fake server: crashing on purpose\n"); sys.stderr.flush()
            sys.exit(5)
        if name == "echo":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "content": [{"type": "text", "text": json.dumps(msg["params"].get("arguments"))}],
                "isError": False}})
"#;

    const TIMEOUT: Duration = Duration::from_secs(2);

    fn fake_server() -> ServerSpec {
        ServerSpec::new("python3").arg("-c").arg(FAKE_SERVER)
    }

    #[cfg(target_os = "linux")]
    fn process_gone(pid: u32) -> bool {
        // Reaped processes disappear from /proc; zombies would still be listed.
        !Path::new(&format!("/proc/{pid}")).exists()
    }

    #[cfg(not(target_os = "linux"))]
    fn process_gone(_pid: u32) -> bool {
        true
    }

    fn text_server_binary() -> Option<PathBuf> {
        let from_env = std::env::var_os("CARGO_TARGET_DIR").map(|d| PathBuf::from(d).join("debug"));
        locate_server_binary("navbench-text", None)
            .ok()
            .or_else(|| from_env.and_then(|d| locate_server_binary("navbench-text", Some(&d)).ok()))
    }
    #[tokio::test]
    async fn missing_program_is_spawn_error() {
        let err = McpSession::start(&ServerSpec::new("/nonexistent/navbench-server"), TIMEOUT)
            .await
            .expect_err("spawn");
        assert!(matches!(err, McpError::Spawn { .. }), "{err}");
        assert!(err.to_string().contains("/nonexistent/navbench-server"));
    }

    #[tokio::test]
    async fn server_exiting_immediately_is_clear_startup_error() {
        let spec = ServerSpec::new("sh")
            .arg("-c")
            .arg("echo 'no config found' >&2; exit 3");
        let err = McpSession::start(&spec, TIMEOUT).await.expect_err("exits");
        let msg = err.to_string();
        assert!(matches!(err, McpError::Startup { .. }), "{msg}");
        assert!(msg.contains("MCP initialize"), "{msg}");
        assert!(msg.contains("exit status: 3"), "{msg}");
        assert!(msg.contains("no config found"), "{msg}");
    }

    #[tokio::test]
    async fn server_that_never_answers_times_out_and_is_reaped() {
        let spec = ServerSpec::new("sh").arg("-c").arg("exec sleep 600");
        let started = Instant::now();
        let err = McpSession::start(&spec, Duration::from_millis(500))
            .await
            .expect_err("timeout");
        assert!(matches!(err, McpError::StartupTimeout { .. }), "{err}");
        assert!(err.to_string().contains("was killed"));
        // Not a wall-clock assertion on speed, only that we did not wait for sleep 600.
        assert!(started.elapsed() < Duration::from_secs(600));
    }

    #[tokio::test]
    async fn hanging_call_times_out_kills_and_reaps_child() {
        let mut session = McpSession::start(&fake_server(), TIMEOUT)
            .await
            .expect("start");
        let pid = session.pid().expect("pid");
        assert_eq!(session.server_instructions(), Some("be kind"));
        let names: Vec<&str> = session.tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["echo", "hang", "crash"]);

        let echo = session.call("echo", json!({"x": 1})).await;
        assert!(!echo.is_error, "{echo:?}");
        assert_eq!(echo.text, r#"{"x": 1}"#);
        assert!(echo.response_bytes > echo.text.len());

        let hang = session.call("hang", json!({})).await;
        assert!(hang.is_error);
        let msg = hang.error.clone().unwrap_or_default();
        assert!(msg.contains("timed out"), "{msg}");
        assert!(hang.latency >= TIMEOUT);
        assert!(!session.is_alive());
        assert!(process_gone(pid), "pid {pid} still present after timeout");

        let after = session.call("echo", json!({})).await;
        assert!(after.is_error);
        assert_eq!(after.latency, Duration::ZERO);
        assert!(after.error.unwrap_or_default().contains("no longer usable"));
        session.shutdown().await;
    }

    #[tokio::test]
    async fn crashing_server_gives_error_outcome() {
        let mut session = McpSession::start(&fake_server(), TIMEOUT)
            .await
            .expect("start");
        let pid = session.pid().expect("pid");
        let crash = session.call("crash", json!({})).await;
        assert!(crash.is_error);
        let msg = crash.error.unwrap_or_default();
        assert!(msg.contains("tools/call 'crash'"), "{msg}");
        assert!(msg.contains("exit status: 5"), "{msg}");
        assert!(msg.contains("crashing on purpose"), "{msg}");
        assert!(!session.is_alive());
        assert!(process_gone(pid));
        let bad_args = session.call("echo", json!([1, 2])).await;
        assert!(bad_args.is_error);
    }

    #[tokio::test]
    async fn shutdown_and_drop_reap_the_child() {
        let session = McpSession::start(&fake_server(), TIMEOUT)
            .await
            .expect("start");
        let pid = session.pid().expect("pid");
        session.shutdown().await;
        assert!(process_gone(pid));

        let session = McpSession::start(&fake_server(), TIMEOUT)
            .await
            .expect("start");
        let pid = session.pid().expect("pid");
        drop(session);
        // Reaping after drop happens in the background; poll for it (bounded).
        for _ in 0..100 {
            if process_gone(pid) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(process_gone(pid), "pid {pid} left behind after drop");
    }

    #[tokio::test]
    async fn text_server_end_to_end() {
        let Some(binary) = text_server_binary() else {
            panic!(
                "navbench-text binary not found; run `cargo build -p navbench-text` first (with the same CARGO_TARGET_DIR)"
            );
        };
        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::write(repo.path().join("app.py"), "def parse(x):\n    return x\n").expect("write");
        let spec = ServerSpec::new(binary)
            .arg("--root")
            .arg(repo.path().display().to_string());
        let mut session = McpSession::start(&spec, Duration::from_secs(10))
            .await
            .expect("start");
        assert!(
            session
                .server_instructions()
                .is_some_and(|i| i.contains("read_file"))
        );
        let tools: serde_json::Value =
            serde_json::from_str(&session.tools_json()).expect("tools_json is JSON");
        let first = &tools[0];
        let keys: Vec<&String> = first.as_object().expect("object").keys().collect();
        assert!(keys.iter().any(|k| *k == "inputSchema"), "{keys:?}");
        assert!(first.get("annotations").is_none());

        let grep = session.call("grep", json!({"pattern": "def parse"})).await;
        assert!(!grep.is_error, "{grep:?}");
        assert_eq!(grep.text, "app.py:1:def parse(x):");
        assert_eq!(
            grep.structured.as_ref().map(|s| s["total_matches"].clone()),
            Some(json!(1))
        );

        let missing = session.call("read_file", json!({"path": "nope.py"})).await;
        assert!(missing.is_error);
        assert!(missing.error.unwrap_or_default().contains("does not exist"));
        assert!(session.is_alive());

        let unknown = session.call("no_such_tool", json!({})).await;
        assert!(unknown.is_error);
        assert!(
            unknown.error.unwrap_or_default().contains("JSON-RPC error"),
            "unknown tool"
        );
        assert!(session.is_alive());
        session.shutdown().await;
    }
}
