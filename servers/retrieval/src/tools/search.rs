//! The search tools: `codebase_retrieval` (the workspace), `search_code` (any ready
//! repository), `query_code` (search + an LLM answer with checked citations) and
//! `get_implementation` (an entity with its helpers, callees or imports).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use navbench_server_support::mcp::ToolOutput;

use super::args::{file_filter_arg, int_arg, text_arg};
use super::*;
use crate::chunk::Chunk;
use crate::index::{RepoIndex, SearchOptions};
use crate::rag::{self, LlmConfig};
use crate::registry::{RepoRecord, RepoStatus};
use crate::scope::{self, Scope};

impl RetrievalTools {
    /// `codebase_retrieval`: fused semantic + keyword search over the workspace.
    pub fn codebase_retrieval(
        &self,
        args: &CodebaseRetrievalArgs,
    ) -> Result<ToolOutput<CodebaseRetrievalOutput>, ToolError> {
        let query = text_arg(
            "query",
            &args.query,
            MAX_QUERY_CHARS,
            "a natural language description such as 'where are HTTP redirects handled?'",
        )?;
        let top_k = int_arg("top_k", args.top_k, 10, 1, MAX_TOP_K)?;
        let (record, root) = self.searchable_workspace()?;
        let index = self.ready_index(&record)?;
        let started = Instant::now();
        let results = self.hits(
            &read(&index),
            query,
            SearchOptions {
                top_k,
                ..SearchOptions::default()
            },
            None,
        )?;
        let last_indexed = self
            .resolve(&record.id)
            .ok()
            .and_then(|r| r.last_indexed_at);
        let output = CodebaseRetrievalOutput {
            metadata: RetrievalMetadata {
                workspace: root.to_string_lossy().into_owned(),
                total_results: results.len(),
            },
            results,
        };
        // Wall-clock values (`lastIndexed`, `queryTimeMs`) go in `_meta` only: the
        // same search gives the same text and structured result, so a recorded agent
        // run replays and the result's size is reproducible.
        let meta = serde_json::json!({
            "lastIndexed": last_indexed,
            "queryTimeMs": started.elapsed().as_millis() as u64,
        });
        let text = serde_json::to_string_pretty(&output)
            .map_err(|e| ToolError::Invalid(format!("cannot encode the results: {e}")))?;
        Ok(ToolOutput::ok(text, output).with_meta(meta))
    }

    /// The workspace's record once it is no longer indexing (waiting up to the
    /// configured workspace wait), and its root.
    pub(super) fn searchable_workspace(
        &self,
    ) -> Result<(RepoRecord, std::path::PathBuf), ToolError> {
        let Some((id, root)) = lock(&self.shared.workspace)
            .as_ref()
            .map(|ws| (ws.id.clone(), ws.root.clone()))
        else {
            return Err(ToolError::NotReady(
                "codebase_retrieval searches the server's workspace, and this server was started without \
--workspace DIR. Restart it with --workspace, or use index_repository and then search_code."
                    .to_string(),
            ));
        };
        let deadline = Instant::now() + self.shared.settings.workspace_wait;
        let record = loop {
            let record = self.resolve(&id)?;
            if record.status != RepoStatus::Indexing || Instant::now() >= deadline {
                break record;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        if record.status == RepoStatus::Indexing {
            return Err(ToolError::NotReady(format!(
                "the workspace {} is still being indexed (waited {} s); retry in a moment",
                root.display(),
                self.shared.settings.workspace_wait.as_secs()
            )));
        }
        Ok((record, root))
    }

    /// Searches `index` and returns the hits as wire chunks, best first; with
    /// `repo_id`, each carries its `chunk://` resource URI.
    pub(super) fn hits(
        &self,
        index: &RepoIndex,
        query: &str,
        options: SearchOptions,
        repo_id: Option<&str>,
    ) -> Result<Vec<CodeChunk>, ToolError> {
        let hits = index.search(self.shared.embedder.as_ref(), query, &options)?;
        Ok(hits
            .iter()
            .filter_map(|h| {
                let c = index.chunks().get(h.chunk)?;
                Some(CodeChunk {
                    chunk_uri: repo_id.map(|id| chunk_uri(id, c)),
                    ..CodeChunk::hit(c, h.score, &h.reason)
                })
            })
            .collect())
    }

    /// `search_code`.
    pub fn search_code(
        &self,
        args: &SearchCodeArgs,
    ) -> Result<ToolOutput<SearchCodeOutput>, ToolError> {
        let query = text_arg(
            "query",
            &args.query,
            MAX_QUERY_CHARS,
            "search terms such as 'parse cookies from headers'",
        )?;
        let top_k = int_arg("top_k", args.top_k, 10, 1, MAX_TOP_K)?;
        let file_filter = file_filter_arg(args.file_filter.as_deref())?;
        let kind = args.chunk_type.unwrap_or_default().kind();
        let record = self.resolve(&args.repo_id)?;
        let index = self.ready_index(&record)?;
        let options = SearchOptions {
            top_k,
            file_filter,
            chunk_kind: kind,
        };
        let results = self.hits(&read(&index), query, options, Some(&record.id))?;
        let text = search_code_text(query, &record, &results);
        let count = results.len();
        Ok(ToolOutput::ok(
            text,
            SearchCodeOutput {
                results,
                count,
                query: query.to_string(),
                repo_id: record.id,
            },
        ))
    }

    /// `query_code`: retrieval + an LLM answer with checked citations.
    pub fn query_code(
        &self,
        args: &QueryCodeArgs,
    ) -> Result<ToolOutput<QueryCodeOutput>, ToolError> {
        let question = text_arg(
            "question",
            &args.question,
            MAX_QUESTION_CHARS,
            "a question such as 'How are redirects handled?'",
        )?;
        let top_k = int_arg("top_k", args.top_k, 5, 1, MAX_RAG_TOP_K)?;
        let record = self.resolve(&args.repo_id)?;
        let index = self.ready_index(&record)?;
        let config = LlmConfig::from_env()?;
        let evidence = self.hits(
            &read(&index),
            question,
            SearchOptions {
                top_k,
                ..SearchOptions::default()
            },
            None,
        )?;
        if evidence.is_empty() {
            return Err(ToolError::NotFound(format!(
                "{} ({}) has no indexed chunks to answer from; check get_repository_info and its include/exclude patterns",
                record.name, record.id
            )));
        }
        let shown: Vec<rag::Evidence> = evidence.iter().map(CodeChunk::as_evidence).collect();
        let answer = rag::answer(&config, question, &shown)?;
        let mut text = answer.answer.clone();
        let verified = answer.citations.iter().filter(|c| c.verified).count();
        text.push_str(&format!(
            "\n\n---\ngrounded: {} ({verified} of {} citations verified against {} evidence chunks)",
            answer.grounded,
            answer.citations.len(),
            evidence.len()
        ));
        for c in answer.citations.iter().filter(|c| !c.verified) {
            text.push_str(&format!(
                "\nunverified: [{}:{}-{}] is not inside the retrieved evidence",
                c.file_path, c.start_line, c.end_line
            ));
        }
        Ok(ToolOutput::ok(
            text,
            QueryCodeOutput {
                answer: answer.answer,
                citations: answer.citations,
                evidence,
                grounded: answer.grounded,
                model: config.model,
            },
        ))
    }

    /// `get_implementation`.
    pub fn get_implementation(
        &self,
        args: &GetImplementationArgs,
    ) -> Result<ToolOutput<GetImplementationOutput>, ToolError> {
        let name = text_arg(
            "entity_name",
            &args.entity_name,
            500,
            "a name such as 'Session.send'",
        )?;
        let scope = args.scope.unwrap_or_default();
        let record = self.repository_or_workspace(args.repo_id.as_deref())?;
        let index = self.ready_index(&record)?;
        let index = read(&index);
        let found = scope::implementation(&index, name, scope)
            .map_err(|e| ToolError::NotFound(e.to_string()))?;
        let mut results = Vec::new();
        let mut seen = HashSet::new();
        let mut fell_back = false;
        for imp in &found {
            fell_back |= imp.fell_back;
            if seen.insert(imp.entity.id.clone()) {
                results.push(related_chunk(imp.entity, "entity", None));
            }
        }
        for imp in &found {
            for (c, why) in &imp.related {
                if seen.insert(c.id.clone()) {
                    results.push(related_chunk(c, why, imp.entity.name.clone()));
                }
            }
        }
        let scope_name = match scope {
            Scope::Minimal => "minimal",
            Scope::Logical => "logical",
            Scope::Dependencies => "dependencies",
        };
        let text = implementation_text(name, scope_name, &record, fell_back, &results);
        let count = results.len();
        Ok(ToolOutput::ok(
            text,
            GetImplementationOutput {
                entity_name: name.to_string(),
                scope: scope_name.to_string(),
                repo_id: record.id,
                fell_back,
                results,
                count,
            },
        ))
    }

    /// The repository `repo_id` names, or the workspace when it is absent or blank.
    pub(super) fn repository_or_workspace(
        &self,
        repo_id: Option<&str>,
    ) -> Result<RepoRecord, ToolError> {
        if let Some(id) = repo_id.map(str::trim).filter(|s| !s.is_empty()) {
            return self.resolve(id);
        }
        let ws = lock(&self.shared.workspace).as_ref().map(|w| w.id.clone());
        match ws {
            Some(id) => self.resolve(&id),
            None => Err(ToolError::Invalid(format!(
                "pass repo_id: this server has no --workspace. {}",
                lock(&self.shared.registry).known_summary()
            ))),
        }
    }
}

/// A `get_implementation` result: the chunk, how it relates to the entity asked for,
/// and its call/import/exception metadata.
fn related_chunk(c: &Chunk, relation: &str, related_to: Option<String>) -> CodeChunk {
    CodeChunk {
        relation: Some(relation.to_string()),
        related_to,
        calls: c.meta.calls.clone(),
        imports_used: c.meta.imports_used.clone(),
        exceptions_handled: c.meta.exceptions_handled.clone(),
        ..CodeChunk::of(c)
    }
}

/// The agent-facing text of `search_code`: a header, then each hit with its citation,
/// type, name, score, reason and code.
fn search_code_text(query: &str, record: &RepoRecord, results: &[CodeChunk]) -> String {
    let mut text = if results.is_empty() {
        format!(
            "No results for '{query}' in {} ({}).",
            record.name, record.id
        )
    } else {
        format!(
            "{} results for '{query}' in {} ({}):",
            results.len(),
            record.name,
            record.id
        )
    };
    for (i, r) in results.iter().enumerate() {
        text.push_str(&format!(
            "\n\n{}. {} {}{} score {:.2} ({})\n```\n{}\n```",
            i + 1,
            r.citation(),
            r.chunk_type,
            r.name
                .as_deref()
                .map(|n| format!(" {n}"))
                .unwrap_or_default(),
            r.score.unwrap_or_default(),
            r.reason.as_deref().unwrap_or_default(),
            r.content.trim_end()
        ));
    }
    text
}

/// The agent-facing text of `get_implementation`.
fn implementation_text(
    name: &str,
    scope_name: &str,
    record: &RepoRecord,
    fell_back: bool,
    results: &[CodeChunk],
) -> String {
    let mut text = format!(
        "{} chunk(s) for '{name}' (scope {scope_name}) in {}{}:",
        results.len(),
        record.name,
        if fell_back {
            "; no call/import metadata, so only the entity itself"
        } else {
            ""
        }
    );
    for r in results {
        let relation = r.relation.as_deref().unwrap_or_default();
        text.push_str(&format!(
            "\n\n{} {} {} ({})\n```\n{}\n```",
            r.citation(),
            r.chunk_type,
            r.name.as_deref().unwrap_or(""),
            match &r.related_to {
                Some(to) => format!("{relation} of {to}"),
                None => relation.to_string(),
            },
            r.content.trim_end()
        ));
    }
    text
}
