//! What to launch: [`ServerSpec`], and [`locate_server_binary`] to find a navbench
//! server binary next to the running executable.

use std::path::{Path, PathBuf};

use super::McpError;

/// How the harness speaks MCP with a server it launched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Transport {
    /// Over the child's stdin and stdout (the default).
    #[default]
    Stdio,
    /// Streamable HTTP: at this URL, or (`None`) at the first `http://` or `https://`
    /// URL the child prints on stdout or stderr.
    Http(Option<String>),
}

/// How to launch one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its command-line arguments.
    pub args: Vec<String>,
    /// Extra environment variables (added to the inherited environment).
    pub env: Vec<(String, String)>,
    /// Working directory; the harness's own when `None`.
    pub cwd: Option<PathBuf>,
    /// How to talk to it once it runs.
    pub transport: Transport,
}

impl ServerSpec {
    /// A spec running `program` with no arguments.
    pub fn new(program: impl Into<PathBuf>) -> ServerSpec {
        ServerSpec {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            transport: Transport::Stdio,
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<String>) -> ServerSpec {
        self.args.push(arg.into());
        self
    }

    /// Adds one environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> ServerSpec {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The command line as one string, for messages.
    pub fn display(&self) -> String {
        let mut out = self.program.display().to_string();
        for arg in &self.args {
            out.push(' ');
            out.push_str(arg);
        }
        out
    }
}

/// Finds the server binary `name` (e.g. `navbench-text`).
///
/// With `override_dir`, only that directory is searched. Otherwise the directory of
/// the running executable and its parent are searched (the parent because test
/// binaries run from `target/<profile>/deps` while binaries live in
/// `target/<profile>`).
pub fn locate_server_binary(name: &str, override_dir: Option<&Path>) -> Result<PathBuf, McpError> {
    let file_name = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let dirs: Vec<PathBuf> = match override_dir {
        Some(dir) => vec![dir.to_path_buf()],
        None => {
            let mut dirs = Vec::new();
            if let Some(exe_dir) = std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent().map(Path::to_path_buf))
            {
                if let Some(parent) = exe_dir.parent() {
                    let parent = parent.to_path_buf();
                    dirs.push(exe_dir);
                    dirs.push(parent);
                } else {
                    dirs.push(exe_dir);
                }
            }
            dirs
        }
    };
    dirs.iter()
        .map(|dir| dir.join(&file_name))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| McpError::BinaryNotFound {
            name: name.to_string(),
            searched: dirs,
        })
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_reports_where_it_looked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = locate_server_binary("navbench-nope", Some(dir.path())).expect_err("absent");
        let msg = err.to_string();
        assert!(msg.contains("navbench-nope"), "{msg}");
        assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
        assert!(msg.contains("cargo build -p navbench-nope"), "{msg}");
        assert!(msg.contains("--server-dir"), "{msg}");
        let err = locate_server_binary("navbench-nope", None).expect_err("absent");
        let McpError::BinaryNotFound { searched, .. } = err else {
            panic!("wrong error")
        };
        assert_eq!(searched.len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn locate_finds_executables_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("srv");
        std::fs::write(&path, "#!/bin/sh\n").expect("write");
        assert!(locate_server_binary("srv", Some(dir.path())).is_err());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(
            locate_server_binary("srv", Some(dir.path())).expect("found"),
            path
        );
    }
}
