//! Streamable HTTP: the MCP server at `/mcp` (rmcp's [`StreamableHttpService`] with
//! in-memory sessions) and `GET /health`, a JSON status document, on one axum router.
//!
//! By default only loopback `Host` headers are accepted (rmcp's DNS-rebinding
//! protection); binding a non-loopback address also allows that address.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Json;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::server::RetrievalServer;
use crate::tools::RetrievalTools;

/// The line printed on stderr once the server listens (tests read the port from it).
pub const LISTENING_PREFIX: &str = "navbench-retrieval: listening on ";

/// The router: `/mcp` (MCP Streamable HTTP) and `GET /health`.
pub fn router(tools: Arc<RetrievalTools>, local: SocketAddr) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default();
    let ip = local.ip();
    if ip.is_unspecified() {
        // Bound to every interface: any Host header may be legitimate.
        config = config.disable_allowed_hosts();
    } else if !ip.is_loopback() {
        let mut hosts = config.allowed_hosts.clone();
        hosts.push(ip.to_string());
        config = config.with_allowed_hosts(hosts);
    }
    let factory_tools = Arc::clone(&tools);
    let mcp = StreamableHttpService::new(
        move || Ok(RetrievalServer::new(Arc::clone(&factory_tools))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new()
        .route(
            "/health",
            get(move || {
                let tools = Arc::clone(&tools);
                async move {
                    let doc = tokio::task::spawn_blocking(move || tools.health())
                        .await
                        .unwrap_or_else(
                            |e| serde_json::json!({"status": "error", "error": e.to_string()}),
                        );
                    Json(doc)
                }
            }),
        )
        .nest_service("/mcp", mcp)
}

/// Serves the router on `addr` until Ctrl-C / SIGTERM.
pub async fn serve_http(tools: Arc<RetrievalTools>, addr: &str) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr}; pass --http HOST:PORT, e.g. 127.0.0.1:8765")
    })?;
    let local = listener.local_addr().context("reading the bound address")?;
    let app = router(tools, local);
    // The one line on stderr that is not a tracing event: where to connect.
    eprintln!("{LISTENING_PREFIX}http://{local}/mcp");
    tracing::info!(%local, "serving MCP at /mcp and GET /health");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("HTTP server failed")
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = term => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
