//! Tests of `dataset from-git` on repositories they build with git2.

use super::*;

/// A repository whose history holds one commit of every kind `from-git` sorts.
struct History {
    _dir: tempfile::TempDir,
    repo: git2::Repository,
    /// Commit ids by label.
    ids: BTreeMap<&'static str, git2::Oid>,
}

const MOD_V1: &str = "def f():\n    return 1\n\n\nclass K:\n    def m(self):\n        return 1\n";
const MOD_V2: &str = "def f():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n";
const MOD_V3: &str = "def f():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n\n\ndef g():\n    return 3\n";
const MOD_SIDE: &str = "def f():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 5\n\n\ndef g():\n    return 3\n";
const MOD_LAST: &str = "def f():\n    return 7\n\n\nclass K:\n    def m(self):\n        return 8\n\n\ndef g():\n    return 3\n";
const TEST_V1: &str = "def test_f():\n    assert True\n";
const TEST_V2: &str = "def test_f():\n    assert 1\n";

fn commit(
    repo: &git2::Repository,
    parents: &[git2::Oid],
    files: &[(&str, &str)],
    message: &str,
) -> git2::Oid {
    let now = chrono::Utc::now().timestamp();
    commit_at(repo, parents, files, message, git2::Time::new(now, 0))
}

/// A commit whose author and committer time is `time`.
fn commit_at(
    repo: &git2::Repository,
    parents: &[git2::Oid],
    files: &[(&str, &str)],
    message: &str,
    time: git2::Time,
) -> git2::Oid {
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    let sig = git2::Signature::new("t", "t@t", &time).unwrap();
    crate::checkout::commit::commit_files(repo, parents, &files, &sig, message, None).unwrap()
}

fn history() -> History {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let mut ids = BTreeMap::new();
    let m = "pkg/mod.py";
    let t = "tests/test_mod.py";
    let root = commit(
        &repo,
        &[],
        &[(m, MOD_V1), (t, TEST_V1), ("README.md", "a\n")],
        "init",
    );
    let fix = commit(
        &repo,
        &[root],
        &[(m, MOD_V2), (t, TEST_V2), ("README.md", "a\n")],
        "Fix f returning the wrong value\n\nf() must return 2.\n\nSigned-off-by: A <a@b>\n",
    );
    let tests = commit(
        &repo,
        &[fix],
        &[(m, MOD_V2), (t, TEST_V1), ("README.md", "a\n")],
        "tests only",
    );
    let docs = commit(
        &repo,
        &[tests],
        &[(m, MOD_V2), (t, TEST_V1), ("README.md", "b\n")],
        "docs",
    );
    let added = commit(
        &repo,
        &[docs],
        &[(m, MOD_V3), (t, TEST_V1), ("README.md", "b\n")],
        "add g",
    );
    let c = "pkg/core.py";
    let renamed = commit(
        &repo,
        &[added],
        &[(c, MOD_V3), (t, TEST_V1), ("README.md", "b\n")],
        "rename",
    );
    let side = commit(
        &repo,
        &[renamed],
        &[(c, MOD_SIDE), (t, TEST_V1), ("README.md", "b\n")],
        "K.m on a branch",
    );
    let merge = commit(
        &repo,
        &[renamed, side],
        &[(c, MOD_SIDE), (t, TEST_V1), ("README.md", "b\n")],
        "Merge branch",
    );
    let last = commit(
        &repo,
        &[merge],
        &[(c, MOD_LAST), (t, TEST_V2), ("README.md", "b\n")],
        "Fix #12: f and K.m",
    );
    repo.reference("refs/heads/main", last, true, "t").unwrap();
    repo.set_head("refs/heads/main").unwrap();
    for (k, v) in [
        ("root", root),
        ("fix", fix),
        ("tests", tests),
        ("docs", docs),
        ("added", added),
        ("renamed", renamed),
        ("side", side),
        ("merge", merge),
        ("last", last),
    ] {
        ids.insert(k, v);
    }
    History {
        _dir: dir,
        repo,
        ids,
    }
}

#[test]
fn keeps_function_edits_and_counts_the_rest() {
    let h = history();
    let (insts, report) = from_repository(&h.repo, "o/r", &FromGitOptions::default()).unwrap();
    let by_base: Vec<(&str, Vec<&str>)> = insts
        .iter()
        .map(|i| {
            let g = i.gold.as_ref().unwrap();
            (
                i.base_commit.as_str(),
                g.functions.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let id = |k: &str| h.ids[k].to_string();
    let (merge, side, renamed, root) = (id("merge"), id("side"), id("renamed"), id("root"));
    assert_eq!(
        by_base,
        vec![
            (merge.as_str(), vec!["pkg/core.py:f", "pkg/core.py:K.m"]),
            (renamed.as_str(), vec!["pkg/core.py:K.m"]),
            (root.as_str(), vec!["pkg/mod.py:f"]),
        ]
    );
    assert_eq!(insts[1].instance_id, format!("o__r-{}", &side[..12]));
    assert_eq!((report.scanned, report.kept), (9, 3));
    let expected: BTreeMap<Skip, usize> = [
        (Skip::Merge, 1),
        (Skip::RenameOnly, 1),
        (Skip::NoFunctionEdited, 1),
        (Skip::NoSource, 1),
        (Skip::TestOnly, 1),
        (Skip::Root, 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(report.skipped, expected);

    let fix = &insts[2];
    assert_eq!(fix.instance_id, format!("o__r-{}", &id("fix")[..12]));
    assert_eq!(
        fix.problem_statement,
        "Fix f returning the wrong value\n\nf() must return 2."
    );
    assert!(
        fix.patch.contains("pkg/mod.py") && !fix.patch.contains("test_mod.py"),
        "{}",
        fix.patch
    );
    let gold = fix.gold.as_ref().unwrap();
    assert_eq!(
        (gold.files.as_slice(), gold.modules.as_slice()),
        (
            &["pkg/mod.py".to_string()][..],
            &["pkg/mod.py:f".to_string()][..]
        )
    );
}

#[test]
fn since_and_max_limit_the_walk() {
    let h = history();
    let since = FromGitOptions {
        since: Some(h.ids["added"].to_string()),
        ..FromGitOptions::default()
    };
    let (insts, report) = from_repository(&h.repo, "o/r", &since).unwrap();
    assert_eq!((insts.len(), report.scanned), (2, 4));
    let max = FromGitOptions {
        max: Some(1),
        ..FromGitOptions::default()
    };
    let (insts, report) = from_repository(&h.repo, "o/r", &max).unwrap();
    assert_eq!((insts.len(), report.scanned), (1, 1));
    let bad = FromGitOptions {
        since: Some("no-such-ref".into()),
        ..FromGitOptions::default()
    };
    let err = from_repository(&h.repo, "o/r", &bad).unwrap_err();
    assert!(err.to_string().contains("--since no-such-ref"), "{err}");
}

#[test]
fn output_reads_back_as_a_dataset_through_a_local_path() {
    let h = history();
    let cache = tempfile::tempdir().unwrap();
    let src = h.repo.path().to_string_lossy().into_owned();
    let (insts, report) = from_git(&src, cache.path(), &FromGitOptions::default()).unwrap();
    assert!(report.repo.starts_with("local/"), "{}", report.repo);
    let mut buf = Vec::new();
    write_jsonl(&insts, &mut buf).unwrap();
    let ds = crate::data::dataset::Dataset::from_jsonl("g", std::str::from_utf8(&buf).unwrap());
    assert!(ds.problems.is_empty(), "{:?}", ds.problems);
    assert_eq!(ds.instances, insts);
    // A file:// URL goes through the cache's mirror and gives the same instances.
    let url = format!("file://{src}");
    let (via_url, _) = from_git(&url, cache.path(), &FromGitOptions::default()).unwrap();
    let bases: Vec<_> = via_url.iter().map(|i| &i.base_commit).collect();
    assert_eq!(
        bases,
        insts.iter().map(|i| &i.base_commit).collect::<Vec<_>>()
    );
}

/// Unix time of `YYYY-MM-DD hh:mm:ss` UTC.
fn utc(date: &str, h: u32, m: u32, sec: u32) -> i64 {
    let d = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
    d.and_hms_opt(h, m, sec).unwrap().and_utc().timestamp()
}

/// A chain of four commits editing `f`, at the edges of the window
/// [2023-11-01, 2024-09-30]; their ids oldest first.
fn dated() -> (tempfile::TempDir, git2::Repository, Vec<git2::Oid>) {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let body = |n: u32| format!("def f():\n    return {n}\n");
    let times = [
        git2::Time::new(utc("2023-10-31", 23, 59, 59), 0),
        git2::Time::new(utc("2023-11-01", 0, 0, 0), 0),
        // 2024-10-01 01:59 at +02:00: still 2024-09-30 in UTC, so inside.
        git2::Time::new(utc("2024-09-30", 23, 59, 59), 120),
        git2::Time::new(utc("2024-10-01", 0, 0, 0), 0),
    ];
    let mut ids: Vec<git2::Oid> = Vec::new();
    for (n, t) in times.into_iter().enumerate() {
        let text = body(n as u32);
        let parents: Vec<git2::Oid> = ids.last().copied().into_iter().collect();
        let msg = format!("Make f return {n} instead");
        ids.push(commit_at(&repo, &parents, &[("pkg/m.py", &text)], &msg, t));
    }
    repo.reference("refs/heads/main", ids[3], true, "t")
        .unwrap();
    repo.set_head("refs/heads/main").unwrap();
    (dir, repo, ids)
}

#[test]
fn dates_and_until_bound_the_walk() {
    let (_dir, repo, ids) = dated();
    let window = FromGitOptions {
        since: Some("2023-11-01".into()),
        until: Some("2024-09-30".into()),
        ..FromGitOptions::default()
    };
    let (insts, report) = from_repository(&repo, "o/r", &window).unwrap();
    let bases: Vec<String> = insts.iter().map(|i| i.base_commit.clone()).collect();
    assert_eq!(bases, vec![ids[1].to_string(), ids[0].to_string()]);
    assert_eq!((report.scanned, report.outside_dates), (2, 2));
    assert!(report.to_string().contains("2 commits outside"), "{report}");

    // --until REF walks from that commit; a date --since still applies.
    let until_ref = FromGitOptions {
        until: Some(ids[1].to_string()),
        ..FromGitOptions::default()
    };
    let (insts, report) = from_repository(&repo, "o/r", &until_ref).unwrap();
    assert_eq!(insts.len(), 1);
    assert_eq!((report.scanned, report.skipped[&Skip::Root]), (2, 1));
    let mixed = FromGitOptions {
        since: Some("2023-11-01".into()),
        until: Some("main~1".into()),
        ..FromGitOptions::default()
    };
    let (insts, report) = from_repository(&repo, "o/r", &mixed).unwrap();
    assert_eq!((insts.len(), report.outside_dates), (2, 1));
}

#[test]
fn bad_bounds_say_what_to_pass() {
    let (_dir, repo, _) = dated();
    let err = |since: Option<&str>, until: Option<&str>| {
        let opts = FromGitOptions {
            since: since.map(String::from),
            until: until.map(String::from),
            ..FromGitOptions::default()
        };
        from_repository(&repo, "o/r", &opts)
            .unwrap_err()
            .to_string()
    };
    let e = err(None, Some("no-such-branch"));
    assert!(
        e.contains("--until no-such-branch: no such revision") && e.contains("YYYY-MM-DD"),
        "{e}"
    );
    let e = err(Some("2023-02-30"), None);
    assert!(e.contains("--since 2023-02-30: no such day"), "{e}");
    let e = err(None, Some("2023-13-01"));
    assert!(e.contains("--until 2023-13-01: no such day"), "{e}");
    let e = err(Some("2024-10-01"), Some("2024-09-30"));
    assert!(e.contains("swap them"), "{e}");
    // The same day on both ends is a one-day window, not an error.
    let day = FromGitOptions {
        since: Some("2023-11-01".into()),
        until: Some("2023-11-01".into()),
        ..FromGitOptions::default()
    };
    let (insts, _) = from_repository(&repo, "o/r", &day).unwrap();
    assert_eq!(insts.len(), 1);
}

#[test]
fn quality_filters_count_what_they_remove() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let v = |n: u32| format!("def f():\n    return {n}\n");
    let (v1, v2, v3) = (v(1), v(2), v(3));
    let files = |a: &str, b: &str, c: &str| {
        vec![
            ("pkg/a.py".to_string(), a.to_string()),
            ("pkg/b.py".to_string(), b.to_string()),
            ("pkg/c.py".to_string(), c.to_string()),
            ("CHANGES.rst".to_string(), format!("{a}{b}{c}")),
            ("docs/a.rst".to_string(), a.to_string()),
        ]
    };
    let mk = |parents: &[git2::Oid], fs: Vec<(String, String)>, msg: &str| {
        let refs: Vec<(&str, &str)> = fs.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        commit(&repo, parents, &refs, msg)
    };
    let root = mk(&[], files(&v1, &v1, &v1), "init");
    let wide = mk(
        &[root],
        files(&v2, &v2, &v2),
        "Make f return 2 in every module",
    );
    let short = mk(&[wide], files(&v3, &v2, &v2), "typo (#12)");
    // One Python file plus a changelog and a docs page: one file for --max-files.
    let one = mk(&[short], files(&v1, &v2, &v2), "Fix #12: make f return 1");
    repo.reference("refs/heads/main", one, true, "t").unwrap();
    repo.set_head("refs/heads/main").unwrap();

    let off = FromGitOptions::default();
    let (insts, _) = from_repository(&repo, "o/r", &off).unwrap();
    assert_eq!(insts.len(), 3);
    let on = FromGitOptions {
        quality: Quality {
            max_files: Some(2),
            min_words: DEFAULT_MIN_WORDS,
            skip_duplicates: true,
        },
        ..FromGitOptions::default()
    };
    let (insts, report) = from_repository(&repo, "o/r", &on).unwrap();
    assert_eq!(insts.len(), 1);
    assert_eq!(insts[0].base_commit, short.to_string());
    let expected: BTreeMap<Skip, usize> = [
        (Skip::Root, 1),
        (Skip::TooManyFiles, 1),
        (Skip::ShortStatement, 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(report.skipped, expected);
    assert!(
        report
            .to_string()
            .contains("skipped 1: edits more source files than --max-files"),
        "{report}"
    );

    // The filters come after the structural reasons: on the mixed history the
    // CLI's defaults keep the same instances and count the same skips.
    let h = history();
    let defaults = FromGitOptions {
        quality: Quality {
            max_files: Some(DEFAULT_MAX_FILES),
            min_words: DEFAULT_MIN_WORDS,
            skip_duplicates: true,
        },
        ..FromGitOptions::default()
    };
    let plain = from_repository(&h.repo, "o/r", &FromGitOptions::default()).unwrap();
    let filtered = from_repository(&h.repo, "o/r", &defaults).unwrap();
    assert_eq!(plain, filtered);
}

#[test]
fn a_backport_of_a_kept_fix_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let v = |n: u32, pad: &str| format!("{pad}def f():\n    return {n}\n");
    let m = "pkg/m.py";
    let root = commit(&repo, &[], &[(m, &v(1, ""))], "init");
    let fix = commit(&repo, &[root], &[(m, &v(2, ""))], "Make f return 2 (#1)");
    let revert = commit(&repo, &[fix], &[(m, &v(1, ""))], "Revert the change to f");
    // The same change at other line numbers, as a backport lands it.
    let moved = commit(
        &repo,
        &[revert],
        &[(m, &v(1, "X = 0\n\n\n"))],
        "Add a constant X",
    );
    let backport = commit(
        &repo,
        &[moved],
        &[(m, &v(2, "X = 0\n\n\n"))],
        "[Backport maintenance/1.x] Make f return 2 (#1) (#2)",
    );
    repo.reference("refs/heads/main", backport, true, "t")
        .unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let run = |skip_duplicates| {
        let opts = FromGitOptions {
            quality: Quality {
                skip_duplicates,
                ..Quality::default()
            },
            ..FromGitOptions::default()
        };
        from_repository(&repo, "o/r", &opts).unwrap()
    };
    let (all, _) = run(false);
    assert_eq!(all.len(), 3);
    let (insts, report) = run(true);
    let bases: Vec<String> = insts.iter().map(|i| i.base_commit.clone()).collect();
    // Newest first: the backport is kept, the original fix is the duplicate.
    assert_eq!(bases, vec![moved.to_string(), fix.to_string()]);
    assert_eq!(report.skipped.get(&Skip::Duplicate), Some(&1));
    assert!(report.to_string().contains("backport"), "{report}");
}

#[test]
fn name_overrides_the_local_name() {
    let h = history();
    let cache = tempfile::tempdir().unwrap();
    let src = h.repo.path().to_string_lossy().into_owned();
    let named = FromGitOptions {
        name: Some("psf/requests".into()),
        max: Some(1),
        ..FromGitOptions::default()
    };
    let (insts, report) = from_git(&src, cache.path(), &named).unwrap();
    assert_eq!(report.repo, "psf/requests");
    assert_eq!(insts[0].repo, "psf/requests");
    assert!(insts[0].instance_id.starts_with("psf__requests-"));
    assert!(!report.to_string().contains("--name"), "{report}");
    let (_, local) = from_git(&src, cache.path(), &FromGitOptions::default()).unwrap();
    assert!(
        local.to_string().contains("pass --name owner/name"),
        "{local}"
    );
    for bad in ["requests", "a/b/c", "/x", "a b/c"] {
        let opts = FromGitOptions {
            name: Some(bad.into()),
            ..FromGitOptions::default()
        };
        let e = from_git(&src, cache.path(), &opts).unwrap_err().to_string();
        assert!(e.contains("expected owner/name"), "{bad}: {e}");
    }
}

#[test]
fn helpers() {
    for p in [
        "tests/a.py",
        "pkg/tests/x.py",
        "test_a.py",
        "pkg/a_test.py",
        "conftest.py",
        "app/tests.py",
    ] {
        assert!(is_test_path(p), "{p}");
    }
    for p in [
        "pkg/a.py",
        "pkg/testing_utils.py",
        "pkg/contest.py",
        "pytest.ini",
    ] {
        assert!(!is_test_path(p), "{p}");
    }
    assert_eq!(
        repo_name_of_url("https://github.com/django/django.git").as_deref(),
        Some("django/django")
    );
    assert_eq!(
        repo_name_of_url("git@github.com:psf/requests.git").as_deref(),
        Some("psf/requests")
    );
    assert_eq!(repo_name_of_url("name"), None);
    assert_eq!(
        problem_statement("Subject\n\nBody.\n\nCo-authored-by: X <x@y>\n"),
        "Subject\n\nBody."
    );
    let prose = "Subject\n\nThis fixes it. See: the docs";
    assert_eq!(problem_statement(prose), prose);
    assert_eq!(word_count("typo"), 1);
    assert_eq!(word_count("Fix #12: f and K.m (#3456)\n\n* bump"), 5);
    assert_eq!(word_count(" - 1.2.3 -- "), 0);
}

/// Commits in Go, TypeScript, Java and Rust become instances with their languages'
/// gold ids; their test files stay out of the patch.
#[test]
fn other_languages_are_mined_with_their_gold() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let go_v1 = "package stack\n\ntype Stack struct{ xs []int }\n\nfunc (s *Stack) Pop() int {\n\treturn s.xs[0]\n}\n";
    let go_v2 = "package stack\n\ntype Stack struct{ xs []int }\n\nfunc (s *Stack) Pop() int {\n\treturn s.xs[len(s.xs)-1]\n}\n";
    let ts_v1 = "export function parse(s: string): number {\n  return parseInt(s);\n}\n";
    let ts_v2 = "export function parse(s: string): number {\n  return parseInt(s, 10);\n}\n";
    let java_v1 = "package a;\n\nclass Box {\n  int size() {\n    return 0;\n  }\n}\n";
    let java_v2 = "package a;\n\nclass Box {\n  int size() {\n    return 1;\n  }\n}\n";
    let rs_v1 = "pub struct W;\n\nimpl W {\n    pub fn get(&self) -> u8 {\n        1\n    }\n}\n";
    let rs_v2 = "pub struct W;\n\nimpl W {\n    pub fn get(&self) -> u8 {\n        2\n    }\n}\n";
    let files = |go, ts, java, rs, test| {
        vec![
            ("stack/stack.go", go),
            ("stack/stack_test.go", test),
            ("src/parse.ts", ts),
            ("src/main/java/a/Box.java", java),
            ("src/w.rs", rs),
        ]
    };
    let t1 = "package stack\n";
    let t2 = "package stack\n\n// more\n";
    let mut head = commit(&repo, &[], &files(go_v1, ts_v1, java_v1, rs_v1, t1), "init");
    let steps = [
        (
            files(go_v2, ts_v1, java_v1, rs_v1, t2),
            "Pop returns the bottom of the stack instead of the top",
        ),
        (
            files(go_v2, ts_v2, java_v1, rs_v1, t2),
            "parse reads leading zeros as octal in old engines",
        ),
        (
            files(go_v2, ts_v2, java_v2, rs_v1, t2),
            "Box size is always zero even with items",
        ),
        (
            files(go_v2, ts_v2, java_v2, rs_v2, t2),
            "W get returns the wrong byte value",
        ),
    ];
    for (f, msg) in &steps {
        head = commit(&repo, &[head], f, msg);
    }
    repo.reference("refs/heads/main", head, true, "test")
        .unwrap();
    repo.set_head("refs/heads/main").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let src = repo.path().to_string_lossy().into_owned();
    let (insts, report) = from_git(&src, cache.path(), &FromGitOptions::default()).unwrap();
    let gold: Vec<Vec<String>> = insts
        .iter()
        .map(|i| i.gold.clone().unwrap_or_default().functions)
        .collect();
    // Newest first.
    assert_eq!(
        gold,
        vec![
            vec!["src/w.rs:W.get".to_string()],
            vec!["src/main/java/a/Box.java:Box.size".to_string()],
            vec!["src/parse.ts:parse".to_string()],
            vec!["stack/stack.go:Stack.Pop".to_string()],
        ]
    );
    assert_eq!((report.scanned, report.kept), (5, 4));
    assert!(
        !insts[3].patch.contains("stack_test.go"),
        "{}",
        insts[3].patch
    );
}
