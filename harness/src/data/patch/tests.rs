use super::*;

const TWO_FILES: &str = "\
diff --git a/pkg/a.py b/pkg/a.py
index 1111111..2222222 100644
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -1,4 +1,5 @@ def f():
 one
-two
+TWO
+two and a half
 three
 four
diff --git a/old.txt b/new.txt
similarity index 90%
rename from old.txt
rename to new.txt
--- a/old.txt
+++ b/new.txt
@@ -1 +1 @@
-x
+y
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+hello
\\ No newline at end of file
diff --git a/img.png b/img.png
index 3333333..4444444 100644
Binary files a/img.png and b/img.png differ
diff --git a/moved.py b/renamed.py
similarity index 100%
rename from moved.py
rename to renamed.py
";

#[test]
fn patch_parses_multi_file_git_diffs() {
    let p = parse_patch(TWO_FILES).expect("valid patch");
    assert_eq!(p.files.len(), 6);
    let a = &p.files[0];
    assert_eq!(
        (a.path(), a.added, a.deleted, a.renamed),
        ("pkg/a.py", false, false, false)
    );
    let h = &a.hunks[0];
    assert_eq!(
        (h.old_start, h.old_count, h.new_start, h.new_count),
        (1, 4, 1, 5)
    );
    assert_eq!(h.section, "def f():");
    let kinds: Vec<_> = h
        .lines
        .iter()
        .map(|l| (l.kind, l.old_line, l.new_line))
        .collect();
    assert_eq!(
        kinds,
        [
            (LineKind::Context, Some(1), Some(1)),
            (LineKind::Delete, Some(2), None),
            (LineKind::Add, None, Some(2)),
            (LineKind::Add, None, Some(3)),
            (LineKind::Context, Some(3), Some(4)),
            (LineKind::Context, Some(4), Some(5)),
        ]
    );
    let r = &p.files[1];
    assert!(r.renamed);
    assert_eq!(
        (r.old_path.as_deref(), r.new_path.as_deref()),
        (Some("old.txt"), Some("new.txt"))
    );
    assert_eq!((r.hunks[0].old_count, r.hunks[0].new_count), (1, 1));
    let d = &p.files[2];
    assert!(d.deleted && d.new_path.is_none());
    assert_eq!(d.path(), "gone.py");
    let n = &p.files[3];
    assert!(n.added && n.old_path.is_none());
    assert_eq!(n.path(), "new.py");
    assert!(n.hunks[0].lines[0].missing_newline);
    assert!(p.files[4].binary);
    let m = &p.files[5];
    assert!(m.renamed && m.hunks.is_empty());
    assert_eq!(
        (m.old_path.as_deref(), m.new_path.as_deref()),
        (Some("moved.py"), Some("renamed.py"))
    );
}

#[test]
fn patch_applies_and_handles_missing_newlines() {
    let p = parse_patch(TWO_FILES).expect("valid patch");
    let out = apply("one\ntwo\nthree\nfour\n", &p.files[0]).expect("applies");
    assert_eq!(out.text, "one\nTWO\ntwo and a half\nthree\nfour\n");
    assert_eq!(out.offsets, [0]);
    assert_eq!(apply("a\nb\n", &p.files[2]).expect("applies").text, "");
    assert_eq!(apply("", &p.files[3]).expect("applies").text, "hello");
    let p = parse_patch(
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
    )
    .expect("valid patch");
    assert_eq!(apply("a\nb", &p.files[0]).expect("applies").text, "a\nb\n");
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn patch_finds_hunks_at_an_offset_like_gnu_patch() {
    // Stated at 10 and 30, but the file has 3 extra lines at the top.
    let patch = "\
--- a/f
+++ b/f
@@ -10,3 +10,3 @@
 line 7
-line 8
+LINE 8
 line 9
@@ -30,4 +30,5 @@
 line 27
 line 28
+new
 line 29
 line 30
";
    let p = parse_patch(patch).expect("valid patch");
    let out = apply(&numbered(40), &p.files[0]).expect("applies");
    // Hunk 1 found 3 lines earlier; hunk 2 searched from 30 - 3 and found there too.
    assert_eq!(out.offsets, [-3, -3]);
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines[7], "LINE 8");
    assert_eq!(lines[28], "new");
    assert_eq!(lines.len(), 41);
}

#[test]
fn patch_anchored_hunks_and_failures() {
    // Less leading than trailing context: only the start of the file may match.
    let p = parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+top\n line 1\n line 2\n")
        .expect("valid patch");
    assert_eq!(
        apply(&numbered(3), &p.files[0]).expect("applies").text,
        "top\nline 1\nline 2\nline 3\n"
    );
    let shifted = format!("zero\n{}", numbered(3));
    let err = apply(&shifted, &p.files[0]).expect_err("anchored at the start");
    assert!(err.to_string().contains("only match at the start"), "{err}");
    // No match at all.
    let p = parse_patch("--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-nope\n+yes\n").expect("valid patch");
    let err = apply(&numbered(3), &p.files[0]).expect_err("no match");
    assert_eq!(
        err.to_string(),
        "hunk #1 (patch line 3, `@@ -2,1`) does not apply: its context and deleted lines match nowhere in the file"
    );
}

#[test]
fn patch_keeps_crlf_content_and_strips_crlf_transport() {
    // A CRLF file in an LF patch: content lines carry their `\r`.
    let p =
        parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n").expect("valid patch");
    assert_eq!(p.files[0].hunks[0].lines[0].content, "a\r");
    assert_eq!(
        apply("a\r\nb\r\n", &p.files[0]).expect("applies").text,
        "a\r\nc\r\n"
    );
    // The whole patch converted to CRLF: stripped.
    let p = parse_patch("--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-b\r\n+c\r\n").expect("valid patch");
    assert_eq!(p.files[0].path(), "f");
    assert_eq!(apply("b\n", &p.files[0]).expect("applies").text, "c\n");
}

#[test]
fn patch_reports_malformed_input_with_line_numbers() {
    let err = parse_patch("--- a/f\n+++ b/f\n@@ -1,x +1 @@\n").expect_err("bad header");
    assert!(
        err.to_string()
            .starts_with("patch line 3: malformed hunk header"),
        "{err}"
    );
    let err = parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n?b\n").expect_err("bad line");
    assert!(
        err.to_string()
            .starts_with("patch line 5: expected a hunk line"),
        "{err}"
    );
    let err = parse_patch("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n").expect_err("truncated");
    assert!(
        err.to_string().contains("2 old and 2 new line(s) missing"),
        "{err}"
    );
    let err = parse_patch("@@ -1 +1 @@\n-a\n+b\n").expect_err("no file");
    assert_eq!(err, PatchError::HunkWithoutFile { line: 1 });
    let err = parse_patch("diff --git a/f b/f\n--- a/f\nfoo\n").expect_err("no +++");
    assert!(
        matches!(err, PatchError::MissingNewHeader { line: 3, .. }),
        "{err}"
    );
    let err = parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n-b\n").expect_err("too many deletes");
    assert!(
        err.to_string().contains("the old-side count is used up"),
        "{err}"
    );
}

#[test]
fn patch_reads_quoted_paths_and_blank_context_lines() {
    let text = "diff --git \"a/sp ace\\t.py\" \"b/sp ace\\t.py\"\n--- \"a/sp ace\\t.py\"\n+++ \"b/sp ace\\t.py\"\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n";
    let p = parse_patch(text).expect("valid patch");
    assert_eq!(p.files[0].path(), "sp ace\t.py");
    assert_eq!(
        apply("a\n\nb\n", &p.files[0]).expect("applies").text,
        "a\n\nc\n"
    );
    let p = parse_patch(
        "--- a/x.py\t2024-01-01 00:00:00\n+++ b/x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n",
    )
    .expect("valid patch");
    assert_eq!(p.files[0].path(), "x.py");
}

/// A small deterministic generator (no dependency needed for test data).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn random_lines(rng: &mut Lcg, n: usize) -> Vec<String> {
    // A small alphabet, so that context often matches at several places.
    const WORDS: [&str; 6] = ["a", "b", "c", "x = 1", "", "    return x"];
    (0..n)
        .map(|_| WORDS[rng.below(WORDS.len())].to_string())
        .collect()
}

fn run(cmd: &mut std::process::Command) -> Option<std::process::Output> {
    cmd.output().ok()
}

/// Differential check against the installed GNU `patch` (ignored unless asked for;
/// `.ci/run` installs it and runs this):
/// random files, `diff -u` patches, then the base drifts (lines inserted or
/// removed) so hunks land at offsets, or fail. Success, text and reported offsets
/// must agree with `patch -F0`.
#[test]
#[ignore = "needs GNU patch and diff: apt-get install patch diffutils; .ci/run runs it"]
fn patch_agrees_with_gnu_patch_on_random_edits() {
    use std::process::Command;
    assert!(
        run(Command::new("patch").arg("--version")).is_some()
            && run(Command::new("diff").arg("--version")).is_some(),
        "GNU patch and diff must be installed: apt-get install patch diffutils"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = |n: &str| dir.path().join(n);
    let offset_re = regex::Regex::new(r"Hunk #(\d+) succeeded at \d+ \(offset ([+-]?\d+) lines?\)")
        .expect("regex");
    let mut rng = Lcg(42);
    let (mut applied, mut failed, mut shifted) = (0, 0, 0);
    for case in 0..300 {
        let size = 5 + rng.below(80);
        let base = random_lines(&mut rng, size);
        let mut new = base.clone();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(new.len() + 1);
            match rng.below(3) {
                0 if at < new.len() => {
                    new.remove(at);
                }
                1 if at < new.len() => new[at] = format!("changed {case}"),
                _ => new.insert(at, format!("inserted {case}")),
            }
        }
        let mut drifted = base.clone();
        for _ in 0..rng.below(4) {
            let at = rng.below(drifted.len() + 1);
            if rng.below(2) == 0 || drifted.is_empty() {
                drifted.insert(at, format!("drift {case}"));
            } else if at < drifted.len() {
                drifted.remove(at);
            }
        }
        let join = |l: &[String]| l.iter().map(|s| format!("{s}\n")).collect::<String>();
        std::fs::write(path("old"), join(&base)).expect("write");
        std::fs::write(path("new"), join(&new)).expect("write");
        std::fs::write(path("target"), join(&drifted)).expect("write");
        let diff = run(Command::new("diff")
            .args(["-u", "--label", "a/f", "--label", "b/f", "old", "new"])
            .current_dir(dir.path()))
        .expect("diff runs");
        let diff_text = String::from_utf8_lossy(&diff.stdout).into_owned();
        if diff_text.is_empty() {
            continue;
        }
        std::fs::write(path("p.diff"), &diff_text).expect("write");
        let gnu = run(Command::new("patch")
            .args([
                "-f",
                "-F0",
                "-s",
                "--verbose",
                "-r",
                "rej",
                "-o",
                "out",
                "target",
                "-i",
                "p.diff",
            ])
            .current_dir(dir.path()))
        .expect("patch runs");
        let stdout = String::from_utf8_lossy(&gnu.stdout).into_owned();
        let file = &parse_patch(&diff_text).expect("diff output parses").files[0];
        let ours = apply(&join(&drifted), file);
        match ours {
            Ok(out) => {
                assert!(
                    gnu.status.success(),
                    "case {case}: GNU failed, we applied\n{diff_text}\n{stdout}"
                );
                let gnu_text = std::fs::read_to_string(path("out")).expect("patch output");
                assert_eq!(out.text, gnu_text, "case {case}\n{diff_text}");
                let mut want = vec![0isize; file.hunks.len()];
                for c in offset_re.captures_iter(&stdout) {
                    let n: usize = c[1].parse().expect("hunk number");
                    want[n - 1] = c[2].parse().expect("offset");
                }
                assert_eq!(out.offsets, want, "case {case}\n{diff_text}\n{stdout}");
                applied += 1;
                shifted += usize::from(want.iter().any(|&o| o != 0));
            }
            Err(e) => {
                assert!(
                    !gnu.status.success(),
                    "case {case}: we failed ({e}), GNU applied\n{diff_text}\n{stdout}"
                );
                failed += 1;
            }
        }
    }
    println!("agreed with GNU patch: {applied} applied ({shifted} at an offset), {failed} failed");
    assert!(
        shifted > 20 && failed > 0,
        "the cases exercise offsets and failures"
    );
}
