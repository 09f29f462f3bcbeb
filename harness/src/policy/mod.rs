//! What the scripted localization policies share; each policy itself lives with its
//! variant in [`crate::variants`].
//!
//! A policy plays the agent: it reads the issue text, calls the variant's MCP tools
//! through a [`Driver`] (which records every call's cost as a [`CallRecord`]), and
//! returns ranked [`Locations`](crate::data::dataset::Locations). Policies are deterministic
//! — the same instance and server give the same calls and the same ranking — so runs
//! are comparable and CI can demand exact accuracy against a baseline. Their common
//! steps are here: [`terms`] extracts identifiers, paths and traceback frames from an
//! issue, [`code_search`] reads the codegraph server's search results, [`ranking`] keeps scores and fuses rankings, [`evidence`] weighs name matches,
//! rolls entity scores up to modules and files and resolves quoted paths,
//! [`entities`] maps file lines to LocAgent's entity ids (gold's ids, nested types
//! included), and [`secondary`] is every scripted policy's last step: tests and
//! derived code (build output, bundles, vendored, minified and generated files) rank
//! below source unless the issue names them.

pub mod agent;
pub mod agent_cmd;
pub mod code_search;
pub mod entities;
pub mod evidence;
pub mod fitted;
pub mod frames;
pub mod knobs;
pub mod languages;
pub mod ranking;
pub mod secondary;
pub mod terms;
pub mod trial;

pub use trial::Trial;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::data::dataset::Instance;
use crate::record::output::init_columns::InitParts;
use crate::score::tokens::Tokenizer;
use crate::session::mcp_client::{CallOutcome, McpSession};

/// One tool call as `calls.csv` records it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    pub step: usize,
    pub tool: String,
    /// The arguments as compact JSON.
    pub args: String,
    pub latency_ms: f64,
    pub response_bytes: usize,
    /// Tokens of the text an agent reads (the text content of the result).
    pub response_tokens: usize,
    pub is_error: bool,
    pub error: String,
}

/// Receives each call's record as soon as the call is done: a run appends it to
/// `calls.csv` at once, so a killed pair keeps the calls it made.
pub type RecordSink = std::sync::Arc<dyn Fn(&CallRecord) + Send + Sync>;

/// Calls tools on a live session and records what each call cost.
pub struct Driver<'a> {
    session: &'a mut McpSession,
    tokenizer: Tokenizer,
    /// Tools that index (the variant's `setup_tools`) and their own timeout.
    setup: (&'static [&'static str], Option<Duration>),
    /// Every call made so far, in order.
    pub records: Vec<CallRecord>,
    /// The parts of the indexing calls' time, summed, as their results report them
    /// (`timings_ms` in `_meta`); `None` while no indexing call reported any.
    pub init_parts: Option<InitParts>,
    /// Results of earlier calls by (tool, arguments), when replaying is on
    /// ([`Driver::with_memo`]), with their response tokens (counted once).
    memo: Option<HashMap<(String, String), (CallOutcome, usize)>>,
    /// The built-in agent's view of the checkout ([`Driver::set_view`]).
    view: Option<agent::roots::Roots>,
    /// Handed each record as it is made ([`Driver::with_sink`]).
    sink: Option<RecordSink>,
    /// The checked-out tree's files as parsed so far ([`Driver::take_entities`]). The
    /// tree does not change during a session, so a policy played many times on one
    /// driver (`navbench tune`) parses each file once.
    entities: entities::EntityIndex,
}

impl<'a> Driver<'a> {
    /// A driver over `session`, counting response tokens with `tokenizer`.
    pub fn new(session: &'a mut McpSession, tokenizer: Tokenizer) -> Self {
        Driver {
            session,
            tokenizer,
            setup: (&[], None),
            records: Vec::new(),
            init_parts: None,
            memo: None,
            view: None,
            sink: None,
            entities: entities::EntityIndex::default(),
        }
    }

    /// Hands each later record to `sink` as soon as it is made (besides keeping it in
    /// [`Driver::records`]).
    pub fn with_sink(mut self, sink: Option<RecordSink>) -> Self {
        self.sink = sink;
        self
    }

    /// Keeps `record` and hands it to the sink.
    fn push(&mut self, record: CallRecord) {
        if let Some(sink) = &self.sink {
            sink(&record);
        }
        self.records.push(record);
    }

    /// The files parsed by earlier plays on this driver, for a policy to map lines to
    /// ids with; hand it back with [`Driver::keep_entities`] so the next play reuses it.
    pub fn take_entities(&mut self) -> entities::EntityIndex {
        std::mem::take(&mut self.entities)
    }

    /// Keeps `index` (from [`Driver::take_entities`]) for the next play.
    pub fn keep_entities(&mut self, index: entities::EntityIndex) {
        self.entities = index;
    }

    /// Records every later call as the built-in agent sees it: arguments, error text,
    /// response size and tokens with the checkout's root rewritten to the virtual root
    /// ([`agent::roots`]), so `calls.csv` is the same whatever `--cache` the run used.
    /// The outcome handed back is the server's, untouched.
    pub fn set_view(&mut self, roots: agent::roots::Roots) {
        self.view = Some(roots);
    }

    /// Answers a call made before with the same tool and arguments from its first
    /// result instead of asking the server again. For `navbench tune`, which plays one
    /// policy many times on one session: the servers' tools are deterministic, so a
    /// replay is what the server would answer, and only the ranking is redone. Failed
    /// calls are not kept (a timeout is asked again). A run never replays.
    pub fn with_memo(mut self) -> Self {
        self.memo = Some(HashMap::new());
        self
    }

    /// Gives calls of `tools` (indexing) `timeout` instead of the session's call timeout.
    pub fn with_setup_timeout(mut self, tools: &'static [&'static str], timeout: Duration) -> Self {
        self.setup = (tools, Some(timeout));
        self
    }

    /// Calls `tool` with `args` and records the call. Errors are outcomes, not panics:
    /// the policy decides whether it can go on.
    pub async fn call(&mut self, tool: &str, args: Value) -> CallOutcome {
        let timeout = match self.setup {
            (tools, Some(timeout)) if tools.contains(&tool) => timeout,
            _ => self.session.call_timeout(),
        };
        self.call_within(tool, args, timeout).await
    }

    /// [`Driver::call`] with its own timeout (e.g. a declared setup call's).
    pub async fn call_within(&mut self, tool: &str, args: Value, timeout: Duration) -> CallOutcome {
        let args_text = args.to_string();
        let key = (tool.to_string(), args_text.clone());
        let (out, seen_tokens) = match self.memo.as_ref().and_then(|m| m.get(&key)) {
            Some((seen, tokens)) => (seen.clone(), Some(*tokens)),
            None => (self.session.call_within(tool, args, timeout).await, None),
        };
        // A replayed call's tokens were counted when it was first made; a view counts
        // its own below.
        let tokens = match (&self.view, seen_tokens) {
            (Some(_), _) => 0,
            (None, Some(t)) => t,
            (None, None) => self.tokenizer.count(&out.text),
        };
        if let Some(memo) = self.memo.as_mut()
            && !out.is_error
        {
            memo.entry(key).or_insert_with(|| (out.clone(), tokens));
        }
        if self.setup.0.contains(&tool)
            && let Some(parts) = init_parts_of(&out)
        {
            self.init_parts = Some(self.init_parts.unwrap_or_default().plus(parts));
        }
        let record = match &self.view {
            None => CallRecord {
                step: self.records.len() + 1,
                tool: tool.to_string(),
                args: args_text,
                latency_ms: out.latency.as_secs_f64() * 1000.0,
                response_bytes: out.response_bytes,
                response_tokens: tokens,
                is_error: out.is_error,
                error: out.error.clone().unwrap_or_default(),
            },
            Some(view) => {
                // The result's size as the model reads it: the root's spellings differ
                // in length between checkouts.
                let grown = out
                    .result
                    .as_ref()
                    .map(crate::session::mcp_client::content_json)
                    .map_or(0, |raw| view.to_model(&raw).len() as i64 - raw.len() as i64);
                CallRecord {
                    step: self.records.len() + 1,
                    tool: tool.to_string(),
                    args: view.to_model(&args_text),
                    latency_ms: out.latency.as_secs_f64() * 1000.0,
                    response_bytes: (out.response_bytes as i64 + grown).max(0) as usize,
                    response_tokens: self.tokenizer.count(&view.to_model(&out.text)),
                    is_error: out.is_error,
                    error: view.to_model(out.error.as_deref().unwrap_or_default()),
                }
            }
        };
        self.push(record);
        out
    }
}

/// The parts of an indexing call's time: `timings_ms` in the result's `_meta`, where
/// navbench's servers put it, else in its structured content (a declared server that
/// reports it there).
fn init_parts_of(out: &CallOutcome) -> Option<InitParts> {
    let meta = out.result.as_ref().and_then(|r| r.meta.as_ref());
    meta.and_then(|m| InitParts::from_object(&m.0))
        .or_else(|| out.structured.as_ref().and_then(InitParts::from_result))
}

impl Driver<'_> {
    /// Records a call that was never sent (an agent's call of an unknown tool, or with
    /// arguments that are not a JSON object), so `calls.csv` shows every call asked for.
    pub fn record_refused(&mut self, tool: &str, args: &str, error: &str) {
        self.push(CallRecord {
            step: self.records.len() + 1,
            tool: tool.to_string(),
            args: args.to_string(),
            latency_ms: 0.0,
            response_bytes: 0,
            response_tokens: 0,
            is_error: true,
            error: error.to_string(),
        });
    }
}

/// What a policy gets to work with: the instance and its checked-out tree (which a
/// policy may read directly, as an agent reading a file it was shown would).
pub struct Task<'a> {
    pub instance: &'a Instance,
    pub workdir: &'a Path,
    /// The policy's constants: every default in a run, other values in `navbench tune`.
    pub knobs: &'a knobs::Knobs,
    /// Which play of the pair this is (`run --repeats`); trial 1 everywhere else.
    pub trial: Trial,
}

/// Test files by each language's conventions (`navbench_lang::family`): the
/// policies drop or demote them, since a fix is rarely in a test.
pub use navbench_lang::family::is_test_file;
