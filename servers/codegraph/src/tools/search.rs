//! The search tools: `search_code` (BM25 over code chunks and entity names) and
//! `search_entities` (fuzzy entity-name search).

use super::*;
use crate::search_code::{SearchContext, search_code_snippets};

impl CodegraphTools {
    /// `search_code`: the original's `search_code_snippets` (SPEC.md §4.2).
    pub fn search_code(
        &self,
        args: &SearchCodeArgs,
    ) -> Result<ToolOutput<SearchCodeOutput>, ToolError> {
        let repo = self.repo()?;
        let terms = clean_terms(&args.query, "query", "[\"QuerySet.filter\", \"timezone\"]")?;
        let top_k = self.top_k(args.top_k, 5)?;
        let pattern = args
            .file_pattern
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty());
        let ctx = SearchContext {
            graph: &repo.graph,
            fuzzy: &repo.fuzzy,
            content: repo.retrievers.content.as_deref(),
            modules: repo.retrievers.modules.as_deref(),
            all_files: &repo.all_files,
            limit: self.code_limit(),
        };
        let out = search_code_snippets(&ctx, &terms, pattern, top_k);
        let mut text = out.text;
        if repo.retrievers.content.is_none() {
            text += "\n\n(Note: BM25 code-content search is not available; results come from entity names and fuzzy matching only.)";
        }
        Ok(ToolOutput::ok(
            text,
            SearchCodeOutput {
                terms: out.terms,
                groups: out.groups,
                content_search: repo.retrievers.content.is_some(),
            },
        ))
    }

    /// `search_entities`: fuzzy entity-name search (SPEC.md §3.5).
    pub fn search_entities(
        &self,
        args: &SearchEntitiesArgs,
    ) -> Result<ToolOutput<SearchEntitiesOutput>, ToolError> {
        let repo = self.repo()?;
        let terms = clean_terms(&args.query, "query", "[\"ConfigLoader\", \"parse config\"]")?;
        let top_k = self.top_k(args.top_k, 10)?;
        let kind = match args
            .entity_type
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            None => None,
            Some("file") => Some(NodeKind::File),
            Some("class") => Some(NodeKind::Class),
            Some("function") => Some(NodeKind::Function),
            Some(other) => {
                return Err(invalid(format!(
                    "Invalid entity_type '{other}': expected 'file', 'class' or 'function' (methods are 'function'), or omit it to search all three"
                )));
            }
        };
        let g = &repo.graph;
        let mut text = String::new();
        let mut results = Vec::new();
        for term in &terms {
            let term = term.trim();
            let matches = repo.fuzzy.search(g.graph(), term, kind, None, top_k);
            text += &format!("##Searching for entity `{term}`...\n### Search Result:\n");
            if matches.is_empty() {
                text += "No entities found.\n";
            }
            let mut list = Vec::new();
            for m in matches {
                let data = g.node_data(m.node);
                let lines = data.lines.filter(|_| data.kind.is_entity());
                text += &format!("{}: `{}`", data.kind, g.id(m.node));
                if let Some((s, e)) = lines {
                    text += &format!(" (lines {s}-{e})");
                }
                text += &format!(" score {:.1}\n", m.score);
                list.push(EntityMatch {
                    id: g.id(m.node).to_string(),
                    r#type: data.kind.to_string(),
                    score: m.score,
                    start_line: lines.map(|l| l.0),
                    end_line: lines.map(|l| l.1),
                });
            }
            text += "Source: Retrieved entity using fuzzy search (rapidfuzz token_set_ratio).\n\n";
            results.push(EntityQueryResult {
                query: term.to_string(),
                matches: list,
            });
        }
        Ok(ToolOutput::ok(
            text.trim().to_string(),
            SearchEntitiesOutput { results },
        ))
    }
}
