//! The tools on a tree of TS/JS, Java, Go and Rust files (its one Python file is under
//! 10% of them, so the default `auto` languages leave it out): `search_code` finds
//! their chunks and entities, `get_code` shows an entity's code, `explore_tree` walks
//! their contains and dependency edges.

use super::*;

/// A tools instance initialized on the builder's polyglot fixture tree.
fn initialized() -> (tempfile::TempDir, tempfile::TempDir, CodegraphTools) {
    let tree = tempfile::tempdir().expect("tempdir");
    crate::builder::polyglot::tests::write_tree(tree.path());
    let cache = tempfile::tempdir().expect("tempdir");
    let tools = CodegraphTools::new(cache.path().to_path_buf(), Limits::default());
    let root = tree.path().canonicalize().expect("canonical");
    tools
        .init_repository(&InitRepositoryArgs {
            repo_path: root.to_string_lossy().into_owned(),
            force_rebuild: None,
        })
        .expect("init_repository");
    (tree, cache, tools)
}

#[test]
fn search_code_finds_chunks_and_entities_of_other_languages() {
    let (_t, _c, tools) = initialized();
    let result = tools
        .search_code(&SearchCodeArgs {
            query: vec!["Circle".to_string()],
            top_k: Some(5),
            file_pattern: None,
        })
        .expect("search_code");
    assert!(result.text.contains("rs/src/shape.rs"), "{}", result.text);
    assert!(result.data.content_search);
    let result = tools
        .search_code(&SearchCodeArgs {
            query: vec!["stack push items".to_string()],
            top_k: Some(5),
            file_pattern: Some("pkg/*".to_string()),
        })
        .expect("search_code");
    assert!(
        result.text.contains("pkg/stack/stack.go"),
        "{}",
        result.text
    );
}

#[test]
fn get_code_and_explore_tree_on_other_languages() {
    let (_t, _c, tools) = initialized();
    let code = tools
        .get_code(&GetCodeArgs {
            entities: vec![
                "web/src/app.tsx:App.render".to_string(),
                "java/src/main/java/com/ex/app/Impl.java:Impl".to_string(),
            ],
        })
        .expect("get_code");
    assert!(code.text.contains("this.draw();"), "{}", code.text);
    assert!(
        code.text.contains("public class Impl extends Base"),
        "{}",
        code.text
    );

    let tree = tools
        .explore_tree(&ExploreTreeArgs {
            path: Some("rs/src/lib.rs:area".to_string()),
            depth: Some(1),
            direction: Some("downstream".to_string()),
            entity_types: None,
            dependency_types: Some(vec!["invokes".to_string()]),
        })
        .expect("explore_tree");
    assert!(
        tree.text.contains("rs/src/shape.rs:Circle.new"),
        "{}",
        tree.text
    );

    let tree = tools
        .explore_tree(&ExploreTreeArgs {
            path: Some("pkg".to_string()),
            depth: Some(-1),
            direction: None,
            entity_types: None,
            dependency_types: Some(vec!["contains".to_string()]),
        })
        .expect("explore_tree");
    assert!(tree.text.contains("Stack.Push"), "{}", tree.text);
}
