//! [`LlmCache`]: `--llm-cache DIR`, every Chat Completions request answered once.
//!
//! Each request is keyed by the 128-bit xxh3 hash of its canonical JSON (object keys
//! sorted, no whitespace), so the same conversation with the same model, tools and
//! sampling is the same key whatever the endpoint's address. An entry is one file,
//! `<dir>/<first two hex digits>/<key>.json`, holding the request (so a collision or a
//! hand-edited entry is detected, not served), the response body and the time the
//! endpoint took; it is written to a temporary file and renamed into place, so a run
//! killed mid-write leaves no torn entry. A rerun, a resume after a kill, and CI replay
//! a recorded run without the endpoint, and since the answers are the same, so are the
//! tool calls, the tool results and the scores.
//!
//! Trials (`run --repeats K`) each have their own entries: the first trial's key is the
//! request's hash alone (what it was before trials existed, so recorded caches still
//! replay), a later trial's is the hash of the request and its trial number, and its
//! entry records the trial. At temperature > 0 the K trials are then K samples, each
//! replayed as recorded, instead of one sample answered K times.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::Trial;

/// What a cache entry holds besides its request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedResponse {
    pub body: Value,
    /// What the endpoint took when the entry was recorded.
    pub latency_ms: f64,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    request: Value,
    /// The trial the request was made for; absent for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trial: Option<u32>,
    #[serde(flatten)]
    response: CachedResponse,
}

impl Entry {
    /// True when the entry's request and trial are what `key` stands for.
    fn holds(&self, key: &str, cache: &LlmCache) -> bool {
        let trial = match self.trial {
            None => Some(Trial::FIRST),
            Some(n) => Trial::new(n),
        };
        trial.is_some_and(|t| cache.key(&self.request, t) == key)
    }
}

/// The request cache in one directory (see the module doc).
#[derive(Debug, Clone)]
pub struct LlmCache {
    dir: PathBuf,
}

impl LlmCache {
    /// A cache in `dir`, created when missing; the error says what to pass instead.
    pub fn open(dir: &Path) -> anyhow::Result<LlmCache> {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the --llm-cache directory {}: {e}; pass a writable directory",
                dir.display()
            )
        })?;
        Ok(LlmCache {
            dir: dir.to_path_buf(),
        })
    }

    /// True when no entry is recorded yet: nothing to replay.
    pub fn is_empty(&self) -> bool {
        let Ok(shards) = std::fs::read_dir(&self.dir) else {
            return true;
        };
        !shards.flatten().any(|d| {
            std::fs::read_dir(d.path()).is_ok_and(|mut entries| {
                entries.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json")))
            })
        })
    }

    /// The key of `request` made for `trial` (see the module doc).
    pub fn key(&self, request: &Value, trial: Trial) -> String {
        let mut canonical = String::new();
        write_canonical(request, &mut canonical);
        if !trial.is_first() {
            // After the JSON's closing brace, where no canonical request has text.
            canonical.push_str(&format!("\ntrial={trial}"));
        }
        format!("{:032x}", xxhash_rust::xxh3::xxh3_128(canonical.as_bytes()))
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The recorded answer to the request under `key`, if any. An unreadable entry is
    /// a miss (and is overwritten by the next answer), with a warning.
    pub fn get(&self, key: &str) -> Option<CachedResponse> {
        let path = self.path(key);
        let text = std::fs::read_to_string(&path).ok()?;
        match serde_json::from_str::<Entry>(&text) {
            Ok(e) if e.holds(key, self) => Some(e.response),
            Ok(_) => {
                tracing::warn!(path = %path.display(), "--llm-cache entry does not hold its request: ignored");
                None
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), "unreadable --llm-cache entry ({e}): ignored");
                None
            }
        }
    }

    /// Records the answer to `request`, made for `trial`, under `key`.
    pub fn put(
        &self,
        key: &str,
        request: &Value,
        trial: Trial,
        response: &CachedResponse,
    ) -> anyhow::Result<()> {
        let path = self.path(key);
        let dir = path
            .parent()
            .ok_or_else(|| anyhow::anyhow!("cache path {} has no parent", path.display()))?;
        std::fs::create_dir_all(dir)?;
        let entry = Entry {
            request: request.clone(),
            trial: (!trial.is_first()).then_some(trial.get()),
            response: response.clone(),
        };
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(&serde_json::to_vec(&entry)?)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path)
            .map_err(|e| anyhow::anyhow!("cannot rename into {}: {e}", path.display()))?;
        Ok(())
    }
}

/// `v` as JSON with object keys sorted at every depth and no whitespace.
fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_ignore_key_order_and_see_every_value() {
        let dir = tempfile::tempdir().unwrap();
        let c = LlmCache::open(dir.path()).unwrap();
        let a = json!({"model": "m", "messages": [{"role": "user", "content": "x"}]});
        let b: Value =
            serde_json::from_str(r#"{"messages":[{"content":"x","role":"user"}],"model":"m"}"#)
                .unwrap();
        assert_eq!(c.key(&a, Trial::FIRST), c.key(&b, Trial::FIRST));
        let other = json!({"model": "m", "messages": [{"role": "user", "content": "y"}]});
        assert_ne!(c.key(&a, Trial::FIRST), c.key(&other, Trial::FIRST));
    }

    #[test]
    fn an_entry_is_answered_and_a_foreign_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let c = LlmCache::open(dir.path()).unwrap();
        let req = json!({"model": "m"});
        let key = c.key(&req, Trial::FIRST);
        assert!(c.get(&key).is_none());
        assert!(c.is_empty());
        let resp = CachedResponse {
            body: json!({"choices": []}),
            latency_ms: 12.5,
        };
        c.put(&key, &req, Trial::FIRST, &resp).unwrap();
        assert!(!c.is_empty());
        assert_eq!(c.get(&key), Some(resp.clone()));
        // An entry stored under another request's key is not served.
        let other = c.key(&json!({"model": "n"}), Trial::FIRST);
        std::fs::create_dir_all(c.path(&other).parent().unwrap()).unwrap();
        std::fs::copy(c.path(&key), c.path(&other)).unwrap();
        assert!(c.get(&other).is_none());
        // A later trial of the same request has its own entry, answered only to it.
        let second = Trial::new(2).unwrap();
        let key2 = c.key(&req, second);
        assert_ne!(key2, key);
        assert!(c.get(&key2).is_none());
        let resp2 = CachedResponse {
            body: json!({"choices": [1]}),
            latency_ms: 3.0,
        };
        c.put(&key2, &req, second, &resp2).unwrap();
        assert_eq!(c.get(&key2), Some(resp2));
        assert_eq!(c.get(&key), Some(resp.clone()));
        // Its entry copied under the first trial's key is not served there.
        std::fs::copy(c.path(&key2), c.path(&key)).unwrap();
        assert!(c.get(&key).is_none());
        // Nor is a torn one.
        std::fs::write(c.path(&key), "{\"request\":").unwrap();
        assert!(c.get(&key).is_none());
    }
}
