//! [`RunConfig`]: everything `navbench run` takes, as the command line gave it. It sits
//! below the pipeline so that what runs before the pipeline proper (a declared
//! variant's preflight) can read the same settings.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::policy::agent::Agent;
use crate::policy::agent_cmd::template::AgentCommand;
use crate::run::shard::Shard;
use crate::score::tokens::Tokenizer;

/// Everything `navbench run` takes.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// `mini`, `dev`, or a path to a .jsonl / .parquet file.
    pub dataset: String,
    pub variants: Vec<String>,
    pub repo_url: String,
    pub cache: PathBuf,
    pub out: PathBuf,
    pub jobs: usize,
    pub instances: Vec<String>,
    pub limit: Option<usize>,
    pub tokenizer: Tokenizer,
    pub call_timeout: Duration,
    /// Timeout of the variant's indexing calls (`setup_tools`).
    pub index_timeout: Duration,
    pub server_dir: Option<PathBuf>,
    /// Run only this slice of the (selected, limited) dataset.
    pub shard: Option<Shard>,
    /// Who plays the agent on every variant.
    pub policy: Policy,
    /// `--repeats`: trials of each instance × variant pair (at least 1).
    pub repeats: u32,
}

/// Who plays the agent: each variant's scripted policy, an LLM ([`Agent`]), or an
/// external agent's command behind the recording proxy ([`AgentCommand`]).
#[derive(Debug, Clone, Default)]
pub enum Policy {
    /// The variant's own scripted policy (`crate::variants`).
    #[default]
    Scripted,
    /// `--agent FILE.toml`: a model behind an OpenAI-compatible endpoint, connected.
    Agent(Arc<Agent>),
    /// `--agent-cmd TEMPLATE`: any agent's command, through the recording proxy
    /// (`crate::policy::agent_cmd`).
    Command(Arc<AgentCommand>),
}
