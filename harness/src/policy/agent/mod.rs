//! The LLM agent as a policy: any model behind an OpenAI-compatible endpoint plays the
//! agent with the variant server's MCP tools, on the same checkout, gold, metrics and
//! CSVs as the scripted policies (`navbench run --agent FILE.toml`).
//!
//! Data flow for one instance × variant ([`Agent::localize`]):
//! 1. the variant's setup ([`crate::variants::Variant::setup`]: codegraph's
//!    `init_repository`, a declared `[[setup]]`) readies the server, timed as index
//!    time: the agent starts on an indexed repository, as LocAgent's does;
//! 2. the conversation opens with one system prompt and one task prompt for every
//!    variant ([`prompt`]), the server's `instructions` appended, and the server's
//!    tools offered verbatim ([`tools`]); the model sees the checkout at the virtual
//!    root `/repo` ([`roots`]), in the prompt, the tool results and `calls.csv`;
//! 3. each turn is one Chat Completions request ([`chat::ChatClient`], answered from
//!    the [`cache::LlmCache`] when recorded); each tool call the model makes goes to the
//!    server through the [`Driver`], so `calls.csv` records it as it records the
//!    scripted policies' calls, and its result goes back verbatim, cut at a token limit;
//! 4. the model's first message without tool calls is its answer, read by [`answer`]
//!    into the ranking the scorer reads (with the lines read and dropped). A model that never answers stops at
//!    `max_turns` or the token budget; every end is an [`AgentStats::stop_reason`].
//!
//! Everything the model and the tools said is kept in a [`transcript::Transcript`],
//! appended to disk as it happens when the run gives a directory
//! ([`Agent::with_transcripts`]).
//!
//! ```no_run
//! # async fn demo(driver: &mut navbench::policy::Driver<'_>, task: &navbench::policy::Task<'_>) -> anyhow::Result<()> {
//! use navbench::policy::agent::{Agent, AgentConfig};
//! let cfg = AgentConfig::load(std::path::Path::new("agents/local-llama.toml"))?;
//! let agent = Agent::new(cfg, None, navbench::score::tokens::Tokenizer::default())?;
//! agent.check_endpoint().await?;
//! let variant = navbench::variants::by_name("text").map_err(anyhow::Error::msg)?;
//! let done = agent.localize(variant, driver, task, &[], None).await;
//! println!("{:?} after {} turns", done.stats.stop_reason, done.stats.llm_turns);
//! # Ok(()) }
//! ```

pub mod answer;
pub mod cache;
pub mod chat;
pub mod config;
pub mod prompt;
pub mod roots;
pub mod tools;
pub mod transcript;

use rmcp::model::Tool;
use serde_json::{Value, json};

pub use cache::LlmCache;
pub use config::AgentConfig;

use crate::data::dataset::Locations;
use crate::policy::{Driver, Task};
use crate::record::output::answer_columns::AnswerCounts;
use crate::score::tokens::Tokenizer;
use crate::variants::Variant;
use chat::{ChatClient, ChatError, Usage};
use transcript::Transcript;

/// Why a conversation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopReason {
    /// The model answered (a message without tool calls).
    #[default]
    Answered,
    /// `max_turns` requests were made without an answer.
    MaxTurns,
    /// The instance's token budget (prompt + completion) was spent without an answer.
    TokenBudget,
    /// The conversation outgrew the model's context.
    ContextOverflow,
    /// The endpoint failed (after retries) or answered with something unusable.
    LlmError,
    /// The endpoint did not answer in time, on every attempt.
    LlmTimeout,
    /// The variant's setup failed before the first turn.
    SetupFailed,
}

impl StopReason {
    /// The value of `instances.csv`'s `stop_reason` column.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::MaxTurns => "max_turns",
            StopReason::TokenBudget => "token_budget",
            StopReason::ContextOverflow => "context_overflow",
            StopReason::LlmError => "llm_error",
            StopReason::LlmTimeout => "llm_timeout",
            StopReason::SetupFailed => "setup_failed",
        }
    }

    /// The reason a `stop_reason` cell names; `None` for an empty or unknown cell.
    pub fn parse(s: &str) -> Option<StopReason> {
        [
            StopReason::Answered,
            StopReason::MaxTurns,
            StopReason::TokenBudget,
            StopReason::ContextOverflow,
            StopReason::LlmError,
            StopReason::LlmTimeout,
            StopReason::SetupFailed,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// True when the endpoint, not the model, ended the conversation: the row is an
    /// error, retried by a resumed run.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            StopReason::LlmError | StopReason::LlmTimeout | StopReason::SetupFailed
        )
    }
}

/// What one conversation cost, for the row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentStats {
    /// Model turns (requests answered, by the endpoint or the cache).
    pub llm_turns: usize,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    /// Some response had no `usage`: its tokens were counted with the run's tokenizer.
    pub tokens_estimated: bool,
    /// Time the endpoint took, over all turns (a cached turn: its recorded time).
    pub llm_ms: f64,
    /// Requests answered from the `--llm-cache`.
    pub cache_hits: usize,
    /// With prices in the agent file.
    pub cost_usd: Option<f64>,
    pub stop_reason: StopReason,
}

/// One finished conversation.
#[derive(Debug)]
pub struct AgentOutcome {
    /// The parsed answer (empty when there was none); `Err` when the row is an error.
    pub result: anyhow::Result<Locations>,
    /// The model answered, but named no location: scored as empty, `answer_unparsed`.
    pub unparsed: bool,
    /// What reading the answer found; `None` when the model never answered.
    pub answer: Option<AnswerCounts>,
    pub stats: AgentStats,
    pub transcript: Transcript,
}

/// A model behind an endpoint, ready to play the agent on every instance of a run.
pub struct Agent {
    pub cfg: AgentConfig,
    client: ChatClient,
    tokenizer: Tokenizer,
    /// Where transcripts are appended turn by turn ([`Agent::with_transcripts`]).
    transcripts: Option<std::path::PathBuf>,
    /// The `--llm-cache` holds entries: with the endpoint down, the run may replay.
    recorded: bool,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.cfg.name)
            .field("model", &self.cfg.model)
            .field("base_url", &self.cfg.base_url)
            .finish_non_exhaustive()
    }
}

/// One tool call the model asked for, as read from its message.
struct AskedCall {
    id: String,
    name: String,
    /// The arguments, or why they are not a JSON object.
    args: Result<Value, String>,
    raw_args: String,
}

impl Agent {
    /// The agent `cfg` describes, its endpoint not yet contacted: `run` builds it with
    /// the other inputs and checks the endpoint ([`Agent::check_endpoint`]) once the
    /// inputs are all valid.
    pub fn new(
        cfg: AgentConfig,
        cache: Option<LlmCache>,
        tokenizer: Tokenizer,
    ) -> anyhow::Result<Agent> {
        let recorded = cache.as_ref().is_some_and(|c| !c.is_empty());
        let client = ChatClient::new(&cfg, cache)?;
        Ok(Agent {
            cfg,
            client,
            tokenizer,
            transcripts: None,
            recorded,
        })
    }

    /// Appends each conversation's transcript to `<dir>/<instance>__<variant>.jsonl`
    /// as it happens, synced line by line ([`transcript::Transcript::create`]);
    /// without it, transcripts are kept in memory for the caller to write.
    pub fn with_transcripts(mut self, dir: std::path::PathBuf) -> Agent {
        self.transcripts = Some(dir);
        self
    }

    /// Checks the endpoint before the first instance (see
    /// [`ChatClient::check_endpoint`]): down without a recorded `--llm-cache` (none, or
    /// an empty one) is an error; with entries, the run replays from them alone.
    pub async fn check_endpoint(&self) -> anyhow::Result<()> {
        if !self.recorded {
            // An empty cache (`<out>/llm-cache` is always there) has nothing to replay:
            // the endpoint must answer, as without a cache.
            return ChatClient::new(&self.cfg, None)?
                .check_endpoint(&self.cfg)
                .await;
        }
        self.client.check_endpoint(&self.cfg).await
    }

    /// Plays the agent on `task` with the server behind `driver` (see the module doc).
    /// `tools` and `instructions` are what the server listed in its handshake.
    pub async fn localize(
        &self,
        variant: &dyn Variant,
        driver: &mut Driver<'_>,
        task: &Task<'_>,
        tools: &[Tool],
        instructions: Option<&str>,
    ) -> AgentOutcome {
        let mut stats = AgentStats::default();
        let mut transcript = self.open_transcript(task, variant.name());
        let offered = tools::function_tools(tools);
        transcript.push(json!({"role": "tools", "tools": offered}));
        let roots = roots::Roots::new(task.workdir);
        driver.set_view(roots.clone());
        if let Err(e) = variant.setup(driver, task).await {
            stats.stop_reason = StopReason::SetupFailed;
            return AgentOutcome {
                result: Err(e.context("the variant's setup failed before the first turn")),
                unparsed: false,
                answer: None,
                stats,
                transcript,
            };
        }
        let mut messages = vec![
            json!({"role": "system", "content": roots.to_model(&prompt::system(instructions))}),
            json!({"role": "user", "content": prompt::task(std::path::Path::new(roots::VIRTUAL_ROOT), &task.instance.problem_statement)}),
        ];
        transcript.push(messages[0].clone());
        transcript.push(messages[1].clone());
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        let mut result = Ok(Locations::default());
        let mut unparsed = false;
        let mut read = None;
        loop {
            if stats.llm_turns >= self.cfg.max_turns {
                stats.stop_reason = StopReason::MaxTurns;
                break;
            }
            if stats.prompt_tokens + stats.completion_tokens >= self.cfg.token_budget {
                stats.stop_reason = StopReason::TokenBudget;
                break;
            }
            let request = self.request(&messages, &offered);
            let done = match self.client.complete(&request).await {
                Ok(done) => done,
                Err((e, spent)) => {
                    stats.llm_ms += spent.as_secs_f64() * 1000.0;
                    stats.stop_reason = match &e {
                        ChatError::ContextOverflow(_) => StopReason::ContextOverflow,
                        ChatError::Timeout { .. } => StopReason::LlmTimeout,
                        _ => StopReason::LlmError,
                    };
                    transcript.push(json!({"role": "navbench", "turn": stats.llm_turns + 1, "error": e.to_string(), "llm_ms": spent.as_secs_f64() * 1000.0}));
                    if stats.stop_reason.is_failure() {
                        result = Err(anyhow::anyhow!("turn {}: {e}", stats.llm_turns + 1));
                    }
                    break;
                }
            };
            stats.llm_turns += 1;
            stats.llm_ms += done.latency.as_secs_f64() * 1000.0;
            stats.cache_hits += usize::from(done.cached);
            let message = match done.message() {
                Ok(m) => m.clone(),
                Err(why) => {
                    stats.stop_reason = StopReason::LlmError;
                    result = Err(anyhow::anyhow!("turn {}: {why}", stats.llm_turns));
                    break;
                }
            };
            let usage = self.count_usage(&done.body, &request, &message, &mut stats);
            transcript.push(json!({
                "role": "assistant", "turn": stats.llm_turns, "message": message,
                "finish_reason": done.finish_reason(), "usage": usage_json(usage),
                "llm_ms": done.latency.as_secs_f64() * 1000.0, "cached": done.cached,
            }));
            let calls = asked_calls(&message, stats.llm_turns);
            if calls.is_empty() {
                let text = message.get("content").and_then(Value::as_str).unwrap_or("");
                let a = read_answer(text, task.workdir, &mut transcript);
                unparsed = a.named.is_empty();
                read = Some(AnswerCounts::of(&a));
                result = Ok(a.locations);
                stats.stop_reason = StopReason::Answered;
                break;
            }
            messages.push(assistant_echo(&message, &calls));
            for call in calls {
                let (content, line) = self.run_call(driver, &names, &call, &roots).await;
                transcript.push(line);
                messages.push(json!({"role": "tool", "tool_call_id": call.id, "content": content}));
            }
        }
        stats.cost_usd = self.cfg.prices.map(|p| {
            p.cost(
                stats.prompt_tokens,
                stats.cached_tokens,
                stats.completion_tokens,
            )
        });
        transcript.push(
            json!({"role": "navbench", "stop_reason": stats.stop_reason.as_str(),
            "llm_turns": stats.llm_turns, "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens}),
        );
        AgentOutcome {
            result,
            unparsed,
            answer: read,
            stats,
            transcript,
        }
    }

    /// The pair's transcript: on disk under [`Agent::with_transcripts`]'s directory
    /// when given (in memory, with a warning, when the file cannot be made).
    fn open_transcript(&self, task: &Task<'_>, variant: &str) -> Transcript {
        let Some(dir) = &self.transcripts else {
            return Transcript::default();
        };
        Transcript::create(dir, &task.instance.instance_id, variant).unwrap_or_else(|e| {
            tracing::warn!("transcript kept in memory only: {e:#}");
            Transcript::default()
        })
    }

    /// One Chat Completions body: the whole conversation, the tools, sampling and limits.
    fn request(&self, messages: &[Value], tools: &[Value]) -> Value {
        let mut r = json!({
            "model": self.cfg.model,
            "messages": messages,
            "stream": false,
            "temperature": self.cfg.temperature,
            "max_completion_tokens": self.cfg.max_completion_tokens,
            // Servers that predate max_completion_tokens read only this one.
            "max_tokens": self.cfg.max_completion_tokens,
        });
        if !tools.is_empty() {
            r["tools"] = Value::Array(tools.to_vec());
            r["tool_choice"] = json!("auto");
        }
        if let Some(seed) = self.cfg.seed {
            r["seed"] = json!(seed);
        }
        r
    }

    /// Adds the response's token counts to `stats`: the endpoint's `usage`, or the run's
    /// tokenizer over what was sent and received (marked as estimated).
    fn count_usage(
        &self,
        body: &Value,
        request: &Value,
        message: &Value,
        stats: &mut AgentStats,
    ) -> Usage {
        let usage = Usage::from_response(body).unwrap_or_else(|| {
            stats.tokens_estimated = true;
            Usage {
                prompt_tokens: self.tokenizer.count(&request.to_string()) as u64,
                cached_tokens: 0,
                completion_tokens: self.tokenizer.count(&message.to_string()) as u64,
            }
        });
        stats.prompt_tokens += usage.prompt_tokens;
        stats.cached_tokens += usage.cached_tokens;
        stats.completion_tokens += usage.completion_tokens;
        usage
    }

    /// Runs one call the model asked for and returns what the model reads back and the
    /// transcript line. A call that cannot be made (unknown tool, arguments that are not
    /// a JSON object) is answered with an error the model can act on, and recorded in
    /// `calls.csv` as a failed call.
    async fn run_call(
        &self,
        driver: &mut Driver<'_>,
        names: &[&str],
        call: &AskedCall,
        roots: &roots::Roots,
    ) -> (String, Value) {
        let refused = match &call.args {
            _ if !names.contains(&call.name.as_str()) => Some(format!(
                "unknown tool '{}': call one of {}",
                call.name,
                names.join(", ")
            )),
            Err(why) => Some(format!(
                "the arguments of {} are not a JSON object ({why}); call it again with a JSON object that matches its parameters schema",
                call.name
            )),
            Ok(_) => None,
        };
        if let Some(error) = refused {
            driver.record_refused(&call.name, &call.raw_args, &error);
            let content = format!("Error: {error}");
            let line = json!({"role": "tool", "tool_call_id": call.id, "name": call.name,
                "arguments": call.raw_args, "content": content, "is_error": true, "latency_ms": 0.0});
            return (content, line);
        }
        let args = roots.to_server(call.args.as_ref().unwrap_or(&Value::Null));
        let out = driver.call(&call.name, args).await;
        let text = roots.to_model(&if out.is_error {
            format!("Error: {}", out.error.as_deref().unwrap_or(&out.text))
        } else {
            out.text.clone()
        });
        let (content, cut) =
            tools::cut_result(&text, self.cfg.max_tool_result_tokens, self.tokenizer);
        let line = json!({"role": "tool", "tool_call_id": call.id, "name": call.name,
            "arguments": call.raw_args, "content": content, "is_error": out.is_error,
            "latency_ms": out.latency.as_secs_f64() * 1000.0, "cut": cut});
        (content, line)
    }
}

/// Reads the final message `text` against the tree at `root` ([`answer::read`]) and
/// records what was read and dropped in the transcript.
fn read_answer(text: &str, root: &std::path::Path, transcript: &mut Transcript) -> answer::Answer {
    let a = answer::read(text, root);
    transcript.push(json!({"role": "navbench", "answer": text,
        "parsed": a.named.iter().map(answer::Named::display).collect::<Vec<_>>(),
        "answer_lines": a.lines, "dropped": a.dropped_lines}));
    a
}

/// The tool calls of an assistant message. An id the server left out is made up
/// (`call_<turn>_<i>`), as the tool message must name one; arguments sent as a JSON
/// string (the OpenAI format) or, by some servers, as an object are both read.
fn asked_calls(message: &Value, turn: usize) -> Vec<AskedCall> {
    let Some(calls) = message.get("tool_calls").and_then(Value::as_array) else {
        return Vec::new();
    };
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let f = c.get("function").cloned().unwrap_or(Value::Null);
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let (raw_args, args) = match f.get("arguments") {
                Some(Value::String(s)) if s.trim().is_empty() => (s.clone(), Ok(json!({}))),
                Some(Value::String(s)) => (
                    s.clone(),
                    match serde_json::from_str::<Value>(s) {
                        Ok(v @ Value::Object(_)) => Ok(v),
                        Ok(other) => Err(format!("got {}", kind(&other))),
                        Err(e) => Err(format!("invalid JSON: {e}")),
                    },
                ),
                Some(v @ Value::Object(_)) => (v.to_string(), Ok(v.clone())),
                None | Some(Value::Null) => (String::new(), Ok(json!({}))),
                Some(other) => (other.to_string(), Err(format!("got {}", kind(other)))),
            };
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| format!("call_{turn}_{i}"));
            AskedCall {
                id,
                name,
                args,
                raw_args,
            }
        })
        .collect()
}

/// The assistant message as it goes back into the conversation: its text and its tool
/// calls, each with the id its result will name and its arguments as a string. A
/// missing or null text goes back as `""`: llama.cpp's server refuses a null content,
/// and its chat template fails on a missing one, while OpenAI accepts all three.
fn assistant_echo(message: &Value, calls: &[AskedCall]) -> Value {
    let content = match message.get("content") {
        Some(Value::String(s)) => Value::String(s.clone()),
        _ => Value::String(String::new()),
    };
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.raw_args}}))
        .collect();
    json!({"role": "assistant", "content": content, "tool_calls": tool_calls})
}

fn usage_json(u: Usage) -> Value {
    json!({"prompt_tokens": u.prompt_tokens, "cached_tokens": u.cached_tokens, "completion_tokens": u.completion_tokens})
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
