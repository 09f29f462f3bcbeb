//! Tests of the TypeScript/JavaScript, Java, Go and Rust scopes.

use std::fs;

use crate::index::{FileFilter, RepoIndex};
use crate::model::{Embedder, write_tiny_model};
use crate::scope::{Implementation, Scope, implementation};

/// A polyglot repository indexed with the tiny test model; the directories must
/// outlive the index.
fn fixture() -> (Vec<tempfile::TempDir>, RepoIndex) {
    let model = tempfile::tempdir().unwrap();
    write_tiny_model(model.path(), 5).unwrap();
    let e = Embedder::load(model.path()).unwrap();
    let repo = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = repo.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    w(
        "src/client.ts",
        "import { parseResponse } from './http';\n\n\
export class Client {\n  private base = '';\n\n\
  send(url: string): string {\n    return parseResponse(this.retry(url));\n  }\n\n\
  retry(url: string): string {\n    return url;\n  }\n}\n\n\
export function lonely(): number {\n  return 1;\n}\n",
    );
    w(
        "src/http.ts",
        "export function parseResponse(s: string): string {\n  return s;\n}\n",
    );
    w(
        "lib/other.ts",
        "export function parseResponse(s: string): string {\n  return s + '!';\n}\n",
    );
    w(
        "stack/stack.go",
        "package stack\n\ntype Stack struct {\n\titems []int\n}\n\n\
func (s *Stack) empty() bool {\n\treturn len(s.items) == 0\n}\n",
    );
    w(
        "stack/ops.go",
        "package stack\n\nfunc (s *Stack) Pop() int {\n\tif s.empty() {\n\t\treturn New().Len()\n\t}\n\treturn 0\n}\n\n\
func New() *Stack {\n\treturn &Stack{}\n}\n",
    );
    w(
        "src/wrapper.rs",
        "pub struct Wrapper {\n    inner: u32,\n}\n\n\
impl std::fmt::Display for Wrapper {\n    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {\n        write!(f, \"{}\", helper(self.inner))\n    }\n}\n\n\
fn helper(x: u32) -> u32 {\n    x\n}\n",
    );
    // A Python function of the same name must not be found from TypeScript.
    w("py/http.py", "def parseResponse(s):\n    return s\n");
    let store = tempfile::tempdir().unwrap();
    let (idx, _) = RepoIndex::build(repo.path(), &FileFilter::default(), &e, store.path()).unwrap();
    (vec![model, repo, store], idx)
}

fn related(imp: &Implementation) -> Vec<(String, &'static str)> {
    imp.related
        .iter()
        .map(|(c, why)| {
            (
                format!("{}:{}", c.file, c.name.as_deref().unwrap_or("")),
                *why,
            )
        })
        .collect()
}

fn pair(s: &str, why: &'static str) -> (String, &'static str) {
    (s.to_string(), why)
}

#[test]
fn typescript_method_scopes() {
    let (_d, idx) = fixture();
    let r = implementation(&idx, "Client.send", Scope::Minimal).unwrap();
    assert_eq!(r.len(), 1);
    assert!(r[0].related.is_empty() && !r[0].fell_back);
    assert!(r[0].entity.content.starts_with("export class Client {\n"));

    let r = implementation(&idx, "Client.send", Scope::Logical).unwrap();
    assert_eq!(
        related(&r[0]),
        [pair("src/client.ts:Client", "type context")]
    );

    let r = implementation(&idx, "src/client.ts:Client.send", Scope::Dependencies).unwrap();
    assert_eq!(
        related(&r[0]),
        [
            pair("src/client.ts:Client", "type context"),
            pair("src/http.ts:parseResponse", "imported"),
            pair("lib/other.ts:parseResponse", "referenced"),
            pair("src/client.ts:Client.retry", "same-type method"),
        ]
    );
    let r = implementation(&idx, "lonely", Scope::Dependencies).unwrap();
    assert!(r[0].fell_back && r[0].related.is_empty());
}

#[test]
fn go_method_scopes_reach_the_receiver_type_in_another_file() {
    let (_d, idx) = fixture();
    let r = implementation(&idx, "Stack.Pop", Scope::Logical).unwrap();
    assert_eq!(r[0].entity.file, "stack/ops.go");
    assert_eq!(
        related(&r[0]),
        [pair("stack/stack.go:Stack", "type context")]
    );
    let r = implementation(&idx, "Stack.Pop", Scope::Dependencies).unwrap();
    assert_eq!(
        related(&r[0]),
        [
            pair("stack/stack.go:Stack", "type context"),
            pair("stack/stack.go:Stack.empty", "same-type method"),
            pair("stack/ops.go:New", "referenced"),
        ]
    );
}

#[test]
fn rust_impl_method_scopes() {
    let (_d, idx) = fixture();
    let r = implementation(&idx, "Wrapper.fmt", Scope::Logical).unwrap();
    let got = related(&r[0]);
    // The struct and the `impl` block the method sits in.
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got.iter()
            .all(|(n, why)| n == "src/wrapper.rs:Wrapper" && *why == "type context")
    );
    let r = implementation(&idx, "Wrapper.fmt", Scope::Dependencies).unwrap();
    assert!(
        related(&r[0]).contains(&pair("src/wrapper.rs:helper", "referenced")),
        "{:?}",
        related(&r[0])
    );
    // A type's logical scope: its other chunks of the same name.
    let r = implementation(&idx, "Wrapper", Scope::Logical).unwrap();
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|imp| imp.related.len() == 1));
}
