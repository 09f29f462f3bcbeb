//! Shared helpers of the codegraph benches: the trees to measure and realistic queries.
//!
//! Trees: the embedded mini repository (`datasets/mini/repo`), and a larger one — the
//! directory in `NAVBENCH_BENCH_TREE` when set (e.g. a SWE-bench checkout), otherwise a
//! synthetic Python package generated into a temporary directory at bench time.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use navbench_codegraph::graph::{CodeGraph, NodeIndex, NodeKind};
use navbench_codegraph::traverse::is_test_file;

/// A tree to measure: a label for the bench ids and its root (the temporary directory,
/// if generated, lives as long as this value).
pub struct BenchTree {
    pub label: String,
    pub root: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

/// The mini repository shipped in `datasets/mini/repo`.
pub fn mini() -> BenchTree {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/mini/repo");
    BenchTree {
        label: "mini".into(),
        root,
        _tmp: None,
    }
}

/// `NAVBENCH_BENCH_TREE` if set, else a synthetic tree of [`SYNTHETIC_MODULES`] modules.
pub fn large() -> BenchTree {
    if let Some(dir) = std::env::var_os("NAVBENCH_BENCH_TREE") {
        let root = PathBuf::from(dir);
        let label = root
            .file_name()
            .map_or_else(|| "tree".to_string(), |n| n.to_string_lossy().into_owned());
        return BenchTree {
            label,
            root,
            _tmp: None,
        };
    }
    let tmp = tempfile::tempdir().expect("create a temporary directory for the synthetic tree");
    write_synthetic(tmp.path(), SYNTHETIC_MODULES).expect("write the synthetic tree");
    BenchTree {
        label: format!("synthetic{SYNTHETIC_MODULES}"),
        root: tmp.path().to_path_buf(),
        _tmp: Some(tmp),
    }
}

/// Both trees, mini first.
pub fn trees() -> Vec<BenchTree> {
    vec![mini(), large()]
}

/// Modules of the synthetic tree.
pub const SYNTHETIC_MODULES: usize = 300;

/// Writes a deterministic synthetic Python package: `n` modules in 10 subpackages,
/// each with imports of three other modules, two classes (one inheriting from an
/// imported class) with methods calling each other and imported functions, and
/// module-level functions; plus a few test files.
pub fn write_synthetic(root: &Path, n: usize) -> std::io::Result<()> {
    let pkgs = 10;
    let module = |i: usize| (format!("pkg{}", i % pkgs), format!("mod{i}"));
    std::fs::create_dir_all(root.join("synth"))?;
    std::fs::write(
        root.join("synth/__init__.py"),
        "\"\"\"Synthetic package.\"\"\"\n",
    )?;
    for p in 0..pkgs {
        let dir = root.join(format!("synth/pkg{p}"));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("__init__.py"), format!("from .mod{p} import *\n"))?;
    }
    for i in 0..n {
        let deps = [(i * 7 + 1) % n, (i * 13 + 5) % n, (i * 31 + 11) % n];
        let mut s = format!(
            "\"\"\"Module {i}: widgets, gadgets and helpers.\"\"\"\n\nimport os\nimport re\n"
        );
        for &d in &deps {
            let (p, m) = module(d);
            let _ = writeln!(s, "from synth.{p}.{m} import Widget{d}, helper_{d}_0");
        }
        let (_, base) = module(deps[0]);
        let _ = writeln!(
            s,
            "from synth.{}.{base} import Gadget{}\n",
            module(deps[0]).0,
            deps[0]
        );
        let _ = writeln!(s, "RATE_{i} = {}\n", i % 17);
        for f in 0..3 {
            let _ = writeln!(
                s,
                "def helper_{i}_{f}(value, scale=1):\n    \"\"\"Scale a value for module {i}.\"\"\"\n    if value is None:\n        raise ValueError('missing value in helper_{i}_{f}')\n    result = value * scale + RATE_{i}\n    for k in range({f} + 2):\n        result = result + k\n    return helper_{i}_{}(result) if {f} < 2 else os.path.join(str(result), 'x')\n",
                (f + 1) % 3
            );
        }
        let _ = writeln!(
            s,
            "class Widget{i}:\n    \"\"\"A widget with a name and a size.\"\"\"\n\n    def __init__(self, name, size=0):\n        self.name = name\n        self.size = size\n        self.cache = {{}}\n"
        );
        for m in 0..4 {
            let d = deps[m % 3];
            let _ = writeln!(
                s,
                "    def method_{m}(self, other):\n        \"\"\"Combine with another widget ({m}).\"\"\"\n        if not re.match(r'^w', self.name):\n            self.size += helper_{d}_0(other.size)\n        part = Widget{d}(self.name, self.size)\n        return self.method_{}(part) if {m} < 3 else part\n",
                (m + 1) % 4
            );
        }
        let _ = writeln!(
            s,
            "class Gadget{i}(Gadget{}):\n    \"\"\"A gadget built from widgets.\"\"\"\n\n    def build(self, count):\n        parts = [Widget{i}('w%d' % k, k) for k in range(count)]\n        return [p.method_0(p) for p in parts]\n\n    def validate(self):\n        return helper_{i}_1(len(self.build(3)))\n",
            deps[0]
        );
        let (p, m) = module(i);
        std::fs::write(root.join(format!("synth/{p}/{m}.py")), s)?;
    }
    std::fs::create_dir_all(root.join("tests"))?;
    for t in 0..10 {
        let (p, m) = module(t);
        std::fs::write(
            root.join(format!("tests/test_mod{t}.py")),
            format!(
                "from synth.{p}.{m} import Widget{t}\n\ndef test_widget_{t}():\n    assert Widget{t}('w', 1).method_3(Widget{t}('v')) is not None\n"
            ),
        )?;
    }
    Ok(())
}

/// Realistic content queries: SWE-bench-like issue texts and identifier lists.
pub const QUERIES: &[&str] = &[
    "Money.allocate() can hand out more than the original amount: the parts should always add up exactly to the original",
    "Tax is sometimes one cent lower than our accounting system computes; rounding of line tax",
    "PricingError quote total is negative when a gift voucher is worth more than the cart",
    "ValueError missing value in helper when scale is None",
    "Widget method combine with another widget returns wrong size",
    "session redirect loses the Authorization header on a cross-host redirect",
    "config from_file silently ignores a missing file; raise FileNotFoundError",
    "inventory reserve stock race condition when two orders reserve the last item",
    "def __init__(self, name, size=0)",
    "json encoder fails on Decimal values in the API response",
];

/// Realistic entity-name queries.
pub const ENTITY_QUERIES: &[&str] = &[
    "Money",
    "allocate",
    "quote total",
    "Widget3.method_1",
    "helper",
    "parse config",
    "Gadget",
    "storage.py",
];

/// Up to `n` non-test class and function nodes spread evenly over the graph: start
/// entities for the traversal benches.
pub fn sample_entities(graph: &CodeGraph, n: usize) -> Vec<NodeIndex> {
    let all: Vec<NodeIndex> = graph
        .node_indices()
        .filter(|&ix| {
            let node = graph.node(ix);
            matches!(node.kind, NodeKind::Class | NodeKind::Function) && !is_test_file(&node.id)
        })
        .collect();
    if all.is_empty() {
        return Vec::new();
    }
    let step = (all.len() / n.max(1)).max(1);
    all.into_iter().step_by(step).take(n).collect()
}
