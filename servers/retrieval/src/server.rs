//! The MCP face of [`RetrievalTools`]: tool definitions, resources, prompts and
//! [`serve_stdio`].
//!
//! Every tool takes its arguments as a raw JSON object (the advertised `inputSchema`
//! is generated from the typed argument struct), so malformed arguments become a tool
//! result with `isError: true` and an example of valid arguments
//! ([`navbench_server_support::mcp::call_tool`]). Results carry the agent-facing text and the
//! same data as `structuredContent`, described by each tool's `outputSchema`.

use std::sync::Arc;

use navbench_server_support::mcp::{call_tool, input_schema, output_schema};
use navbench_server_support::start::server_info;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ErrorData, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::tools::{
    CodebaseRetrievalArgs, CodebaseRetrievalOutput, DeleteRepositoryOutput, GetImplementationArgs,
    GetImplementationOutput, IndexRepositoryArgs, IndexRepositoryOutput, ListRepositoriesArgs,
    ListRepositoriesOutput, QueryCodeArgs, QueryCodeOutput, RepoIdArgs, RepositoryInfoOutput,
    RetrievalTools, SearchCodeArgs, SearchCodeOutput, ToolError, UpdateRepositoryArgs,
    UpdateRepositoryOutput,
};

/// The usage guide sent as the server's `instructions`.
pub const INSTRUCTIONS: &str = "\
navbench-retrieval: semantic code search (all-MiniLM-L6-v2 embeddings fused with BM25) over a live \
workspace and over indexed repositories.
- codebase_retrieval(query): the first tool to reach for when you do not know where code lives; \
searches the --workspace, which is re-indexed as files change.
- get_implementation(entity_name, scope): the code of a function/class/method, optionally with the \
same-file helpers it calls (logical) or its cross-file callees and imports (dependencies).
- Other repositories: index_repository(url_or_path) → repo_id; search_code(repo_id, query) for ranked \
chunks; query_code(repo_id, question) for an LLM answer with checked [file:start-end] citations \
(needs NAVBENCH_LLM_BASE_URL/NAVBENCH_LLM_MODEL); update_repository after new commits; \
list_repositories / get_repository_info / delete_repository to manage them.
- Resources: repositories://list, repository://{repo_id}, code://{repo_id}/{path}, chunk://{repo_id}/{chunk_id}.";

/// The `codebase_retrieval` description: the plan's usage rules, with honest claims.
pub const CODEBASE_RETRIEVAL_DESCRIPTION: &str = "\
**PRIMARY TOOL FOR CODEBASE SEARCH** - Use this as your FIRST CHOICE for any codebase searches.

This is navbench-retrieval's context engine for the workspace this server was started with. It:
1. Takes in a natural language description of the code you are looking for
2. Ranks code chunks (functions, methods, classes, module-level code, documentation sections) by \
all-MiniLM-L6-v2 sentence-embedding similarity fused with BM25 keyword scores, so both the meaning \
of your description and exact identifiers in it count
3. Maintains a real-time index of the codebase: a file watcher re-indexes changed files, so the \
results reflect the current state of the codebase within about a second of a save
4. Understands the structure of Python, TypeScript/JavaScript, Java, Go and Rust code (tree-sitter) and \
also searches Markdown, reST, text and config files
5. Only reflects the current state of the codebase on the disk, and has no information on version \
control or code history

**WHEN TO USE THIS TOOL:**
- When you don't know which files contain the information you need
- When you want to gather high-level information about the task you are trying to accomplish
- When you want to gather information about the codebase in general
- BEFORE making any edits - to understand all symbols involved at a detailed level

**GOOD QUERY EXAMPLES:**
- \"Where is the function that handles user authentication?\"
- \"What tests are there for the login functionality?\"
- \"How is the database connected to the application?\"

**DO NOT USE FOR (use grep instead):**
- Finding ALL occurrences of a known identifier
- Finding exact definition of a specific constructor
- Exact string matching of error messages, config values, or log entries

**CRITICAL RULES:**
- ALWAYS use this tool BEFORE editing code to understand symbols
- Ask for ALL symbols involved in a single call (classes, methods, properties)
- When in doubt between grep and this tool, ALWAYS choose this tool

Arguments: query (1-1000 characters), top_k (1-50, default 10). Returns JSON {results: [{file, \
content, score (0-1), lines ('45-78'), reason}], metadata: {workspace, totalResults}}; the result's _meta holds lastIndexed and queryTimeMs.";

const INDEX_DESCRIPTION: &str = "\
Index a repository so its code can be searched and questioned: a local directory (indexed in place) \
or a git URL (https://github.com/owner/repo, owner/repo, git@host:owner/repo.git, file:///path; \
cloned into the server's data directory, optionally at a branch). Python, TypeScript/JavaScript, Java, \
Go and Rust are split into function, method, class and module chunks, other text files (Markdown, \
reST, config) into text chunks; chunks are \
embedded (cached by content, so re-indexing only embeds what changed) and indexed for BM25. \
include_patterns/exclude_patterns are globs ('*.py', 'src/**', 'tests/'). Indexing runs in the \
background: the call waits up to wait_seconds (default 30) and otherwise returns status 'indexing' \
(poll get_repository_info). Returns repo_id, files_processed, chunks_indexed and a message.";

const QUERY_CODE_DESCRIPTION: &str = "\
Ask a question about an indexed repository and get an answer grounded in its code with exact \
citations [file:start-end]. Retrieves top_k chunks (default 5, 1-20), sends them to the \
OpenAI-compatible chat endpoint configured in the server's environment (NAVBENCH_LLM_BASE_URL, \
NAVBENCH_LLM_MODEL, NAVBENCH_LLM_API_KEY), and checks every citation of the answer against the \
retrieved evidence: grounded=true only when there are citations and all lie inside the evidence. \
Without a configured endpoint it returns an error naming the settings; search_code needs no LLM.";

const LIST_DESCRIPTION: &str = "\
List every registered repository (indexed, indexing or in error) with repo_id, name, source URL or \
path, branch, chunk and file counts, status and when it was indexed. The --workspace, if any, is one \
of them (workspace=true).";

const INFO_DESCRIPTION: &str = "\
Detailed information about one repository: status (ready / indexing / error with the reason), \
source, branch, local path, counts, the indexed files, the last indexed commit and the \
include/exclude patterns. repo_id may be the full id or a unique prefix (e.g. its first 8 characters); \
an ambiguous prefix lists the candidates.";

const DELETE_DESCRIPTION: &str = "\
Delete an indexed repository and all its data (index, embedding cache, clone). The workspace the \
server was started with cannot be deleted. A repository still indexing must finish first.";

const UPDATE_DESCRIPTION: &str = "\
Update an indexed repository incrementally, processing only files changed since the last indexing: \
for a git clone it fetches, moves to the branch tip and re-indexes the files in the git diff since \
the last indexed commit; for a local directory it compares file sizes, modification times and \
content hashes with the last indexing. Only changed chunks are embedded again. Returns the files \
added/modified/deleted, chunks embedded and the new total. Waits up to wait_seconds (default 30).";

const SEARCH_CODE_DESCRIPTION: &str = "\
Search an indexed repository for code chunks similar to a query (semantic embeddings fused with \
BM25 keywords), without generating an answer: fast exploration, and the no-LLM path. top_k \
default 10 (max 50); file_filter restricts files by glob ('*.py', 'src/**/*.py') or path substring; \
chunk_type is function, method, class, module, text or all (default). Each result has file_path, \
lines, content, relevance_score (0-1), chunk_type, name, a citation [file:start-end] and its \
chunk:// resource URI.";

const GET_IMPLEMENTATION_DESCRIPTION: &str = "\
Retrieve the implementation of a function, class or method by name ('parse_url', 'Session', \
'Session.send', or with a path 'pkg/sessions.py:Session.send'), with semantic scope control: \
scope='minimal' (default) returns only the entity; 'logical' adds the helper functions/classes from \
the same file that it calls (at most 20); 'dependencies' adds cross-file callees and imported \
entities it uses (at most 30). In TypeScript/JavaScript, Java, Go and Rust, 'logical' adds the \
entity's type (a method's class/struct/receiver type, a Rust type's impl blocks) and 'dependencies' \
the indexed definitions its code names. Results are deduplicated and cycle-safe; an entity without \
call/import metadata (or, outside Python, without related definitions) falls back to minimal \
(fell_back=true). Searches the workspace unless repo_id is given. \
Unknown names answer with similar indexed names.";

/// The MCP server: routes `tools/call` to [`RetrievalTools`] on a blocking thread and
/// serves resources and prompts.
#[derive(Debug, Clone)]
pub struct RetrievalServer {
    tools: Arc<RetrievalTools>,
    tool_router: ToolRouter<RetrievalServer>,
}

/// How often a waiting `index_repository` call hears of the builds' progress.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Sends MCP progress notifications (chunks embedded of chunks to embed, with rate and
/// ETA in the message) for the index builds running in this server, until aborted. A
/// build with nothing to embed (a warm index, or one not yet past chunking) is not
/// reported: a client would only show `0/0 chunks embedded`.
async fn report_progress(peer: rmcp::Peer<RoleServer>, token: rmcp::model::ProgressToken) {
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    loop {
        tick.tick().await;
        let working = crate::index::progress::active()
            .into_iter()
            .find(|(_, s)| s.has_work());
        let Some((_, s)) = working else {
            continue;
        };
        let note =
            rmcp::model::ProgressNotificationParam::new(token.clone(), s.chunks_embedded as f64)
                .with_total(s.chunks_to_embed as f64)
                .with_message(s.line());
        if peer.notify_progress(note).await.is_err() {
            return;
        }
    }
}

#[tool_router]
impl RetrievalServer {
    /// A server exposing `tools`.
    pub fn new(tools: Arc<RetrievalTools>) -> RetrievalServer {
        RetrievalServer {
            tools,
            tool_router: Self::tool_router(),
        }
    }

    /// The tool definitions as advertised by `tools/list`.
    pub fn tool_definitions(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    #[tool(
        name = "codebase_retrieval",
        description = CODEBASE_RETRIEVAL_DESCRIPTION,
        input_schema = input_schema::<CodebaseRetrievalArgs>(),
        output_schema = output_schema::<CodebaseRetrievalOutput>(),
        annotations(title = "Codebase retrieval", read_only_hint = true, open_world_hint = false)
    )]
    async fn codebase_retrieval(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "codebase_retrieval",
            r#"{"query": "Where is the function that handles user authentication?", "top_k": 10}"#,
            args,
            |t, a: CodebaseRetrievalArgs| t.codebase_retrieval(&a),
        )
        .await
    }

    #[tool(
        name = "get_implementation",
        description = GET_IMPLEMENTATION_DESCRIPTION,
        input_schema = input_schema::<GetImplementationArgs>(),
        output_schema = output_schema::<GetImplementationOutput>(),
        annotations(title = "Get implementation", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_implementation(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "get_implementation",
            r#"{"entity_name": "Session.send", "scope": "logical"}"#,
            args,
            |t, a: GetImplementationArgs| t.get_implementation(&a),
        )
        .await
    }

    #[tool(
        name = "index_repository",
        description = INDEX_DESCRIPTION,
        input_schema = input_schema::<IndexRepositoryArgs>(),
        output_schema = output_schema::<IndexRepositoryOutput>(),
        annotations(title = "Index repository", read_only_hint = false, open_world_hint = true)
    )]
    async fn index_repository(
        &self,
        Parameters(args): Parameters<JsonObject>,
        meta: rmcp::model::RequestMetaObject,
        peer: rmcp::Peer<RoleServer>,
    ) -> CallToolResult {
        // A client that sends a progress token hears how the indexing goes while it waits.
        let reporter = meta
            .get_progress_token()
            .map(|token| tokio::spawn(report_progress(peer, token)));
        let result = call_tool(
            Arc::clone(&self.tools),
            "index_repository",
            r#"{"url_or_path": "https://github.com/psf/requests", "branch": "main", "include_patterns": ["*.py"]}"#,
            args,
            |t, a: IndexRepositoryArgs| t.index_repository(&a),
        )
        .await;
        if let Some(r) = reporter {
            r.abort();
        }
        result
    }

    #[tool(
        name = "query_code",
        description = QUERY_CODE_DESCRIPTION,
        input_schema = input_schema::<QueryCodeArgs>(),
        output_schema = output_schema::<QueryCodeOutput>(),
        annotations(title = "Ask about code", read_only_hint = true, open_world_hint = true)
    )]
    async fn query_code(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "query_code",
            r#"{"repo_id": "3f2a9c1e", "question": "How are redirects handled?", "top_k": 5}"#,
            args,
            |t, a: QueryCodeArgs| t.query_code(&a),
        )
        .await
    }

    #[tool(
        name = "list_repositories",
        description = LIST_DESCRIPTION,
        input_schema = input_schema::<ListRepositoriesArgs>(),
        output_schema = output_schema::<ListRepositoriesOutput>(),
        annotations(title = "List repositories", read_only_hint = true, open_world_hint = false)
    )]
    async fn list_repositories(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "list_repositories",
            "{}",
            args,
            |t, _a: ListRepositoriesArgs| t.list_repositories(),
        )
        .await
    }

    #[tool(
        name = "get_repository_info",
        description = INFO_DESCRIPTION,
        input_schema = input_schema::<RepoIdArgs>(),
        output_schema = output_schema::<RepositoryInfoOutput>(),
        annotations(title = "Repository info", read_only_hint = true, open_world_hint = false)
    )]
    async fn get_repository_info(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "get_repository_info",
            r#"{"repo_id": "3f2a9c1e"}"#,
            args,
            |t, a: RepoIdArgs| t.get_repository_info(&a),
        )
        .await
    }

    #[tool(
        name = "delete_repository",
        description = DELETE_DESCRIPTION,
        input_schema = input_schema::<RepoIdArgs>(),
        output_schema = output_schema::<DeleteRepositoryOutput>(),
        annotations(
            title = "Delete repository",
            read_only_hint = false,
            destructive_hint = true,
            open_world_hint = false
        )
    )]
    async fn delete_repository(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "delete_repository",
            r#"{"repo_id": "3f2a9c1e"}"#,
            args,
            |t, a: RepoIdArgs| t.delete_repository(&a),
        )
        .await
    }

    #[tool(
        name = "update_repository",
        description = UPDATE_DESCRIPTION,
        input_schema = input_schema::<UpdateRepositoryArgs>(),
        output_schema = output_schema::<UpdateRepositoryOutput>(),
        annotations(title = "Update repository", read_only_hint = false, open_world_hint = true)
    )]
    async fn update_repository(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "update_repository",
            r#"{"repo_id": "3f2a9c1e"}"#,
            args,
            |t, a: UpdateRepositoryArgs| t.update_repository(&a),
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
            r#"{"repo_id": "3f2a9c1e", "query": "parse cookies from response headers", "top_k": 10, "chunk_type": "function"}"#,
            args,
            |t, a: SearchCodeArgs| t.search_code(&a),
        )
        .await
    }
}

/// A prompt's definition and its argument names (required first).
struct PromptSpec {
    name: &'static str,
    description: &'static str,
    args: &'static [(&'static str, &'static str, bool)],
}

const PROMPTS: &[PromptSpec] = &[
    PromptSpec {
        name: "analyze_repository",
        description: "Index a repository and give an executive summary of its structure, main modules, design patterns and organization.",
        args: &[(
            "repo_url",
            "Local path or git URL of the repository (https://github.com/owner/repo or owner/repo)",
            true,
        )],
    },
    PromptSpec {
        name: "find_implementation",
        description: "Find how a feature is implemented in an indexed repository, with the data flow and citations.",
        args: &[
            ("repo_id", "Repository id (from list_repositories)", true),
            (
                "feature",
                "The feature or behaviour to locate, e.g. 'cookie persistence across redirects'",
                true,
            ),
        ],
    },
    PromptSpec {
        name: "code_review",
        description: "Review an indexed repository's code: quality, likely bugs, refactoring, documentation, error handling, tests.",
        args: &[
            ("repo_id", "Repository id (from list_repositories)", true),
            (
                "focus_area",
                "Optional area to focus on, e.g. 'error handling in the HTTP adapter'",
                false,
            ),
        ],
    },
];

fn prompt_text(name: &str, args: &JsonObject) -> Result<(String, String), ErrorData> {
    let spec = PROMPTS.iter().find(|p| p.name == name).ok_or_else(|| {
        ErrorData::invalid_params(
            format!(
                "unknown prompt '{name}'; available: {}",
                PROMPTS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None,
        )
    })?;
    let get = |key: &str| -> Result<String, ErrorData> {
        let required = spec.args.iter().any(|(k, _, req)| *k == key && *req);
        match args.get(key).and_then(|v| v.as_str()).map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v.to_string()),
            _ if required => Err(ErrorData::invalid_params(
                format!("prompt '{name}' needs the argument '{key}'"),
                None,
            )),
            _ => Ok(String::new()),
        }
    };
    let text = match name {
        "analyze_repository" => {
            let url = get("repo_url")?;
            format!(
                "Please analyze the repository: {url}\n\n\
Steps:\n\
1. First index it with the index_repository tool (url_or_path=\"{url}\"); if it answers status 'indexing', poll get_repository_info until it is 'ready'.\n\
2. Once indexed, use search_code (and query_code, if an LLM endpoint is configured) to answer:\n\
   - What is the overall structure of the project?\n\
   - Which are the main files/modules?\n\
   - Which design patterns are used?\n\
   - How is the code organized?\n\n\
Give an executive summary of the repository, citing code as [file:start-end]."
            )
        }
        "find_implementation" => {
            let (repo, feature) = (get("repo_id")?, get("feature")?);
            format!(
                "In repository {repo}, I need to find how this is implemented: {feature}\n\n\
Please:\n\
1. Use search_code to find related code\n\
2. Use get_implementation (scope 'logical' or 'dependencies') and query_code to understand the implementation\n\
3. Explain the data flow and the logic\n\
4. Include every relevant citation to the code as [file:start-end]"
            )
        }
        _ => {
            let repo = get("repo_id")?;
            let focus = get("focus_area")?;
            let focus = if focus.is_empty() {
                String::new()
            } else {
                format!(", focusing on {focus}")
            };
            format!(
                "Review the code of repository {repo}{focus}.\n\n\
Analyze:\n\
1. Code quality and best practices\n\
2. Possible bugs or problems\n\
3. Refactoring opportunities\n\
4. Documentation and comments\n\
5. Error handling\n\
6. Testing (if any)\n\n\
Use search_code and query_code to support every observation with citations to the code ([file:start-end])."
            )
        }
    };
    Ok((spec.description.to_string(), text))
}

fn resource_error(e: ToolError) -> ErrorData {
    match e {
        ToolError::NotFound(_) | ToolError::Registry(_) => {
            ErrorData::resource_not_found(e.to_string(), None)
        }
        other => ErrorData::invalid_params(other.to_string(), None),
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RetrievalServer {
    fn get_info(&self) -> ServerConfig {
        server_info(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
            "navbench-retrieval",
            env!("CARGO_PKG_VERSION"),
            INSTRUCTIONS,
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let tools = Arc::clone(&self.tools);
        let entries = tokio::task::spawn_blocking(move || tools.list_resources())
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let resources = entries
            .into_iter()
            .map(|e| {
                Resource::new(e.uri, e.name)
                    .with_description(e.description)
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = vec![
            ResourceTemplate::new("repository://{repo_id}", "Repository metadata")
                .with_description("Metadata, status and indexed files of a repository (JSON)")
                .with_mime_type("application/json"),
            ResourceTemplate::new("code://{repo_id}/{path}", "Indexed file")
                .with_description("The content of an indexed file of a repository"),
            ResourceTemplate::new("chunk://{repo_id}/{chunk_id}", "Code chunk")
                .with_description(
                    "One chunk with its lines, type, name and semantic metadata (JSON); chunk ids look like 'pkg/mod.py:12-40' and come from search_code (chunk_uri); chunk://{chunk_id} alone works when the id is unique",
                )
                .with_mime_type("application/json"),
        ];
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let tools = Arc::clone(&self.tools);
        let uri = request.uri.clone();
        let read = tokio::task::spawn_blocking(move || tools.read_resource(&uri))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(resource_error)?;
        let contents = ResourceContents::text(read.text, read.uri).with_mime_type(read.mime_type);
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = PROMPTS
            .iter()
            .map(|p| {
                let args = p
                    .args
                    .iter()
                    .map(|(name, description, required)| {
                        PromptArgument::new(*name)
                            .with_description(*description)
                            .with_required(*required)
                    })
                    .collect();
                Prompt::new(p.name, Some(p.description), Some(args))
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let (description, text) = prompt_text(&request.name, &args)?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(description)
                .into(),
        )
    }
}

/// Serves `tools` over stdin/stdout until the client closes the connection.
pub async fn serve_stdio(tools: Arc<RetrievalTools>) -> anyhow::Result<()> {
    let server = RetrievalServer::new(tools);
    navbench_server_support::mcp::serve_stdio(server, "navbench-retrieval").await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_documented_with_schemas() {
        let tmp = tempfile::tempdir().expect("tempdir");
        crate::model::write_tiny_model(&tmp.path().join("m"), 1).expect("tiny model");
        let embedder = crate::model::Embedder::load(&tmp.path().join("m")).expect("load");
        let tools = RetrievalTools::new(
            crate::tools::Settings::new(tmp.path().join("data")),
            Arc::new(embedder),
        )
        .expect("tools");
        let server = RetrievalServer::new(Arc::new(tools));
        let defs = server.tool_definitions();
        assert_eq!(defs.len(), 9);
        for t in &defs {
            assert!(t.output_schema.is_some(), "{}", t.name);
            let schema = serde_json::Value::Object((*t.input_schema).clone());
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert!(schema.get("$schema").is_none());
            assert!(
                t.description.as_deref().is_some_and(|d| d.len() > 100),
                "{}",
                t.name
            );
        }
        let search = defs
            .iter()
            .find(|t| t.name == "search_code")
            .map(|t| serde_json::Value::Object((*t.input_schema).clone()))
            .unwrap_or_default();
        assert_eq!(search["required"], serde_json::json!(["repo_id", "query"]));
        assert_eq!(search["properties"]["top_k"]["maximum"], 50);
        let imp = defs
            .iter()
            .find(|t| t.name == "get_implementation")
            .map(|t| serde_json::Value::Object((*t.input_schema).clone()))
            .unwrap_or_default();
        assert!(imp.to_string().contains("dependencies"), "{imp}");
    }

    #[test]
    fn prompts_render_and_validate() {
        let mut args = JsonObject::new();
        args.insert("repo_url".into(), "pallets/flask".into());
        let (_, text) = prompt_text("analyze_repository", &args).expect("prompt");
        assert!(text.contains("index_repository") && text.contains("pallets/flask"));
        let err = prompt_text("find_implementation", &args).expect_err("missing args");
        assert!(err.message.contains("repo_id"), "{}", err.message);
        let err = prompt_text("nope", &args).expect_err("unknown");
        assert!(err.message.contains("code_review"), "{}", err.message);
        let mut args = JsonObject::new();
        args.insert("repo_id".into(), "abc".into());
        let (_, text) = prompt_text("code_review", &args).expect("optional focus");
        assert!(text.contains("repository abc.") || text.contains("repository abc"));
    }

    #[test]
    fn description_keeps_the_plan_structure_without_vendor_claims() {
        for section in [
            "WHEN TO USE THIS TOOL",
            "GOOD QUERY EXAMPLES",
            "DO NOT USE FOR",
            "CRITICAL RULES",
        ] {
            assert!(
                CODEBASE_RETRIEVAL_DESCRIPTION.contains(section),
                "{section}"
            );
        }
        assert!(CODEBASE_RETRIEVAL_DESCRIPTION.contains("all-MiniLM-L6-v2"));
        assert!(!CODEBASE_RETRIEVAL_DESCRIPTION.contains("Augment"));
        assert!(!CODEBASE_RETRIEVAL_DESCRIPTION.contains("proprietary"));
    }
}
