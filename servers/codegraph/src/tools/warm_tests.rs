//! A server whose cache already holds an earlier commit of the repository (parse
//! results, chunks and their terms) answers exactly as one that starts from nothing:
//! the same graph and the same `search_code` results, on the next commit's checkout
//! with edits, a rename, a deletion and a class moved to another module. The trees
//! are real git checkouts of commits made in the test, one directory per commit, as
//! a benchmark run makes them.

use std::fs;
use std::path::Path;

use super::*;
use crate::test_git::{checkout, commit};

const MODELS: &str = "\
import math

class Shape:
    '''A shape with an area.'''
    def area(self):
        raise NotImplementedError

class Circle(Shape):
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return math.pi * self.radius ** 2
";

const UTILS: &str = "\
def total_area(shapes):
    '''Sum of the areas of the shapes.'''
    return sum(s.area() for s in shapes)

def describe(shape):
    return f'{type(shape).__name__} with area {shape.area():.2f}'
";

const OLD: &str = "def legacy_scale(x, factor):\n    return x * factor\n";

const MAIN_V1: &str = "\
from geo.models import Circle
from geo.utils import total_area, describe

def run():
    shapes = [Circle(1), Circle(2)]
    print(describe(shapes[0]))
    return total_area(shapes)
";

const MAIN_V2: &str = "\
from geo.shapes.square import Square
from geo.models import Circle
from geo.helpers import total_area, describe

def run(scale=1):
    shapes = [Circle(1 * scale), Square(2 * scale)]
    print(describe(shapes[0]))
    return total_area(shapes)
";

const MODELS_V2: &str = "\
import math

class Shape:
    '''A shape with an area.'''
    def area(self):
        raise NotImplementedError

class Circle(Shape):
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        # The area of a disc of this radius.
        return math.pi * self.radius * self.radius
";

const SQUARE: &str = "\
from geo.models import Shape

class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side
";

/// Everything a tool user sees of a repository: the graph tables and the answers to
/// a set of `search_code` calls (text and structured data).
fn answers(tools: &CodegraphTools) -> String {
    let repo = tools.repo().expect("initialized");
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    crate::export::write_nodes(repo.graph.graph(), &mut nodes).expect("nodes");
    crate::export::write_edges(repo.graph.graph(), &mut edges).expect("edges");
    let mut out =
        String::from_utf8(nodes).expect("utf8") + &String::from_utf8(edges).expect("utf8");
    let queries: [(&[&str], Option<&str>); 5] = [
        (&["area of the shapes"], None),
        (&["radius", "scale"], None),
        (&["Circle.area"], None),
        (&["describe shape name", "legacy factor"], Some("geo/*")),
        (&["side square area"], None),
    ];
    for (query, pattern) in queries {
        let args = SearchCodeArgs {
            query: query.iter().map(|q| q.to_string()).collect(),
            top_k: Some(10),
            file_pattern: pattern.map(str::to_string),
        };
        let result = tools.search_code(&args).expect("search_code");
        out += &result.text;
        out += &serde_json::to_string(&result.data).expect("json");
        out.push('\n');
    }
    out
}

fn init(tools: &CodegraphTools, root: &str) -> InitOutput {
    tools
        .init_repository(&InitRepositoryArgs {
            repo_path: root.to_string(),
            force_rebuild: None,
        })
        .expect("init_repository")
        .data
}

/// Entries in the chunk store.
fn stored_chunks(cache: &Path) -> usize {
    let dir = cache.join("chunks");
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|shard| fs::read_dir(shard.path()).into_iter().flatten().count())
        .sum()
}

#[test]
fn a_warm_cache_gives_the_answers_of_a_fresh_build() {
    let work = tempfile::tempdir().expect("tempdir");
    let origin = work.path().join("origin");
    let repo = git2::Repository::init(&origin).expect("init");
    let first = commit(
        &repo,
        &[
            ("geo/__init__.py", ""),
            ("geo/models.py", MODELS),
            ("geo/utils.py", UTILS),
            ("geo/old.py", OLD),
            ("main.py", MAIN_V1),
        ],
        "first",
    );
    // Edits (models, main), a rename (utils → helpers), a deletion (old) and a class
    // in a new module of a new package (square).
    let second = commit(
        &repo,
        &[
            ("geo/__init__.py", ""),
            ("geo/models.py", MODELS_V2),
            ("geo/helpers.py", UTILS),
            ("geo/shapes/__init__.py", ""),
            ("geo/shapes/square.py", SQUARE),
            ("main.py", MAIN_V2),
        ],
        "second",
    );
    let tree1 = checkout(&origin, first, &work.path().join("tree1"));
    let tree2 = checkout(&origin, second, &work.path().join("tree2"));

    let cold_cache = work.path().join("cold");
    let cold = CodegraphTools::new(cold_cache.clone(), Limits::default());
    assert_eq!(init(&cold, &tree2).content_index, "built");
    let expected = answers(&cold);
    assert!(
        expected.contains("geo/shapes/square.py:Square"),
        "{expected}"
    );

    let warm_cache = work.path().join("warm");
    let warm = CodegraphTools::new(warm_cache.clone(), Limits::default());
    init(&warm, &tree1);
    let after_first = stored_chunks(&warm_cache);
    assert!(after_first >= 4, "every corpus file of tree1 is stored");
    // A new server process on the same cache, as a benchmark starts one per instance.
    let warm = CodegraphTools::new(warm_cache.clone(), Limits::default());
    let out = init(&warm, &tree2);
    assert_eq!(
        (out.cache.as_str(), out.content_index.as_str()),
        ("miss", "built")
    );
    assert_eq!(answers(&warm), expected);
    // Only the edited, renamed and new files were chunked again.
    let added = stored_chunks(&warm_cache) - after_first;
    assert_eq!(added, 5, "models, helpers, shapes/__init__, square, main");
    // The same tree again: graph and content index from the cache, same answers.
    let out = init(&warm, &tree2);
    assert_eq!(
        (out.cache.as_str(), out.content_index.as_str()),
        ("hit", "cached")
    );
    assert_eq!(answers(&warm), expected);
}
