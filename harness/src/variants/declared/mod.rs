//! Declared variants: a server and its policy written as a TOML file
//! (`variants/<name>.toml`) instead of Rust code.
//!
//! A file says how to install the server (an npm or PyPI package, pinned, put under
//! `<cache>/variants/<name>/` by `navbench variant install NAME`: [`install`]), how to
//! launch it (`[server]`: command, args, env with `{root}`, `{cache}`, `{install}`,
//! `{port}`; over stdio, or over Streamable HTTP at a `url` or at the one the server
//! prints), which setup calls build its index (`[[setup]]`, timed as index time), and the
//! policy: `[[step]]`s, each a tool call whose arguments are templates over the
//! instance ([`template`]), optionally one call per extracted identifier, path or
//! traceback frame, with an extractor turning each response into locations
//! ([`extract`]). [`policy`] maps locations to files, modules and functions like the
//! built-in policies and fuses every call's ranking by weighted reciprocal rank.
//!
//! Data flow: file → [`schema::FileDecl`] (serde, with spans) → [`validate::compile`]
//! (refusals with line numbers) → [`Declared`] (a [`Variant`]) → before the run,
//! [`preflight`] checks tool names and extractors on the first instance → the
//! pipeline runs it like any built-in variant.
//!
//! ```
//! use navbench::variants::declared::Declared;
//! let file = r#"
//! name = "grep-only"
//! [server]
//! command = "navbench-text"
//! args = ["--root", "{root}"]
//! [[step]]
//! tool = "grep"
//! for_each = "identifiers"
//! args = { pattern = '\b{identifier_regex}\b', glob = "*.py" }
//! extract = { items = "/matches/*", path = "/path", line = "/line" }
//! "#;
//! let v = Declared::from_str(file, "grep-only.toml".as_ref()).unwrap();
//! assert_eq!(v.step_tools(), ["grep"]);
//! ```

pub mod commands;
pub mod extract;
pub mod install;
pub mod policy;
pub mod preflight;
pub mod schema;
pub mod template;
pub mod validate;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use anyhow::Context;

pub use preflight::preflight;

use super::{PolicyFuture, Preparation, Prepared, SetupFuture, Variant};
use crate::policy::{Driver, Task};
use crate::session::mcp_client::{ServerSpec, Transport, locate_server_binary};
use extract::Extractor;
use schema::FusionDecl;
use template::Template;

/// An installable registry package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Package {
    Npm {
        name: String,
        version: String,
        with: Vec<String>,
    },
    Pip {
        name: String,
        version: String,
        with: Vec<String>,
    },
}

/// How to launch the server.
#[derive(Debug, Clone)]
pub struct Launch {
    pub command: Template,
    /// The command as written (a bare name is a navbench binary or on `PATH`).
    pub command_text: String,
    pub args: Vec<Template>,
    pub env: Vec<(String, Template)>,
    pub cwd: Option<Template>,
    /// `None`: stdio. `Some(url)`: Streamable HTTP at `url`, or (`Some(None)`) at the
    /// URL the server prints.
    pub http: Option<Option<Template>>,
}

impl Launch {
    /// True when a template of the launch names `{port}`, so one must be picked.
    fn uses_port(&self) -> bool {
        let named = |t: &Template| t.fields().any(|f| f == "port");
        named(&self.command)
            || self.args.iter().any(named)
            || self.env.iter().any(|(_, t)| named(t))
            || self.cwd.iter().any(named)
            || self.http.iter().flatten().any(named)
    }
}

/// A loopback TCP port free right now (the OS picks it), for `{port}`.
fn free_port() -> String {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port().to_string())
        // No port to be had: the server's own bind fails with a clear message.
        .unwrap_or_else(|_| "0".to_string())
}

/// One templated tool call (setup or step) and the line it is declared on.
#[derive(Debug, Clone)]
pub struct Call {
    pub tool: String,
    pub tool_line: usize,
    pub args: toml::Table,
    /// A setup call's own timeout (`timeout_secs`); `None`: the run's `--index-timeout`.
    pub timeout: Option<std::time::Duration>,
}

/// One policy step.
#[derive(Debug, Clone)]
pub struct Step {
    pub call: Call,
    pub for_each: Option<String>,
    pub limit: usize,
    pub weight: f64,
    pub extractor: Extractor,
    pub extract_line: usize,
}

/// A loaded, validated declaration (see the module doc).
#[derive(Debug)]
pub struct Declared {
    /// `&'static` like a built-in variant's name: a declared variant is loaded once
    /// per process and lives as long as it (see [`load`]).
    pub name: &'static str,
    pub about: &'static str,
    binary: &'static str,
    setup_tools: &'static [&'static str],
    pub source: PathBuf,
    /// The file's text, for the line numbers of later refusals.
    pub text: String,
    pub package: Option<Package>,
    pub launch: Launch,
    pub setup: Vec<Call>,
    pub steps: Vec<Step>,
    pub fusion: FusionDecl,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

impl Declared {
    /// Parses and validates `text` (the contents of `source`).
    pub fn from_str(text: &str, source: &Path) -> anyhow::Result<Declared> {
        let c = validate::compile(text, source)?;
        let setup_tools: Vec<&'static str> = c.setup.iter().map(|s| leak(s.tool.clone())).collect();
        Ok(Declared {
            name: leak(c.name),
            about: leak(c.about),
            binary: leak(c.launch.command_text.clone()),
            setup_tools: Box::leak(setup_tools.into_boxed_slice()),
            source: source.to_path_buf(),
            text: text.to_string(),
            package: c.package,
            launch: c.launch,
            setup: c.setup,
            steps: c.steps,
            fusion: c.fusion,
        })
    }

    /// The tools of the policy's steps, in order.
    pub fn step_tools(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.call.tool.as_str()).collect()
    }

    /// Where `navbench variant install` puts this variant's package.
    pub fn install_dir(&self, cache: &Path) -> PathBuf {
        cache.join("variants").join(self.name)
    }

    /// The values of `[server]` templates for one launch (a fresh `{port}` each).
    fn launch_values(&self, workdir: &Path, cache: &Path) -> BTreeMap<&'static str, String> {
        let port = if self.launch.uses_port() {
            free_port()
        } else {
            String::new()
        };
        BTreeMap::from([
            ("root", super::arg(workdir)),
            ("cache", super::arg(cache)),
            ("install", super::arg(&self.install_dir(cache))),
            ("port", port),
        ])
    }

    fn render_args(&self, vals: &BTreeMap<&'static str, String>) -> Vec<String> {
        self.launch
            .args
            .iter()
            .map(|a| a.render(vals).unwrap_or_default())
            .collect()
    }
}

/// Declared variants loaded so far, by name: each file is read once per process.
static LOADED: LazyLock<Mutex<HashMap<String, &'static Declared>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The declared variant already loaded under `name`.
pub fn loaded(name: &str) -> Option<&'static Declared> {
    let map = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    map.get(name).copied()
}

/// Loads the declaration at `path` (once per process: the variant is kept for the
/// process's life, as the built-in ones are, so the registry hands out `&'static`).
/// A second file declaring a loaded name is refused.
pub fn load(path: &Path) -> anyhow::Result<&'static Declared> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read variant file {}: give a path to a .toml declaration or a name from variants/",
            path.display()
        )
    })?;
    let d = Declared::from_str(&text, path)?;
    if super::builtin(d.name).is_some() {
        anyhow::bail!(
            "{}: name '{}' is a built-in variant; give the declaration another name (e.g. '{}-declared')",
            path.display(),
            d.name,
            d.name
        );
    }
    let mut map = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(prev) = map.get(d.name) {
        // The same file under another spelling (`./variants/x.toml`, `variants/x.toml`).
        let same = |p: &Path| std::fs::canonicalize(p).ok();
        if same(&prev.source).is_some() && same(&prev.source) == same(path) {
            return Ok(prev);
        }
        anyhow::bail!(
            "{}: name '{}' is already declared by {}; rename one of them",
            path.display(),
            d.name,
            prev.source.display()
        );
    }
    let d: &'static Declared = Box::leak(Box::new(d));
    map.insert(d.name.to_string(), d);
    Ok(d)
}

/// The folder of declarations resolved by name: `variants/` under the current
/// directory, or `$NAVBENCH_VARIANTS_DIR`.
pub fn declarations_dir() -> PathBuf {
    std::env::var_os("NAVBENCH_VARIANTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("variants"))
}

/// Every `*.toml` in [`declarations_dir`], sorted.
pub fn declaration_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(declarations_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The `name` a declaration file gives, read without validating the rest.
pub fn declared_name(path: &Path) -> Option<String> {
    let table: toml::Table = toml::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    table.get("name")?.as_str().map(str::to_string)
}

/// The file of [`declarations_dir`] that declares `name`.
pub fn find(name: &str) -> Option<PathBuf> {
    declaration_files()
        .into_iter()
        .find(|p| declared_name(p).as_deref() == Some(name))
}

impl Variant for Declared {
    fn name(&self) -> &'static str {
        self.name
    }
    fn answer_len(&self) -> usize {
        self.fusion.answer_len
    }
    fn binary(&self) -> &'static str {
        self.binary
    }
    fn about(&self) -> &'static str {
        self.about
    }
    fn setup_tools(&self) -> &'static [&'static str] {
        self.setup_tools
    }
    fn declared(&self) -> Option<&Declared> {
        Some(self)
    }
    /// A bare command is a navbench server binary (next to `navbench`, or in
    /// `server_dir`) or else a program on `PATH`; a command with placeholders is
    /// resolved when the server is launched.
    fn locate(&self, server_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
        let cmd = &self.launch.command_text;
        if cmd.contains('{') || cmd.contains('/') {
            return Ok(PathBuf::from(cmd));
        }
        if let Ok(p) = locate_server_binary(cmd, server_dir) {
            return Ok(p);
        }
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join(cmd))
            .find(|p| p.is_file())
            .with_context(|| {
                format!(
                    "variant '{}' ({}): command '{cmd}' is neither a navbench server binary nor on PATH; build it or write its full path",
                    self.name,
                    self.source.display()
                )
            })
    }
    /// Checks that the package is installed; installing is `navbench variant install`'s
    /// job alone, so a run never changes what is installed.
    fn prepare(&self, _binary: &Path, cache: &Path, _how: Preparation) -> anyhow::Result<Prepared> {
        if let Some(pkg) = &self.package {
            install::check(self, pkg, cache)?;
        }
        Ok(Prepared::default())
    }
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String> {
        self.render_args(&self.launch_values(workdir, cache))
    }
    fn server_spec(
        &self,
        program: PathBuf,
        workdir: &Path,
        cache: &Path,
        prepared: &Prepared,
    ) -> ServerSpec {
        let vals = self.launch_values(workdir, cache);
        let program = if self.launch.command_text.contains('{') {
            PathBuf::from(self.launch.command.render(&vals).unwrap_or_default())
        } else {
            program
        };
        // One set of values, so `{port}` is the same in the args and the URL.
        let mut args = self.render_args(&vals);
        args.extend(prepared.args.iter().cloned());
        let transport = match &self.launch.http {
            None => Transport::Stdio,
            Some(url) => Transport::Http(url.as_ref().map(|u| u.render(&vals).unwrap_or_default())),
        };
        ServerSpec {
            program,
            args,
            transport,
            env: self
                .launch
                .env
                .iter()
                .map(|(k, t)| (k.clone(), t.render(&vals).unwrap_or_default()))
                .collect(),
            cwd: self
                .launch
                .cwd
                .as_ref()
                .map(|t| PathBuf::from(t.render(&vals).unwrap_or_default())),
        }
    }
    fn setup<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> SetupFuture<'a> {
        Box::pin(async move {
            let ex = crate::policy::terms::extract(&task.instance.problem_statement);
            policy::run_setup(self, driver, &policy::base_values(task, &ex)).await
        })
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(policy::localize(self, driver, task))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, name: &str) -> PathBuf {
        let p = dir.join(file);
        let body = format!(
            "name = \"{name}\"\n[server]\ncommand = \"navbench-text\"\n[[step]]\ntool = \"t\"\nextract = {{ regex = '(?P<path>\\S+)' }}\n"
        );
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn a_file_loads_once_and_names_stay_unique() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.toml", "loaded-once");
        let first = load(&a).unwrap();
        // The same file under another spelling is the same variant.
        let again = load(&dir.path().join(".").join("a.toml")).unwrap();
        assert!(std::ptr::eq(first, again));
        assert!(std::ptr::eq(loaded("loaded-once").unwrap(), first));

        let b = write(dir.path(), "b.toml", "loaded-once");
        let e = format!("{:#}", load(&b).unwrap_err());
        assert!(
            e.contains("already declared by") && e.contains("a.toml"),
            "{e}"
        );

        let c = write(dir.path(), "c.toml", "codegraph");
        let e = format!("{:#}", load(&c).unwrap_err());
        assert!(
            e.contains("is a built-in variant") && e.contains("codegraph-declared"),
            "{e}"
        );
    }
}
