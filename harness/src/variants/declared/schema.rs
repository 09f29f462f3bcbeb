//! The TOML shape of a declared variant (`variants/<name>.toml`), as read by serde.
//!
//! Every field a refusal may point at is [`Spanned`], so a message can name the line
//! of the file to fix. Unknown keys are refused too (`deny_unknown_fields`): a typo
//! must not silently become a default.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A whole declaration file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDecl {
    /// Name on the command line and in the CSVs.
    pub name: Spanned<String>,
    /// One line on what the server's tools are.
    #[serde(default)]
    pub about: String,
    /// How to install the server (absent: nothing to install).
    pub install: Option<Spanned<InstallDecl>>,
    /// How to launch the server.
    pub server: Spanned<ServerDecl>,
    /// Calls made once per instance before the policy (timed as index time).
    #[serde(default)]
    pub setup: Vec<Spanned<CallDecl>>,
    /// How the steps' rankings are fused.
    #[serde(default)]
    pub fusion: FusionDecl,
    /// The policy: tool calls in order, each with an extractor.
    #[serde(default)]
    pub step: Vec<Spanned<StepDecl>>,
}

/// `[install]`: one registry package, pinned.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallDecl {
    /// An npm package name (installed with `npm install --prefix`).
    pub npm: Option<String>,
    /// A PyPI distribution name (installed into its own virtual environment).
    pub pip: Option<String>,
    /// The exact version.
    pub version: Spanned<String>,
    /// More pinned requirements installed beside it (`"uv==0.13.9"`, `"mcp<2"`), for a
    /// package that needs a tool it does not depend on, or a dependency held back.
    #[serde(default)]
    pub with: Vec<String>,
}

/// `[server]`: a stdio command, or a Streamable HTTP URL.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDecl {
    pub command: Option<Spanned<String>>,
    #[serde(default)]
    pub args: Vec<Spanned<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, Spanned<String>>,
    pub cwd: Option<Spanned<String>>,
    /// `stdio` (default) or `http` (Streamable HTTP).
    pub transport: Option<Spanned<String>>,
    /// With `http`: where the server listens (a template; `{port}` is a free port the
    /// harness picks). Absent: the first URL the server prints.
    pub url: Option<Spanned<String>>,
}

/// `[[setup]]`: one tool call with templated arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallDecl {
    pub tool: Spanned<String>,
    pub args: Option<Spanned<toml::Table>>,
    /// `[[setup]]` only: this call's timeout in seconds (default: the run's
    /// `--index-timeout`).
    pub timeout_secs: Option<Spanned<i64>>,
}

/// `[fusion]`: weighted reciprocal rank fusion over every call's ranking.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FusionDecl {
    /// The RRF constant `k` in `w / (k + rank)`.
    pub k: f64,
    /// Factor on the contributions of test files (1 keeps them as they are).
    pub test_file_weight: f64,
    /// How many locations of each level the answer holds.
    pub answer_len: usize,
}

impl Default for FusionDecl {
    fn default() -> Self {
        FusionDecl {
            k: 60.0,
            test_file_weight: 1.0,
            answer_len: 10,
        }
    }
}

/// `[[step]]`: one tool call of the policy, or one per extracted term.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepDecl {
    pub tool: Spanned<String>,
    pub args: Option<Spanned<toml::Table>>,
    /// `identifiers`, `words`, `paths` or `frames`: one call per item (absent: one call).
    pub for_each: Option<Spanned<String>>,
    /// At most this many items of `for_each` (default 10).
    pub limit: Option<usize>,
    /// This step's weight in the fusion (default 1).
    pub weight: Option<f64>,
    /// How the response becomes locations.
    pub extract: Spanned<ExtractDecl>,
}

/// `[step.extract]`: JSON pointers into `structuredContent`, or a regex over the text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractDecl {
    /// Pointer to the items (`*` walks every element); default: the root.
    pub items: Option<String>,
    /// Pointer, relative to an item, to its file path (`""`: the item itself).
    pub path: Option<String>,
    /// Pointer to the 1-based line.
    pub line: Option<String>,
    /// Pointer to a symbol name (qualified or short) defined in that file.
    pub symbol: Option<String>,
    /// A regex over the text content with named groups `path` and optional `line`
    /// or `symbol`.
    pub regex: Option<Spanned<String>>,
}
