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
//! 4. a message without tool calls is read by [`answer`] into the ranking the scorer
//!    reads (with the lines read and dropped); an empty one or one naming no location gets one reminder turn, one cut
//!    at the length limit or filtered is not scored ([`turn`]). At `max_turns`, or when
//!    the next prompt would pass the token budget, one "answer now" turn with
//!    `tool_choice: none` asks for the answer; every end is an
//!    [`AgentStats::stop_reason`].
//!
//! Requests take the provider's shape ([`provider`]); the assistant's messages go back
//! as received ([`turn::echo`]); tool names the endpoints refuse are mapped
//! ([`names`]); run-wide limits (cost cap, fatal errors in a row) are in [`guard`].
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
pub mod guard;
pub mod names;
pub mod prompt;
pub mod provider;
pub mod retry;
pub mod roots;
pub mod tools;
pub mod transcript;
pub mod turn;

use rmcp::model::Tool;
use serde_json::{Value, json};

pub use cache::LlmCache;
pub use config::AgentConfig;

use crate::data::dataset::Locations;
use crate::policy::{Driver, Task, Trial};
use crate::record::output::answer_columns::AnswerCounts;
use crate::score::tokens::Tokenizer;
use crate::variants::Variant;
use chat::{ChatClient, ChatError, Failure, Usage};
use guard::RunGuard;
use names::ToolNames;
use transcript::Transcript;
use turn::{Ending, Spend};

/// Why a conversation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopReason {
    /// The model answered (a message without tool calls).
    #[default]
    Answered,
    /// `max_turns` tool turns were made without an answer (the "answer now" turn
    /// that follows, if any, gave the row its answer).
    MaxTurns,
    /// The next turn would have passed the instance's token budget (prompt +
    /// completion); the "answer now" turn, if it fitted, gave the row its answer.
    TokenBudget,
    /// The conversation outgrew the model's context.
    ContextOverflow,
    /// The reply was cut at the completion limit (`finish_reason: length`): not
    /// scored as an answer.
    Truncated,
    /// The provider's filter withheld the reply (`finish_reason: content_filter`).
    ContentFilter,
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
            StopReason::Truncated => "truncated",
            StopReason::ContentFilter => "content_filter",
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
            StopReason::Truncated,
            StopReason::ContentFilter,
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
    /// Of the completion tokens, those a reasoning model spent thinking.
    pub reasoning_tokens: u64,
    /// Some response had no `usage`: its tokens were counted with the run's tokenizer.
    pub tokens_estimated: bool,
    /// Time the endpoint took, over all turns (a cached turn: its recorded time).
    pub llm_ms: f64,
    /// Requests answered from the `--llm-cache`.
    pub cache_hits: usize,
    /// With prices in the agent file; for an external CLI, the cost it reported.
    pub cost_usd: Option<f64>,
    pub stop_reason: StopReason,
    /// Who counted the turns, tokens and cost: the endpoint (the built-in loop) or the
    /// external CLI's own report (`--agent-cmd` with a report format).
    pub usage_source: UsageSource,
}

/// The value of `instances.csv`'s `usage_source` column: whose account the agent
/// columns hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageSource {
    /// The built-in loop, from the endpoint's `usage` (or the run's tokenizer).
    #[default]
    Endpoint,
    /// An external agent CLI's own report (`--agent-cmd`), as it printed it.
    Cli,
}

impl UsageSource {
    pub fn as_str(self) -> &'static str {
        match self {
            UsageSource::Endpoint => "endpoint",
            UsageSource::Cli => "cli",
        }
    }

    /// The source a `usage_source` cell names; an empty cell (a run written before the
    /// column existed) is the endpoint.
    pub fn parse(s: &str) -> UsageSource {
        if s == "cli" {
            UsageSource::Cli
        } else {
            UsageSource::Endpoint
        }
    }
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
    /// Run-wide: money spent, fatal errors in a row (see [`guard`]).
    pub guard: RunGuard,
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
    /// The name the model called (a safe name, see [`names`]).
    name: String,
    /// The arguments, or why they are not a JSON object.
    args: Result<Value, String>,
    raw_args: String,
}

/// One conversation under way: what the loop carries from turn to turn.
struct Convo {
    stats: AgentStats,
    transcript: Transcript,
    messages: Vec<Value>,
    spend: Spend,
    reminded: bool,
    /// What reading the last answer found.
    answer: Option<AnswerCounts>,
    /// The virtual root the model sees ([`roots`]).
    roots: roots::Roots,
    /// Which play of the pair (`run --repeats`): later trials vary the seed and
    /// have their own `--llm-cache` keys.
    trial: Trial,
}

/// How a turn ended the conversation, when it did.
enum Turn {
    /// Tool calls were made (or a reminder sent): go on.
    Next,
    /// The conversation is over with this result.
    Done(anyhow::Result<Locations>, bool),
}

/// The probe tool of the pre-flight: the real tools come from each pair's server, so
/// the pre-flight attaches one of the same form.
fn probe_tool() -> Value {
    json!({"type": "function", "function": {"name": "read_file",
        "description": "Reads a file of the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}})
}

impl Agent {
    /// The agent `cfg` describes, its endpoint not yet contacted: `run` builds it with
    /// the other inputs and sends the pre-flight ([`Agent::check_endpoint`]) once the
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
            guard: RunGuard::default(),
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

    /// `--max-cost-usd`: no new pair once the run has spent `usd` (needs `[prices]`).
    pub fn with_max_cost(mut self, usd: Option<f64>) -> anyhow::Result<Agent> {
        if let Some(usd) = usd {
            if !(usd.is_finite() && usd > 0.0) {
                anyhow::bail!("--max-cost-usd must be a positive number of US dollars");
            }
            if self.cfg.prices.is_none() {
                anyhow::bail!(
                    "--max-cost-usd needs prices: add [prices] input = …, output = … (US dollars per million tokens) to {}",
                    self.cfg.source.display()
                );
            }
        }
        self.guard = RunGuard::new(usd);
        Ok(self)
    }

    /// The pre-flight before the first instance ([`chat::ChatClient::preflight`]): one
    /// completion of one token with a tool attached, shaped as every turn is. A
    /// refusal (400/401/403/404) is an error naming the key of the agent file to fix;
    /// an endpoint that is down is an error, or, with a recorded `--llm-cache` (one
    /// holding entries; `<out>/llm-cache` is always there), a replay.
    pub async fn check_endpoint(&self) -> anyhow::Result<()> {
        let messages = [
            json!({"role": "system", "content": prompt::system(None)}),
            json!({"role": "user", "content": "Reply with OK."}),
        ];
        let probe = provider::body(&self.cfg.shape(), &messages, &[probe_tool()], 1);
        self.client
            .preflight(&self.cfg, &probe, self.recorded)
            .await
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
        let names = ToolNames::new(tools.iter().map(|t| t.name.as_ref()));
        let offered = tools::function_tools(tools, &names);
        let roots = roots::Roots::new(task.workdir);
        driver.set_view(roots.clone());
        let mut c = Convo {
            stats: AgentStats::default(),
            transcript: self.open_transcript(task, variant.name()),
            messages: Vec::new(),
            spend: Spend::default(),
            reminded: false,
            answer: None,
            roots,
            trial: task.trial,
        };
        c.transcript
            .push(json!({"role": "tools", "tools": offered}));
        if let Err(e) = variant.setup(driver, task).await {
            c.stats.stop_reason = StopReason::SetupFailed;
            return self.finish(
                c,
                Err(e.context("the variant's setup failed before the first turn")),
                false,
            );
        }
        c.messages = vec![
            json!({"role": "system", "content": c.roots.to_model(&prompt::system(instructions))}),
            json!({"role": "user", "content": prompt::task(std::path::Path::new(roots::VIRTUAL_ROOT), &task.instance.problem_statement)}),
        ];
        c.transcript.push(c.messages[0].clone());
        c.transcript.push(c.messages[1].clone());
        loop {
            let request = self.request(
                &c.messages,
                &offered,
                self.cfg.max_completion_tokens,
                c.trial,
            );
            let prompt = c.spend.next_prompt(self.tokenizer, &c.messages, &request);
            let limit = if c.stats.llm_turns >= self.cfg.max_turns {
                Some(StopReason::MaxTurns)
            } else if !turn::fits(
                &c.spend,
                prompt,
                self.cfg.max_completion_tokens,
                self.cfg.token_budget,
            ) {
                Some(StopReason::TokenBudget)
            } else {
                None
            };
            if let Some(why) = limit {
                c.stats.stop_reason = why;
                let (result, unparsed) = self.answer_now(&mut c, &offered, prompt, task).await;
                return self.finish(c, result, unparsed);
            }
            match self.turn(&mut c, &request, driver, &names, task).await {
                Turn::Next => {}
                Turn::Done(result, unparsed) => return self.finish(c, result, unparsed),
            }
        }
    }

    /// One tool turn: the request, then the tool calls it asked for, or its ending.
    async fn turn(
        &self,
        c: &mut Convo,
        request: &Value,
        driver: &mut Driver<'_>,
        names: &ToolNames,
        task: &Task<'_>,
    ) -> Turn {
        let (message, finish) = match self.ask(c, request).await {
            Ok(m) => m,
            Err(done) => return done,
        };
        let calls = asked_calls(&message, c.stats.llm_turns);
        if !calls.is_empty() {
            let ids: Vec<String> = calls.iter().map(|k| k.id.clone()).collect();
            c.messages.push(turn::echo(&message, &ids));
            c.spend.cover(c.messages.len());
            for call in calls {
                let (content, line) = self.run_call(driver, names, &call, &c.roots).await;
                c.transcript.push(line);
                c.messages
                    .push(json!({"role": "tool", "tool_call_id": call.id, "content": content}));
            }
            return Turn::Next;
        }
        let text = message.get("content").and_then(Value::as_str).unwrap_or("");
        let a = read_answer(text, task, &mut c.answer);
        match turn::ending(finish.as_deref(), text, !a.named.is_empty(), c.reminded) {
            Ending::Remind(reminder) => {
                c.reminded = true;
                if !text.trim().is_empty() {
                    c.messages.push(turn::echo(&message, &[]));
                }
                c.spend.cover(c.messages.len());
                let ask = json!({"role": "user", "content": reminder});
                c.transcript
                    .push(json!({"role": "navbench", "reminder": reminder}));
                c.messages.push(ask);
                Turn::Next
            }
            Ending::Truncated | Ending::ContentFilter => {
                // Not scored, so not counted as an answer read either.
                c.answer = None;
                let why = if finish.as_deref() == Some("content_filter") {
                    StopReason::ContentFilter
                } else {
                    StopReason::Truncated
                };
                c.stats.stop_reason = why;
                c.transcript
                    .push(json!({"role": "navbench", "answer": text, "not_scored": why.as_str()}));
                Turn::Done(Ok(Locations::default()), false)
            }
            Ending::Answer => {
                c.transcript.push(answer_line(text, &a));
                c.stats.stop_reason = StopReason::Answered;
                let unparsed = a.named.is_empty();
                Turn::Done(Ok(a.locations), unparsed)
            }
        }
    }

    /// The "answer now" turn once `max_turns` or the budget is reached: the tools stay
    /// declared (some providers refuse a history of tool calls without them) but
    /// `tool_choice` is `none`; sent only if its prompt fits the budget, its completion
    /// cut to what is left. The stop reason stays the limit's.
    async fn answer_now(
        &self,
        c: &mut Convo,
        offered: &[Value],
        prompt: u64,
        task: &Task<'_>,
    ) -> (anyhow::Result<Locations>, bool) {
        let ask = json!({"role": "user", "content": turn::ANSWER_NOW});
        let prompt = prompt + self.tokenizer.count(&ask.to_string()) as u64;
        let Some(room) = turn::answer_room(
            &c.spend,
            prompt,
            self.cfg.max_completion_tokens,
            self.cfg.token_budget,
        ) else {
            c.transcript.push(json!({"role": "navbench", "answer_now": "skipped: its prompt alone would pass token_budget"}));
            return (Ok(Locations::default()), false);
        };
        c.messages.push(ask);
        c.transcript.push(
            json!({"role": "navbench", "answer_now": turn::ANSWER_NOW, "max_completion": room}),
        );
        let mut request = self.request(&c.messages, offered, room, c.trial);
        if !offered.is_empty() {
            request["tool_choice"] = json!("none");
        }
        let why = c.stats.stop_reason;
        let message = match self.ask(c, &request).await {
            Ok((m, _)) => m,
            Err(Turn::Done(result, unparsed)) => return (result, unparsed),
            Err(Turn::Next) => return (Ok(Locations::default()), false),
        };
        c.stats.stop_reason = why;
        let text = message.get("content").and_then(Value::as_str).unwrap_or("");
        let a = read_answer(text, task, &mut c.answer);
        c.transcript.push(answer_line(text, &a));
        let unparsed = a.named.is_empty();
        (Ok(a.locations), unparsed)
    }

    /// Sends `request` and returns the assistant message and its `finish_reason`, with
    /// the turn counted; or the conversation's end when the endpoint failed.
    async fn ask(&self, c: &mut Convo, request: &Value) -> Result<(Value, Option<String>), Turn> {
        let done = match self.client.complete(request, c.trial).await {
            Ok(done) => done,
            Err(Failure {
                error,
                spent,
                retries,
            }) => {
                for r in &retries {
                    c.transcript.push(r.json());
                }
                c.stats.llm_ms += spent.as_secs_f64() * 1000.0;
                c.stats.stop_reason = match &error {
                    ChatError::ContextOverflow(_) => StopReason::ContextOverflow,
                    ChatError::Timeout { .. } => StopReason::LlmTimeout,
                    _ => StopReason::LlmError,
                };
                if let ChatError::Http {
                    status, message, ..
                } = &error
                {
                    let (cfg, status, message) = (&self.cfg, *status, message.as_str());
                    self.guard
                        .refused(&format!("HTTP {status}: {message}"), || {
                            chat::fatal_message(cfg, status, message)
                        });
                }
                let turn_no = c.stats.llm_turns + 1;
                c.transcript.push(json!({"role": "navbench", "turn": turn_no, "error": error.to_string(), "llm_ms": spent.as_secs_f64() * 1000.0}));
                let result = if c.stats.stop_reason.is_failure() {
                    Err(anyhow::anyhow!("turn {turn_no}: {error}"))
                } else {
                    Ok(Locations::default())
                };
                return Err(Turn::Done(result, false));
            }
        };
        self.guard.answered();
        for r in &done.retries {
            c.transcript.push(r.json());
        }
        c.stats.llm_turns += 1;
        c.stats.llm_ms += done.latency.as_secs_f64() * 1000.0;
        c.stats.cache_hits += usize::from(done.cached);
        let message = match done.message() {
            Ok(m) => m.clone(),
            Err(why) => {
                c.stats.stop_reason = StopReason::LlmError;
                let e = anyhow::anyhow!("turn {}: {why}", c.stats.llm_turns);
                return Err(Turn::Done(Err(e), false));
            }
        };
        let usage = self.count_usage(&done.body, request, &message, &mut c.stats);
        c.spend.turn(
            usage.prompt_tokens + usage.completion_tokens,
            c.messages.len(),
        );
        let finish = done.finish_reason().map(String::from);
        c.transcript.push(json!({
            "role": "assistant", "turn": c.stats.llm_turns, "message": message,
            "finish_reason": finish, "usage": usage_json(usage),
            "llm_ms": done.latency.as_secs_f64() * 1000.0, "cached": done.cached,
        }));
        Ok((message, finish))
    }

    /// The outcome: the cost priced, the run's spend updated, the last transcript line.
    fn finish(
        &self,
        mut c: Convo,
        result: anyhow::Result<Locations>,
        unparsed: bool,
    ) -> AgentOutcome {
        let s = &mut c.stats;
        s.cost_usd = self
            .cfg
            .prices
            .map(|p| p.cost(s.prompt_tokens, s.cached_tokens, s.completion_tokens));
        self.guard.spend(s.cost_usd.unwrap_or(0.0));
        c.transcript.push(
            json!({"role": "navbench", "stop_reason": s.stop_reason.as_str(),
            "llm_turns": s.llm_turns, "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens, "reasoning_tokens": s.reasoning_tokens}),
        );
        AgentOutcome {
            result,
            unparsed,
            answer: c.answer,
            stats: c.stats,
            transcript: c.transcript,
        }
    }

    /// The pair's transcript: on disk under [`Agent::with_transcripts`]'s directory
    /// when given (in memory, with a warning, when the file cannot be made).
    fn open_transcript(&self, task: &Task<'_>, variant: &str) -> Transcript {
        let Some(dir) = &self.transcripts else {
            return Transcript::default();
        };
        Transcript::create(dir, &task.instance.instance_id, variant, task.trial).unwrap_or_else(
            |e| {
                tracing::warn!("transcript kept in memory only: {e:#}");
                Transcript::default()
            },
        )
    }

    /// One Chat Completions body in the provider's shape (see [`provider::body`]). A
    /// `seed` moves on by one per trial after the first, so the trials of `--repeats`
    /// are different samples, not one sample K times.
    fn request(&self, messages: &[Value], tools: &[Value], max_tokens: u64, trial: Trial) -> Value {
        let mut shape = self.cfg.shape();
        shape.seed = shape
            .seed
            .map(|s| s.wrapping_add(i64::from(trial.get()) - 1));
        provider::body(&shape, messages, tools, max_tokens)
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
                reasoning_tokens: 0,
            }
        });
        stats.prompt_tokens += usage.prompt_tokens;
        stats.cached_tokens += usage.cached_tokens;
        stats.completion_tokens += usage.completion_tokens;
        stats.reasoning_tokens += usage.reasoning_tokens;
        usage
    }

    /// Runs one call the model asked for and returns what the model reads back and the
    /// transcript line. A call that cannot be made (unknown tool, arguments that are not
    /// a JSON object) is answered with an error the model can act on, and recorded in
    /// `calls.csv` as a failed call. The model's (safe) name is mapped back to the
    /// server's ([`names`]).
    async fn run_call(
        &self,
        driver: &mut Driver<'_>,
        names: &ToolNames,
        call: &AskedCall,
        roots: &roots::Roots,
    ) -> (String, Value) {
        let tool = names.original(&call.name);
        let refused = match (&call.args, tool) {
            (_, None) => Some(format!(
                "unknown tool '{}': call one of {}",
                call.name,
                names.offered().join(", ")
            )),
            (Err(why), Some(_)) => Some(format!(
                "the arguments of {} are not a JSON object ({why}); call it again with a JSON object that matches its parameters schema",
                call.name
            )),
            (Ok(_), Some(_)) => None,
        };
        let tool = tool.unwrap_or(&call.name);
        if let Some(error) = refused {
            driver.record_refused(tool, &call.raw_args, &error);
            let content = format!("Error: {error}");
            let line = json!({"role": "tool", "tool_call_id": call.id, "name": tool,
                "arguments": call.raw_args, "content": content, "is_error": true, "latency_ms": 0.0});
            return (content, line);
        }
        let args = roots.to_server(call.args.as_ref().unwrap_or(&Value::Null));
        let out = driver.call(tool, args).await;
        let text = roots.to_model(&if out.is_error {
            format!("Error: {}", out.error.as_deref().unwrap_or(&out.text))
        } else {
            out.text.clone()
        });
        let (content, cut) =
            tools::cut_result(&text, self.cfg.max_tool_result_tokens, self.tokenizer);
        let line = json!({"role": "tool", "tool_call_id": call.id, "name": tool,
            "arguments": call.raw_args, "content": content, "is_error": out.is_error,
            "latency_ms": out.latency.as_secs_f64() * 1000.0, "cut": cut});
        (content, line)
    }
}

/// The answer in `text` ([`answer::read`], the one reader of the built-in loop and
/// `--agent-cmd`); `counts` gets the lines read and dropped.
fn read_answer(text: &str, task: &Task<'_>, counts: &mut Option<AnswerCounts>) -> answer::Answer {
    let a = answer::read(text, task.workdir);
    *counts = Some(AnswerCounts::of(&a));
    a
}

/// The transcript line of a scored answer: its text, how each location was read
/// (`path` or `path:qualname`), the lines read and those dropped.
fn answer_line(text: &str, a: &answer::Answer) -> Value {
    json!({"role": "navbench", "answer": text,
        "parsed": a.named.iter().map(answer::Named::display).collect::<Vec<_>>(),
        "answer_lines": a.lines, "dropped": a.dropped_lines})
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

fn usage_json(u: Usage) -> Value {
    json!({"prompt_tokens": u.prompt_tokens, "cached_tokens": u.cached_tokens,
        "completion_tokens": u.completion_tokens, "reasoning_tokens": u.reasoning_tokens})
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
