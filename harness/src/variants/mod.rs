//! The server variants navbench measures, as data: one module per variant, one line
//! per variant in [`all`].
//!
//! A [`Variant`] says everything the pipeline and `mcp-config` need to know about one
//! kind of server: its name, the binary that serves it and the arguments that point
//! it at a checked-out tree, what must be prepared before any instance runs (e.g. an
//! embedding model, asked of the server binary itself), which tool calls build its
//! index (their time is index time), and the scripted policy that plays an agent
//! using its tools. The shared policy machinery ([`Driver`], [`Task`], term
//! extraction, rankings, entity ids) lives in [`crate::policy`].
//!
//! Adding a variant: write `variants/<name>.rs` with a unit struct implementing
//! [`Variant`], and add it to [`all`]; or, with no Rust at all, declare it in a TOML
//! file ([`declared`]): `--variants ./path.toml`, or a name resolved from the
//! top-level `variants/` folder.
//!
//! ```
//! use navbench::variants;
//! let v = variants::by_name("codegraph").unwrap();
//! assert_eq!(v.binary(), "navbench-codegraph");
//! assert_eq!(v.setup_tools(), &["init_repository"]);
//! assert!(variants::by_name("nosuch").is_err());
//! ```

pub mod bm25;
pub mod codegraph;
pub mod declared;
mod ready;
pub mod retrieval;
pub mod retrieval_static;
pub mod text;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

pub use ready::{ReadyVariant, prepare_all, resolve};

use crate::data::dataset::Locations;
use crate::policy::{Driver, Task};
use crate::session::mcp_client::{ServerSpec, locate_server_binary};

/// Every variant, in report order. Adding a variant is one line here.
static ALL: &[&dyn Variant] = &[
    &text::Text,
    &codegraph::Codegraph,
    &retrieval::Retrieval,
    &retrieval_static::RetrievalStatic,
    &bm25::Bm25,
];

/// What a policy returns: the ranked locations, or why it could not answer.
pub type PolicyFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<Locations>> + Send + 'a>>;

/// What a variant's setup returns: ready, or why the server could not be made ready.
pub type SetupFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;

/// How far [`Variant::prepare`] may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preparation {
    /// Only look (for `mcp-config`: printing a configuration downloads nothing).
    Check,
    /// Install what is missing (for `run`).
    Install,
}

/// What preparation learned that the server's command line needs (e.g. the model
/// directory the server binary reported). Empty when nothing was prepared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Appended to [`Variant::server_args`].
    pub args: Vec<String>,
}

/// One kind of server measured by navbench (see the module doc).
pub trait Variant: Sync {
    /// Name on the command line (`--variants`) and in the CSVs.
    fn name(&self) -> &'static str;
    /// Binary name, looked up next to `navbench` (or in `--server-dir`).
    fn binary(&self) -> &'static str;
    /// Cargo package that builds [`Variant::binary`] (for error messages).
    fn package(&self) -> &'static str {
        self.binary()
    }
    /// One line on what the variant's tools are.
    fn about(&self) -> &'static str;
    /// Tools whose calls build the server's index: their time counts as index time and
    /// they get the run's `--index-timeout`.
    fn setup_tools(&self) -> &'static [&'static str] {
        &[]
    }
    /// Makes the variant ready to serve before any instance runs, by asking `binary`
    /// (never by re-implementing the server's own checks). An error is reported and
    /// the run goes on: each server then fails to start and says why, per instance.
    fn prepare(
        &self,
        _binary: &Path,
        _cache: &Path,
        _how: Preparation,
    ) -> anyhow::Result<Prepared> {
        Ok(Prepared::default())
    }
    /// The server's arguments for serving `workdir`, keeping its state under `cache`.
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String>;
    /// State the server keeps for `workdir` alone (a per-tree index, say), which the
    /// pipeline removes once the instance is done: no later instance reads it, and over
    /// a whole benchmark it would fill the disk (about 110 MB per sympy tree for
    /// retrieval). Caches shared across trees are never listed here.
    fn per_tree_state(&self, _workdir: &Path, _cache: &Path) -> Option<PathBuf> {
        None
    }
    /// The declaration, for a variant read from a file ([`declared`]).
    fn declared(&self) -> Option<&declared::Declared> {
        None
    }
    /// Finds the program that serves this variant: by default [`Variant::binary`]
    /// next to `navbench` (or in `server_dir`).
    fn locate(&self, server_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
        use anyhow::Context as _;
        locate_server_binary(self.binary(), server_dir).with_context(|| {
            format!(
                "variant '{}' needs `cargo build -p {}`",
                self.name(),
                self.package()
            )
        })
    }
    /// Readies the server for `task` before any policy step or agent turn: the calls
    /// that index the checked-out tree (codegraph's `init_repository`, retrieval's
    /// `index_repository`, a declared variant's `[[setup]]`), timed as index time. The
    /// scripted policies start with it, and an LLM agent starts on an indexed
    /// repository, as LocAgent's agent does. Default: nothing to do.
    fn setup<'a>(&'a self, _driver: &'a mut Driver<'_>, _task: &'a Task<'_>) -> SetupFuture<'a> {
        Box::pin(async { Ok(()) })
    }
    /// The tuned constants of the scripted policy (`navbench tune` tries other values;
    /// a run uses their defaults unless the task's knobs say otherwise). Default: none.
    fn knobs(&self) -> &'static [crate::policy::knobs::Knob] {
        &[]
    }
    /// Entries per level of the scripted policy's answer: `policy::fitted::finish`
    /// moves tests and derived code below source over the policy's whole pool, then
    /// cuts the answer to this. Default: [`crate::policy::fitted::ANSWER_LEN`].
    fn answer_len(&self) -> usize {
        crate::policy::fitted::ANSWER_LEN
    }
    /// Runs the variant's scripted policy on `task` through `driver`.
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a>;

    /// How to launch this variant's server (`program`) on one checked-out tree.
    fn server_spec(
        &self,
        program: PathBuf,
        workdir: &Path,
        cache: &Path,
        prepared: &Prepared,
    ) -> ServerSpec {
        let mut args = self.server_args(workdir, cache);
        args.extend(prepared.args.iter().cloned());
        ServerSpec {
            program,
            args,
            env: Vec::new(),
            cwd: None,
            transport: crate::session::mcp_client::Transport::Stdio,
        }
    }
}

impl std::fmt::Debug for dyn Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variant")
            .field("name", &self.name())
            .field("binary", &self.binary())
            .finish()
    }
}

/// Every variant, in report order.
pub fn all() -> &'static [&'static dyn Variant] {
    ALL
}

/// The built-in variant called `name`.
pub fn builtin(name: &str) -> Option<&'static dyn Variant> {
    ALL.iter().copied().find(|v| v.name() == name)
}

/// Looks up a variant: a built-in name, a declaration file (`./x.toml`, any path
/// ending in `.toml`), the name of a declaration already loaded, or the file of `variants/` declaring
/// `name` ([`declared::find`]). The error lists the valid names, or says what is
/// wrong with the file.
pub fn by_name(name: &str) -> Result<&'static dyn Variant, String> {
    if let Some(v) = builtin(name) {
        return Ok(v);
    }
    let as_file = |p: &Path| {
        declared::load(p)
            .map(|d| d as &'static dyn Variant)
            .map_err(|e| format!("{e:#}"))
    };
    if name.ends_with(".toml") {
        return as_file(Path::new(name));
    }
    if let Some(d) = declared::loaded(name) {
        return Ok(d);
    }
    if let Some(file) = declared::find(name) {
        return as_file(&file);
    }
    Err(format!(
        "unknown variant '{name}': choose from {} (comma-separated in --variants), or give a declaration file ./x.toml",
        names()
    ))
}

/// Names of every variant, comma-separated: the built-in ones, then the files of
/// `variants/`.
pub fn names() -> String {
    let declared = declared::declaration_files();
    ALL.iter()
        .map(|v| v.name().to_string())
        .chain(declared.iter().filter_map(|p| declared::declared_name(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `path` as an argument string.
fn arg(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for v in all() {
            assert_eq!(by_name(v.name()).unwrap().name(), v.name());
            assert_eq!(all().iter().filter(|w| w.name() == v.name()).count(), 1);
        }
        let e = by_name("nosuch").unwrap_err();
        assert!(e.contains("text, codegraph, retrieval"), "{e}");
    }

    #[test]
    fn prepared_arguments_follow_the_variants_own() {
        let v = by_name("text").unwrap();
        let prepared = Prepared {
            args: vec!["--extra".into(), "x".into()],
        };
        let spec = v.server_spec("prog".into(), Path::new("/w"), Path::new("/c"), &prepared);
        assert_eq!(spec.args, ["--root", "/w", "--extra", "x"]);
    }
}
