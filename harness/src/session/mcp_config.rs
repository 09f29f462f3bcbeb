//! `navbench mcp-config`: the MCP client configuration that launches each variant's
//! server on a directory, so an agent (Claude Code, Claude Desktop, any client taking
//! `command` + `args` + `env`) uses exactly the binaries and arguments the harness
//! measures. Every variant of [`variants::all`] is listed, then every declared variant
//! of `variants/` ([`variants::declared`]; a file that does not load is a warning), launched as
//! [`Variant::server_spec`] says, with what [`Variant::prepare`] finds already
//! installed (it only checks here: printing a configuration installs nothing).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::session::mcp_client::{ServerSpec, Transport};
use crate::variants::{self, Preparation, Prepared, Variant};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `claude mcp add` commands, one per server.
    ClaudeCode,
    /// A `claude_desktop_config.json` object: `{"mcpServers": {...}}`.
    ClaudeDesktop,
    /// A plain list: variant, server name, command, args, env, cwd, transport.
    Json,
}

/// One server an agent can launch.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub variant: &'static str,
    /// The name the client shows: `navbench-<variant>`.
    pub name: String,
    pub spec: ServerSpec,
    /// False when the binary was not found and `spec.program` is where it would be.
    pub found: bool,
}

/// The entries for `variant` (or every variant) serving `root`. A binary that is not
/// built yet is still listed, at the path where `cargo build` puts it, with a warning
/// for stderr.
pub fn entries(
    variant: Option<&str>,
    root: &Path,
    cache: &Path,
    server_dir: Option<&Path>,
) -> anyhow::Result<(Vec<ServerEntry>, Vec<String>)> {
    let mut warnings = Vec::new();
    let chosen: Vec<&'static dyn Variant> = match variant {
        Some(v) => vec![variants::by_name(v).map_err(anyhow::Error::msg)?],
        None => {
            let mut all = variants::all().to_vec();
            for file in variants::declared::declaration_files() {
                match variants::declared::load(&file) {
                    Ok(d) => all.push(d),
                    Err(e) => warnings.push(format!("warning: {e:#} (not listed)")),
                }
            }
            all
        }
    };
    let mut out = Vec::new();
    for v in chosen {
        let (program, found) = match v.locate(server_dir) {
            Ok(p) => (p, true),
            Err(e) => {
                warnings.push(format!(
                    "warning: variant '{}': {e} (listed at its expected path)",
                    v.name()
                ));
                (expected_path(v.binary(), server_dir), false)
            }
        };
        let prepared = if found {
            v.prepare(&program, cache, Preparation::Check)
                .unwrap_or_else(|e| {
                    warnings.push(format!("warning: variant '{}': {e:#}", v.name()));
                    Prepared::default()
                })
        } else {
            Prepared::default()
        };
        let spec = v.server_spec(program, root, cache, &prepared);
        if spec.cwd.is_some() {
            warnings.push(format!(
                "warning: variant '{}' needs working directory {}; Claude clients have no such field: start the client there",
                v.name(),
                spec.cwd.as_deref().map(Path::display).map(|d| d.to_string()).unwrap_or_default()
            ));
        }
        if let Transport::Http(url) = &spec.transport {
            warnings.push(format!(
                "warning: variant '{}' serves Streamable HTTP, not stdio: start its command yourself, then point the client at {}",
                v.name(),
                url.as_deref().unwrap_or("the URL it prints on start-up")
            ));
        }
        out.push(ServerEntry {
            variant: v.name(),
            name: format!("navbench-{}", v.name()),
            spec,
            found,
        });
    }
    Ok((out, warnings))
}

/// Where `cargo build` puts `binary`: next to the running `navbench` (or in `server_dir`).
fn expected_path(binary: &str, server_dir: Option<&Path>) -> PathBuf {
    let file = format!("{binary}{}", std::env::consts::EXE_SUFFIX);
    match server_dir {
        Some(d) => d.join(file),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|p| p.join(&file)))
            .unwrap_or_else(|| PathBuf::from(file)),
    }
}

fn env_object(spec: &ServerSpec) -> Value {
    Value::Object(
        spec.env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<String, Value>>(),
    )
}

/// Quotes `s` for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r#"'\''"#))
    }
}

/// Renders `entries` in `format`.
pub fn render(entries: &[ServerEntry], format: Format) -> anyhow::Result<String> {
    Ok(match format {
        Format::Json => {
            let list: Vec<Value> = entries
                .iter()
                .map(|e| {
                    json!({
                        "variant": e.variant,
                        "name": e.name,
                        "command": e.spec.program.to_string_lossy(),
                        "args": e.spec.args,
                        "env": env_object(&e.spec),
                        "cwd": e.spec.cwd.as_ref().map(|c| c.to_string_lossy().into_owned()),
                        "transport": match &e.spec.transport {
                            Transport::Stdio => json!("stdio"),
                            Transport::Http(url) => json!({"http": url}),
                        },
                    })
                })
                .collect();
            serde_json::to_string_pretty(&list)? + "\n"
        }
        Format::ClaudeDesktop => {
            let servers: Map<String, Value> = entries
                .iter()
                .map(|e| {
                    let mut s = json!({
                        "command": e.spec.program.to_string_lossy(),
                        "args": e.spec.args,
                    });
                    if !e.spec.env.is_empty() {
                        s["env"] = env_object(&e.spec);
                    }
                    (e.name.clone(), s)
                })
                .collect();
            serde_json::to_string_pretty(&json!({ "mcpServers": servers }))? + "\n"
        }
        Format::ClaudeCode => {
            let mut out = String::from(
                "# Register navbench's servers with Claude Code (add --scope project to share them via .mcp.json)\n",
            );
            for e in entries {
                let mut line = format!("claude mcp add {}", shell_quote(&e.name));
                for (k, v) in &e.spec.env {
                    let _ = write!(line, " -e {}", shell_quote(&format!("{k}={v}")));
                }
                let _ = write!(
                    line,
                    " -- {}",
                    shell_quote(&e.spec.program.to_string_lossy())
                );
                for a in &e.spec.args {
                    let _ = write!(line, " {}", shell_quote(a));
                }
                out.push_str(&line);
                out.push('\n');
            }
            out
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<ServerEntry> {
        vec![ServerEntry {
            variant: "text",
            name: "navbench-text".into(),
            spec: ServerSpec::new("/opt/nb/navbench-text")
                .arg("--root")
                .arg("/src/my repo")
                .env("RUST_LOG", "warn"),
            found: true,
        }]
    }

    #[test]
    fn renders_each_format() {
        let desktop: Value =
            serde_json::from_str(&render(&sample(), Format::ClaudeDesktop).unwrap()).unwrap();
        let s = &desktop["mcpServers"]["navbench-text"];
        assert_eq!(s["command"], "/opt/nb/navbench-text");
        assert_eq!(s["args"], json!(["--root", "/src/my repo"]));
        assert_eq!(s["env"]["RUST_LOG"], "warn");

        let list: Value = serde_json::from_str(&render(&sample(), Format::Json).unwrap()).unwrap();
        assert_eq!(list[0]["variant"], "text");
        assert_eq!(list[0]["cwd"], Value::Null);

        let code = render(&sample(), Format::ClaudeCode).unwrap();
        assert!(
            code.contains(
                "claude mcp add navbench-text -e RUST_LOG=warn -- /opt/nb/navbench-text --root '/src/my repo'"
            ),
            "{code}"
        );
    }

    #[test]
    fn every_variant_is_listed_with_its_server_spec() {
        let dir = tempfile::tempdir().unwrap();
        let (entries, warnings) = entries(None, dir.path(), dir.path(), Some(dir.path())).unwrap();
        assert_eq!(entries.len(), variants::all().len());
        // Nothing is built in an empty dir: listed at the expected path, with a warning.
        assert!(entries.iter().all(|e| !e.found));
        assert_eq!(warnings.len(), variants::all().len());
        for (e, v) in entries.iter().zip(variants::all()) {
            let want = v.server_spec(
                dir.path().join(v.binary()),
                dir.path(),
                dir.path(),
                &Prepared::default(),
            );
            assert_eq!(e.spec, want);
        }
        // codegraph is pointed at the repository by a tool call; it may open `root`.
        let codegraph = entries.iter().find(|e| e.variant == "codegraph").unwrap();
        let root = dir.path().to_string_lossy();
        assert!(
            codegraph
                .spec
                .args
                .windows(2)
                .any(|w| w[0] == "--allow-root" && w[1] == root),
            "{:?}",
            codegraph.spec.args
        );
        let e = super::entries(Some("nosuch"), dir.path(), dir.path(), None).unwrap_err();
        assert!(e.to_string().contains("unknown variant"));
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r#"'it'\''s'"#);
        assert_eq!(shell_quote(""), "''");
    }
}
