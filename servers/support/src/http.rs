//! Streamable HTTP for any navbench server: the MCP server at `/mcp` (rmcp's
//! [`StreamableHttpService`] with in-memory sessions, one server value per session from
//! a factory) and `GET /health`, the server's JSON status document, on one axum router.
//! Once listening, the server prints `<name>: listening on http://ADDR/mcp` on stderr
//! ([`listening_prefix`]), so whoever launched it with port 0 learns where to connect.
//!
//! Safety, for servers whose tools read the disk: only loopback addresses may be bound
//! unless `allow_remote` (a server's `--allow-remote`) is given, and every request whose `Host` or `Origin` names a
//! foreign host is refused with 403 (DNS-rebinding protection: a web page cannot reach
//! the server through a name that resolves to 127.0.0.1). Loopback names are always
//! accepted; binding a non-loopback address also accepts that address; binding every
//! interface (`0.0.0.0`) accepts any `Host` but still only loopback `Origin`s. The same
//! lists configure rmcp's own checks on `/mcp` and a middleware in front of every route;
//! the rules live in `navbench-http-guard`, which the harness's proxy shares.

use axum::serve::ListenerExt as _;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Json;
use axum::routing::get;
use navbench_http_guard::{allowed_hosts, bind, guard, mcp_config, shutdown_signal};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// What `GET /health` answers: the server's status document, computed on a blocking
/// thread.
pub type Health = Arc<dyn Fn() -> serde_json::Value + Send + Sync>;

/// What a server named `name` prints on stderr, before its URL, once it listens.
pub fn listening_prefix(name: &str) -> String {
    format!("{name}: listening on ")
}

/// The router: `/mcp` (MCP Streamable HTTP) and `GET /health`, behind the Host and
/// Origin checks for a server bound to `local`.
pub fn router<S, F>(factory: F, health: Health, local: SocketAddr) -> axum::Router
where
    S: rmcp::ServerHandler,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let hosts = allowed_hosts(local);
    let config = mcp_config(hosts.as_deref());
    let mcp = StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new()
        .route(
            "/health",
            get(move || {
                let health = Arc::clone(&health);
                async move {
                    let doc = tokio::task::spawn_blocking(move || health())
                        .await
                        .unwrap_or_else(
                            |e| serde_json::json!({"status": "error", "error": e.to_string()}),
                        );
                    Json(doc)
                }
            }),
        )
        .nest_service("/mcp", mcp);
    guard(router, hosts, "this server")
}

/// Where and how a server listens.
#[derive(Debug, Clone, Copy)]
pub struct Listen<'a> {
    /// The server's name, for the line that says where it listens.
    pub name: &'a str,
    /// `HOST:PORT` (port 0: a free one).
    pub addr: &'a str,
    /// Whether a non-loopback address may be bound.
    pub allow_remote: bool,
}

/// Serves the router on `listen.addr` until Ctrl-C / SIGTERM.
/// A non-loopback address is refused unless `listen.allow_remote`.
pub async fn serve_http<S, F>(factory: F, health: Health, listen: Listen<'_>) -> anyhow::Result<()>
where
    S: rmcp::ServerHandler,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let Listen {
        name,
        addr,
        allow_remote,
    } = listen;
    let (listener, local) = bind(addr, allow_remote).await.map_err(anyhow::Error::msg)?;
    let app = router(factory, health, local);
    // The one line on stderr that is not a tracing event: where to connect.
    eprintln!("{}http://{local}/mcp", listening_prefix(name));
    tracing::info!(%local, "serving MCP at /mcp and GET /health");
    // Small JSON-RPC answers must not wait for Nagle's algorithm to meet the
    // client's delayed ACK (about 40 ms a request on loopback).
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("HTTP server failed")
}
