//! The proxy over Streamable HTTP: MCP at `/mcp` (rmcp's [`StreamableHttpService`], one
//! [`Proxy`] clone per session, all forwarding to the same server) and `GET /health`.
//!
//! The rules are those of navbench's servers (`servers/support/src/http.rs`, which the
//! harness may not link, so they are restated here and tested the same way): only
//! loopback addresses are bound unless `allow_remote`; a request whose `Host` names a
//! host other than loopback (or the bound address) is refused with 403, and so is one
//! whose `Origin` does (DNS-rebinding protection: a web page cannot reach the proxy,
//! and through it the repository's files, by a name that resolves to 127.0.0.1).
//! Binding every interface (`0.0.0.0`, with `allow_remote`) accepts any `Host` but still
//! only loopback `Origin`s.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::IntoResponse as _;
use axum::routing::get;
use axum::serve::ListenerExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;

use super::Proxy;

/// How long a stopping server waits for open connections before it drops them.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Host names a request may carry in `Host` and `Origin`: loopback, plus the bound
/// address when it is not loopback; `None` (any host) when bound to every interface.
fn allowed_hosts(local: SocketAddr) -> Option<Vec<String>> {
    let ip = local.ip();
    if ip.is_unspecified() {
        return None;
    }
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    if !ip.is_loopback() {
        hosts.push(ip.to_string());
    }
    Some(hosts)
}

/// The host name of a `Host` value or an `Origin` URL, lower-case, without port or
/// IPv6 brackets.
fn host_of(value: &str) -> Option<String> {
    let authority = match value.split_once("://") {
        Some((_, rest)) => rest.split('/').next().unwrap_or(rest),
        None => value,
    };
    let authority: axum::http::uri::Authority = authority.parse().ok()?;
    Some(
        authority
            .host()
            .trim_matches(|c| c == '[' || c == ']')
            .to_ascii_lowercase(),
    )
}

/// Why a request is refused (`None`: it may pass); `hosts` as [`allowed_hosts`].
fn refusal(headers: &HeaderMap, hosts: Option<&[String]>) -> Option<String> {
    let loopback = allowed_hosts(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap_or_default();
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(hosts) = hosts {
        let host = text(header::HOST).unwrap_or("");
        if !host_of(host).is_some_and(|h| hosts.contains(&h)) {
            return Some(format!(
                "Host '{host}' is not allowed: the navbench proxy answers only requests addressed to {}; \
connect through one of them (DNS-rebinding protection)",
                hosts.join(", ")
            ));
        }
    }
    if let Some(origin) = text(header::ORIGIN) {
        let allowed = hosts.unwrap_or(&loopback);
        if !host_of(origin).is_some_and(|h| allowed.contains(&h)) {
            return Some(format!(
                "Origin '{origin}' is not allowed: only pages served from {} may call the navbench proxy \
(DNS-rebinding protection); use an MCP client, which sends no Origin",
                allowed.join(", ")
            ));
        }
    }
    None
}

/// The router for a proxy bound to `local`, and the `cancel` that ends its sessions.
fn router(proxy: Proxy, local: SocketAddr) -> (axum::Router, Box<dyn FnOnce() + Send>) {
    let hosts = allowed_hosts(local);
    let config = match &hosts {
        None => StreamableHttpServerConfig::default().disable_allowed_hosts(),
        Some(h) => StreamableHttpServerConfig::default().with_allowed_hosts(h.clone()),
    };
    let origin_hosts = hosts
        .clone()
        .unwrap_or_else(|| ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec());
    let config = config
        .with_allowed_origins(origin_hosts.iter().flat_map(|h| {
            let h = if h.contains(':') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{h}:*"), format!("https://{h}:*")]
        }))
        .enforce_origin_validation();
    let token = config.cancellation_token.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(proxy.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new()
        .route(
            "/health",
            get(|| async { axum::Json(serde_json::json!({"status": "ok"})) }),
        )
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let why = refusal(req.headers(), hosts.as_deref());
            async move {
                match why {
                    Some(why) => {
                        tracing::warn!(%why, "request refused");
                        (StatusCode::FORBIDDEN, why).into_response()
                    }
                    None => next.run(req).await,
                }
            }
        }));
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
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr}; pass --http HOST:PORT, e.g. 127.0.0.1:8765")
    })?;
    let local = listener.local_addr().context("reading the bound address")?;
    if !local.ip().is_loopback() && !allow_remote {
        anyhow::bail!(
            "refusing to listen on {local}: it is not a loopback address, and the server's tools read this machine's files; \
use --http 127.0.0.1:PORT, or add --allow-remote if the network is trusted"
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), v.parse().expect("header value"));
        }
        h
    }

    #[test]
    fn loopback_hosts_and_origins_pass_foreign_ones_do_not() {
        let hosts = allowed_hosts(SocketAddr::from(([127, 0, 0, 1], 8765)));
        let check =
            |pairs: &[(header::HeaderName, &str)]| refusal(&headers(pairs), hosts.as_deref());
        assert_eq!(check(&[(header::HOST, "127.0.0.1:8765")]), None);
        assert_eq!(check(&[(header::HOST, "localhost")]), None);
        assert_eq!(check(&[(header::HOST, "[::1]:8765")]), None);
        assert_eq!(
            check(&[
                (header::HOST, "localhost:8765"),
                (header::ORIGIN, "http://localhost:3000")
            ]),
            None
        );
        let foreign = check(&[(header::HOST, "evil.example:8765")]).expect("refused");
        assert!(foreign.contains("evil.example") && foreign.contains("127.0.0.1"));
        assert!(check(&[]).is_some(), "a request without Host is refused");
        let origin = check(&[
            (header::HOST, "127.0.0.1:8765"),
            (header::ORIGIN, "https://evil.example"),
        ])
        .expect("refused");
        assert!(origin.contains("Origin 'https://evil.example'"), "{origin}");
        assert!(check(&[(header::HOST, "127.0.0.1"), (header::ORIGIN, "null")]).is_some());
    }

    #[test]
    fn every_interface_accepts_any_host_but_only_loopback_origins() {
        assert_eq!(allowed_hosts(SocketAddr::from(([0, 0, 0, 0], 1))), None);
        assert_eq!(
            refusal(&headers(&[(header::HOST, "build-box:1")]), None),
            None
        );
        assert!(refusal(&headers(&[(header::ORIGIN, "http://evil.example")]), None).is_some());
        let lan = allowed_hosts(SocketAddr::from(([192, 168, 1, 5], 1))).expect("list");
        assert!(lan.contains(&"192.168.1.5".to_string()) && lan.contains(&"localhost".to_string()));
    }
}
