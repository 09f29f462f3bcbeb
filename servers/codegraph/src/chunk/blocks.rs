//! The CodeBlock tree: LocAgent's (moatless-tools') structural parse of a Python file.
//!
//! Every block holds only its OWN text (from its node's start up to its first child), the
//! whitespace before it (`pre_code`), its cl100k token count, and its children. Blocks are
//! grouped into spans (`span_id`s such as `Foo.bar`, `imports`, `impl:3`) that later name
//! the entities a chunk touches. The walk, the identifier rules and the span rules follow
//! the original's `CodeParser.parse_code` closely, because chunk boundaries and chunk text
//! depend on all of them.

use std::collections::HashMap;

use tree_sitter::Node;

use super::matcher::{BlockType, NodeMatch, find_match};
use super::tokens::count_tokens;

/// Index of a block in a [`BlockTree`].
pub type BlockId = usize;

/// Why a file yields no block tree (the original skips such files entirely).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseFailure {
    /// Text between two blocks is not just spaces, newlines and backslashes (e.g. a `;`,
    /// a tab or a carriage return); the original's CodeBlock constructor rejects it.
    #[error("unexpected text between code blocks at line {line}: {text:?}")]
    BadPreCode {
        /// 1-based line of the block that follows the text.
        line: usize,
        /// The offending text.
        text: String,
    },
    /// A block with empty text and no identifier (the original fails on it).
    #[error("empty code block without identifier at line {line}")]
    EmptyBlock {
        /// 1-based line of the block.
        line: usize,
    },
    /// Internal inconsistency: a block got no span (cannot happen with the span rules).
    #[error("no span for the block at line {line}")]
    NoSpan {
        /// 1-based line of the block.
        line: usize,
    },
}

/// Kind of a span (only used by the span rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SpanType {
    Initiation,
    Documentation,
    Implementation,
}

/// A span: a run of blocks that belong together under one id.
#[derive(Debug, Clone)]
struct Span {
    span_id: String,
    span_type: SpanType,
    initiating_block: BlockId,
    parent_block_path: Vec<String>,
    block_paths: usize,
    tokens: usize,
    index: usize,
}

impl Span {
    /// A span with no blocks yet.
    fn new(
        span_id: String,
        span_type: SpanType,
        initiating_block: BlockId,
        parent_block_path: Vec<String>,
        index: usize,
    ) -> Span {
        Span {
            span_id,
            span_type,
            initiating_block,
            parent_block_path,
            block_paths: 0,
            tokens: 0,
            index,
        }
    }
}

/// One block of the tree.
#[derive(Debug, Clone)]
pub struct Block {
    /// Block type (may change after the children are parsed, as in the original).
    pub kind: BlockType,
    /// Unique identifier among same-type siblings (None for the module and SPACE).
    pub identifier: Option<String>,
    /// 1-based first line.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// Text between the previous block and this one.
    pub pre_code: String,
    /// The block's own text.
    pub content: String,
    /// The block's own text split on `\n`, as rendered (an assignment broken after `=`
    /// without a backslash gets ` \` appended to its first line, as in the original).
    pub content_lines: Vec<String>,
    /// Number of newlines in `pre_code`.
    pub pre_lines: usize,
    /// Indentation taken from `pre_code`.
    pub indentation: String,
    /// cl100k token count of `content`.
    pub tokens: usize,
    /// Child blocks, in order.
    pub children: Vec<BlockId>,
    /// Parent block (None for the module).
    pub parent: Option<BlockId>,
    /// Id of the span the block belongs to.
    pub span_id: Option<String>,
    /// tree-sitter node kind the block came from (debugging aid).
    pub ts_kind: &'static str,
}

impl Block {
    fn new(kind: BlockType, pre_code: String, content: String, tokens: usize) -> Block {
        let (pre_lines, indentation) = if pre_code.is_empty() {
            (0, String::new())
        } else {
            let parts: Vec<&str> = pre_code.split('\n').collect();
            let pre_lines = parts.len() - 1;
            let indentation = if pre_lines > 0 {
                parts[parts.len() - 1].to_string()
            } else {
                pre_code.clone()
            };
            (pre_lines, indentation)
        };
        let content_lines = content.split('\n').map(str::to_string).collect();
        Block {
            kind,
            identifier: None,
            start_line: 0,
            end_line: 0,
            pre_code,
            content,
            content_lines,
            pre_lines,
            indentation,
            tokens,
            children: Vec::new(),
            parent: None,
            span_id: None,
            ts_kind: "",
        }
    }
}

/// A parsed file: the module block is block 0.
#[derive(Debug, Clone)]
pub struct BlockTree {
    /// All blocks; `blocks[0]` is the module.
    pub blocks: Vec<Block>,
}

impl BlockTree {
    /// The module block's id.
    pub const ROOT: BlockId = 0;

    /// Own tokens plus those of all descendants.
    pub fn sum_tokens(&self, id: BlockId) -> usize {
        let b = &self.blocks[id];
        b.tokens
            + b.children
                .iter()
                .map(|&c| self.sum_tokens(c))
                .sum::<usize>()
    }

    /// All descendants of `id` in pre-order (not including `id`).
    pub fn descendants(&self, id: BlockId) -> Vec<BlockId> {
        let mut out = Vec::new();
        self.collect_descendants(id, &mut out);
        out
    }

    fn collect_descendants(&self, id: BlockId, out: &mut Vec<BlockId>) {
        for &c in &self.blocks[id].children {
            out.push(c);
            self.collect_descendants(c, out);
        }
    }

    /// Identifiers from the root down to `id` (empty identifiers skipped), as the
    /// original's `full_path()`.
    pub fn full_path(&self, id: BlockId) -> Vec<String> {
        full_path(&self.blocks, id)
    }

    /// `full_path` joined with `.`.
    pub fn path_string(&self, id: BlockId) -> String {
        self.full_path(id).join(".")
    }

    /// Pre-order ids of every block (the module first).
    pub fn preorder(&self) -> Vec<BlockId> {
        let mut out = vec![Self::ROOT];
        self.collect_descendants(Self::ROOT, &mut out);
        out
    }
}

/// Identifiers from the root down to `id`, empty ones skipped.
fn full_path(blocks: &[Block], id: BlockId) -> Vec<String> {
    let mut path = Vec::new();
    let mut cur = Some(id);
    while let Some(c) = cur {
        if let Some(ident) = &blocks[c].identifier
            && !ident.is_empty()
        {
            path.push(ident.clone());
        }
        cur = blocks[c].parent;
    }
    path.reverse();
    path
}

/// Python's `str.isspace` for one character (close enough: `\x1c`–`\x1f` included).
fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `\w` for one character of a `str`.
pub(crate) fn py_is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `re.sub(r'\W+', '_', s)`.
fn replace_non_word_runs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if py_is_word(c) {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out
}

/// Whether a pre_code string passes the original's `^[ \n\\]*$` check.
fn valid_pre_code(s: &str) -> bool {
    s.chars().all(|c| matches!(c, ' ' | '\n' | '\\'))
}

const COMMENTED_OUT_KEYWORDS: [&str; 3] = ["rest of the code", "existing code", "other code"];

/// Whether a comment stands for omitted code.
fn is_outcommented_code(comment: &str) -> bool {
    comment.starts_with("# ...") || {
        let lower = comment.to_lowercase();
        COMMENTED_OUT_KEYWORDS.iter().any(|k| lower.contains(k))
    }
}

/// The match rule for a node; a node that is or holds a parse error is one error block.
fn node_match(node: Node<'_>) -> NodeMatch<'_> {
    let has_error = node.kind() == "ERROR" || {
        let mut c = node.walk();
        node.children(&mut c).any(|ch| ch.kind() == "ERROR")
    };
    if has_error {
        return NodeMatch::error();
    }
    find_match(node).unwrap_or(NodeMatch {
        block_type: BlockType::Code,
        identifier: None,
        first_child: None,
        last_child: None,
        check_child: None,
    })
}

/// Maximum tokens in one module-level span before a new one starts.
const MAX_TOKENS_IN_SPAN: usize = 500;

struct Parser<'s> {
    src: &'s str,
    blocks: Vec<Block>,
    spans: Vec<Span>,
    span_counter: HashMap<String, usize>,
    comments_with_no_span: Vec<BlockId>,
}

/// Parses Python source into the CodeBlock tree.
///
/// The source must be the text the tree was parsed from (tree-sitter byte offsets index
/// into it).
pub fn parse_blocks(source: &str, tree: &tree_sitter::Tree) -> Result<BlockTree, ParseFailure> {
    let mut p = Parser {
        src: source,
        blocks: Vec::new(),
        spans: Vec::new(),
        span_counter: HashMap::new(),
        comments_with_no_span: Vec::new(),
    };
    p.parse_code(tree.root_node(), 0, 0, None, None)?;
    Ok(BlockTree { blocks: p.blocks })
}

impl<'s> Parser<'s> {
    fn slice(&self, start: usize, end: usize) -> &'s str {
        if start >= end || end > self.src.len() {
            return "";
        }
        self.src.get(start..end).unwrap_or("")
    }

    fn full_path(&self, id: BlockId) -> Vec<String> {
        full_path(&self.blocks, id)
    }

    fn get_previous(node: Node<'_>, origin: Node<'_>) -> usize {
        if node == origin {
            return node.start_byte();
        }
        if let Some(prev) = node.prev_sibling() {
            prev.end_byte()
        } else if let Some(parent) = node.parent() {
            Self::get_previous(parent, origin)
        } else {
            node.start_byte()
        }
    }

    fn get_parent_next<'t>(node: Node<'t>, orig: Node<'t>) -> Option<Node<'t>> {
        let mut cur = node;
        loop {
            if cur == orig {
                return None;
            }
            if let Some(next) = cur.next_sibling() {
                return Some(next);
            }
            cur = cur.parent()?;
        }
    }

    /// Parses `node` and its descendants into blocks; returns the node's block, the last
    /// node it consumed (its caller continues after it) and the span in force afterwards.
    #[allow(clippy::type_complexity)]
    fn parse_code<'t>(
        &mut self,
        node: Node<'t>,
        start_byte: usize,
        level: usize,
        parent: Option<BlockId>,
        current_span: Option<usize>,
    ) -> Result<(BlockId, Option<Node<'t>>, Option<usize>), ParseFailure> {
        let m = node_match(node);
        let end_line = node.end_position().row;
        let end_byte = match m.first_child {
            Some(fc) => Self::get_previous(fc, node),
            None => node.end_byte(),
        };
        let block_id = self.blocks.len();
        let mut current_span = current_span;
        if let Some(parent_id) = parent {
            let pre_code = self.slice(start_byte, node.start_byte()).to_string();
            let block = self.child_block(node, &m, pre_code, end_byte, parent_id)?;
            self.blocks.push(block);
            current_span = self.place_in_span(block_id, current_span, node)?;
        } else {
            current_span = None;
            let mut module = Block::new(BlockType::Module, String::new(), String::new(), 0);
            module.start_line = node.start_position().row + 1;
            module.end_line = end_line + 1;
            module.ts_kind = node.kind();
            self.blocks.push(module);
        }

        let (next_node, end_byte, current_span) =
            self.parse_children(node, &m, block_id, end_byte, level, current_span)?;
        if let Some(span) = current_span {
            self.flush_comments_into(span);
        }
        self.post_process(block_id);
        if level == 0 && node.parent().is_none() && node.end_byte() > end_byte {
            self.push_trailing_space(node, block_id, end_byte)?;
        }
        Ok((block_id, next_node, current_span))
    }

    /// The block of a non-module node: its own text, the original's pre-processing
    /// (`__init__` is a constructor; an assignment broken after `=` gets a backslash) and
    /// an identifier unique among its same-type siblings.
    fn child_block(
        &self,
        node: Node<'_>,
        m: &NodeMatch<'_>,
        pre_code: String,
        end_byte: usize,
        parent_id: BlockId,
    ) -> Result<Block, ParseFailure> {
        if !valid_pre_code(&pre_code) {
            return Err(ParseFailure::BadPreCode {
                line: node.start_position().row + 1,
                text: pre_code,
            });
        }
        let code = self.slice(node.start_byte(), end_byte).to_string();
        let tokens = count_tokens(&code);
        let mut block = Block::new(m.block_type, pre_code, code, tokens);
        block.start_line = node.start_position().row + 1;
        block.end_line = node.end_position().row + 1;
        block.parent = Some(parent_id);
        block.ts_kind = node.kind();
        let raw_identifier = m
            .identifier
            .map(|n| self.slice(n.start_byte(), n.end_byte()).to_string());

        if block.kind == BlockType::Function && raw_identifier.as_deref() == Some("__init__") {
            block.kind = BlockType::Constructor;
        }
        if block.kind == BlockType::Assignment
            && block.content_lines[0]
                .trim_matches(py_isspace)
                .ends_with('=')
            && let (Some(check), Some(first)) = (m.check_child, m.first_child)
            && check.start_position().row < first.start_position().row
        {
            block.content_lines[0].push_str(" \\");
        }

        let identifier = match raw_identifier.as_deref() {
            Some(i) if !i.is_empty() => i.to_string(),
            _ => {
                if block.content.is_empty() {
                    return Err(ParseFailure::EmptyBlock {
                        line: block.start_line,
                    });
                }
                let first_line = block.content.split('\n').next().unwrap_or("");
                let stripped: String = first_line
                    .trim_matches(py_isspace)
                    .chars()
                    .take(25)
                    .collect();
                replace_non_word_runs(&stripped)
            }
        };
        let existing: Vec<Option<&str>> = self.blocks[parent_id]
            .children
            .iter()
            .filter(|&&c| self.blocks[c].kind == block.kind)
            .map(|&c| self.blocks[c].identifier.as_deref())
            .collect();
        block.identifier = if existing.contains(&Some(identifier.as_str())) {
            let base = raw_identifier.unwrap_or_else(|| "None".to_string());
            Some(format!("{base}_{}", existing.len()))
        } else {
            Some(identifier)
        };
        Ok(block)
    }

    /// Puts a freshly pushed block into a span (a new one if the span rules say so) and
    /// returns the span in force. A comment inside a multi-block code span waits for the
    /// next span instead, as in the original.
    fn place_in_span(
        &mut self,
        block_id: BlockId,
        current_span: Option<usize>,
        node: Node<'_>,
    ) -> Result<Option<usize>, ParseFailure> {
        let defer = self.blocks[block_id].kind == BlockType::Comment
            && current_span.is_some_and(|s| {
                self.spans[s].span_type != SpanType::Documentation && self.spans[s].block_paths > 1
            });
        if defer {
            self.comments_with_no_span.push(block_id);
            return Ok(current_span);
        }
        let span = match (self.create_new_span(current_span, block_id), current_span) {
            (Some(new_span), _) => {
                self.spans.push(new_span);
                self.spans.len() - 1
            }
            (None, Some(s)) => s,
            // `create_new_span` always makes a span when there is none yet.
            (None, None) => {
                return Err(ParseFailure::NoSpan {
                    line: node.start_position().row + 1,
                });
            }
        };
        self.flush_comments_into(span);
        self.add_to_span(span, block_id);
        Ok(Some(span))
    }

    /// Gives the comments waiting for a span to `span`.
    fn flush_comments_into(&mut self, span: usize) {
        for cb in std::mem::take(&mut self.comments_with_no_span) {
            self.add_to_span(span, cb);
        }
    }

    fn add_to_span(&mut self, span: usize, block: BlockId) {
        self.blocks[block].span_id = Some(self.spans[span].span_id.clone());
        self.spans[span].block_paths += 1;
        self.spans[span].tokens += self.blocks[block].tokens;
    }

    /// Parses the children of `node` (from its match's first child to its last, climbing
    /// out of nested `block` nodes as the original does) under `block_id`. Returns the last
    /// node consumed, the end byte of the text consumed and the span in force.
    #[allow(clippy::type_complexity)]
    fn parse_children<'t>(
        &mut self,
        node: Node<'t>,
        m: &NodeMatch<'t>,
        block_id: BlockId,
        mut end_byte: usize,
        level: usize,
        mut current_span: Option<usize>,
    ) -> Result<(Option<Node<'t>>, usize, Option<usize>), ParseFailure> {
        let mut next_node = m.first_child;
        while let Some(mut nn) = next_node {
            if nn.child_count() > 0
                && nn.kind() == "block"
                && let Some(first) = nn.child(0)
            {
                nn = first;
            }
            let (child_block, child_last, child_span) =
                self.parse_code(nn, end_byte, level + 1, Some(block_id), current_span)?;
            let same = match (current_span, child_span) {
                (Some(a), Some(b)) => self.spans[a].span_id == self.spans[b].span_id,
                _ => false,
            };
            if current_span.is_none() || !same {
                current_span = child_span;
            }
            self.blocks[block_id].children.push(child_block);
            if let Some(cl) = child_last {
                nn = cl;
            }
            end_byte = nn.end_byte();
            if Some(nn) == m.last_child {
                next_node = Some(nn);
                break;
            } else if let Some(sib) = nn.next_sibling() {
                next_node = Some(sib);
            } else {
                let np = Self::get_parent_next(nn, m.check_child.unwrap_or(node));
                next_node = if np == Some(nn) { None } else { np };
            }
        }
        Ok((next_node, end_byte, current_span))
    }

    /// The whitespace after the module's last block becomes a SPACE block.
    fn push_trailing_space(
        &mut self,
        node: Node<'_>,
        module: BlockId,
        end_byte: usize,
    ) -> Result<(), ParseFailure> {
        let end_line = node.end_position().row;
        let pre = self.slice(end_byte, node.end_byte()).to_string();
        if !valid_pre_code(&pre) {
            return Err(ParseFailure::BadPreCode {
                line: end_line + 1,
                text: pre,
            });
        }
        let mut space = Block::new(BlockType::Space, pre, String::new(), 0);
        space.start_line = end_line + 1;
        space.end_line = end_line + 1;
        space.parent = Some(module);
        let id = self.blocks.len();
        self.blocks.push(space);
        self.blocks[module].children.push(id);
        Ok(())
    }

    fn post_process(&mut self, id: BlockId) {
        let b = &self.blocks[id];
        if b.kind == BlockType::Comment && is_outcommented_code(&b.content) {
            self.blocks[id].kind = BlockType::CommentedOutCode;
            return;
        }
        let b = &self.blocks[id];
        if matches!(b.kind, BlockType::Class | BlockType::Function)
            && b.children.len() == 1
            && self.blocks[b.children[0]].kind == BlockType::CommentedOutCode
        {
            self.blocks[id].kind = BlockType::CommentedOutCode;
        }
    }

    /// Nearest ancestor whose type is in the structure group.
    fn structure_parent(&self, id: BlockId) -> Option<BlockId> {
        let mut cur = self.blocks[id].parent;
        while let Some(c) = cur {
            if self.blocks[c].kind.is_structure() {
                return Some(c);
            }
            cur = self.blocks[c].parent;
        }
        None
    }

    fn create_span_id(&mut self, block: BlockId, label: Option<&str>) -> String {
        let structure = if self.blocks[block].kind.is_structure() {
            Some(block)
        } else {
            self.structure_parent(block)
        };
        let path = structure
            .map(|s| self.full_path(s).join("."))
            .unwrap_or_default();
        let mut span_id = match (label, path.is_empty()) {
            (Some(l), false) => format!("{path}:{l}"),
            (Some(l), true) => l.to_string(),
            (None, true) => "impl".to_string(),
            (None, false) => path,
        };
        match self.span_counter.get_mut(&span_id) {
            Some(n) => {
                *n += 1;
                span_id = format!("{span_id}:{n}");
            }
            None => {
                self.span_counter.insert(span_id.clone(), 1);
            }
        }
        span_id
    }

    fn create_new_span(&mut self, current: Option<usize>, block: BlockId) -> Option<Span> {
        let kind = self.blocks[block].kind;
        let parent = self.blocks[block].parent;
        let parent_kind = parent.map(|p| self.blocks[p].kind);
        let cur_block_type = current.map(|s| self.blocks[self.spans[s].initiating_block].kind);

        let (span_type, span_id) = if kind == BlockType::Comment
            && match current {
                None => true,
                Some(s) => {
                    cur_block_type == Some(BlockType::Module)
                        && (self.spans[s].span_type != SpanType::Implementation
                            || self.spans[s].index == 0)
                }
            } {
            (
                SpanType::Documentation,
                self.create_span_id(block, Some("docstring")),
            )
        } else if matches!(kind, BlockType::Class | BlockType::Constructor)
            || current.is_some_and(|s| {
                let sp = &self.spans[s];
                let init_parent = self.blocks[sp.initiating_block].parent;
                matches!(
                    cur_block_type,
                    Some(BlockType::Class | BlockType::Constructor)
                ) && self.parents_differ(init_parent, parent)
                    && sp.span_type != SpanType::Implementation
                    && kind != BlockType::Function
            })
        {
            (SpanType::Initiation, self.create_span_id(block, None))
        } else if kind == BlockType::Import
            && (current.is_none() || cur_block_type == Some(BlockType::Module))
        {
            (
                SpanType::Initiation,
                self.create_span_id(block, Some("imports")),
            )
        } else {
            (SpanType::Implementation, self.create_span_id(block, None))
        };

        let Some(cur) = current else {
            let (initiating_block, parent_block_path) = if kind.is_structure() {
                (block, self.full_path(block))
            } else {
                let p = parent.unwrap_or(BlockTree::ROOT);
                (p, self.full_path(p))
            };
            return Some(Span::new(
                span_id,
                span_type,
                initiating_block,
                parent_block_path,
                0,
            ));
        };

        let parent_path = parent.map(|p| self.full_path(p)).unwrap_or_default();
        if kind.is_structure()
            && matches!(parent_kind, Some(BlockType::Module | BlockType::Class))
            && self.spans[cur].parent_block_path == parent_path
        {
            return Some(Span::new(
                span_id,
                span_type,
                block,
                self.full_path(block),
                0,
            ));
        }

        if self.spans[cur].parent_block_path.len() > parent_path.len() {
            let parent_block_path = if kind.is_structure() {
                self.full_path(block)
            } else {
                parent_path
            };
            return Some(Span::new(span_id, span_type, block, parent_block_path, 0));
        }

        // sum_tokens() of a block whose children are not parsed yet is its own count.
        if self.spans[cur].tokens + self.blocks[block].tokens > MAX_TOKENS_IN_SPAN
            && parent_kind == Some(BlockType::Module)
        {
            let sp = &self.spans[cur];
            return Some(Span::new(
                span_id,
                span_type,
                sp.initiating_block,
                sp.parent_block_path.clone(),
                sp.index + 1,
            ));
        }
        None
    }

    /// `a != b` for two optional blocks, with the original's equality (same full path).
    fn parents_differ(&self, a: Option<BlockId>, b: Option<BlockId>) -> bool {
        match (a, b) {
            (Some(x), Some(y)) => self.full_path(x) != self.full_path(y),
            (None, None) => false,
            _ => true,
        }
    }
}
