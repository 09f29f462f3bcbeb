//! Where navbench's servers keep their caches: one rule for every server.
//!
//! `$NAVBENCH_CACHE` if set and non-empty, else `$XDG_CACHE_HOME/navbench` if that is
//! set, non-empty and absolute (the XDG spec says to ignore relative values), else
//! `$HOME/.cache/navbench`, else `navbench-cache` under the system temp directory.
//! Each server keeps its data in a subdirectory (`codegraph/`, `retrieval/`,
//! `models/`). What a server caches is keyed by [`executable_hash`] too, so a rebuilt
//! server never reads what another build wrote.

use std::ffi::OsString;
use std::path::PathBuf;

/// The navbench cache directory of this process's environment (see the module doc).
pub fn default_cache_dir() -> PathBuf {
    cache_dir_from(|key| std::env::var_os(key))
}

/// A hash of the running executable, computed once per process; `None` when the
/// executable cannot be read (callers then key by their version alone).
pub fn executable_hash() -> Option<u64> {
    static HASH: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *HASH.get_or_init(|| match std::env::current_exe().and_then(std::fs::read) {
        Ok(bytes) => Some(xxhash_rust::xxh3::xxh3_64(&bytes)),
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the executable; caches keyed by version only");
            None
        }
    })
}

/// The cache directory for an environment given as a lookup function.
pub fn cache_dir_from(env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let var = |key: &str| env(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("NAVBENCH_CACHE") {
        return dir;
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return xdg.join("navbench");
    }
    if let Some(home) = var("HOME") {
        return home.join(".cache").join("navbench");
    }
    std::env::temp_dir().join("navbench-cache")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(vars: &[(&str, &str)]) -> PathBuf {
        cache_dir_from(|key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn navbench_cache_wins_when_non_empty() {
        let all = [
            ("NAVBENCH_CACHE", "/c"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(dir(&all), PathBuf::from("/c"));
        let empty = [
            ("NAVBENCH_CACHE", ""),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(dir(&empty), PathBuf::from("/x/navbench"));
    }

    #[test]
    fn xdg_cache_home_only_when_non_empty_and_absolute() {
        assert_eq!(
            dir(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]),
            PathBuf::from("/x/navbench")
        );
        assert_eq!(
            dir(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")]),
            PathBuf::from("/h/.cache/navbench")
        );
        assert_eq!(
            dir(&[("XDG_CACHE_HOME", "relative/x"), ("HOME", "/h")]),
            PathBuf::from("/h/.cache/navbench")
        );
    }

    #[test]
    fn without_home_falls_back_to_the_temp_dir() {
        assert_eq!(
            dir(&[("HOME", "")]),
            std::env::temp_dir().join("navbench-cache")
        );
        assert_eq!(dir(&[]), std::env::temp_dir().join("navbench-cache"));
    }
}
