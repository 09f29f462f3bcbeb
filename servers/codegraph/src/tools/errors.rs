//! [`ToolError`]: why a tool call failed, worded for the agent.

use navbench_server_support::sandbox::SandboxError;

/// Why a tool call failed; the message is written for the agent.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A tool other than `init_repository` was called first.
    #[error(
        "No repository is initialized. Call init_repository first, e.g. {{\"repo_path\": \"/path/to/repo\"}} (the absolute path of the checkout); then use this tool again."
    )]
    NotInitialized,
    /// A path was refused or does not exist.
    #[error(transparent)]
    Path(#[from] SandboxError),
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    InvalidArgument(String),
    /// Building or loading the graph failed.
    #[error("{0}")]
    Init(String),
}

/// An invalid-argument error with this message.
pub(super) fn invalid(msg: impl Into<String>) -> ToolError {
    ToolError::InvalidArgument(msg.into())
}
