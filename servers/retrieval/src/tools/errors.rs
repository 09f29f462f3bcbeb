//! [`ToolError`]: why a tool call failed, worded for the agent.

use crate::index::IndexError;
use crate::rag::RagError;
use crate::registry::RegistryError;
use crate::source::SourceError;

/// Why a tool call failed; the message is written for the agent.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// An argument is missing, out of range or malformed.
    #[error("{0}")]
    Invalid(String),
    /// Unknown repository, ambiguous prefix, or the registry file failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// Cloning, fetching or diffing failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// `query_code`'s LLM endpoint is missing or failed.
    #[error(transparent)]
    Rag(#[from] RagError),
    /// The repository is indexing or in error.
    #[error("{0}")]
    NotReady(String),
    /// Nothing with that name or id.
    #[error("{0}")]
    NotFound(String),
    /// The index failed.
    #[error("index error: {0}")]
    Index(#[from] IndexError),
}
