//! Streamable HTTP for navbench-retrieval: the shared server of
//! [`navbench_server_support::http`] (MCP at `/mcp`, `GET /health`, loopback-only
//! unless `--allow-remote`, Host/Origin checks), with one [`RetrievalServer`] per
//! session over the process's one [`RetrievalTools`], and its health document.

use std::net::SocketAddr;
use std::sync::Arc;

use navbench_server_support::http::{self as shared, Listen};

use crate::server::RetrievalServer;
use crate::tools::RetrievalTools;

/// The line printed on stderr once the server listens (tests read the port from it).
pub const LISTENING_PREFIX: &str = "navbench-retrieval: listening on ";

fn parts(
    tools: Arc<RetrievalTools>,
) -> (
    impl Fn() -> Result<RetrievalServer, std::io::Error> + Send + Sync + 'static,
    shared::Health,
) {
    let factory_tools = Arc::clone(&tools);
    (
        move || Ok(RetrievalServer::new(Arc::clone(&factory_tools))),
        Arc::new(move || tools.health()),
    )
}

/// The router for a server bound to `local` (for tests and embedding).
pub fn router(tools: Arc<RetrievalTools>, local: SocketAddr) -> axum::Router {
    let (factory, health) = parts(tools);
    shared::router(factory, health, local)
}

/// Serves the tools on `addr` until Ctrl-C / SIGTERM; a non-loopback `addr` is
/// refused unless `allow_remote`.
pub async fn serve_http(
    tools: Arc<RetrievalTools>,
    addr: &str,
    allow_remote: bool,
) -> anyhow::Result<()> {
    let (factory, health) = parts(tools);
    let listen = Listen {
        name: "navbench-retrieval",
        addr,
        allow_remote,
    };
    shared::serve_http(factory, health, listen).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_listening_line_is_the_shared_one() {
        assert_eq!(
            super::LISTENING_PREFIX,
            navbench_server_support::http::listening_prefix("navbench-retrieval")
        );
    }
}
