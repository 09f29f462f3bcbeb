//! Streamable HTTP: a server launched as a child process that serves MCP at a URL
//! instead of over its stdio ([`super::Transport::Http`]).
//!
//! The URL is the one the spec names or, when it names none, the first `http://` or
//! `https://` URL the server prints on stdout or stderr (servers that pick a free port
//! say where they listen). The harness connects once the URL is known, retrying while
//! the server is not yet listening, all within the start-up timeout. Everything else
//! is as over stdio: the child leads its own process group, its output is kept for
//! error messages, and the session ends by stopping (then killing) that group.

use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::process::Child;
use tokio::sync::watch;

use super::child::{Spawned, spawn};
use super::progress::{Client, Connected};
use super::{McpError, ServerSpec, guard};

/// What to do about a server that does not say where it listens.
const URL_HINT: &str = "check that its args start it in its HTTP mode (a server on stdio prints no URL), or name the URL in the declaration: url = \"http://127.0.0.1:{port}/mcp\" with {port} in its args";

/// How long to wait before connecting again to a server not yet listening.
const RETRY: Duration = Duration::from_millis(100);

/// Spawns `spec`, finds its URL, connects, and lists its tools, within `timeout`;
/// returns the command line, the connection and the child, for the session to hold.
pub(super) async fn start(
    spec: &ServerSpec,
    url: Option<&str>,
    timeout: Duration,
) -> Result<(String, Connected, Spawned), McpError> {
    let command = spec.display();
    // A URL the spec names is there from the start; the readers only fill an empty slot.
    let (urls, mut url_rx) = watch::channel(url.map(str::to_string));
    let mut spawned = spawn(spec, Some(urls))?;
    let mut stage = Stage::WaitingForUrl;
    let connecting = connect(&mut url_rx, &mut spawned.child, &mut stage);
    let outcome = tokio::time::timeout(timeout, connecting).await;
    let (phase, reason) = match outcome {
        Ok(Ok(parts)) => {
            tracing::debug!(command = %command, url = %stage, "MCP session started over HTTP");
            return Ok((command, parts, spawned));
        }
        Ok(Err(failed)) => failed,
        Err(_elapsed) => (
            "MCP initialize over HTTP",
            format!("no session within {timeout:?}: {stage}; the server was killed"),
        ),
    };
    Err(McpError::Startup {
        command,
        phase,
        reason,
        status: None,
        stderr: spawned.kill().await,
    })
}

/// Where the start-up got to, for the message if it times out.
enum Stage {
    WaitingForUrl,
    Connecting { url: String, last_error: String },
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::WaitingForUrl => write!(f, "the server printed no http:// URL; {URL_HINT}"),
            Stage::Connecting { url, last_error } if last_error.is_empty() => {
                write!(f, "{url} did not answer the handshake")
            }
            Stage::Connecting { url, last_error } => {
                write!(f, "connecting to {url} failed: {last_error}")
            }
        }
    }
}

/// Waits for the URL, then connects until the server answers `initialize`, then lists
/// its tools. Fails at once when the server exits.
async fn connect(
    url_rx: &mut watch::Receiver<Option<String>>,
    child: &mut Child,
    stage: &mut Stage,
) -> Result<Connected, (&'static str, String)> {
    let url = loop {
        if let Some(url) = url_rx.borrow_and_update().clone() {
            break url;
        }
        tokio::select! {
            changed = url_rx.changed() => if changed.is_err() {
                return Err(("MCP initialize over HTTP", format!("the server closed its output without printing an http:// URL; {URL_HINT}")));
            },
            status = child.wait() => {
                return Err(("MCP initialize over HTTP", format!("the server exited ({}) before printing an http:// URL; {URL_HINT}", describe(status))));
            }
        }
    };
    let http = reqwest::Client::builder()
        // The server is our own child on this machine: never route it through a proxy.
        .no_proxy()
        .build()
        .map_err(|e| {
            (
                "MCP initialize over HTTP",
                format!("cannot build an HTTP client: {e}"),
            )
        })?;
    *stage = Stage::Connecting {
        url: url.clone(),
        last_error: String::new(),
    };
    loop {
        let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
            .max_json_response_size(guard::MAX_MESSAGE_BYTES);
        let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
        let client = Client::navbench();
        match client.clone().serve(transport).await {
            Ok(service) => {
                let tools = service
                    .list_all_tools()
                    .await
                    .map_err(|e| ("tools/list", e.to_string()))?;
                return Ok((service, client, tools));
            }
            Err(e) => {
                *stage = Stage::Connecting {
                    url: url.clone(),
                    last_error: e.to_string(),
                }
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err((
                "MCP initialize over HTTP",
                format!("{stage}; the server exited with {status}"),
            ));
        }
        tokio::time::sleep(RETRY).await;
    }
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("its status is unknown: {e}"),
    }
}
