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
//! lists configure rmcp's own checks on `/mcp` and a middleware in front of every route.

use axum::serve::ListenerExt as _;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::Json;
use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::IntoResponse as _;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

/// What `GET /health` answers: the server's status document, computed on a blocking
/// thread.
pub type Health = Arc<dyn Fn() -> serde_json::Value + Send + Sync>;

/// What a server named `name` prints on stderr, before its URL, once it listens.
pub fn listening_prefix(name: &str) -> String {
    format!("{name}: listening on ")
}

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

/// Why a request is refused (`None`: it may pass). `hosts` as [`allowed_hosts`];
/// Origins are always checked, against `hosts` or, when any host is allowed, loopback.
fn refusal(headers: &HeaderMap, hosts: Option<&[String]>) -> Option<String> {
    let loopback = allowed_hosts(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap_or_default();
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(hosts) = hosts {
        let host = text(header::HOST).unwrap_or("");
        if !host_of(host).is_some_and(|h| hosts.contains(&h)) {
            return Some(format!(
                "Host '{host}' is not allowed: this server answers only requests addressed to {}; \
connect through one of them (DNS-rebinding protection)",
                hosts.join(", ")
            ));
        }
    }
    if let Some(origin) = text(header::ORIGIN) {
        let allowed = hosts.unwrap_or(&loopback);
        if !host_of(origin).is_some_and(|h| allowed.contains(&h)) {
            return Some(format!(
                "Origin '{origin}' is not allowed: only pages served from {} may call this server \
(DNS-rebinding protection); use an MCP client, which sends no Origin, or a page on one of them",
                allowed.join(", ")
            ));
        }
    }
    None
}

/// The router: `/mcp` (MCP Streamable HTTP) and `GET /health`, behind the Host and
/// Origin checks for a server bound to `local`.
pub fn router<S, F>(factory: F, health: Health, local: SocketAddr) -> axum::Router
where
    S: rmcp::ServerHandler,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let hosts = allowed_hosts(local);
    let mut config = match &hosts {
        None => StreamableHttpServerConfig::default().disable_allowed_hosts(),
        Some(h) => StreamableHttpServerConfig::default().with_allowed_hosts(h.clone()),
    };
    let origin_hosts = hosts
        .clone()
        .unwrap_or_else(|| ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec());
    config = config
        .with_allowed_origins(origin_hosts.iter().flat_map(|h| {
            let h = if h.contains(':') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{h}:*"), format!("https://{h}:*")]
        }))
        .enforce_origin_validation();
    let mcp = StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
    axum::Router::new()
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
        }))
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
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr}; pass --http HOST:PORT, e.g. 127.0.0.1:8765")
    })?;
    let local = listener.local_addr().context("reading the bound address")?;
    if !local.ip().is_loopback() && !allow_remote {
        anyhow::bail!(
            "refusing to listen on {local}: it is not a loopback address, and the tools read this machine's files; \
use --http 127.0.0.1:PORT, or add --allow-remote if the network is trusted"
        );
    }
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
        let local = SocketAddr::from(([127, 0, 0, 1], 8765));
        let hosts = allowed_hosts(local);
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
        assert!(
            foreign.contains("evil.example") && foreign.contains("127.0.0.1"),
            "{foreign}"
        );
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
        let hosts = allowed_hosts(SocketAddr::from(([0, 0, 0, 0], 1)));
        assert_eq!(hosts, None);
        assert_eq!(
            refusal(&headers(&[(header::HOST, "build-box:1")]), None),
            None
        );
        assert!(refusal(&headers(&[(header::ORIGIN, "http://evil.example")]), None).is_some());
        let lan = allowed_hosts(SocketAddr::from(([192, 168, 1, 5], 1))).expect("list");
        assert!(lan.contains(&"192.168.1.5".to_string()) && lan.contains(&"localhost".to_string()));
    }
}
