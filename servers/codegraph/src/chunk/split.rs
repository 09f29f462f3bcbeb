//! EpicSplitter: groups a file's CodeBlocks into chunks of bounded token size and renders
//! each chunk as text (its blocks plus the header lines of their ancestors).

use std::collections::HashMap;

use super::ChunkConfig;
use super::blocks::{BlockId, BlockTree};
use super::matcher::BlockType;

/// A chunk as a list of blocks (in the order they were gathered).
pub type BlockChunk = Vec<BlockId>;

fn is_split_type(t: BlockType) -> bool {
    // FUNCTION, CLASS, TEST_SUITE, TEST_CASE, MODULE (not CONSTRUCTOR).
    matches!(
        t,
        BlockType::Function | BlockType::Class | BlockType::Module
    )
}

fn chunk_tokens(tree: &BlockTree, chunk: &[BlockId]) -> usize {
    chunk.iter().map(|&b| tree.blocks[b].tokens).sum()
}

fn ignore_comment(content: &str) -> bool {
    if content.is_empty() {
        return true;
    }
    let lower = content.to_lowercase();
    ["copyright", "license", "author"]
        .iter()
        .any(|w| lower.contains(w))
}

/// `_chunk_contents`: the chunks of a whole file (empty when the file is skipped).
pub fn chunk_contents(tree: &BlockTree, cfg: &ChunkConfig) -> Vec<BlockChunk> {
    let root = BlockTree::ROOT;
    let tokens = tree.sum_tokens(root);
    if tokens == 0 {
        return Vec::new();
    }
    if tree.blocks.iter().any(|b| b.kind == BlockType::Error) {
        return Vec::new();
    }
    if tokens > cfg.hard_token_limit
        && let Some(&first) = tree.blocks[root].children.first()
    {
        let b = &tree.blocks[first];
        if b.kind == BlockType::Comment && b.content.to_lowercase().contains("generated") {
            return Vec::new();
        }
    }
    if tokens < cfg.min_chunk_size {
        let mut all = vec![root];
        all.extend(tree.descendants(root));
        return vec![all];
    }
    chunk_block(tree, root, cfg)
}

fn chunk_block(tree: &BlockTree, id: BlockId, cfg: &ChunkConfig) -> Vec<BlockChunk> {
    let block = &tree.blocks[id];
    let mut chunks: Vec<BlockChunk> = Vec::new();
    let mut current: BlockChunk = Vec::new();
    let mut comment_chunk: BlockChunk = Vec::new();
    let parent_tokens = block.tokens + block.parent.map_or(0, |p| tree.blocks[p].tokens);
    let mut ignoring_comment = false;

    for &child in &block.children {
        let c = &tree.blocks[child];
        if c.kind == BlockType::Comment {
            if ignore_comment(&c.content) || ignoring_comment {
                ignoring_comment = true;
                continue;
            } else if block.parent.is_none() {
                comment_chunk.push(child);
                continue;
            }
        } else {
            if c.tokens > cfg.max_chunk_size {
                continue;
            }
            ignoring_comment = false;
        }

        let child_sum = tree.sum_tokens(child);
        if (is_split_type(c.kind) && child_sum > cfg.min_chunk_size)
            || parent_tokens + child_sum > cfg.max_chunk_size
        {
            if !current.is_empty() {
                chunks.push(std::mem::take(&mut current));
            }
            current.append(&mut comment_chunk);
            current.push(child);
            let child_chunks = chunk_block(tree, child, cfg);
            if let Some(first) = child_chunks.first() {
                if parent_tokens + c.tokens + chunk_tokens(tree, first) < cfg.max_chunk_size {
                    current.extend_from_slice(first);
                    chunks.push(std::mem::take(&mut current));
                    chunks.extend(child_chunks.into_iter().skip(1));
                } else {
                    chunks.push(std::mem::take(&mut current));
                    chunks.extend(child_chunks);
                }
            }
            continue;
        }

        let new_count = parent_tokens + chunk_tokens(tree, &current) + child_sum;
        if (!is_split_type(block.kind) && new_count < cfg.max_chunk_size)
            || new_count < cfg.chunk_size
        {
            current.append(&mut comment_chunk);
            current.push(child);
        } else {
            if !current.is_empty() {
                current.append(&mut comment_chunk);
                chunks.push(std::mem::take(&mut current));
            }
            current = vec![child];
        }
        comment_chunk.clear();
        current.extend(tree.descendants(child));
    }

    if !chunks.is_empty() && chunk_tokens(tree, &current) < cfg.min_chunk_size {
        if let Some(last) = chunks.last_mut() {
            last.extend(current);
        }
    } else {
        chunks.push(current);
    }
    merge_chunks(tree, chunks, cfg)
}

fn merge_chunks(
    tree: &BlockTree,
    mut chunks: Vec<BlockChunk>,
    cfg: &ChunkConfig,
) -> Vec<BlockChunk> {
    let tok = |c: &[BlockId]| chunk_tokens(tree, c);
    loop {
        let mut merged: Vec<BlockChunk> = Vec::new();
        let mut should_continue = false;
        let n = chunks.len();
        for i in 0..n {
            let chunk = chunks[i].clone();
            let ct = tok(&chunk);
            if ct < cfg.min_chunk_size || n > cfg.max_chunks {
                if i == 0 && n > 1 {
                    if tok(&chunks[1]) + ct <= cfg.hard_token_limit {
                        let mut joined = chunk;
                        joined.extend_from_slice(&chunks[1]);
                        chunks[1] = joined;
                        should_continue = true;
                    } else {
                        merged.push(chunk);
                    }
                } else if i == n - 1 || tok(&chunks[i - 1]) < tok(&chunks[i + 1]) {
                    // The last chunk, or a middle one whose left neighbour is smaller:
                    // join it to the previous merged chunk if that fits.
                    match merged.last_mut() {
                        Some(last) if tok(last) + ct <= cfg.hard_token_limit => {
                            last.extend(chunk);
                            should_continue = true;
                        }
                        _ => merged.push(chunk),
                    }
                } else if tok(&chunks[i + 1]) + ct <= cfg.hard_token_limit {
                    let mut joined = chunk;
                    joined.extend_from_slice(&chunks[i + 1]);
                    chunks[i + 1] = joined;
                    should_continue = true;
                } else {
                    merged.push(chunk);
                }
            } else {
                merged.push(chunk);
            }
        }
        chunks = merged;
        if chunks.len() < cfg.max_chunks || !should_continue {
            break;
        }
    }
    chunks
}

/// The original's `PathTree`: which block paths a chunk shows.
#[derive(Debug, Default)]
struct PathTree {
    show: bool,
    tree: HashMap<String, PathTree>,
}

impl PathTree {
    fn add(&mut self, path: &[String]) {
        match path {
            [] => self.show = true,
            [only] => self.tree.entry(only.clone()).or_default().show = true,
            [head, rest @ ..] => self.tree.entry(head.clone()).or_default().add(rest),
        }
    }
}

/// Renders a chunk: its blocks with their original whitespace, plus the headers of their
/// ancestors, with `# ... other code` where a function-level parent has hidden children.
/// Leading and trailing newlines are stripped.
pub fn render_chunk(tree: &BlockTree, chunk: &[BlockId]) -> String {
    let mut pt = PathTree::default();
    for &b in chunk {
        pt.add(&tree.full_path(b));
    }
    let mut out = String::new();
    render(tree, BlockTree::ROOT, &pt, &mut out);
    out.trim_matches('\n').to_string()
}

fn render_own(tree: &BlockTree, id: BlockId, out: &mut String) {
    let b = &tree.blocks[id];
    if b.pre_lines > 0 {
        for _ in 1..b.pre_lines {
            out.push('\n');
        }
        for (i, line) in b.content_lines.iter().enumerate() {
            if i == 0 && !line.is_empty() {
                out.push('\n');
                out.push_str(&b.indentation);
                out.push_str(line);
            } else if !line.is_empty() {
                out.push('\n');
                out.push_str(line);
            } else {
                out.push('\n');
            }
        }
    } else {
        out.push_str(&b.pre_code);
        out.push_str(&b.content);
    }
}

fn commented_out(tree: &BlockTree, child: BlockId, out: &mut String) {
    out.push('\n');
    out.push_str(&tree.blocks[child].indentation);
    out.push_str("# ... other code");
}

fn render(tree: &BlockTree, id: BlockId, pt: &PathTree, out: &mut String) {
    render_own(tree, id, out);
    let b = &tree.blocks[id];
    let keeps_siblings = matches!(b.kind, BlockType::Class | BlockType::Module);
    let mut has_outcommented = false;
    for &child in &b.children {
        let c = &tree.blocks[child];
        let child_tree = c.identifier.as_ref().and_then(|i| pt.tree.get(i));
        match child_tree {
            Some(ct) if ct.show => {
                if has_outcommented && !c.kind.is_comment_group() && !keeps_siblings {
                    commented_out(tree, child, out);
                }
                render(tree, child, ct, out);
                has_outcommented = false;
            }
            Some(ct) => {
                render(tree, child, ct, out);
                has_outcommented = false;
            }
            None => {
                if !c.kind.is_comment_group() {
                    has_outcommented = true;
                }
            }
        }
    }
    if has_outcommented
        && !keeps_siblings
        && let Some(&last) = b.children.last()
    {
        commented_out(tree, last, out);
    }
}
