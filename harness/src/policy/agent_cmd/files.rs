//! What an external agent is handed, as files in its pair's directory: the prompt, and
//! the MCP configuration pointing at the proxy in the formats agents read.
//!
//! - `prompt.md`: the built-in agent's system prompt (its guidance, then the server's
//!   `instructions`) and task prompt (root, issue, answer format), one after the other,
//!   from [`crate::policy::agent::prompt`], so the external agent is asked exactly what
//!   the built-in one is. One line is added: which MCP server holds the tools, as an
//!   external agent also has tools of its own.
//! - `mcp.json`: `{"mcpServers": {"navbench": {"type": "http", "url": …}}}`, the format
//!   of Claude Code's `--mcp-config` (and of Cursor's and Claude Desktop's files).
//! - `mcp-list.json`: a plain JSON list, `[{"name", "variant", "transport", "url"}]`,
//!   for scripts (like `navbench mcp-config --format json`).
//! - `gemini-settings.json`: `{"mcpServers": {"navbench": {"httpUrl": …, "trust":
//!   true}}, "tools": {"core": ["mcp_navbench_grep", …]}}`; Gemini CLI reads servers
//!   only from a settings file (`httpUrl` is its key for Streamable HTTP, `trust` skips
//!   its confirmations, which a headless run cannot answer), and `tools.core` is its
//!   allowlist of tools: the variant's, as Gemini CLI names MCP tools, and none of its
//!   own (an empty list would remove the MCP tools too).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::policy::agent::prompt;
use crate::session::proxy::SERVER_NAME;

/// The files of one pair.
#[derive(Debug, Clone)]
pub struct PairFiles {
    pub prompt: PathBuf,
    pub mcp_config: PathBuf,
    pub mcp_list: PathBuf,
    pub gemini_settings: PathBuf,
}

/// The prompt file's text.
pub fn prompt_text(root: &Path, problem_statement: &str, instructions: Option<&str>) -> String {
    format!(
        "{}\n\nYour tools are those of the MCP server `{SERVER_NAME}`.\n\n---\n\n{}\n",
        prompt::system(instructions),
        prompt::task(root, problem_statement)
    )
}

/// Writes the prompt and the configurations for a proxy at `url`, offering `tools`,
/// into `dir`.
pub fn write(
    dir: &Path,
    variant: &str,
    url: &str,
    prompt_text: &str,
    tools: &[String],
) -> anyhow::Result<PairFiles> {
    let files = PairFiles {
        prompt: dir.join("prompt.md"),
        mcp_config: dir.join("mcp.json"),
        mcp_list: dir.join("mcp-list.json"),
        gemini_settings: dir.join("gemini-settings.json"),
    };
    let claude = json!({"mcpServers": {SERVER_NAME: {"type": "http", "url": url}}});
    let list = json!([{"name": SERVER_NAME, "variant": variant, "transport": "http", "url": url}]);
    let core: Vec<String> = tools
        .iter()
        .map(|t| format!("mcp_{SERVER_NAME}_{t}"))
        .collect();
    let gemini = json!({
        "mcpServers": {SERVER_NAME: {"httpUrl": url, "trust": true}},
        "tools": {"core": core},
    });
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    for (path, text) in [
        (&files.prompt, prompt_text.to_string()),
        (&files.mcp_config, pretty(&claude)),
        (&files.mcp_list, pretty(&list)),
        (&files.gemini_settings, pretty(&gemini)),
    ] {
        std::fs::write(path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_the_built_in_agents_and_the_configs_point_at_the_proxy() {
        let text = prompt_text(Path::new("/t"), "Money overflows", Some("Call grep."));
        assert!(text.starts_with(&prompt::system(Some("Call grep."))));
        assert!(text.ends_with(&format!(
            "{}\n",
            prompt::task(Path::new("/t"), "Money overflows")
        )));
        let dir = tempfile::tempdir().unwrap();
        let tools = ["grep".to_string()];
        let f = write(dir.path(), "text", "http://127.0.0.1:9/mcp", &text, &tools).unwrap();
        let read = |p: &Path| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        assert_eq!(
            read(&f.mcp_config)["mcpServers"]["navbench"],
            json!({"type": "http", "url": "http://127.0.0.1:9/mcp"})
        );
        assert_eq!(read(&f.mcp_list)[0]["variant"], "text");
        assert_eq!(
            read(&f.gemini_settings)["mcpServers"]["navbench"]["httpUrl"],
            "http://127.0.0.1:9/mcp"
        );
        assert_eq!(
            read(&f.gemini_settings)["tools"]["core"],
            json!(["mcp_navbench_grep"])
        );
        assert_eq!(std::fs::read_to_string(&f.prompt).unwrap(), text);
    }
}
