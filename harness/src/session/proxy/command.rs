//! `navbench proxy --variant V --root DIR --record DIR [--http ADDR]`: the recording
//! proxy as a command of its own, for an agent a person runs by hand (or any MCP
//! client), not through `navbench run`.
//!
//! It launches the variant's server on `--root` exactly as a run does, runs the
//! variant's setup (codegraph's `init_repository`), and only then serves: over stdio
//! by default (the agent's client launches `navbench proxy` as its MCP server; stdout
//! carries MCP only, logs go to stderr), or over Streamable HTTP with `--http`. Every
//! call, setup included, is appended to `--record DIR/calls.csv` as it happens
//! ([`super::record`]). The session ends when the client closes stdin (stdio) or on
//! Ctrl-C / SIGTERM (HTTP); the server is then shut down and reaped.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use navbench_http_guard::shutdown_signal;
use rmcp::ServiceExt as _;

use super::record::CallsFile;
use super::{Proxy, Settings};
use crate::data::dataset::Instance;
use crate::policy::{CallRecord, Task};
use crate::score::tokens::Tokenizer;
use crate::session::mcp_client::McpSession;
use crate::variants;

/// What `navbench proxy` was given.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    pub variant: String,
    pub root: PathBuf,
    /// The directory receiving `calls.csv`.
    pub record: PathBuf,
    /// `HOST:PORT` to serve Streamable HTTP on; `None`: stdio.
    pub http: Option<String>,
    pub allow_remote: bool,
    /// The `instance_id` column of the rows [default: the root's directory name].
    pub instance_id: Option<String>,
    pub server_dir: Option<PathBuf>,
    pub cache: PathBuf,
    pub tokenizer: Tokenizer,
    pub call_timeout: Duration,
    pub index_timeout: Duration,
}

/// Runs the proxy until its client goes away (see the module doc).
pub async fn run(o: ProxyOptions) -> anyhow::Result<()> {
    let root = std::fs::canonicalize(&o.root).map_err(|e| {
        anyhow::anyhow!(
            "--root {}: {e} (pass the directory the server should serve)",
            o.root.display()
        )
    })?;
    let mut ready = variants::resolve(std::slice::from_ref(&o.variant), o.server_dir.as_deref())?;
    variants::prepare_all(&mut ready, &o.cache);
    let Some(rv) = ready.pop() else {
        anyhow::bail!("no variant named '{}'", o.variant);
    };
    let variant = rv.variant;
    let label = o.instance_id.clone().unwrap_or_else(|| {
        root.file_name()
            .map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned())
    });
    let calls = Arc::new(CallsFile::open(&o.record, &label, variant.name())?);
    let spec = variant.server_spec(rv.binary.clone(), &root, &o.cache, &rv.prepared);
    let session = McpSession::start(&spec, o.call_timeout)
        .await
        .with_context(|| format!("the server of variant '{}' did not start", variant.name()))?;
    let sink = {
        let calls = Arc::clone(&calls);
        Arc::new(move |r: &CallRecord| {
            if let Err(e) = calls.append(r) {
                tracing::error!("{e:#}");
            }
        })
    };
    let settings = Settings {
        tokenizer: o.tokenizer,
        setup_tools: variant.setup_tools(),
        index_timeout: o.index_timeout,
    };
    let proxy = Proxy::on_record(variant.name(), session, settings, sink);
    let instance = local_instance(&label);
    let task = Task {
        instance: &instance,
        workdir: &root,
        knobs: &crate::policy::knobs::Knobs::default(),
        trial: crate::policy::Trial::FIRST,
    };
    let served = match proxy.setup(variant, &task).await {
        Ok(()) => serve(&proxy, &o).await,
        Err(e) => Err(e.context(format!(
            "the setup of variant '{}' on {} failed, so nothing was served",
            variant.name(),
            root.display()
        ))),
    };
    if let Some(up) = proxy.finish().await {
        if let Some(why) = up.session.failure() {
            eprintln!("navbench proxy: the server failed during the session: {why}");
        }
        eprintln!(
            "navbench proxy: {} call(s) recorded in {}",
            up.records.len(),
            calls.path().display()
        );
        up.session.shutdown().await;
    }
    served
}

/// The instance a setup template sees: the label as its id, no issue.
fn local_instance(label: &str) -> Instance {
    Instance {
        instance_id: label.to_string(),
        repo: format!("local/{label}"),
        ..Instance::default()
    }
}

/// Serves `proxy` over stdio or HTTP until the client goes away or a signal comes.
async fn serve(proxy: &Proxy, o: &ProxyOptions) -> anyhow::Result<()> {
    match &o.http {
        None => {
            let running = proxy
                .clone()
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|e| anyhow::anyhow!("MCP initialization with the client failed: {e}"))?;
            let reason = running
                .waiting()
                .await
                .map_err(|e| anyhow::anyhow!("the proxy's MCP session failed: {e}"))?;
            tracing::info!(?reason, "navbench proxy: the client closed the session");
            Ok(())
        }
        Some(addr) => {
            let serving = super::http::serve(proxy.clone(), addr, o.allow_remote).await?;
            // The one line on stderr that is not a tracing event: where to connect.
            eprintln!("navbench proxy: listening on {}", serving.url);
            shutdown_signal().await;
            serving.stop().await;
            Ok(())
        }
    }
}
