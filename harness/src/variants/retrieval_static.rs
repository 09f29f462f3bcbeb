//! The `retrieval-static` variant: the same `navbench-retrieval` server and the same
//! policy as [`super::retrieval`], with `--encoder static`: chunks are embedded by
//! the token-vector table that `navbench-retrieval distill` makes from
//! all-MiniLM-L6-v2 (model2vec's method: each vocabulary token through the
//! transformer once, PCA, a frequency weight), not by the transformer itself. The
//! variant measures what an agent loses, and gains in index time, when its context
//! engine trades the transformer for a table lookup.
//!
//! The agent's strategy and the script that follows it are the `retrieval` variant's
//! (see [`super::retrieval`]): only the encoder differs, so any accuracy difference
//! between the two rows is the encoder's.

use std::path::{Path, PathBuf};

use super::retrieval::{self, Retrieval, provision};
use super::{PolicyFuture, Preparation, Prepared, SetupFuture, Variant};
use crate::policy::{Driver, Task};

/// The `retrieval-static` variant (see the module doc).
pub struct RetrievalStatic;

impl Variant for RetrievalStatic {
    fn name(&self) -> &'static str {
        "retrieval-static"
    }
    fn binary(&self) -> &'static str {
        "navbench-retrieval"
    }
    fn about(&self) -> &'static str {
        "codebase_retrieval with a static encoder distilled from MiniLM, fused with BM25"
    }
    fn setup_tools(&self) -> &'static [&'static str] {
        Retrieval.setup_tools()
    }
    /// The static model, as the server binary sees it: `distill --check` prints its
    /// directory when it loads. Otherwise, when `how` allows it, the MiniLM it is
    /// distilled from is provisioned as the `retrieval` variant does, then `distill`
    /// writes the static model under the cache (about a minute on 2 cores, once).
    fn prepare(&self, binary: &Path, cache: &Path, how: Preparation) -> anyhow::Result<Prepared> {
        if let Ok(dir) = provision(binary, "distill", &[], cache, true) {
            return Ok(static_args(dir));
        }
        if how == Preparation::Check {
            anyhow::bail!(
                "no static model under {}: make it with `{} distill --cache-dir {}` \
                 (`navbench run` does it on first use)",
                cache.display(),
                binary.display(),
                cache.display()
            );
        }
        let minilm = Retrieval.prepare(binary, cache, how)?;
        eprintln!(
            "navbench: distilling the static encoder from all-MiniLM-L6-v2 under {} (first use, about a minute)",
            cache.display()
        );
        Ok(static_args(provision(
            binary,
            "distill",
            &minilm.args,
            cache,
            false,
        )?))
    }
    /// As [`Retrieval::server_args`], with its own data directory, so a static index
    /// never meets a MiniLM one (the server refuses a mix anyway).
    fn server_args(&self, workdir: &Path, cache: &Path) -> Vec<String> {
        Retrieval.server_args(workdir, &cache.join("static"))
    }
    fn per_tree_state(&self, workdir: &Path, cache: &Path) -> Option<std::path::PathBuf> {
        Retrieval.per_tree_state(workdir, &cache.join("static"))
    }
    fn setup<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> SetupFuture<'a> {
        Box::pin(retrieval::setup(driver, task))
    }
    /// The retrieval policy's constants: the same policy over another encoder.
    fn knobs(&self) -> &'static [crate::policy::knobs::Knob] {
        &retrieval::KNOBS
    }
    fn localize<'a>(&'a self, driver: &'a mut Driver<'_>, task: &'a Task<'_>) -> PolicyFuture<'a> {
        Box::pin(retrieval::localize(driver, task))
    }
}

fn static_args(dir: PathBuf) -> Prepared {
    Prepared {
        args: vec![
            "--encoder".to_string(),
            "static".to_string(),
            "--model-dir".to_string(),
            super::arg(&dir),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_the_retrieval_server_with_the_static_encoder_in_its_own_data_dir() {
        let v = RetrievalStatic;
        assert_eq!(v.binary(), Retrieval.binary());
        let args = v.server_args(Path::new("/w/tree"), Path::new("/c"));
        let minilm = Retrieval.server_args(Path::new("/w/tree"), Path::new("/c"));
        assert_eq!(args[..2], minilm[..2], "same workspace");
        assert_ne!(args, minilm, "its own data dir and vector cache");
        let p = static_args(PathBuf::from("/m/static"));
        assert_eq!(p.args[..2], ["--encoder", "static"]);
    }

    /// A stand-in `navbench-retrieval` in `dir` that logs each invocation's arguments
    /// and answers as the real one would: `distill --check` with `static_dir` when
    /// given (else it fails), `fetch-model --check` with `/m/minilm`, `distill
    /// --model-dir …` with `/m/static`, and fails for anything else (an install).
    fn stand_in(dir: &Path, static_dir: Option<&str>) -> (PathBuf, PathBuf) {
        use std::os::unix::fs::PermissionsExt as _;
        let (exe, log) = (dir.join("navbench-retrieval"), dir.join("log"));
        let check_static = match static_dir {
            Some(d) => format!("echo {d}"),
            None => "exit 1".to_string(),
        };
        let script = format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$1 $2\" in\n\
             'distill --check') {check_static} ;;\n\
             'fetch-model --check') echo /m/minilm ;;\n\
             'distill --model-dir') echo /m/static ;;\n\
             *) exit 1 ;;\nesac\n",
            log.display()
        );
        std::fs::write(&exe, script).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        (exe, log)
    }

    fn invocations(log: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        text.lines()
            .map(|l| l.split(" --cache-dir").next().unwrap_or(l).to_string())
            .collect()
    }

    /// Each variant asks the binary for what it serves with and nothing more: the
    /// static encoder alone once it is there, the transformer alone for `retrieval`.
    #[test]
    fn each_variant_provisions_only_the_encoder_it_serves_with() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let (bin, log) = stand_in(dir.path(), Some("/m/static"));
        let p = RetrievalStatic
            .prepare(&bin, &cache, Preparation::Install)
            .unwrap();
        assert_eq!(p, static_args(PathBuf::from("/m/static")));
        assert_eq!(invocations(&log), ["distill --check"]);

        std::fs::remove_file(&log).unwrap();
        let p = Retrieval
            .prepare(&bin, &cache, Preparation::Install)
            .unwrap();
        assert_eq!(p.args, ["--model-dir", "/m/minilm"]);
        assert_eq!(invocations(&log), ["fetch-model --check"]);
    }

    /// Without a static model, it is distilled from the installed MiniLM (which is
    /// checked, not installed again).
    #[test]
    fn a_missing_static_encoder_is_distilled_from_the_transformer() {
        let dir = tempfile::tempdir().unwrap();
        let (bin, log) = stand_in(dir.path(), None);
        let p = RetrievalStatic
            .prepare(&bin, &dir.path().join("cache"), Preparation::Install)
            .unwrap();
        assert_eq!(p, static_args(PathBuf::from("/m/static")));
        assert_eq!(
            invocations(&log),
            [
                "distill --check",
                "fetch-model --check",
                "distill --model-dir /m/minilm"
            ]
        );
    }

    /// What the pipeline removes after an instance is exactly the tree's `--data-dir`,
    /// never a cache shared by every tree.
    #[test]
    fn only_the_trees_own_data_dir_is_dropped_after_an_instance() {
        let (tree, cache) = (Path::new("/w/tree"), Path::new("/c"));
        for v in [&Retrieval as &dyn Variant, &RetrievalStatic] {
            let args = v.server_args(tree, cache);
            let after = |flag: &str| {
                let i = args.iter().position(|a| a == flag).expect(flag);
                PathBuf::from(&args[i + 1])
            };
            let dropped = v.per_tree_state(tree, cache).expect("per-tree state");
            assert_eq!(dropped, after("--data-dir"), "{}", v.name());
            for shared in ["--embedding-cache", "--chunk-cache", "--index-bases"] {
                assert!(
                    !after(shared).starts_with(&dropped),
                    "{}: {shared}",
                    v.name()
                );
            }
        }
    }
}
