//! The Streamable HTTP front that navbench's MCP servers (`navbench-server-support`)
//! and the harness's recording proxy share, so the two cannot drift: the harness may
//! not link a server crate, and neither needs the other to agree on these rules.
//!
//! Principal items: [`allowed_hosts`] (which `Host` names a listener bound to an
//! address accepts), [`refusal`] (why a request is refused, if it is), [`mcp_config`]
//! (rmcp's own Host and Origin checks configured from the same list), [`guard`] (the
//! same checks as a middleware in front of every route), [`bind`] (a listener on a
//! loopback address unless remote access is asked for) and [`shutdown_signal`].
//!
//! The rules (DNS-rebinding protection: a web page must not reach a tool that reads
//! this machine's files through a name that resolves to 127.0.0.1): loopback names are
//! always accepted; binding a non-loopback address also accepts that address; binding
//! every interface (`0.0.0.0`) accepts any `Host` but still only loopback `Origin`s; a
//! request naming any other host in `Host` or `Origin` is refused with 403.
//!
//! Data flow: bound address → [`allowed_hosts`] → [`mcp_config`] for `/mcp` and
//! [`guard`] around the whole router → each request: [`refusal`] → 403 or the route.
//!
//! # Example
//! ```
//! use std::net::SocketAddr;
//! use axum::http::{HeaderMap, header};
//! use navbench_http_guard::{allowed_hosts, refusal};
//!
//! let hosts = allowed_hosts(SocketAddr::from(([127, 0, 0, 1], 8765)));
//! let mut headers = HeaderMap::new();
//! headers.insert(header::HOST, "evil.example:8765".parse().unwrap());
//! let why = refusal(&headers, hosts.as_deref(), "this server").unwrap();
//! assert!(why.contains("DNS-rebinding"));
//! headers.insert(header::HOST, "localhost:8765".parse().unwrap());
//! assert_eq!(refusal(&headers, hosts.as_deref(), "this server"), None);
//! ```

use std::net::SocketAddr;

use axum::extract::Request;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::IntoResponse as _;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

/// The loopback names every listener accepts.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Host names a request may carry in `Host` and `Origin`: loopback, plus the bound
/// address when it is not loopback; `None` (any host) when bound to every interface.
pub fn allowed_hosts(local: SocketAddr) -> Option<Vec<String>> {
    let ip = local.ip();
    if ip.is_unspecified() {
        return None;
    }
    let mut hosts: Vec<String> = LOOPBACK.map(String::from).to_vec();
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
/// `who` names the listener in the message (`this server`, `the navbench proxy`).
pub fn refusal(headers: &HeaderMap, hosts: Option<&[String]>, who: &str) -> Option<String> {
    let loopback: Vec<String> = LOOPBACK.map(String::from).to_vec();
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(hosts) = hosts {
        let host = text(header::HOST).unwrap_or("");
        if !host_of(host).is_some_and(|h| hosts.contains(&h)) {
            return Some(format!(
                "Host '{host}' is not allowed: {who} answers only requests addressed to {}; \
connect through one of them (DNS-rebinding protection)",
                hosts.join(", ")
            ));
        }
    }
    if let Some(origin) = text(header::ORIGIN) {
        let allowed = hosts.unwrap_or(&loopback);
        if !host_of(origin).is_some_and(|h| allowed.contains(&h)) {
            return Some(format!(
                "Origin '{origin}' is not allowed: only pages served from {} may call {who} \
(DNS-rebinding protection); use an MCP client, which sends no Origin, or a page on one of them",
                allowed.join(", ")
            ));
        }
    }
    None
}

/// rmcp's Streamable HTTP configuration with its own Host and Origin checks set from
/// `hosts` (as [`allowed_hosts`] gives them).
pub fn mcp_config(hosts: Option<&[String]>) -> StreamableHttpServerConfig {
    let config = match hosts {
        None => StreamableHttpServerConfig::default().disable_allowed_hosts(),
        Some(h) => StreamableHttpServerConfig::default().with_allowed_hosts(h.to_vec()),
    };
    let origin_hosts: Vec<String> = match hosts {
        Some(h) => h.to_vec(),
        None => LOOPBACK.map(String::from).to_vec(),
    };
    config
        .with_allowed_origins(origin_hosts.iter().flat_map(|h| {
            let h = if h.contains(':') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{h}:*"), format!("https://{h}:*")]
        }))
        .enforce_origin_validation()
}

/// `router` behind the [`refusal`] checks: a refused request gets 403 and the reason,
/// and a warning is logged.
pub fn guard(router: axum::Router, hosts: Option<Vec<String>>, who: &'static str) -> axum::Router {
    router.layer(middleware::from_fn(move |req: Request, next: Next| {
        let why = refusal(req.headers(), hosts.as_deref(), who);
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

/// Binds `addr` (`HOST:PORT`, port 0 for a free one) and returns the listener and the
/// address it got. A non-loopback address is refused unless `allow_remote`: the tools
/// behind it read this machine's files. Errors say what to pass instead.
pub async fn bind(
    addr: &str,
    allow_remote: bool,
) -> Result<(tokio::net::TcpListener, SocketAddr), String> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        format!("cannot listen on {addr} ({e}); pass --http HOST:PORT, e.g. 127.0.0.1:8765")
    })?;
    let local = (listener.local_addr())
        .map_err(|e| format!("cannot read the address bound for {addr}: {e}"))?;
    if !local.ip().is_loopback() && !allow_remote {
        return Err(format!(
            "refusing to listen on {local}: it is not a loopback address, and the tools read this machine's files; \
use --http 127.0.0.1:PORT, or add --allow-remote if the network is trusted"
        ));
    }
    Ok((listener, local))
}

/// Resolves on Ctrl-C or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
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
        let hosts = allowed_hosts(SocketAddr::from(([127, 0, 0, 1], 8765)));
        let check = |pairs: &[(header::HeaderName, &str)]| {
            refusal(&headers(pairs), hosts.as_deref(), "this server")
        };
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
        assert!(foreign.contains("this server"), "{foreign}");
        assert!(check(&[]).is_some(), "a request without Host is refused");
        let origin = check(&[
            (header::HOST, "127.0.0.1:8765"),
            (header::ORIGIN, "https://evil.example"),
        ])
        .expect("refused");
        assert!(origin.contains("Origin 'https://evil.example'"), "{origin}");
        assert!(check(&[(header::HOST, "127.0.0.1"), (header::ORIGIN, "null")]).is_some());
    }

    #[tokio::test]
    async fn only_loopback_is_bound_unless_remote_is_allowed() {
        let (_l, local) = bind("127.0.0.1:0", false).await.expect("loopback binds");
        assert!(local.ip().is_loopback() && local.port() != 0);
        let e = bind("0.0.0.0:0", false).await.expect_err("refused");
        assert!(
            e.contains("not a loopback address") && e.contains("--allow-remote"),
            "{e}"
        );
        assert!(bind("0.0.0.0:0", true).await.is_ok());
        let e = bind("no-such-host.invalid:1", false)
            .await
            .expect_err("fails");
        assert!(e.contains("--http HOST:PORT"), "{e}");
    }

    #[test]
    fn every_interface_accepts_any_host_but_only_loopback_origins() {
        assert_eq!(allowed_hosts(SocketAddr::from(([0, 0, 0, 0], 1))), None);
        let who = "the navbench proxy";
        assert_eq!(
            refusal(&headers(&[(header::HOST, "build-box:1")]), None, who),
            None
        );
        let why = refusal(
            &headers(&[(header::ORIGIN, "http://evil.example")]),
            None,
            who,
        );
        assert!(why.is_some_and(|w| w.contains(who)));
        let lan = allowed_hosts(SocketAddr::from(([192, 168, 1, 5], 1))).expect("list");
        assert!(lan.contains(&"192.168.1.5".to_string()) && lan.contains(&"localhost".to_string()));
    }
}
