//! Tests of the codegraph policy's pure steps.

use super::*;

const SHARES: (f64, f64) = (NEIGHBOUR.default, LINK.default);

fn scores(items: &[(&str, f64)]) -> Scores {
    let mut s = Scores::default();
    for (id, v) in items {
        s.add(id, *v);
    }
    s
}

#[test]
fn linked_candidates_confirm_each_other_and_neighbours_share() {
    // A failing function found by a traceback, its caller found by name, and one
    // callee the issue never mentions.
    let s = scores(&[
        ("seaborn/_oldcore.py:HueMapping._lookup_single", 2.0),
        ("seaborn/_oldcore.py:HueMapping.__call__", 1.0),
    ]);
    let roots = vec!["seaborn/_oldcore.py:HueMapping._lookup_single".to_string()];
    let edges = vec![
        (
            "seaborn/_oldcore.py:HueMapping.__call__".to_string(),
            "seaborn/_oldcore.py:HueMapping._lookup_single".to_string(),
        ),
        (
            "seaborn/_oldcore.py:HueMapping._lookup_single".to_string(),
            "seaborn/utils.py:_normalize".to_string(),
        ),
        (
            "seaborn/_oldcore.py:HueMapping._lookup_single".to_string(),
            "tests/test_core.py:helper".to_string(),
        ),
    ];
    let g = graph_gains(&s, &roots, &edges, SHARES);
    // The one callee that is not a test takes the whole downstream share.
    assert_eq!(
        g,
        vec![
            (
                "seaborn/utils.py:_normalize".to_string(),
                NEIGHBOUR.default * 2.0
            ),
            (roots[0].clone(), LINK.default * 1.0),
            (
                "seaborn/_oldcore.py:HueMapping.__call__".to_string(),
                LINK.default * 2.0
            ),
        ]
    );
    assert!(graph_gains(&s, &roots, &[], SHARES).is_empty());
}

#[test]
fn a_link_between_two_roots_counts_once() {
    let s = scores(&[("a.py:f", 1.0), ("a.py:g", 1.0)]);
    let roots = vec!["a.py:f".to_string(), "a.py:g".to_string()];
    let edges = vec![("a.py:f".to_string(), "a.py:g".to_string())];
    assert_eq!(graph_gains(&s, &roots, &edges, SHARES).len(), 2);
}

#[test]
fn get_code_text_splits_per_entity() {
    let text = "##Searching for entity `src/flask/config.py:Config.from_file`...\n### Search Result:\ndef from_file(self): ...\n\n##Searching for entity `nope`...\n### Search Result:\nInvalid name.";
    let parts = split_code(text);
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0].0, "src/flask/config.py:Config.from_file");
    assert!(parts[0].1.contains("def from_file"));
    assert_eq!(parts[1].0, "nope");
    assert!(split_code("no sections").is_empty());
}
