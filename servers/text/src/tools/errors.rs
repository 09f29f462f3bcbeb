//! [`ToolError`]: why a tool call failed, worded for the agent.

use navbench_server_support::sandbox::SandboxError;
use navbench_server_support::walk::WalkError;

/// Why a tool call failed; the message is written for the agent.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The path was refused or does not exist.
    #[error(transparent)]
    Path(#[from] SandboxError),
    /// An invalid glob.
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// An argument is out of range or inconsistent.
    #[error("{0}")]
    InvalidArgument(String),
    /// The file exists but cannot be shown as text.
    #[error("{0}")]
    Unreadable(String),
    /// The regex does not compile.
    #[error(
        "invalid regular expression '{pattern}': {reason}. If you meant the literal text, call grep again with fixed_strings=true"
    )]
    InvalidRegex {
        /// The pattern as given.
        pattern: String,
        /// What the regex parser reported.
        reason: String,
    },
}
