//! The proxy over Streamable HTTP: MCP at `/mcp` (rmcp's [`StreamableHttpService`], one
//! [`Proxy`] clone per session, all forwarding to the same server) and `GET /health`.
//!
//! The rules are those of navbench's servers, from the crate both use
//! (`navbench-http-guard`): only
//! loopback addresses are bound unless `allow_remote`; a request whose `Host` names a
//! host other than loopback (or the bound address) is refused with 403, and so is one
//! whose `Origin` does (DNS-rebinding protection: a web page cannot reach the proxy,
//! and through it the repository's files, by a name that resolves to 127.0.0.1).
//! Binding every interface (`0.0.0.0`, with `allow_remote`) accepts any `Host` but still
//! only loopback `Origin`s.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::serve::ListenerExt as _;
use navbench_http_guard::{allowed_hosts, bind, guard, mcp_config};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::task::JoinHandle;

use super::Proxy;

/// How long a stopping server waits for open connections before it drops them.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// The router for a proxy bound to `local`, and the `cancel` that ends its sessions.
fn router(proxy: Proxy, local: SocketAddr) -> (axum::Router, Box<dyn FnOnce() + Send>) {
    let hosts = allowed_hosts(local);
    let mut config = mcp_config(hosts.as_deref());
    // No SSE "priming" event (an `id` with empty `data`, for resumable streams; the
    // service and the session layer each send one): the
    // MCP TypeScript SDK in Gemini CLI 0.61.0 parses every event's data as JSON, fails
    // on the empty one and disconnects, so the agent saw no tool. A proxy serving one
    // pair for seconds gains nothing from resumption.
    config.sse_retry = None;
    let token = config.cancellation_token.clone();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.sse_retry = None;
    let mcp = StreamableHttpService::new(move || Ok(proxy.clone()), Arc::new(sessions), config);
    let app = axum::Router::new()
        .route(
            "/health",
            get(|| async { axum::Json(serde_json::json!({"status": "ok"})) }),
        )
        .nest_service("/mcp", mcp);
    let app = guard(app, hosts, "the navbench proxy");
    (app, Box::new(move || token.cancel()))
}

/// A proxy listening over HTTP until [`Serving::stop`].
pub struct Serving {
    /// Where agents connect: `http://ADDR/mcp`.
    pub url: String,
    cancel: Box<dyn FnOnce() + Send>,
    shutdown: tokio::sync::oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// Binds `addr` (`HOST:PORT`, port 0 for a free one) and serves `proxy` there. A
/// non-loopback address is refused unless `allow_remote`.
pub async fn serve(proxy: Proxy, addr: &str, allow_remote: bool) -> anyhow::Result<Serving> {
    let (listener, local) = bind(addr, allow_remote).await.map_err(anyhow::Error::msg)?;
    let (app, cancel) = router(proxy, local);
    // Small JSON-RPC answers must not wait for Nagle's algorithm to meet the client's
    // delayed ACK (about 40 ms a request on loopback): that would be proxy overhead.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
    });
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    Ok(Serving {
        url: format!("http://{local}/mcp"),
        cancel,
        shutdown,
        task,
    })
}

impl Serving {
    /// Ends every session, stops accepting connections and waits (briefly) for the
    /// server to finish; connections still open then are dropped.
    pub async fn stop(self) {
        (self.cancel)();
        let _ = self.shutdown.send(());
        let mut task = self.task;
        match tokio::time::timeout(STOP_GRACE, &mut task).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => tracing::warn!("the proxy's HTTP server failed: {e}"),
            Ok(Err(e)) => tracing::warn!("the proxy's HTTP server task failed: {e}"),
            Err(_) => task.abort(),
        }
    }
}
