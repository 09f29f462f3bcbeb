//! `navbench-retrieval`: a `codebase_retrieval`-style semantic code search MCP server.
//!
//! The engine turns a repository into searchable chunks and keeps them current; the
//! server exposes them over MCP (stdio or Streamable HTTP).
//!
//! Engine:
//! - [`chunk`]: Python files split with tree-sitter into function, method, class and
//!   module chunks with semantic metadata (calls, imports used, exceptions handled,
//!   complexity, annotated types); TypeScript/JavaScript, Java, Go and Rust files into
//!   the same kinds of chunks by `navbench-lang`'s front ends (imports used and
//!   complexity); other text files into bounded text chunks.
//! - [`model`]: [`model::Embedder`], a BERT sentence embedder run by the crate's own
//!   BERT pass ([`encoder`]'s `bert_pass`; candle-core only reads the weights; mean
//!   pooling, L2-normalized), loaded from a Hugging Face-layout directory; the default
//!   all-MiniLM-L6-v2 is installed by `navbench-retrieval fetch-model`.
//! - [`encoder`]: [`encoder::StaticEncoder`], a token table distilled here from MiniLM
//!   (`navbench-retrieval distill`): tokenize → mean of token rows → L2 normalize;
//!   [`encoder::TextEncoder`], the one `embed` the index and tools call, implemented
//!   by both encoders (`--encoder minilm|static`, [`encoder::EncoderKind`]), whose
//!   stores and vectors are kept apart.
//! - [`index`]: [`index::RepoIndex`], exact cosine search fused with tantivy BM25 by
//!   reciprocal rank fusion, persisted per repository with an embedding cache keyed by
//!   chunk content, updated file by file.
//! - [`scope`]: `get_implementation`'s minimal / logical / dependencies scopes.
//! - [`live`]: a debounced file watcher feeding changed paths to the index.
//!
//! Server:
//! - [`registry`]: the persisted list of repositories and their state
//!   (`indexing` / `ready` / `error`), crash-safe.
//! - [`source`]: local directories vs git URLs, git2 clones and diffs, file manifests.
//! - [`bases`]: indexes of earlier trees (`--index-bases`), from which a new tree of
//!   the same repository is indexed by difference.
//! - [`rag`]: `query_code`'s OpenAI-compatible chat client and citation checking.
//! - [`tools`]: every tool and resource as plain functions ([`tools::RetrievalTools`]),
//!   split by concept (arguments, results with one [`tools::CodeChunk`] wire shape,
//!   workspace, indexing jobs, repositories, search, resources).
//! - [`server`]: the rmcp server (tools, resources, prompts) and stdio transport;
//!   [`http`]: Streamable HTTP at `/mcp` and `GET /health`.
//!
//! The cache directory rule is `navbench_server_support::cache::default_cache_dir`:
//! data in `<cache>/retrieval`, the model in `<cache>/models`.
//!
//! Data flow: `--workspace DIR` or `index_repository` → [`registry`] record
//! (`indexing`) → walk + [`chunk`] → [`model`] embeddings → [`index`] persisted under
//! the data directory → record `ready` (a workspace with no index yet is first seeded
//! from a [`bases`] entry, then brought up to date by difference, and published back
//! once indexed); file changes ([`live`]) or `update_repository`
//! (git diff / manifest) → [`index::RepoIndex::update_files`]; queries →
//! [`index::RepoIndex::search`] → JSON results.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use navbench_retrieval::model::{Embedder, write_tiny_model};
//! use navbench_retrieval::tools::{CodebaseRetrievalArgs, RetrievalTools, Settings};
//!
//! let tmp = tempfile::tempdir()?;
//! let (model_dir, data_dir, repo) = (tmp.path().join("model"), tmp.path().join("data"), tmp.path().join("repo"));
//! std::fs::create_dir_all(&repo)?;
//! std::fs::write(repo.join("auth.py"), "def login(user, password):\n    return check_password(user, password)\n")?;
//! write_tiny_model(&model_dir, 7)?; // random weights in the real format (tests only)
//! let tools = RetrievalTools::new(Settings::new(data_dir), Arc::new(Embedder::load(&model_dir)?))?;
//! tools.start_workspace(&repo)?;
//! let out = tools.codebase_retrieval(&CodebaseRetrievalArgs { query: "login password".into(), top_k: Some(3) })?;
//! assert_eq!(out.data.results[0].file, "auth.py");
//! assert_eq!(out.data.results[0].lines, "1-2");
//! # Ok(())
//! # }
//! ```

pub mod bases;
pub mod chunk;
pub mod encoder;
pub mod http;
pub mod index;
pub mod live;
pub mod model;
pub mod rag;
pub mod registry;
pub mod scope;
pub mod server;
pub mod source;
pub mod tools;
