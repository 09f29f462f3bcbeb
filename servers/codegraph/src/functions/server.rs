//! The MCP face of `navbench-codegraph --tools functions`: two tools over
//! [`super::tools::FunctionTools`], on stdio or Streamable HTTP.
//!
//! A mode of its own, beside the codegraph tools, so that the agent-facing codegraph
//! server keeps its tool list (and what that list costs an agent in tokens) unchanged.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use navbench_lang::family::Selection;
use navbench_server_support::mcp::{call_tool, input_schema, output_schema};
use navbench_server_support::roots::AllowedRoots;
use navbench_server_support::start::server_info;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

pub use super::tools::{
    FunctionTools, IndexFunctionsArgs, IndexFunctionsOutput, RankedDocument, SearchFunctionsArgs,
    SearchFunctionsOutput,
};

/// The usage guide sent as the server's `instructions`.
pub const INSTRUCTIONS: &str = "\
functions: BM25 over one document per function and method of a repository (Python, TS/JS, \
Java, Go, Rust; the CoRNStack / SweRank corpus format; test files left out), the LocAgent paper's BM25 baseline.
1. index_functions(repo_path) once per checkout.
2. search_functions(query=<issue text>) for the ranked documents: ids 'path.py/Class/method' or \
'path.py/function' (any source extension), best first.";

const INDEX_DESCRIPTION: &str = "\
Build the BM25 index of a repository (Python, TS/JS, Java, Go, Rust): one document per function \
and per method (nested functions included; no class or module documents), text = the id line, \
'class C:' for Python methods, then the source. Files with 'test' in their path are left out (test_filter='file_name' looks at \
the file name only). Returns the document and file counts (structuredContent adds the build time).";

const SEARCH_DESCRIPTION: &str = "\
Rank the indexed function documents for a query with BM25 (bm25s Lucene scoring, k1=1.5, b=0.75, \
lower-cased words, English stop words removed, Snowball stems). Returns up to top_k (default 100, \
max 1000) documents as 'rank. id (lines a-b) score S', ids 'path.py/Class/method' or \
'path.py/function'.";

/// The MCP server of the per-function BM25 tools.
#[derive(Debug, Clone)]
pub struct FunctionServer {
    tools: Arc<FunctionTools>,
    tool_router: ToolRouter<FunctionServer>,
}

#[tool_router]
impl FunctionServer {
    /// A server exposing `tools`.
    pub fn new(tools: Arc<FunctionTools>) -> FunctionServer {
        FunctionServer {
            tools,
            tool_router: Self::tool_router(),
        }
    }

    /// The tool definitions as advertised by `tools/list`.
    pub fn tool_definitions(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    #[tool(
        name = "index_functions",
        description = INDEX_DESCRIPTION,
        input_schema = input_schema::<IndexFunctionsArgs>(),
        output_schema = output_schema::<IndexFunctionsOutput>(),
        annotations(title = "Index functions", read_only_hint = false, open_world_hint = false)
    )]
    async fn index_functions(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "index_functions",
            r#"{"repo_path": "/path/to/repo"}"#,
            args,
            |t, a: IndexFunctionsArgs| t.index_functions(&a),
        )
        .await
    }

    #[tool(
        name = "search_functions",
        description = SEARCH_DESCRIPTION,
        input_schema = input_schema::<SearchFunctionsArgs>(),
        output_schema = output_schema::<SearchFunctionsOutput>(),
        annotations(title = "Search functions", read_only_hint = true, open_world_hint = false)
    )]
    async fn search_functions(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "search_functions",
            r#"{"query": "TypeError when the cart is empty", "top_k": 100}"#,
            args,
            |t, a: SearchFunctionsArgs| t.search_functions(&a),
        )
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FunctionServer {
    fn get_info(&self) -> ServerConfig {
        server_info(
            ServerCapabilities::builder().enable_tools().build(),
            "navbench-codegraph",
            env!("CARGO_PKG_VERSION"),
            INSTRUCTIONS,
        )
    }
}

/// Serves the tools over stdin/stdout, or over Streamable HTTP at `http` (loopback
/// only unless `allow_remote`). With `root`, that checkout is indexed at start-up;
/// `index_functions` opens only directories under `allowed_roots`. What each file
/// gave the corpus is kept in `<cache>/functions` (`cache` defaults to
/// `<cache>/codegraph`, as the graph tools' cache), so a later tree of the same
/// repository reads only its changed files.
pub async fn serve(
    root: Option<PathBuf>,
    cache: Option<PathBuf>,
    http: Option<String>,
    allow_remote: bool,
    allowed_roots: AllowedRoots,
    languages: Selection,
) -> anyhow::Result<()> {
    let cache = cache
        .unwrap_or_else(|| navbench_server_support::cache::default_cache_dir().join("codegraph"));
    let tools = Arc::new(
        FunctionTools::new()
            .with_allowed_roots(allowed_roots)
            .with_languages(languages)
            .with_store(cache.join("functions")),
    );
    if let Some(root) = &root {
        let tools = Arc::clone(&tools);
        let args = IndexFunctionsArgs {
            repo_path: root.to_string_lossy().into_owned(),
            test_filter: None,
        };
        tokio::task::spawn_blocking(move || tools.index_functions(&args))
            .await
            .context("start-up indexing task failed")?
            .map_err(|e| anyhow::anyhow!("--root {}: {e}", root.display()))?;
    }
    let Some(addr) = &http else {
        tracing::info!("navbench-codegraph (functions) serving on stdio");
        let server = FunctionServer::new(tools);
        navbench_server_support::mcp::serve_stdio(server, "navbench-codegraph").await?;
        return Ok(());
    };
    let root_text = root.as_ref().map(|r| r.display().to_string());
    let health = Arc::new(move || {
        serde_json::json!({
            "status": "ok",
            "server": "navbench-codegraph",
            "tools": "functions",
            "root": root_text,
        })
    });
    let listen = navbench_server_support::http::Listen {
        name: "navbench-codegraph",
        addr,
        allow_remote,
    };
    let factory = move || Ok(FunctionServer::new(Arc::clone(&tools)));
    navbench_server_support::http::serve_http(factory, health, listen).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_server_schemas_are_objects_and_documented() {
        let s = FunctionServer::new(Arc::new(FunctionTools::new()));
        let tools = s.tool_definitions();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort();
        assert_eq!(names, ["index_functions", "search_functions"]);
        for t in &tools {
            assert!(t.output_schema.is_some(), "{}", t.name);
            let schema = serde_json::Value::Object((*t.input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 100));
        }
    }
}
