//! The MCP face of [`TextTools`]: tool definitions, argument parsing and results.
//!
//! Every tool takes its arguments as a raw JSON object (the advertised `inputSchema`
//! is generated from the typed argument struct) so that malformed arguments become a
//! tool result with `isError: true` and a message the agent can act on, rather than a
//! JSON-RPC error it never sees. Successful results carry the text an agent reads as a
//! text content item and the same data as `structuredContent`, described by the
//! tool's `outputSchema`.

use std::sync::Arc;

use navbench_server_support::mcp::{call_tool, input_schema, output_schema};
use navbench_server_support::start::server_info;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

use crate::tools::{
    GrepArgs, GrepOutput, ListFilesArgs, ListFilesOutput, ReadFileArgs, ReadFileOutput, TextTools,
};

/// The usage guide sent as the server's `instructions`.
pub const INSTRUCTIONS: &str = "\
Plain file tools over one repository; every path is relative to its root and uses '/'.
- grep: find where identifiers, messages or regexes occur (ripgrep-style path:line:text).
- read_file: read numbered lines of one file; page with start_line/end_line.
- list_files: see which files exist, optionally filtered by a glob such as '**/*.py'.
Typical flow: grep for names from the bug report, then read_file around the hits.";

const LIST_FILES_DESCRIPTION: &str = "\
List the repository's files as paths relative to the root, sorted, one per line. \
Files ignored by .gitignore/.ignore and hidden files are left out. \
Use it to learn the layout or find a file by name; use grep to search contents. \
glob filters like ripgrep's -g: without '/' it matches file names at any depth ('*.py', 'test_*.py'); \
with '/' it matches the path from the root ('src/**/*.py'); a trailing '/' lists a directory ('tests/'); \
a leading '!' excludes. Returns at most max_results paths (default 500, up to 10000) and ends with \
'... [truncated: N more files ...]' when there are more.";

const READ_FILE_DESCRIPTION: &str = "\
Read one text file. Lines come back numbered as '<line number, right-aligned to 6>\\t<text>', 1-based. \
start_line/end_line (inclusive) select a range; end_line past the end of the file is clamped, \
start_line past the end is an error that states the file's line count. \
At most 2000 lines (and about 100 kB) are returned per call; beyond that the output ends with \
'... [truncated: N more lines ...; call read_file with start_line=K to continue]'. \
Lines longer than 2000 characters are cut. Binary files are refused. \
Paths are relative to the repository root, e.g. 'src/app.py'.";

const GREP_DESCRIPTION: &str = "\
Search file contents line by line, like ripgrep. pattern is a Rust/ripgrep regex \
(escape metacharacters, or pass fixed_strings=true for literal text); case_insensitive=true ignores case. \
Output: 'path:line:text' for matching lines and 'path-line-text' for context lines \
(context_lines 0-20 before and after each match; '--' separates groups), files in sorted path order. \
Skips binary files, hidden files and anything ignored by .gitignore. glob restricts the files \
searched, same syntax as list_files ('*.py', 'src/**/*.py'). Returns at most max_results matching lines \
(default 100, up to 1000) and ends with '... [truncated: N more matches in M files ...]' when there are more.";

/// The MCP server: routes `tools/call` to [`TextTools`] on a blocking thread.
#[derive(Debug, Clone)]
pub struct TextServer {
    tools: Arc<TextTools>,
    tool_router: ToolRouter<TextServer>,
}

#[tool_router]
impl TextServer {
    /// A server exposing `tools`.
    pub fn new(tools: TextTools) -> TextServer {
        TextServer {
            tools: Arc::new(tools),
            tool_router: Self::tool_router(),
        }
    }

    /// The tool definitions as advertised by `tools/list`.
    pub fn tool_definitions(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    #[tool(
        name = "list_files",
        description = LIST_FILES_DESCRIPTION,
        input_schema = input_schema::<ListFilesArgs>(),
        output_schema = output_schema::<ListFilesOutput>(),
        annotations(title = "List files", read_only_hint = true, open_world_hint = false)
    )]
    async fn list_files(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "list_files",
            r#"{"glob": "src/**/*.py", "max_results": 200}"#,
            args,
            |tools, a: ListFilesArgs| tools.list_files(&a),
        )
        .await
    }

    #[tool(
        name = "read_file",
        description = READ_FILE_DESCRIPTION,
        input_schema = input_schema::<ReadFileArgs>(),
        output_schema = output_schema::<ReadFileOutput>(),
        annotations(title = "Read file", read_only_hint = true, open_world_hint = false)
    )]
    async fn read_file(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "read_file",
            r#"{"path": "src/app.py", "start_line": 1, "end_line": 200}"#,
            args,
            |tools, a: ReadFileArgs| tools.read_file(&a),
        )
        .await
    }

    #[tool(
        name = "grep",
        description = GREP_DESCRIPTION,
        input_schema = input_schema::<GrepArgs>(),
        output_schema = output_schema::<GrepOutput>(),
        annotations(title = "Search contents", read_only_hint = true, open_world_hint = false)
    )]
    async fn grep(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        call_tool(
            Arc::clone(&self.tools),
            "grep",
            r#"{"pattern": "def parse_", "glob": "*.py", "context_lines": 2}"#,
            args,
            |tools, a: GrepArgs| tools.grep(&a),
        )
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TextServer {
    fn get_info(&self) -> ServerConfig {
        server_info(
            ServerCapabilities::builder().enable_tools().build(),
            "navbench-text",
            env!("CARGO_PKG_VERSION"),
            INSTRUCTIONS,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Limits;
    use navbench_server_support::sandbox::Sandbox;
    use rmcp::handler::server::common::schema_for_input;

    fn server() -> (tempfile::TempDir, TextServer) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.py"), "def f():\n    pass\n").expect("write");
        let tools = TextTools::new(Sandbox::new(dir.path()).expect("sb"), Limits::default());
        (dir, TextServer::new(tools))
    }

    #[test]
    fn schemas_are_objects_and_documented() {
        assert!(schema_for_input::<ListFilesArgs>().is_ok());
        assert!(schema_for_input::<ReadFileArgs>().is_ok());
        assert!(schema_for_input::<GrepArgs>().is_ok());
        let (_d, s) = server();
        let tools = s.tool_definitions();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names.len(), 3);
        for name in ["list_files", "read_file", "grep"] {
            assert!(names.contains(&name), "{names:?}");
        }
        for t in &tools {
            assert!(t.output_schema.is_some(), "{}", t.name);
            let schema = serde_json::Value::Object((*t.input_schema).clone());
            assert_eq!(schema["type"], "object");
            assert!(t.description.as_deref().is_some_and(|d| d.len() > 100));
        }
        let read = tools
            .iter()
            .find(|t| t.name == "read_file")
            .expect("read_file");
        let schema = serde_json::Value::Object((*read.input_schema).clone());
        assert_eq!(schema["required"], serde_json::json!(["path"]));
        let start = &schema["properties"]["start_line"];
        assert!(start["description"].is_string());
        assert_eq!(start["type"], "integer");
        assert_eq!(start["minimum"], 1);
        assert!(start.get("default").is_none() && start.get("format").is_none());
        assert!(schema.get("$schema").is_none());
    }

    #[tokio::test]
    async fn bad_arguments_are_tool_errors() {
        let (_d, s) = server();
        let mut args = JsonObject::new();
        args.insert("file".into(), serde_json::json!("a.py"));
        let result = s.read_file(Parameters(args)).await;
        assert_eq!(result.is_error, Some(true));
        let text = result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert!(text.contains("unknown field `file`"), "{text}");
        assert!(text.contains("Example of valid arguments"), "{text}");
    }

    #[tokio::test]
    async fn success_carries_text_and_structured_content() {
        let (_d, s) = server();
        let mut args = JsonObject::new();
        args.insert("path".into(), serde_json::json!("a.py"));
        let result = s.read_file(Parameters(args)).await;
        assert_eq!(result.is_error, Some(false));
        let structured = result.structured_content.expect("structured");
        assert_eq!(structured["total_lines"], 2);
        assert_eq!(structured["lines"][0]["text"], "def f():");
    }
}
