//! How every server binary starts and ends: logs to stderr (stdout is MCP's), one
//! async runtime, the MCP handshake's server identity, and an error turned into a
//! message plus a failing exit code.
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! fn main() -> ExitCode {
//!     navbench_server_support::start::main("navbench-example", "info", || {
//!         let runtime = navbench_server_support::start::runtime()?;
//!         runtime.block_on(async { Ok::<(), Box<dyn std::error::Error>>(()) })
//!     })
//! }
//! ```

use std::fmt::Display;
use std::process::ExitCode;

use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use tracing_subscriber::EnvFilter;

/// Installs logging, runs `body` and maps its outcome to an exit code. Logs go to
/// stderr, filtered by `RUST_LOG` (else `default_filter`, e.g. `"info"`); an error is
/// logged and printed as `<name>: error: <message with its causes>`.
pub fn main<E: Display>(
    name: &str,
    default_filter: &str,
    body: impl FnOnce() -> Result<(), E>,
) -> ExitCode {
    init_tracing(default_filter);
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("{name}: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Sends `tracing` output to stderr without colours, filtered by `RUST_LOG` or else
/// `default_filter`. A second call (tests) keeps the first subscriber.
pub fn init_tracing(default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}

/// The multi-threaded async runtime a server runs on.
pub fn runtime() -> Result<tokio::runtime::Runtime, RuntimeError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(RuntimeError)
}

/// The async runtime could not start (threads or I/O driver).
#[derive(Debug, thiserror::Error)]
#[error("starting the async runtime: {0}")]
pub struct RuntimeError(#[source] pub std::io::Error);

/// What a server answers to `initialize` (its `get_info`): `capabilities`, its name and
/// version, and the usage guide sent as `instructions`.
pub fn server_info(
    capabilities: ServerCapabilities,
    name: &str,
    version: &str,
    instructions: &str,
) -> ServerConfig {
    ServerConfig::new(capabilities)
        .with_server_info(Implementation::new(name, version))
        .with_instructions(instructions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_info_carries_identity_and_instructions() {
        let info = server_info(
            ServerCapabilities::builder().enable_tools().build(),
            "navbench-x",
            "1.2.3",
            "Call a, then b.",
        );
        assert_eq!(info.server_info.name, "navbench-x");
        assert_eq!(info.server_info.version, "1.2.3");
        assert_eq!(info.instructions.as_deref(), Some("Call a, then b."));
        assert!(info.capabilities.tools.is_some());
    }

    #[test]
    fn main_maps_outcomes_to_exit_codes() {
        assert_eq!(main("t", "off", || Ok::<(), String>(())), ExitCode::SUCCESS);
        assert_eq!(
            main("t", "off", || Err("broken".to_string())),
            ExitCode::FAILURE
        );
    }
}
