//! The MCP face of [`CodegraphTools`]: tool definitions, argument parsing, results,
//! and [`serve_stdio`].
//!
//! Every tool takes its arguments as a raw JSON object (the advertised `inputSchema`
//! is generated from the typed argument struct), so malformed arguments become a
//! tool result with `isError: true` and a message the agent can act on, not a
//! JSON-RPC error it never sees. Results carry the agent-facing text as a text
//! content item and the same data as `structuredContent` (described by the tool's
//! `outputSchema`).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use navbench_server_support::mcp::{call_tool, input_schema, output_schema};
use navbench_server_support::roots::AllowedRoots;
use navbench_server_support::start::server_info;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::tools::{
    CodegraphTools, DependenciesOutput, ExploreTreeArgs, GetCodeArgs, GetCodeOutput,
    GetCodeSnippetArgs, GetDependenciesArgs, InitOutput, InitRepositoryArgs, Limits, ResetOutput,
    ResetRepositoryArgs, SearchCodeArgs, SearchCodeOutput, SearchEntitiesArgs,
    SearchEntitiesOutput, SnippetOutput, TreeOutput,
};

/// The usage guide sent as the server's `instructions` (the role of the original
/// extraction's USAGE.md).
pub const INSTRUCTIONS: &str = "\
codegraph: LocAgent's code graph of a Python repository (directories, files, classes, functions; \
edges contains/imports/invokes/inherits). Entity ids: 'path/file.py', 'path/file.py:Class', \
'path/file.py:Class.method', 'path/file.py:func.inner', directories 'path/dir', the root '/'.
1. init_repository(repo_path) once (cached: later calls on the same tree are fast).
2. explore_tree(path='/') for the layout; explore_tree on a directory/file/class for its contents.
3. search_code(query=[names, keywords, code fragments from the issue]) to find candidates; \
search_entities(query=[approximate names]) when you only half know a name.
4. get_dependencies(entities=[ids]) for callers/callees/imports/inheritance as a DOT graph \
(direction 'upstream' = who uses it, 'downstream' = what it uses, 'both').
5. get_code(entities=[ids]) for full numbered code; get_code_snippet(file, start_line, end_line) for a line range.
Test files are excluded from results. Unknown ids answer with the closest existing ids.";

const INIT_DESCRIPTION: &str = "\
Build (or load from the cache) the code graph and search indexes of a Python repository; call it \
before any other tool. Returns node/edge/file/class/function counts, whether the cache was used \
('cache: hit') and what to do next (structuredContent adds the build time). force_rebuild=true ignores the cache.";

const DEPENDENCIES_DESCRIPTION: &str = "\
Traverse the dependency graph from entities and return the subgraph in DOT notation: node lines \
\"id\"; then edge lines \"a\" -> \"b\" [type=invokes]; (types: contains, imports, invokes, inherits). \
direction: 'downstream' (what the entities contain/call/import/inherit), 'upstream' (who contains/\
calls/imports/inherits them), 'both' (default; both ways from the start, then onward). depth: hops \
(default 2, -1 = unlimited). entity_types / dependency_types filter neighbours and edges. \
Test files are skipped. Unknown ids are reported with candidate ids. Large graphs are cut with a \
'// ... N more edges' line.";

const TREE_DESCRIPTION: &str = "\
Show the structure around one entity as an indented tree, one line per relation: \
'├── contains ── pkg/mod.py:Cls'; upstream relations read 'invokes-by', 'contains-by', ... \
path defaults to '/' (the repository layout); a directory, file, class or function id shows its \
contents and dependencies. depth: levels (default 2, -1 = unlimited); direction: 'downstream' \
(default), 'upstream' or 'both'; entity_types / dependency_types filter (e.g. dependency_types=['contains'] \
for a pure file tree). A node already shown is not expanded again. Long trees are cut with a marker.";

const SEARCH_CODE_DESCRIPTION: &str = "\
Search the code for each term (and, with several terms, all of them together), the way LocAgent's \
search_code_snippets does: an exact entity id ('pkg/mod.py:Cls.meth') or file path returns its full \
code; a class/function/file name returns previews of the matches (skeletons for large classes/files, \
a folded list when there are many); otherwise BM25 entity and code-content search return the best \
snippets. Code comes with line numbers ('12 | code'). top_k (default 5) caps content results per \
term; file_pattern restricts the files ('src/**/*.py' or a substring). Test files are not searched.";

const SEARCH_ENTITIES_DESCRIPTION: &str = "\
Fuzzy search over entity ids (files, classes, functions) with rapidfuzz token_set_ratio, ids split \
on '_', '-', '/', '.' and ':' (case-sensitive). Use it when you know a name only approximately. \
Each query is searched separately; returns top_k (default 10, max 20) ids per query as \
'type: `id` (lines a-b) score S'. entity_type limits to 'file', 'class' or 'function'.";

const GET_CODE_DESCRIPTION: &str = "\
Return the full code of entities with line numbers ('12 | code'): ids 'file_path:QualifiedName' \
or a file path. Code longer than the limit is cut with a marker naming the get_code_snippet call \
that reads the rest. Unknown names answer with the closest existing ids.";

const SNIPPET_DESCRIPTION: &str = "\
Return lines start_line..end_line (1-based, inclusive) of a file, numbered ('12 | code'). \
end_line past the end is clamped; start_line past the end is an error stating the line count. \
Works for any text file in the repository (e.g. 'setup.cfg'); paths are relative to the root.";

const RESET_DESCRIPTION: &str = "\
Forget the current repository (graph and indexes stay cached on disk). Other tools then ask for \
init_repository again.";

/// The MCP server: routes `tools/call` to [`CodegraphTools`] on a blocking thread.
#[derive(Debug, Clone)]
pub struct CodegraphServer {
    tools: Arc<CodegraphTools>,
    tool_router: ToolRouter<CodegraphServer>,
}

#[tool_router]
impl CodegraphServer {
    /// A server exposing `tools`.
    pub fn new(tools: Arc<CodegraphTools>) -> CodegraphServer {
        CodegraphServer {
            tools,
            tool_router: Self::tool_router(),
        }
    }

    /// The tool definitions as advertised by `tools/list`.
    pub fn tool_definitions(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    #[tool(
        name = "init_repository",
        description = INIT_DESCRIPTION,
        input_schema = input_schema::<InitRepositoryArgs>(),
        output_schema = output_schema::<InitOutput>(),
        annotations(title = "Initialize repository", read_only_hint = false, open_world_hint = false)
    )]
    async fn init_repository(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "init_repository",
            r#"{"repo_path": "/path/to/repo"}"#,
            args,
            |t, a: InitRepositoryArgs| t.init_repository(&a),
        )
        .await
    }

    #[tool(
        name = "get_dependencies",
        description = DEPENDENCIES_DESCRIPTION,
        input_schema = input_schema::<GetDependenciesArgs>(),
        output_schema = output_schema::<DependenciesOutput>(),
        annotations(title = "Dependencies (DOT)", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_dependencies(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "get_dependencies",
            r#"{"entities": ["pkg/mod.py:Cls.meth"], "direction": "upstream", "depth": 2}"#,
            args,
            |t, a: GetDependenciesArgs| t.get_dependencies(&a),
        )
        .await
    }

    #[tool(
        name = "explore_tree",
        description = TREE_DESCRIPTION,
        input_schema = input_schema::<ExploreTreeArgs>(),
        output_schema = output_schema::<TreeOutput>(),
        annotations(title = "Explore tree", read_only_hint = true, open_world_hint = false)
    )]
    async fn explore_tree(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "explore_tree",
            r#"{"path": "/", "depth": 2, "dependency_types": ["contains"]}"#,
            args,
            |t, a: ExploreTreeArgs| t.explore_tree(&a),
        )
        .await
    }

    #[tool(
        name = "search_code",
        description = SEARCH_CODE_DESCRIPTION,
        input_schema = input_schema::<SearchCodeArgs>(),
        output_schema = output_schema::<SearchCodeOutput>(),
        annotations(title = "Search code", read_only_hint = true, open_world_hint = false)
    )]
    async fn search_code(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "search_code",
            r#"{"query": ["QuerySet.filter", "timezone"], "top_k": 5}"#,
            args,
            |t, a: SearchCodeArgs| t.search_code(&a),
        )
        .await
    }

    #[tool(
        name = "search_entities",
        description = SEARCH_ENTITIES_DESCRIPTION,
        input_schema = input_schema::<SearchEntitiesArgs>(),
        output_schema = output_schema::<SearchEntitiesOutput>(),
        annotations(title = "Search entities", read_only_hint = true, open_world_hint = false)
    )]
    async fn search_entities(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "search_entities",
            r#"{"query": ["config loader"], "top_k": 10, "entity_type": "class"}"#,
            args,
            |t, a: SearchEntitiesArgs| t.search_entities(&a),
        )
        .await
    }

    #[tool(
        name = "get_code",
        description = GET_CODE_DESCRIPTION,
        input_schema = input_schema::<GetCodeArgs>(),
        output_schema = output_schema::<GetCodeOutput>(),
        annotations(title = "Get code", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_code(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "get_code",
            r#"{"entities": ["pkg/mod.py:Cls.meth", "pkg/mod.py"]}"#,
            args,
            |t, a: GetCodeArgs| t.get_code(&a),
        )
        .await
    }

    #[tool(
        name = "get_code_snippet",
        description = SNIPPET_DESCRIPTION,
        input_schema = input_schema::<GetCodeSnippetArgs>(),
        output_schema = output_schema::<SnippetOutput>(),
        annotations(title = "Get lines", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_code_snippet(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "get_code_snippet",
            r#"{"file": "pkg/mod.py", "start_line": 10, "end_line": 40}"#,
            args,
            |t, a: GetCodeSnippetArgs| t.get_code_snippet(&a),
        )
        .await
    }

    #[tool(
        name = "reset_repository",
        description = RESET_DESCRIPTION,
        input_schema = input_schema::<ResetRepositoryArgs>(),
        output_schema = output_schema::<ResetOutput>(),
        annotations(title = "Reset repository", read_only_hint = false, open_world_hint = false)
    )]
    async fn reset_repository(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "reset_repository",
            "{}",
            args,
            |t, _a: ResetRepositoryArgs| t.reset_repository(),
        )
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CodegraphServer {
    fn get_info(&self) -> ServerConfig {
        server_info(
            ServerCapabilities::builder().enable_tools().build(),
            "navbench-codegraph",
            env!("CARGO_PKG_VERSION"),
            INSTRUCTIONS,
        )
    }
}

/// What the server mode of the binary needs.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Repository to initialize at start-up.
    pub root: Option<PathBuf>,
    /// Cache directory (default `<cache>/codegraph`, <cache> as
    /// [`navbench_server_support::cache::default_cache_dir`] says).
    pub cache: Option<PathBuf>,
    /// Output limits.
    pub limits: Limits,
    /// Serve Streamable HTTP at `http://ADDR/mcp` instead of stdio.
    pub http: Option<String>,
    /// With `http`: allow a non-loopback address.
    pub allow_remote: bool,
    /// Where `init_repository` may open a repository (the binary passes every
    /// `--allow-root` and `--root`); the default, [`AllowedRoots::any`], is for
    /// trusted callers.
    pub allowed_roots: AllowedRoots,
    /// Which language families the graphs read (`--languages`; default `auto`, the
    /// repository's own).
    pub languages: navbench_lang::family::Selection,
}

/// Serves the tools over stdin/stdout until the client closes the connection, or over
/// Streamable HTTP until Ctrl-C / SIGTERM when `options.http` is set. HTTP sessions share
/// one [`CodegraphTools`], so they see the same initialized repository (as one stdio
/// client would) and the graph is loaded once.
pub async fn serve(options: ServeOptions) -> anyhow::Result<()> {
    let cache = options
        .cache
        .clone()
        .unwrap_or_else(|| navbench_server_support::cache::default_cache_dir().join("codegraph"));
    let tools = Arc::new(
        CodegraphTools::new(cache.clone(), options.limits.clone())
            .with_allowed_roots(options.allowed_roots.clone())
            .with_languages(options.languages.clone()),
    );
    if let Some(root) = &options.root {
        let tools = Arc::clone(&tools);
        let args = InitRepositoryArgs {
            repo_path: root.to_string_lossy().into_owned(),
            force_rebuild: None,
        };
        let out = tokio::task::spawn_blocking(move || tools.init_repository(&args))
            .await
            .context("start-up initialization task failed")?
            .map_err(|e| anyhow::anyhow!("--root {}: {e}", root.display()))?;
        tracing::info!(cache = %out.data.cache, nodes = out.data.nodes, "initialized at start-up");
    }
    let Some(addr) = &options.http else {
        tracing::info!(cache = %cache.display(), "navbench-codegraph serving on stdio");
        let server = CodegraphServer::new(tools);
        navbench_server_support::mcp::serve_stdio(server, "navbench-codegraph").await?;
        return Ok(());
    };
    let (root, cache_text) = (
        options.root.as_ref().map(|r| r.display().to_string()),
        cache.display().to_string(),
    );
    let health = Arc::new(move || {
        serde_json::json!({
            "status": "ok",
            "server": "navbench-codegraph",
            "root": root,
            "cache": cache_text,
        })
    });
    let listen = navbench_server_support::http::Listen {
        name: "navbench-codegraph",
        addr,
        allow_remote: options.allow_remote,
    };
    let factory = move || Ok(CodegraphServer::new(Arc::clone(&tools)));
    navbench_server_support::http::serve_http(factory, health, listen).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_objects_and_documented() {
        let s = CodegraphServer::new(Arc::new(CodegraphTools::new(
            std::env::temp_dir(),
            Limits::default(),
        )));
        let tools = s.tool_definitions();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "explore_tree",
                "get_code",
                "get_code_snippet",
                "get_dependencies",
                "init_repository",
                "reset_repository",
                "search_code",
                "search_entities"
            ]
        );
        for t in &tools {
            assert!(t.output_schema.is_some(), "{}", t.name);
            let schema = serde_json::Value::Object((*t.input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 100));
        }
        let deps = tools
            .iter()
            .find(|t| t.name == "get_dependencies")
            .map(|t| serde_json::Value::Object((*t.input_schema).clone()))
            .unwrap_or_default();
        assert_eq!(deps["required"], serde_json::json!(["entities"]));
        assert_eq!(deps["properties"]["depth"]["type"], "integer");
    }
}
