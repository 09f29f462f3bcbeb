//! A git repository holding the shop application, a dataset of its instances, and
//! `navbench run` on them: what the end-to-end and agent tests share.

use std::path::{Path, PathBuf};

use super::{APP, PATCH, navbench};

/// A repository with `shop/store.py` and a few more files; returns (dir, commit).
pub fn make_repo() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let files: &[(&str, &str)] = &[
        ("shop/__init__.py", ""),
        ("shop/store.py", APP),
        (
            "shop/report.py",
            "from shop.store import Store, format_price\n\n\ndef report(path):\n    s = Store(path)\n    s.load()\n    return format_price(s.total_price())\n",
        ),
        (
            "tests/test_store.py",
            "from shop.store import Store\n\n\ndef test_total_price():\n    assert Store('x').total_price() == 0\n",
        ),
        ("README.md", "# shop\n"),
    ];
    // The files are on disk too: some tests serve this directory as a checked-out tree.
    for (p, c) in files {
        let full = dir.path().join(p);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, c).unwrap();
    }
    let files: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (*p, c.as_bytes())).collect();
    let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
    let c =
        navbench::checkout::commit::commit_files(&repo, &[], &files, &sig, "init", Some("HEAD"))
            .unwrap();
    (dir, c.to_string())
}

pub fn instance(id: &str, commit: &str) -> String {
    serde_json::json!({
        "instance_id": id,
        "repo": "acme/shop",
        "base_commit": commit,
        "problem_statement": "`Store.total_price()` ignores quantity\n\nWhen an item has quantity 3, total_price counts it once.",
        "patch": PATCH,
    })
    .to_string()
}

pub struct Setup {
    pub _repo: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub commit: String,
    pub repo_path: PathBuf,
}

pub fn setup() -> Setup {
    let (repo, commit) = make_repo();
    let repo_path = repo.path().to_path_buf();
    Setup {
        _repo: repo,
        work: tempfile::tempdir().unwrap(),
        commit,
        repo_path,
    }
}

impl Setup {
    pub fn write_dataset(&self, lines: &[String]) -> PathBuf {
        let p = self.work.path().join("ds.jsonl");
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        p
    }

    pub fn run(&self, dataset: &Path, out: &str, extra: &[&str]) -> std::process::Output {
        navbench()
            .args(["run", "--dataset"])
            .arg(dataset)
            .arg("--repo-url")
            .arg(self.repo_path.to_string_lossy().as_ref())
            .arg("--cache")
            .arg(self.work.path().join("cache"))
            .arg("--out")
            .arg(self.work.path().join(out))
            .args(extra)
            .output()
            .unwrap()
    }
}

pub fn read_csv(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut rdr = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    rdr.records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}
