//! Tree materialization on repositories built here: submodules, partial mirrors,
//! diff-based reuse against a fresh write, tampered trees.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

/// One entry of a test commit: a blob with its content, or a gitlink.
enum Spec<'a> {
    File(&'a str, &'a str),
    Exec(&'a str, &'a str),
    Link(&'a str, &'a str),
    Gitlink(&'a str),
}

/// Commits the entries (as a whole new tree) on top of `parent` in `repo`.
fn commit(repo: &git2::Repository, parent: Option<git2::Oid>, specs: &[Spec]) -> git2::Oid {
    let mut index = git2::Index::new().unwrap();
    let gitlink_target = git2::Oid::from_str("1234567890123456789012345678901234567890").unwrap();
    for s in specs {
        let (path, mode, data): (&str, u32, Option<&[u8]>) = match s {
            Spec::File(p, c) => (p, 0o100644, Some(c.as_bytes())),
            Spec::Exec(p, c) => (p, 0o100755, Some(c.as_bytes())),
            Spec::Link(p, t) => (p, 0o120000, Some(t.as_bytes())),
            Spec::Gitlink(p) => (p, 0o160000, None),
        };
        let id = match data {
            Some(d) => repo.blob(d).unwrap(),
            None => gitlink_target,
        };
        let size = data.map_or(0, <[u8]>::len);
        let entry = super::commit::index_entry(path, mode, id, size);
        index.add(&entry).unwrap();
    }
    let tree = repo.find_tree(index.write_tree_to(repo).unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@t").unwrap();
    let parents: Vec<git2::Commit> = parent
        .map(|p| repo.find_commit(p).unwrap())
        .into_iter()
        .collect();
    let refs: Vec<&git2::Commit> = parents.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &refs)
        .unwrap()
}

/// Everything under `dir`: path → what it is (kind, mode, content or target).
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for item in std::fs::read_dir(dir).unwrap() {
            let path = item.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("link {}", target.display()));
            } else if meta.is_dir() {
                out.insert(rel, "dir".into());
                walk(root, &path, out);
            } else {
                use std::os::unix::fs::PermissionsExt;
                let mode = meta.permissions().mode() & 0o111;
                let bytes = std::fs::read(&path).unwrap();
                let text = match std::str::from_utf8(&bytes) {
                    Ok(t) => t.to_string(),
                    Err(_) => git2::Oid::hash_object(git2::ObjectType::Blob, &bytes)
                        .unwrap()
                        .to_string(),
                };
                out.insert(rel, format!("file {mode:o} {text}"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn bare_source() -> (tempfile::TempDir, git2::Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    (dir, repo)
}

/// Deletes the loose object file of blob `oid` (what a partial clone leaves out).
fn drop_object(repo: &git2::Repository, oid: git2::Oid) {
    let hex = oid.to_string();
    let file = repo.path().join("objects").join(&hex[..2]).join(&hex[2..]);
    std::fs::remove_file(&file).unwrap();
}

fn blob_id(repo: &git2::Repository, commit: git2::Oid, path: &str) -> git2::Oid {
    let tree = repo.find_commit(commit).unwrap().tree().unwrap();
    tree.get_path(Path::new(path)).unwrap().id()
}

#[test]
fn submodule_becomes_an_empty_directory() {
    let (src, repo) = bare_source();
    let c = commit(
        &repo,
        None,
        &[Spec::File("a.py", "x = 1\n"), Spec::Gitlink("vendor/lib")],
    );
    let cache = tempfile::tempdir().unwrap();
    let rc = RepoCache::new(cache.path(), src.path().to_string_lossy());
    let done = rc.checkout_tree("o/r", &c.to_string(), "i1", None).unwrap();
    assert_eq!(done.how, Materialization::Fresh);
    assert!(done.warnings.is_empty());
    let snap = snapshot(&done.dir);
    assert_eq!(snap.get("vendor/lib").map(String::as_str), Some("dir"));
    assert!(
        !snap.keys().any(|k| k.starts_with("vendor/lib/")),
        "{snap:?}"
    );
    assert_eq!(snap.get("a.py").map(String::as_str), Some("file 0 x = 1\n"));
    // The same call again keeps the verified tree.
    let again = rc.checkout_tree("o/r", &c.to_string(), "i1", None).unwrap();
    assert_eq!(again.how, Materialization::Kept);
}

#[test]
fn partial_mirror_leaves_out_a_data_file_with_a_warning() {
    let (src, repo) = bare_source();
    let c = commit(
        &repo,
        None,
        &[
            Spec::File("pkg/a.py", "def f():\n    pass\n"),
            Spec::File("data/big.bin", "\x01\x02 large data"),
        ],
    );
    drop_object(&repo, blob_id(&repo, c, "data/big.bin"));
    let cache = tempfile::tempdir().unwrap();
    let rc = RepoCache::new(cache.path(), src.path().to_string_lossy());
    let done = rc.checkout_tree("o/r", &c.to_string(), "i1", None).unwrap();
    assert_eq!(done.warnings.len(), 1, "{:?}", done.warnings);
    assert!(
        done.warnings[0].contains("data/big.bin"),
        "{:?}",
        done.warnings
    );
    let snap = snapshot(&done.dir);
    assert!(snap.contains_key("pkg/a.py"));
    assert!(!snap.contains_key("data/big.bin"));
    // Reused on the next call, still with its warning.
    let again = rc.checkout_tree("o/r", &c.to_string(), "i1", None).unwrap();
    assert_eq!(
        (again.how, again.warnings),
        (Materialization::Kept, done.warnings)
    );
    // The old entry point still works and returns the same tree.
    assert_eq!(rc.checkout("o/r", &c.to_string(), "i1").unwrap(), done.dir);
}

#[test]
fn partial_mirror_missing_python_or_docs_fails_with_advice() {
    for missing in ["pkg/a.py", "README.rst", "setup.cfg"] {
        let (src, repo) = bare_source();
        let files = [
            Spec::File("pkg/a.py", "def f():\n    pass\n"),
            Spec::File("README.rst", "docs\n"),
            Spec::File("setup.cfg", "[metadata]\n"),
        ];
        let c = commit(&repo, None, &files);
        drop_object(&repo, blob_id(&repo, c, missing));
        let cache = tempfile::tempdir().unwrap();
        let rc = RepoCache::new(cache.path(), src.path().to_string_lossy());
        let err = rc
            .checkout_tree("o/r", &c.to_string(), "i1", None)
            .unwrap_err();
        assert!(matches!(err, CheckoutError::MissingBlob { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(missing) && msg.contains("fetch --refetch"),
            "{msg}"
        );
    }
}

/// Commit A and commit B differ by every kind of change a diff can hold.
fn two_commits(repo: &git2::Repository) -> (git2::Oid, git2::Oid) {
    let a = commit(
        repo,
        None,
        &[
            Spec::File("pkg/a.py", "def f():\n    return 1\n"),
            Spec::File("pkg/old_name.py", "class C:\n    pass\n"),
            Spec::File("notes.txt", "to delete\n"),
            Spec::File("run.sh", "echo hi\n"),
            Spec::Exec("tool.sh", "echo tool\n"),
            Spec::Link("latest", "pkg/a.py"),
            Spec::File("d/e.py", "x = 1\n"),
            Spec::File("f", "file then dir\n"),
            Spec::File("gone/deep/only.py", "y = 2\n"),
            Spec::Gitlink("sub"),
            Spec::File("same.py", "unchanged\n"),
        ],
    );
    let b = commit(
        repo,
        Some(a),
        &[
            Spec::File("pkg/a.py", "def f():\n    return 2\n"),
            Spec::File("pkg/moved/new_name.py", "class C:\n    pass\n"),
            Spec::Exec("run.sh", "echo hi\n"),
            Spec::File("tool.sh", "echo tool\n"),
            Spec::File("latest", "now a file\n"),
            Spec::File("d", "dir then file\n"),
            Spec::File("f/g.py", "z = 3\n"),
            Spec::Gitlink("sub2"),
            Spec::Link("pkg/link", "../same.py"),
            Spec::File("same.py", "unchanged\n"),
        ],
    );
    (a, b)
}

#[test]
fn diff_reuse_gives_the_tree_a_fresh_write_gives() {
    let (src, repo) = bare_source();
    let (a, b) = two_commits(&repo);
    let cache = tempfile::tempdir().unwrap();
    let rc = RepoCache::new(cache.path(), src.path().to_string_lossy());
    let first = rc.checkout_tree("o/r", &a.to_string(), "i1", None).unwrap();
    assert_eq!(first.how, Materialization::Fresh);
    let reused = rc
        .checkout_tree("o/r", &b.to_string(), "i2", Some("i1"))
        .unwrap();
    match &reused.how {
        Materialization::Diffed {
            from_instance,
            from_commit,
            changed,
        } => {
            assert_eq!(
                (from_instance.as_str(), from_commit.as_str()),
                ("i1", a.to_string().as_str())
            );
            assert!(*changed >= 10, "{changed}");
        }
        other => panic!("expected a diff, got {other:?}"),
    }
    assert!(!first.dir.exists(), "the earlier tree is moved, not copied");
    let fresh = rc.checkout_tree("o/r", &b.to_string(), "i3", None).unwrap();
    assert_eq!(fresh.how, Materialization::Fresh);
    assert_eq!(snapshot(&reused.dir), snapshot(&fresh.dir));
    let (_, m2) = rc.worktree_paths("i2");
    let (_, m3) = rc.worktree_paths("i3");
    assert_eq!(Manifest::load(&m2), Manifest::load(&m3));
    // And back again: B → A by diff equals A written fresh.
    let back = rc
        .checkout_tree("o/r", &a.to_string(), "i4", Some("i2"))
        .unwrap();
    let fresh_a = rc.checkout_tree("o/r", &a.to_string(), "i5", None).unwrap();
    assert!(matches!(back.how, Materialization::Diffed { .. }));
    assert_eq!(snapshot(&back.dir), snapshot(&fresh_a.dir));
}

#[test]
fn a_tampered_tree_is_never_reused() {
    let (src, repo) = bare_source();
    let (a, b) = two_commits(&repo);
    let cache = tempfile::tempdir().unwrap();
    let rc = RepoCache::new(cache.path(), src.path().to_string_lossy());
    let want = {
        let fresh = rc
            .checkout_tree("o/r", &b.to_string(), "ref", None)
            .unwrap();
        snapshot(&fresh.dir)
    };
    type Tamper = fn(&Path);
    let tampers: [(&str, Tamper); 5] = [
        ("edited file", |d| {
            std::fs::write(d.join("same.py"), "changed\n").unwrap()
        }),
        ("extra file", |d| {
            std::fs::write(d.join("pkg/extra.py"), "").unwrap()
        }),
        ("deleted file", |d| {
            std::fs::remove_file(d.join("pkg/a.py")).unwrap()
        }),
        ("file in a submodule", |d| {
            let sub = if d.join("sub").exists() {
                "sub"
            } else {
                "sub2"
            };
            std::fs::write(d.join(sub).join("x"), "").unwrap()
        }),
        ("mode change", |d| {
            use std::os::unix::fs::PermissionsExt;
            let p = d.join("run.sh");
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode ^ 0o111)).unwrap()
        }),
    ];
    for (what, tamper) in tampers {
        // Reuse across instances: the tampered earlier tree is refused.
        let first = rc
            .checkout_tree("o/r", &a.to_string(), "prev", None)
            .unwrap();
        tamper(&first.dir);
        let next = rc
            .checkout_tree("o/r", &b.to_string(), "next", Some("prev"))
            .unwrap();
        assert_eq!(next.how, Materialization::Fresh, "{what}");
        assert_eq!(snapshot(&next.dir), want, "{what}");
        // Reuse of an instance's own tree: rewritten in full.
        tamper(&next.dir);
        let again = rc
            .checkout_tree("o/r", &b.to_string(), "next", None)
            .unwrap();
        assert_eq!(again.how, Materialization::Fresh, "{what}");
        assert_eq!(snapshot(&again.dir), want, "{what}");
        std::fs::remove_dir_all(&next.dir).unwrap();
    }
}

#[test]
fn which_files_servers_read() {
    for p in [
        "a.py",
        "pkg/README.MD",
        "docs/x.rst",
        "setup.cfg",
        "pyproject.toml",
        "c.yml",
    ] {
        assert!(server_reads(p), "{p}");
    }
    for p in [
        "data/big.bin",
        "img.png",
        "Makefile",
        ".py",
        "pkg/.gitignore",
        "x.pyc",
    ] {
        assert!(!server_reads(p), "{p}");
    }
}

/// Timing of a fresh write against a diff from another commit's tree, on a real
/// repository: `NAVBENCH_CHECKOUT_BENCH=<repo path> NAVBENCH_CHECKOUT_FROM=<rev>
/// NAVBENCH_CHECKOUT_TO=<rev> cargo test --release -p navbench --lib
/// checkout_timing -- --ignored --nocapture`. Also checks the two trees are equal.
#[test]
#[ignore = "needs a real repository; see the doc comment"]
fn checkout_timing() {
    use std::time::Instant;
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("set {k}"));
    let src = var("NAVBENCH_CHECKOUT_BENCH");
    let repo = git2::Repository::open(&src).unwrap();
    let rev = |k: &str| {
        repo.revparse_single(&var(k))
            .unwrap()
            .peel_to_commit()
            .unwrap()
            .id()
            .to_string()
    };
    let (from, to) = (rev("NAVBENCH_CHECKOUT_FROM"), rev("NAVBENCH_CHECKOUT_TO"));
    let cache = tempfile::tempdir().unwrap();
    let rc = RepoCache::new(cache.path(), src.as_str());
    rc.mirror("o/r", &from).unwrap();
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    rc.checkout_tree("o/r", &from, "from", None).unwrap();
    let fresh_from = ms(t);
    let t = Instant::now();
    let fresh = rc.checkout_tree("o/r", &to, "fresh", None).unwrap();
    let fresh_to = ms(t);
    let t = Instant::now();
    let kept = rc.checkout_tree("o/r", &to, "fresh", None).unwrap();
    let verify = ms(t);
    assert_eq!(kept.how, Materialization::Kept);
    let t = Instant::now();
    let diffed = rc
        .checkout_tree("o/r", &to, "diffed", Some("from"))
        .unwrap();
    let diff = ms(t);
    let Materialization::Diffed { changed, .. } = diffed.how else {
        panic!("not diffed: {:?}", diffed.how)
    };
    let (files, bytes) = snapshot(&fresh.dir)
        .values()
        .fold((0, 0), |(n, b), v| (n + 1, b + v.len()));
    assert_eq!(snapshot(&fresh.dir), snapshot(&diffed.dir));
    // libgit2's own checkout of the same tree, for reference.
    let mirror = rc.mirror("o/r", &to).unwrap();
    let lg2 = cache.path().join("libgit2");
    std::fs::create_dir_all(&lg2).unwrap();
    let tree = mirror
        .find_commit(git2::Oid::from_str(&to).unwrap())
        .unwrap()
        .tree()
        .unwrap();
    let mut opts = git2::build::CheckoutBuilder::new();
    opts.target_dir(&lg2)
        .force()
        .update_index(false)
        .recreate_missing(true);
    let t = Instant::now();
    let lg2_ok = mirror
        .checkout_tree(tree.as_object(), Some(&mut opts))
        .is_ok();
    let libgit2 = ms(t);
    println!(
        "tree: {files} entries, {bytes} bytes; diff: {changed} paths\n\
         fresh write (from): {fresh_from:.0} ms\nfresh write (to): {fresh_to:.0} ms\n\
         verify + keep: {verify:.0} ms\nverify + diff: {diff:.0} ms\n\
         libgit2 checkout_tree (ok={lg2_ok}): {libgit2:.0} ms\nratio fresh/diff: {:.1}",
        fresh_to / diff
    );
}
