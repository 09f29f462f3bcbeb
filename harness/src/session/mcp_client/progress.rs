//! What a server says while a call runs: MCP progress notifications
//! (`notifications/progress`), handed to whoever is watching the session (the run's
//! progress bar), so a long index build is never a silent wait.
//!
//! Every `tools/call` carries a progress token ([`PROGRESS_TOKEN`]); a server that
//! reports progress (e.g. `navbench-retrieval`'s `index_repository`: chunks embedded
//! of the total, rate, ETA) answers with notifications, which [`Client`] passes to the
//! [`ProgressSink`] set with `McpSession::on_progress`. Servers that do not report
//! progress ignore the token.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};

/// The token every call is sent with (one call runs at a time per session).
pub const PROGRESS_TOKEN: i64 = 1;

/// Receives one line per progress notification.
pub type ProgressSink = Arc<dyn Fn(String) + Send + Sync>;

/// A connected client: the running service, its handler and the server's tools.
pub(super) type Connected = (
    rmcp::service::RunningService<RoleClient, Client>,
    Client,
    Vec<rmcp::model::Tool>,
);

/// The harness's MCP client: the client config, plus progress forwarding.
#[derive(Clone)]
pub struct Client {
    config: ClientConfig,
    sink: Arc<Mutex<Option<ProgressSink>>>,
}

impl Client {
    /// A client announcing `config`, with no sink yet.
    pub fn new(config: ClientConfig) -> Client {
        Client {
            config,
            sink: Arc::default(),
        }
    }

    /// The client every session uses: navbench's identity, no capabilities beyond
    /// receiving progress.
    pub fn navbench() -> Client {
        Client::new(
            ClientConfig::new(
                ClientCapabilities::default(),
                Implementation::new("navbench", env!("CARGO_PKG_VERSION")),
            )
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE),
        )
    }

    /// Where progress lines go from now on.
    pub fn set_sink(&self, sink: ProgressSink) {
        *self.sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    /// The token attached to every call.
    pub fn token() -> ProgressToken {
        ProgressToken(rmcp::model::NumberOrString::Number(PROGRESS_TOKEN))
    }
}

/// One line for a progress notification: its message, else `progress/total`.
pub fn progress_line(p: &ProgressNotificationParam) -> String {
    match (&p.message, p.total) {
        (Some(m), _) => m.clone(),
        (None, Some(t)) => format!("{}/{}", p.progress, t),
        (None, None) => format!("{}", p.progress),
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let sink = self.sink.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(sink) = sink {
            sink(progress_line(&params));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_the_message_else_the_counts() {
        let p = ProgressNotificationParam::new(Client::token(), 5.0);
        assert_eq!(progress_line(&p), "5");
        let p = p.with_total(10.0);
        assert_eq!(progress_line(&p), "5/10");
        let p = p.with_message("embedding: 5/10 chunks");
        assert_eq!(progress_line(&p), "embedding: 5/10 chunks");
    }
}
