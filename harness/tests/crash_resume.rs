//! A run survives being killed: the real `navbench run` (mini dataset, text and
//! codegraph) is SIGKILLed several times at random moments and resumed with the same
//! `--out`; afterwards its CSVs must equal those of an uninterrupted run — no row lost,
//! none duplicated, no half-written line, the accuracy columns exactly equal, each
//! pair's calls those of one attempt.
//!
//! CI runs 5 kills over 10 instances; `NAVBENCH_CRASH_KILLS=N` runs N kills over 2N
//! (mini has 26). Kill moments are random (the seed is printed; `NAVBENCH_CRASH_SEED`
//! replays one):
//! each kill waits until a random number of new rows has appeared, then a random delay
//! more, so kills land mid-call, mid-indexing and mid-write. One kill also leaves a
//! torn last line in both CSVs (as a kill during a write would) to check that the
//! resume repairs it and says so.
//!
//! A pair killed mid-conversation keeps the calls it made: the built-in agent (a
//! scripted model on the test's own endpoint, which hangs on the second turn until
//! the run is killed) makes two calls, the run is SIGKILLed, and `calls.csv` must hold
//! them; the resume moves them to `calls-superseded.csv` and the finished pair's
//! calls in `calls.csv` are its second attempt's only.
//!
//! Needs the server binaries built (`cargo test --workspace` does it).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

/// Kills per test run (CI-sized; `NAVBENCH_CRASH_KILLS` asks for more).
const KILLS: usize = 5;
/// Instances run per kill asked for (two pairs each), at least 8.
const INSTANCES_PER_KILL: usize = 2;

/// A small deterministic generator (xorshift), so a seed replays a run's moments.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

fn run_cmd(cache: &Path, out: &Path, instances: usize) -> Command {
    run_variants(cache, out, "text,codegraph", &instances.to_string())
}

fn run_variants(cache: &Path, out: &Path, variants: &str, limit: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_navbench"));
    cmd.args(["run", "--dataset", "mini", "--limit", limit])
        .args(["--variants", variants, "--jobs", "1", "--cache"])
        .arg(cache)
        .arg("--out")
        .arg(out);
    cmd
}

/// Rows of a CSV as maps; fails on any line that is not a whole record of the
/// header's width (the csv reader is strict about widths).
fn read(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut rdr = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header: Vec<String> = rdr
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    rdr.records()
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("{path:?}: a broken line: {e}"));
            header
                .iter()
                .cloned()
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn data_lines(path: &Path) -> usize {
    std::fs::read(path)
        .map(|b| b.iter().filter(|c| **c == b'\n').count().saturating_sub(1))
        .unwrap_or(0)
}

/// The columns of `instances.csv` that a resumed run must reproduce exactly.
fn is_result_column(name: &str) -> bool {
    if name.ends_with("_ms") {
        return false; // timings (gold_ms is one)
    }
    ["_acc_", "_recall_", "_ndcg_", "_map_"]
        .iter()
        .any(|m| name.contains(m))
        || name.starts_with("gold_")
        || name.starts_with("pred_")
        || ["instance_id", "variant", "status", "error", "n_calls"].contains(&name)
}

fn results(
    rows: &[BTreeMap<String, String>],
) -> BTreeMap<(String, String), BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for r in rows {
        let key = (r["instance_id"].clone(), r["variant"].clone());
        let kept: BTreeMap<String, String> = r
            .iter()
            .filter(|(k, _)| is_result_column(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert!(
            out.insert(key.clone(), kept).is_none(),
            "duplicated row {key:?}"
        );
    }
    out
}

/// Each pair's calls as (step, tool, args, is_error), in order.
fn calls(rows: &[BTreeMap<String, String>]) -> BTreeMap<(String, String), Vec<[String; 4]>> {
    let mut out: BTreeMap<_, Vec<[String; 4]>> = BTreeMap::new();
    for r in rows {
        out.entry((r["instance_id"].clone(), r["variant"].clone()))
            .or_default()
            .push([
                r["step"].clone(),
                r["tool"].clone(),
                r["args"].clone(),
                r["is_error"].clone(),
            ]);
    }
    for (pair, list) in &out {
        let steps: HashSet<&String> = list.iter().map(|c| &c[0]).collect();
        assert_eq!(steps.len(), list.len(), "duplicated calls of {pair:?}");
    }
    out
}

/// Appends a prefix (no newline) of a random line of `from` to `to`.
fn tear(from: &Path, to: &Path, rng: &mut Rng) {
    use std::io::Write as _;
    let text = std::fs::read_to_string(from).expect("read");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let line = lines[rng.below(lines.len() as u64) as usize];
    let cut = 1 + rng.below(line.len().saturating_sub(1) as u64) as usize;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(to)
        .expect("open");
    // Cut on a char boundary.
    let cut = (0..=cut)
        .rev()
        .find(|i| line.is_char_boundary(*i))
        .unwrap_or(0);
    f.write_all(&line.as_bytes()[..cut.max(1)]).expect("tear");
}

#[test]
fn sigkilled_runs_resume_to_the_uninterrupted_result() {
    let seed = std::env::var("NAVBENCH_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64 | 1)
        });
    let kills: usize = std::env::var("NAVBENCH_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(KILLS);
    eprintln!("crash_resume: seed {seed} (NAVBENCH_CRASH_SEED replays it), {kills} kills");
    let mut rng = Rng(seed);
    let instances = (kills * INSTANCES_PER_KILL).max(8);
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");

    let reference = work.path().join("reference");
    let out = run_cmd(&cache, &reference, instances)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let crashed = work.path().join("crashed");
    let inst_csv = crashed.join("instances.csv");
    let mut landed = 0;
    let mut torn = false;
    for k in 0..kills {
        let before = data_lines(&inst_csv);
        // 0 new rows: killed during start-up, checkout or the first server.
        let target = before + rng.below(3) as usize;
        let extra = Duration::from_millis(rng.below(400));
        let mut child = run_cmd(&cache, &crashed, instances)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let started = Instant::now();
        let mut reached = None;
        while child.try_wait().expect("wait").is_none() {
            if reached.is_none() && data_lines(&inst_csv) >= target {
                reached = Some(Instant::now());
            }
            if reached.is_some_and(|t| t.elapsed() >= extra) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "run {k} stuck"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            landed += 1;
        }
        let out = child.wait_with_output().expect("reap");
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The run after the tear repairs it, unless it is killed before it opens its
        // output (inputs are checked and `mini` is built first); then a later one does.
        if torn && stderr.contains("removed a row cut off") {
            torn = false;
        }
        eprintln!(
            "crash_resume: run {k}: {} row(s) before, killed: {}, after {:?}",
            before,
            out.status.code().is_none(),
            started.elapsed()
        );
        if k == 1 && inst_csv.exists() {
            // What a kill in the middle of a write leaves behind.
            tear(&reference.join("instances.csv"), &inst_csv, &mut rng);
            tear(
                &reference.join("calls.csv"),
                &crashed.join("calls.csv"),
                &mut rng,
            );
            torn = true;
        }
    }
    let out = run_cmd(&cache, &crashed, instances)
        .output()
        .expect("final run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    if torn {
        assert!(
            stderr.contains("removed a row cut off"),
            "no repair reported: {stderr}"
        );
    }
    eprintln!("crash_resume: {landed} of {kills} kills landed mid-run");
    assert!(landed >= 1, "no kill landed while the run was going");

    let want = results(&read(&reference.join("instances.csv")));
    let got = results(&read(&inst_csv));
    assert_eq!(got.len(), want.len(), "rows lost or added");
    for (pair, w) in &want {
        assert_eq!(got.get(pair), Some(w), "{pair:?} differs after the kills");
    }
    assert_eq!(
        calls(&read(&crashed.join("calls.csv"))),
        calls(&read(&reference.join("calls.csv"))),
        "calls differ after the kills"
    );
    let summary = |dir: &Path| -> Vec<BTreeMap<String, String>> {
        read(&dir.join("summary.csv"))
            .into_iter()
            .map(|r| r.into_iter().filter(|(k, _)| is_result_column(k)).collect())
            .collect()
    };
    assert_eq!(summary(&crashed), summary(&reference));
}

/// A full disk: the run is limited to files of half the size its `calls.csv` reaches
/// (RLIMIT_FSIZE, SIGXFSZ ignored — writes past the limit fail as on a full disk,
/// part-way through a row). The run must stop with a clear message, every line left in
/// the CSVs whole and equal to the uninterrupted run's, and a resume without the limit
/// must finish to the same result.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_stops_the_run_cleanly_and_it_resumes() {
    use std::os::unix::process::CommandExt as _;
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    // All of mini, so that calls.csv outgrows every file of a checkout.
    let text_run = |out: &Path| run_variants(&cache, out, "text", "1000");
    let reference = work.path().join("reference");
    let out = text_run(&reference).output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let full_size = std::fs::metadata(reference.join("calls.csv"))
        .expect("size")
        .len();
    let limit = full_size / 2;
    assert!(
        limit < full_size,
        "calls.csv too small ({full_size} bytes) to fill up"
    );

    let full = work.path().join("full");
    let mut cmd = text_run(&full);
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the run should stop: {stderr}");
    eprintln!(
        "full disk ({limit} bytes a file): {}",
        stderr.lines().last().unwrap_or("")
    );
    assert!(
        stderr.contains("cannot write")
            && stderr.contains("calls.csv")
            && stderr.contains("resume"),
        "{stderr}"
    );
    let size = std::fs::metadata(full.join("calls.csv"))
        .expect("size")
        .len();
    assert!(size <= limit, "{size} > {limit}");
    // Whatever was written is whole and right.
    let want = results(&read(&reference.join("instances.csv")));
    for (pair, row) in results(&read(&full.join("instances.csv"))) {
        assert_eq!(Some(&row), want.get(&pair), "{pair:?}");
    }
    let want_calls = calls(&read(&reference.join("calls.csv")));
    let finished = results(&read(&full.join("instances.csv")));
    for (pair, list) in calls(&read(&full.join("calls.csv"))) {
        let want = want_calls.get(&pair).expect("a pair of the reference");
        if finished.contains_key(&pair) {
            assert_eq!(&list, want, "{pair:?}");
        } else {
            // Calls are written as they happen: the pair the failure cut has the
            // calls made before it.
            assert!(want.starts_with(&list), "{pair:?}: {list:?} vs {want:?}");
        }
    }

    let out = text_run(&full).output().expect("resume");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(results(&read(&full.join("instances.csv"))), want);
    assert_eq!(calls(&read(&full.join("calls.csv"))), want_calls);
}

/// A pair killed between its calls and its row keeps its calls in `calls.csv`; the
/// resume moves them to `calls-superseded.csv` (nothing lost) and the pair's calls in
/// `calls.csv` are then its second attempt's only (nothing counted twice).
#[test]
fn a_killed_pairs_calls_survive_and_the_resume_counts_them_once() {
    use common::endpoint::{self, Reply, turns_so_far};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let s = common::repo::setup();
    let hang = Arc::new(AtomicBool::new(true));
    let hanging = hang.clone();
    let ep = endpoint::start(move |_, body| match turns_so_far(body) {
        0 => Reply::calls(&[
            ("grep", r#"{"pattern": "total_price"}"#),
            ("read_file", r#"{"path": "shop/store.py"}"#),
        ]),
        // The first attempt waits here until it is killed.
        _ if hanging.load(Ordering::SeqCst) => Reply::Hang(Duration::from_secs(600)),
        _ => Reply::answer("shop/store.py:Store.total_price"),
    });
    let ds = s.write_dataset(&[common::repo::instance("acme__shop-1", &s.commit)]);
    let agent = endpoint::agent_file(s.work.path(), &ep.base_url, "");
    let out = s.work.path().join("out");
    let run = || {
        let mut cmd = common::navbench();
        cmd.args(["run", "--dataset"])
            .arg(&ds)
            .arg("--repo-url")
            .arg(&s.repo_path)
            .arg("--cache")
            .arg(s.work.path().join("cache"))
            .arg("--out")
            .arg(&out)
            .args(["--variants", "text", "--agent"])
            .arg(&agent);
        cmd
    };
    let mut child = run()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    // Killed once the model's second turn is asked for: both calls are made.
    let started = Instant::now();
    while ep.requests.lock().unwrap().len() < 2 {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the run ended before the kill"
        );
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the run is stuck"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let pair = ("acme__shop-1".to_string(), "text".to_string());
    let killed = calls(&read(&out.join("calls.csv")));
    let tools: Vec<&str> = killed[&pair].iter().map(|c| c[1].as_str()).collect();
    assert_eq!(tools, ["grep", "read_file"], "the killed pair's calls");
    assert_eq!(
        data_lines(&out.join("instances.csv")),
        0,
        "no row for the killed pair"
    );
    // Its transcript has the turn and both results too.
    let transcript = out.join("transcripts/acme__shop-1__text.jsonl");
    let said = std::fs::read_to_string(&transcript).expect("the killed pair's transcript");
    assert!(
        said.contains("read_file") && said.contains("import json"),
        "{said}"
    );

    hang.store(false, Ordering::SeqCst);
    let o = run().output().expect("resume");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("moved 2 call(s) of 1 pair(s)"), "{stderr}");
    let rows = read(&out.join("instances.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "ok", "{:?}", rows[0]);
    // The row counts the calls of the attempt that finished, and calls.csv holds
    // exactly those (`calls` fails on a step seen twice).
    let now = calls(&read(&out.join("calls.csv")));
    assert_eq!(now.len(), 1);
    assert_eq!(now[&pair].len().to_string(), rows[0]["n_calls"]);
    assert_eq!(now[&pair], killed[&pair]);
    // The killed attempt's calls are kept aside, with the columns of calls.csv.
    let aside = read(&out.join("calls-superseded.csv"));
    assert_eq!(calls(&aside), killed);
    let kept = std::fs::read_to_string(out.join("transcripts/attempts/acme__shop-1__text.1.jsonl"));
    assert_eq!(kept.expect("the killed attempt's transcript"), said);
    let header = |p: &Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .next()
            .map(String::from)
    };
    assert_eq!(
        header(&out.join("calls-superseded.csv")),
        header(&out.join("calls.csv"))
    );
}
