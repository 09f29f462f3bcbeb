//! The `search_code` tool's engine: the original's `search_code_snippets` (SPEC.md
//! §4.2–4.4), a term search.
//!
//! For every term (plus, with several terms, a joint term): an exact entity id gives
//! the complete code; otherwise the entity-name dictionary gives previews or folded
//! lists; then, unless a name match was decisive, BM25 entity-id search (or the fuzzy
//! retriever) and BM25 content search add more. Results are merged per node, grouped
//! by the terms that found them and rendered in the original's formats.
//!
//! Fixed defects (FIDELITY.md): every BM25 content hit is examined, not only the
//! first; `Class`-prefixed names keep their first six characters; with no file
//! pattern every file is searched (the original's default `**/*.py` missed
//! root-level files); empty files and queries without tokens do not crash.

use std::collections::{HashMap, HashSet};

use regex::Regex;

use crate::format::{CodeLimit, FormatMode, QueryResult};
use crate::fuzzy::FuzzyIndex;
use crate::graph::{NodeIndex, NodeKind, file_part};
use crate::retrievers::{ContentRetriever, ModuleRetriever};
use crate::traverse::{RepoGraph, is_test_file};

/// Everything a search needs.
pub struct SearchContext<'a> {
    /// The graph.
    pub graph: &'a RepoGraph,
    /// Fuzzy entity search.
    pub fuzzy: &'a FuzzyIndex,
    /// BM25 content search, if available.
    pub content: Option<&'a dyn ContentRetriever>,
    /// BM25 entity-id search, if available.
    pub modules: Option<&'a dyn ModuleRetriever>,
    /// Non-test file ids in graph order (`ALL_FILE`).
    pub all_files: &'a [String],
    /// Code cap per result.
    pub limit: CodeLimit,
}

/// One rendered group of results.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct SearchGroup {
    /// The terms whose results these are.
    pub terms: Vec<String>,
    /// The results, in display order.
    pub results: Vec<SearchHit>,
}

/// One result as structured data.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct SearchHit {
    /// `complete`, `code_snippet`, `preview` or `fold`.
    pub format: String,
    /// Node id (the file for code snippets).
    pub id: String,
    /// Node type (`file` for code snippets).
    pub r#type: String,
    /// The file.
    pub file: String,
    /// First line, when known.
    pub start_line: Option<u32>,
    /// Last line, when known.
    pub end_line: Option<u32>,
    /// Where it came from (`Source:` line).
    pub source: String,
    /// For a BM25 content result: its rank among the content results of the call
    /// (1 = best), which the text, grouped by file as the original's, does not show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25_rank: Option<u32>,
}

/// The output of [`search_code_snippets`].
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// The agent-facing text.
    pub text: String,
    /// Terms actually searched (after dropping test terms, joint term included).
    pub terms: Vec<String>,
    /// Groups as structured data.
    pub groups: Vec<SearchGroup>,
}

/// Python's `fnmatch.fnmatch` (POSIX, case-sensitive): `*` matches any run
/// (slashes included), `?` one character, `[...]`/`[!...]` a class.
pub fn fnmatch_regex(pattern: &str) -> Option<Regex> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut re = String::from("(?s)^");
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '[' => {
                let mut j = i;
                if j < chars.len() && chars[j] == '!' {
                    j += 1;
                }
                if j < chars.len() && chars[j] == ']' {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    re.push_str("\\[");
                } else {
                    let mut class: String = chars[i..j].iter().collect();
                    i = j + 1;
                    class = class.replace('\\', "\\\\");
                    if let Some(rest) = class.strip_prefix('!') {
                        class = format!("^{rest}");
                    } else if class.starts_with('^') {
                        class = format!("\\{class}");
                    }
                    re.push('[');
                    re.push_str(&class.replace('[', "\\["));
                    re.push(']');
                }
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    Regex::new(&re).ok()
}

/// `find_matching_files_from_list`: glob (`*`, `?`, `[`) or substring match.
pub fn matching_files<'a>(files: &'a [String], pattern: &str) -> Vec<&'a str> {
    if pattern.contains(['*', '?', '[']) {
        match fnmatch_regex(pattern) {
            Some(re) => files
                .iter()
                .filter(|f| re.is_match(f))
                .map(String::as_str)
                .collect(),
            None => Vec::new(),
        }
    } else {
        files
            .iter()
            .filter(|f| f.contains(pattern))
            .map(String::as_str)
            .collect()
    }
}

/// The `include_files` argument of `search_entity_in_global_dict`, which the
/// original sometimes passes a prefix string (then a substring test).
#[derive(Clone, Copy)]
enum FileFilter<'a> {
    All,
    Set(&'a HashSet<&'a str>),
    Substring(&'a str),
}

impl FileFilter<'_> {
    fn accepts(&self, file: &str) -> bool {
        match self {
            FileFilter::All => true,
            FileFilter::Set(s) => s.contains(file),
            FileFilter::Substring(p) => p.contains(file),
        }
    }
}

const SPECIAL_SPANS: [&str; 3] = ["docstring", "imports", "comments"];
const SRC_BM25_ENTITY: &str = "Retrieved entity using keyword search (bm25).";
const SRC_BM25_CONTENT: &str = "Retrieved code content using keyword search (bm25).";

struct Searcher<'a> {
    ctx: &'a SearchContext<'a>,
    include: HashSet<&'a str>,
    top_k: usize,
    /// Keys ([`bm25_key`]) of the BM25 content results in retrieval order, first
    /// occurrence across terms: the rank a structured hit reports.
    content_order: std::cell::RefCell<Vec<String>>,
}

/// What identifies a BM25 content result: a snippet's file and lines, else the node.
fn bm25_key(r: &QueryResult) -> String {
    match r.mode {
        FormatMode::CodeSnippet => format!("{}:{}-{}", r.file_path, r.start_line, r.end_line),
        _ => r.nid.clone(),
    }
}

impl<'a> Searcher<'a> {
    fn g(&self) -> &'a RepoGraph {
        self.ctx.graph
    }

    fn node_result(&self, q: usize, mode: FormatMode, ix: NodeIndex, src: String) -> QueryResult {
        QueryResult::for_node(q, mode, self.g(), self.g().node_data(ix), src)
    }

    /// `search_entity_in_global_dict`: `{type: [ids]}` in first-seen type order.
    fn in_global_dict(
        &self,
        term: &str,
        files: FileFilter<'_>,
        prefix: Option<&str>,
    ) -> Vec<(NodeKind, Vec<NodeIndex>)> {
        let mut term = term;
        for (keywords, len) in [
            (&["class ", "Class "][..], 6),
            (&["function ", "Function "][..], 9),
            (&["method ", "Method "][..], 7),
            (&["def "][..], 4),
        ] {
            if keywords.iter().any(|k| term.starts_with(k)) {
                term = term.get(len..).unwrap_or("").trim();
                break;
            }
        }
        let g = self.g();
        let ids = match g.by_name(term) {
            Some(ids) => ids,
            None => match g.by_name_lower(&term.to_lowercase()) {
                Some(ids) => ids,
                None => return Vec::new(),
            },
        };
        let prefix_parts: Option<Vec<String>> =
            prefix.map(|p| p.to_lowercase().split('.').map(str::to_string).collect());
        let mut out: Vec<(NodeKind, Vec<NodeIndex>)> = Vec::new();
        for &ix in ids {
            let id = g.id(ix);
            if !files.accepts(file_part(id)) {
                continue;
            }
            if let Some(parts) = &prefix_parts {
                let lowered = id.to_lowercase().replace(".py", "");
                let mut cands: Vec<&str> = lowered.split(['.', '/', ':']).collect();
                cands.pop();
                if !parts.iter().all(|p| cands.contains(&p.as_str())) {
                    continue;
                }
            }
            let kind = g.kind(ix);
            match out.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, v)) => v.push(ix),
                None => out.push((kind, vec![ix])),
            }
        }
        out
    }

    /// `bm25_module_retrieve`: positive hits, those in the included files if any.
    fn module_retrieve(&self, query: &str, files: Option<&HashSet<&str>>) -> Vec<NodeIndex> {
        let Some(m) = self.ctx.modules else {
            return Vec::new();
        };
        let mut filtered = Vec::new();
        let mut all = Vec::new();
        for (id, score) in m.retrieve(query, 10) {
            if score <= 0.0 {
                continue;
            }
            let Some(ix) = self.g().graph().index_of(&id) else {
                continue;
            };
            if files.is_none_or(|f| f.contains(file_part(&id))) {
                filtered.push(ix);
            }
            all.push(ix);
        }
        if filtered.is_empty() { all } else { filtered }
    }

    /// `search_entity` (SPEC.md §4.3): results and whether to continue with content search.
    fn search_entity(&self, q: usize, term: &str) -> (Vec<QueryResult>, bool) {
        let g = self.g();
        let mut results = Vec::new();
        let mut go_on = true;
        if let Some(ix) = g.find(term, false) {
            go_on = false;
            results.push(self.node_result(
                q,
                FormatMode::Complete,
                ix,
                format!("Exact match found for entity name `{term}`."),
            ));
        } else if let Some(nid) = term.strip_suffix(".__init__")
            && let Some(ix) = g.find(nid, false)
        {
            go_on = false;
            results.push(self.node_result(
                q,
                FormatMode::Preview,
                ix,
                format!("Exact match found for entity name `{nid}`."),
            ));
        }
        if go_on {
            let include = FileFilter::Set(&self.include);
            let mut found = self.in_global_dict(term, include, None);
            if found.is_empty() {
                found = self.in_global_dict(term, FileFilter::All, None);
            }
            let mut use_sub_term = false;
            let mut used_term = term.to_string();
            if found.is_empty() && term.contains('.') {
                let before = &term[..term.rfind('.').unwrap_or(0)];
                let prefix = before.split_whitespace().last();
                let sub = term.rsplit('.').next().unwrap_or("").trim();
                used_term = sub.to_string();
                found = self.in_global_dict(sub, include, prefix);
                if found.is_empty() {
                    let files = prefix.map_or(FileFilter::All, FileFilter::Substring);
                    found = self.in_global_dict(sub, files, None);
                }
                if found.is_empty() {
                    use_sub_term = true;
                    found = self.in_global_dict(sub, FileFilter::All, None);
                }
            }
            let src = format!("Match found for entity name `{used_term}`.");
            for (kind, ids) in &found {
                if !matches!(kind, NodeKind::Function | NodeKind::Class | NodeKind::File) {
                    continue;
                }
                if ids.len() <= 3 {
                    for &ix in ids {
                        results.push(self.node_result(q, FormatMode::Preview, ix, src.clone()));
                    }
                } else {
                    for &ix in ids {
                        results.push(self.node_result(q, FormatMode::Fold, ix, src.clone()));
                    }
                    go_on = use_sub_term;
                }
            }
        }
        if go_on {
            let mut ids = self.module_retrieve(term, Some(&self.include));
            if ids.is_empty() {
                ids = self.module_retrieve(term, None);
            }
            if ids.is_empty() {
                ids = self
                    .ctx
                    .fuzzy
                    .search(g.graph(), term, None, None, 3)
                    .into_iter()
                    .map(|m| m.node)
                    .collect();
            }
            let mut shown = 0;
            for &ix in ids.iter().take(5) {
                match g.kind(ix) {
                    NodeKind::File | NodeKind::Directory => results.push(self.node_result(
                        q,
                        FormatMode::Fold,
                        ix,
                        SRC_BM25_ENTITY.to_string(),
                    )),
                    _ if shown < 3 => {
                        shown += 1;
                        results.push(self.node_result(
                            q,
                            FormatMode::Preview,
                            ix,
                            SRC_BM25_ENTITY.to_string(),
                        ));
                    }
                    _ => {}
                }
            }
        }
        (results, go_on)
    }

    /// `bm25_content_retrieve` (SPEC.md §4.4), examining every hit.
    fn content_retrieve(&self, q: usize, term: &str) -> Vec<QueryResult> {
        let Some(content) = self.ctx.content else {
            return Vec::new();
        };
        let g = self.g();
        let mut results = Vec::new();
        for hit in content.retrieve(term, self.top_k.max(10)) {
            let file = hit.file_path.as_str();
            if !self.include.contains(file) {
                continue;
            }
            let special = |s: &String| SPECIAL_SPANS.contains(&s.as_str());
            let snippet = |desc: Option<String>, message: Option<String>| QueryResult {
                queries: vec![q],
                mode: FormatMode::CodeSnippet,
                nid: file.to_string(),
                file_path: file.to_string(),
                start_line: hit.start_line,
                end_line: hit.end_line,
                desc,
                message,
                source: SRC_BM25_CONTENT.to_string(),
            };
            if hit.span_ids.iter().all(special) {
                results.push(snippet(None, None));
            } else if hit.span_ids.iter().any(special) {
                let mut nodes: Vec<(NodeIndex, (u32, u32))> = hit
                    .span_ids
                    .iter()
                    .filter_map(|s| g.find(&format!("{file}:{s}"), false))
                    .map(|ix| (ix, g.node_data(ix).lines.unwrap_or((0, 0))))
                    .collect();
                nodes.sort_by_key(|(_, (s, _))| *s);
                let mut message = String::new();
                if let (Some(first), Some(last)) = (nodes.first(), nodes.last()) {
                    let incomplete = |ix: NodeIndex| {
                        format!(
                            "The code for {} `{}` is incomplete; search `{}` for the full content if needed.\n",
                            g.kind(ix),
                            g.id(ix),
                            g.id(ix)
                        )
                    };
                    if first.1.0 < hit.start_line {
                        message += &incomplete(first.0);
                    }
                    if last.1.1 > hit.end_line {
                        message += &incomplete(last.0);
                    }
                    if !message.trim().is_empty() {
                        message = format!("Hint: \n{message}");
                    }
                }
                let ids: Vec<String> = nodes
                    .iter()
                    .map(|(ix, _)| format!("`{}`", g.id(*ix)))
                    .collect();
                results.push(snippet(
                    Some(format!("Found {}.", ids.join(", "))),
                    Some(message),
                ));
            } else {
                for s in &hit.span_ids {
                    if let Some(ix) = g.find(&format!("{file}:{s}"), false) {
                        results.push(self.node_result(
                            q,
                            FormatMode::Preview,
                            ix,
                            SRC_BM25_CONTENT.to_string(),
                        ));
                    }
                }
            }
        }
        results.truncate(self.top_k);
        let mut order = self.content_order.borrow_mut();
        for r in &results {
            let key = bm25_key(r);
            if !order.contains(&key) {
                order.push(key);
            }
        }
        results
    }
}

/// Runs the search for `terms` (SPEC.md §4.2). `pattern` restricts the files searched
/// (glob with `*`/`?`/`[`, else substring; `None`: all files); `top_k` caps the
/// results of each term's content search (the original's 5).
///
/// Steps, as the original's: the files searched → each term's entity and content
/// search ([`search_terms`]) → `merge_query_results` ([`merge_per_node`]) →
/// `rank_and_aggr_query_results` ([`group_by_terms`]) → one text block per group
/// ([`render_group`]).
pub fn search_code_snippets(
    ctx: &SearchContext<'_>,
    terms: &[String],
    pattern: Option<&str>,
    top_k: usize,
) -> SearchOutcome {
    let mut text = String::new();
    let include = files_searched(ctx, pattern, &mut text);
    let s = Searcher {
        ctx,
        include,
        top_k,
        content_order: Default::default(),
    };
    let (queries, all) = search_terms(&s, terms, &mut text);
    let groups = group_by_terms(merge_per_node(all), queries.len());
    let g = ctx.graph;
    let mut out_groups = Vec::new();
    for (key, results) in groups {
        let names: Vec<String> = key.iter().map(|&i| queries[i].clone()).collect();
        let desc: Vec<String> = names.iter().map(|t| format!("\"{t}\"")).collect();
        text += &format!(
            "##Searching for term {}...\n### Search Result:\n",
            desc.join(", ")
        );
        let (cur, shown) = render_group(ctx, &results);
        if cur.trim().is_empty() {
            text += "No locations found.\n\n";
        } else {
            text += &cur;
        }
        out_groups.push(SearchGroup {
            terms: names,
            results: shown
                .into_iter()
                .map(|r| search_hit(g, r, &s.content_order.borrow()))
                .collect(),
        });
    }
    SearchOutcome {
        text: text.trim().to_string(),
        terms: queries,
        groups: out_groups,
    }
}

/// The files `pattern` selects (all files when it selects none, with a note in
/// `text`, or when there is no pattern).
fn files_searched<'a>(
    ctx: &SearchContext<'a>,
    pattern: Option<&str>,
    text: &mut String,
) -> HashSet<&'a str> {
    match pattern {
        Some(p) => {
            let m = matching_files(ctx.all_files, p);
            if m.is_empty() {
                *text += &format!(
                    "No files found for file pattern '{p}'. Will search all files.\n...\n"
                );
                ctx.all_files.iter().map(String::as_str).collect()
            } else {
                m.into_iter().collect()
            }
        }
        None => ctx.all_files.iter().map(String::as_str).collect(),
    }
}

/// Searches each term (test terms dropped with a note in `text`; with several terms a
/// joint term is added, and a term answered decisively by name drops out of it).
/// Returns the queries searched and every result, tagged with its query's index.
fn search_terms(
    s: &Searcher<'_>,
    terms: &[String],
    text: &mut String,
) -> (Vec<String>, Vec<QueryResult>) {
    let mut filter_terms: Vec<String> = Vec::new();
    for t in terms {
        if is_test_file(t) {
            *text += &format!(
                "No results for test files: `{t}`. Please do not search for any test files.\n\n"
            );
        } else {
            filter_terms.push(t.clone());
        }
    }
    let mut joint: Vec<String> = filter_terms.clone();
    if filter_terms.len() > 1 {
        filter_terms.push(filter_terms.join(" "));
    }
    let mut queries: Vec<String> = Vec::new();
    let mut all: Vec<QueryResult> = Vec::new();
    let n = filter_terms.len();
    for i in 0..n {
        let term = filter_terms[i].trim().trim_matches('.').to_string();
        if term.is_empty() {
            continue;
        }
        let q = queries.len();
        queries.push(term.clone());
        let (mut found, go_on) = s.search_entity(q, &term);
        if go_on {
            found.extend(s.content_retrieve(q, &term));
        } else if i + 1 != n {
            joint[i] = String::new();
            let rebuilt: Vec<&str> = joint
                .iter()
                .filter(|t| !t.trim().is_empty())
                .map(String::as_str)
                .collect();
            filter_terms[n - 1] = rebuilt.join(" ");
            if filter_terms[..n - 1].contains(&filter_terms[n - 1]) {
                filter_terms[n - 1] = String::new();
            }
        }
        all.extend(found);
    }
    (queries, all)
}

/// The original's `merge_query_results`: code snippets as they are, the rest merged
/// per node (queries united, the most complete format kept).
fn merge_per_node(all: Vec<QueryResult>) -> Vec<QueryResult> {
    let priority = |m: FormatMode| m as u8;
    let mut merged: Vec<QueryResult> = Vec::new();
    let mut by_nid: Vec<QueryResult> = Vec::new();
    let mut pos: HashMap<String, usize> = HashMap::new();
    for qr in all {
        if qr.mode == FormatMode::CodeSnippet {
            merged.push(qr);
        } else if let Some(&p) = pos.get(&qr.nid) {
            let existing = &mut by_nid[p];
            if !existing.queries.contains(&qr.queries[0]) {
                existing.queries.extend(qr.queries.iter().copied());
            }
            if priority(qr.mode) < priority(existing.mode) {
                existing.mode = qr.mode;
                existing.start_line = qr.start_line;
                existing.end_line = qr.end_line;
                existing.source = qr.source;
            }
        } else {
            pos.insert(qr.nid.clone(), by_nid.len());
            by_nid.push(qr);
        }
    }
    merged.extend(by_nid);
    merged
}

/// The original's `rank_and_aggr_query_results`: results grouped by their query list,
/// groups ordered by their first query.
fn group_by_terms(
    merged: Vec<QueryResult>,
    n_queries: usize,
) -> Vec<(Vec<usize>, Vec<QueryResult>)> {
    let mut groups: Vec<(Vec<usize>, Vec<QueryResult>)> = Vec::new();
    for qr in merged {
        match groups.iter_mut().find(|(k, _)| *k == qr.queries) {
            Some((_, v)) => v.push(qr),
            None => groups.push((qr.queries.clone(), vec![qr])),
        }
    }
    groups.sort_by_key(|(k, _)| (0..n_queries).find(|i| k.contains(i)).unwrap_or(n_queries));
    groups
}

/// One group's text (complete, code snippet, preview, then fold results) and the
/// results shown, in that order.
fn render_group<'r>(
    ctx: &SearchContext<'_>,
    results: &'r [QueryResult],
) -> (String, Vec<&'r QueryResult>) {
    let g = ctx.graph;
    let mut cur = String::new();
    let mut shown: Vec<&QueryResult> = Vec::new();
    for mode in [
        FormatMode::Complete,
        FormatMode::CodeSnippet,
        FormatMode::Preview,
        FormatMode::Fold,
    ] {
        let of_mode: Vec<&QueryResult> = results.iter().filter(|r| r.mode == mode).collect();
        if of_mode.is_empty() {
            continue;
        }
        let listed = match mode {
            FormatMode::Fold => {
                render_folds(ctx, &of_mode, &mut cur);
                of_mode
            }
            FormatMode::Preview => preview_kept(of_mode),
            _ => of_mode,
        };
        if mode != FormatMode::Fold {
            for qr in &listed {
                cur += &qr.format_output(g, ctx.limit);
                cur += "\n";
            }
        }
        shown.extend(listed);
    }
    cur += "\n\n";
    (cur, shown)
}

/// Fold results: their lines with a `Source:` line whenever the source changes, and a
/// hint on getting the full content.
fn render_folds(ctx: &SearchContext<'_>, of_mode: &[&QueryResult], cur: &mut String) {
    let mut src = "";
    for qr in of_mode {
        if src.is_empty() {
            src = &qr.source;
        }
        if src != qr.source {
            *cur += &format!("Source: {src}\n\n");
            src = &qr.source;
        }
        *cur += &qr.format_output(ctx.graph, ctx.limit);
    }
    *cur += &format!("Source: {src}\n");
    if of_mode.len() > 1 {
        *cur += "Hint: Use more detailed query to get the full content of some if needed.\n";
    } else {
        *cur += &format!(
            "Hint: Search `{}` for the full content if needed.\n",
            of_mode[0].nid
        );
    }
    *cur += "\n";
}

/// Preview results kept: long ones (100 lines or more) as they are, then per file the
/// short ones not nested in an earlier one (by start line, longest first).
fn preview_kept(of_mode: Vec<&QueryResult>) -> Vec<&QueryResult> {
    let mut kept: Vec<&QueryResult> = Vec::new();
    let mut by_file: Vec<(&str, Vec<&QueryResult>)> = Vec::new();
    for qr in of_mode {
        if i64::from(qr.end_line) - i64::from(qr.start_line) < 100 {
            match by_file.iter_mut().find(|(f, _)| *f == qr.file_path) {
                Some((_, v)) => v.push(qr),
                None => by_file.push((&qr.file_path, vec![qr])),
            }
        } else {
            kept.push(qr);
        }
    }
    for (_, mut rs) in by_file {
        rs.sort_by_key(|r| (r.start_line, std::cmp::Reverse(r.end_line)));
        let mut max_end: i64 = -1;
        for r in rs {
            if i64::from(r.end_line) > max_end {
                kept.push(r);
                max_end = i64::from(r.end_line);
            }
        }
    }
    kept
}

/// The structured form of a shown result; `content_order` gives BM25 content results
/// their rank.
fn search_hit(g: &RepoGraph, r: &QueryResult, content_order: &[String]) -> SearchHit {
    SearchHit {
        format: match r.mode {
            FormatMode::Complete => "complete",
            FormatMode::CodeSnippet => "code_snippet",
            FormatMode::Preview => "preview",
            FormatMode::Fold => "fold",
        }
        .to_string(),
        id: r.nid.clone(),
        r#type: g
            .graph()
            .node_by_id(&r.nid)
            .map_or("file", |n| n.kind.as_str())
            .to_string(),
        file: r.file_path.clone(),
        start_line: (r.start_line > 0).then_some(r.start_line),
        end_line: (r.end_line > 0).then_some(r.end_line),
        source: r.source.clone(),
        bm25_rank: (r.source == SRC_BM25_CONTENT)
            .then(|| content_order.iter().position(|k| *k == bm25_key(r)))
            .flatten()
            .map(|i| i as u32 + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_like_python() {
        let files: Vec<String> = ["setup.py", "pkg/a.py", "pkg/sub/b.py", "pkg/c.txt"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            matching_files(&files, "**/*.py"),
            ["pkg/a.py", "pkg/sub/b.py"]
        );
        assert_eq!(
            matching_files(&files, "*.py"),
            ["setup.py", "pkg/a.py", "pkg/sub/b.py"]
        );
        assert_eq!(matching_files(&files, "pkg/[ab].py"), ["pkg/a.py"]);
        assert_eq!(matching_files(&files, "pkg/[!a].py"), Vec::<&str>::new());
        assert_eq!(matching_files(&files, "sub"), ["pkg/sub/b.py"]);
    }
}
