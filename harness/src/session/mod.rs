//! Stage 3, the servers: a variant's server as a live MCP session.
//!
//! - [`mcp_client`]: [`mcp_client::McpSession`], a server child process (stdio or
//!   Streamable HTTP) launched, spoken to with timeouts, and killed with everything
//!   it started.
//! - [`proxy`]: an MCP server that forwards an external agent's calls to a variant's
//!   server and records them as the harness records its own (`navbench proxy`).
//! - [`mcp_config`]: the client configuration that launches the same servers for a
//!   real agent (`navbench mcp-config`).

pub mod mcp_client;
pub mod mcp_config;
pub mod proxy;
