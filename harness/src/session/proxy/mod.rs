//! The recording proxy: an MCP server that stands between any external agent (Claude
//! Code, Codex CLI, Gemini CLI, a script) and one variant's server, forwards every tool
//! call to it and records each call as the harness records a scripted policy's, so an
//! agent the harness does not drive is measured on the same `calls.csv` columns
//! (latency, response bytes and tokens, errors).
//!
//! What passes through, and why:
//! - `initialize`: the server's `instructions` are passed on (an agent's client places
//!   them in its context); the proxy announces tools only, as the variant's server is
//!   measured through its tools.
//! - `tools/list`: the tools the server listed at start-up, verbatim (name, description,
//!   schemas, annotations), so the agent sees exactly what the built-in agent sees.
//! - `tools/call`: forwarded through a [`Driver`] on the harness's own [`McpSession`]
//!   (the same call timeouts, crash and protocol checks as every run), and the server's
//!   `CallToolResult` or JSON-RPC error goes back verbatim. Each call becomes a
//!   [`CallRecord`]; with [`Proxy::on_record`] it is also handed on as it happens (the
//!   standalone `navbench proxy` appends it to `calls.csv` at once).
//!
//! Calls are forwarded one at a time, in arrival order: the session speaks to one server
//! process that the harness measures call by call, and a latency is the server's time
//! for that call, never time spent queueing behind another. An agent's parallel calls
//! therefore wait for each other at the proxy. Resources, prompts and progress
//! notifications are not forwarded.
//!
//! The variant's setup ([`Variant::setup`], e.g. codegraph's `init_repository`) runs
//! through the proxy's own session ([`Proxy::setup`]) before the agent is let in, and is
//! recorded like any call, so it counts as index time, as for the built-in agent.
//!
//! Served over Streamable HTTP by [`http`] (loopback only unless allowed, `Host` and
//! `Origin` checked, as navbench's servers do) or over stdio ([`command`], the
//! `navbench proxy` command).

pub mod command;
pub mod http;
pub mod record;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::Mutex;

use crate::policy::{CallRecord, Driver, Task};
use crate::score::tokens::Tokenizer;
use crate::session::mcp_client::McpSession;
use crate::variants::Variant;

/// The name under which agents see the proxy's server (`mcp__navbench__<tool>` in
/// Claude Code).
pub const SERVER_NAME: &str = "navbench";

pub use crate::policy::RecordSink;

/// The variant's server behind the proxy and the calls made on it so far.
pub struct Upstream {
    pub session: McpSession,
    /// Every call, setup included, in the order the server answered them.
    pub records: Vec<CallRecord>,
}

/// How the proxy counts and times calls (the run's settings).
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Response tokens are counted with this tokenizer.
    pub tokenizer: Tokenizer,
    /// The variant's indexing tools ([`Variant::setup_tools`]) and their timeout.
    pub setup_tools: &'static [&'static str],
    pub index_timeout: Duration,
}

/// The recording proxy (see the module doc). Cheap to clone: every clone (one per HTTP
/// session) forwards to the same server.
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
}

struct Inner {
    variant: String,
    tools: Vec<Tool>,
    instructions: Option<String>,
    settings: Settings,
    upstream: Mutex<Option<Upstream>>,
    sink: Option<RecordSink>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("variant", &self.inner.variant)
            .field("tools", &self.inner.tools.len())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A proxy in front of `session`, the server of `variant`. The tools and
    /// instructions it offers are those the server gave at start-up.
    pub fn new(variant: &str, session: McpSession, settings: Settings) -> Proxy {
        Proxy::build(variant, session, settings, None)
    }

    /// [`Proxy::new`], handing each call's record to `sink` as soon as it is made.
    pub fn on_record(
        variant: &str,
        session: McpSession,
        settings: Settings,
        sink: RecordSink,
    ) -> Proxy {
        Proxy::build(variant, session, settings, Some(sink))
    }

    fn build(
        variant: &str,
        session: McpSession,
        settings: Settings,
        sink: Option<RecordSink>,
    ) -> Proxy {
        Proxy {
            inner: Arc::new(Inner {
                variant: variant.to_string(),
                tools: session.tools().to_vec(),
                instructions: session.server_instructions().map(String::from),
                settings,
                upstream: Mutex::new(Some(Upstream {
                    session,
                    records: Vec::new(),
                })),
                sink,
            }),
        }
    }

    /// The tools offered (the server's, verbatim).
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The server's `instructions`, passed on to agents.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// Runs the variant's setup on `task` through the proxy's session, recorded like
    /// any call (index time). Call it before letting an agent in.
    pub async fn setup(&self, variant: &dyn Variant, task: &Task<'_>) -> anyhow::Result<()> {
        let mut slot = self.inner.upstream.lock().await;
        let Some(up) = slot.as_mut() else {
            anyhow::bail!("the proxy's server is already shut down");
        };
        let settings = self.inner.settings;
        let mut driver = Driver::new(&mut up.session, settings.tokenizer)
            .with_setup_timeout(settings.setup_tools, settings.index_timeout)
            .with_sink(self.inner.sink.clone());
        driver.records = std::mem::take(&mut up.records);
        let done = variant.setup(&mut driver, task).await;
        up.records = std::mem::take(&mut driver.records);
        done
    }

    /// Forwards one call and records it; the server's result or JSON-RPC error comes
    /// back as it was sent.
    pub async fn forward(
        &self,
        tool: &str,
        args: Option<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut slot = self.inner.upstream.lock().await;
        let Some(up) = slot.as_mut() else {
            return Err(ErrorData::internal_error(
                "navbench proxy: this run's pair is over and its server is shut down; start a new proxy",
                None,
            ));
        };
        let settings = self.inner.settings;
        let mut driver = Driver::new(&mut up.session, settings.tokenizer)
            .with_setup_timeout(settings.setup_tools, settings.index_timeout)
            .with_sink(self.inner.sink.clone());
        driver.records = std::mem::take(&mut up.records);
        // A call without arguments goes on as `{}`: the same to every tool, and the
        // record then reads as the built-in agent's do.
        let args = Value::Object(args.unwrap_or_default());
        let out = driver.call(tool, args).await;
        up.records = std::mem::take(&mut driver.records);
        match (out.result, out.rpc_error) {
            (Some(result), _) => Ok(result),
            (None, Some(e)) => Err(e),
            (None, None) => Err(ErrorData::internal_error(
                format!(
                    "navbench proxy: {}",
                    out.error.as_deref().unwrap_or("the server gave no result")
                ),
                None,
            )),
        }
    }

    /// Takes the server and the records out of the proxy: later calls are refused.
    /// `None` when they were taken already.
    pub async fn finish(&self) -> Option<Upstream> {
        self.inner.upstream.lock().await.take()
    }
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                format!("navbench-proxy-{}", self.inner.variant),
                env!("CARGO_PKG_VERSION"),
            ));
        match &self.inner.instructions {
            Some(i) => info.with_instructions(i.clone()),
            None => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.forward(&request.name, request.arguments)
            .await
            .map(CallToolResponse::from)
    }
}
