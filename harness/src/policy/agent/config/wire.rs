//! The keys of an agent file that shape requests on the wire (`provider`,
//! `key_header`, `length_key`, `temperature`, `[headers]`, `[query]`,
//! `[extra_body]`), read and checked against what the provider accepts
//! ([`super::provider`]).

use std::collections::BTreeMap;
use std::time::Duration;

use toml::Spanned;

use super::AgentDecl;
use crate::policy::agent::provider::{self, KeyHeader, LengthKey, Provider};

/// The keys of an agent file that shape requests on the wire, checked.
pub(super) struct WireKeys {
    pub(super) provider: Provider,
    pub(super) key_header: KeyHeader,
    pub(super) length_key: LengthKey,
    pub(super) temperature: Option<f64>,
    pub(super) headers: BTreeMap<String, String>,
    pub(super) query: BTreeMap<String, String>,
    pub(super) extra_body: serde_json::Map<String, serde_json::Value>,
}

pub(super) type Refuse<'a> = dyn Fn(usize, String) -> anyhow::Error + 'a;

/// Reads `provider`, `key_header`, `length_key`, `temperature`, `[headers]`, `[query]`
/// and `[extra_body]`, refusing what the provider cannot take (see [`provider`]).
pub(super) fn wire_keys(decl: &AgentDecl, r: &Refuse<'_>) -> anyhow::Result<WireKeys> {
    let provider = match &decl.provider {
        Some(p) => Provider::parse(p.get_ref()).ok_or_else(|| {
            r(
                p.span().start,
                format!(
                    "unknown provider {:?}: write one of {} (generic for any other OpenAI-compatible server)",
                    p.get_ref(),
                    provider::ALL.map(|p| p.as_str()).join(", ")
                ),
            )
        })?,
        None => Provider::Generic,
    };
    let length_key = match &decl.length_key {
        Some(k) => LengthKey::parse(k.get_ref()).ok_or_else(|| {
            r(
                k.span().start,
                "length_key is max_completion_tokens or max_tokens (default: the provider's)"
                    .into(),
            )
        })?,
        None => provider.length_key(),
    };
    let key_header = match &decl.key_header {
        Some(h) if h.get_ref().eq_ignore_ascii_case("authorization") => KeyHeader::Bearer,
        Some(h) if reqwest::header::HeaderName::from_bytes(h.get_ref().as_bytes()).is_ok() => {
            KeyHeader::Named(h.get_ref().clone())
        }
        Some(h) => {
            return Err(r(
                h.span().start,
                format!(
                    "key_header {:?} is not a header name; write e.g. key_header = \"api-key\"",
                    h.get_ref()
                ),
            ));
        }
        None => provider.key_header(),
    };
    let temperature = match &decl.temperature {
        Some(t) if !(0.0..=2.0).contains(t.get_ref()) => {
            return Err(r(
                t.span().start,
                "temperature must be between 0 and 2 (0 for the most repeatable runs)".into(),
            ));
        }
        Some(t) => {
            provider::check_temperature(provider, decl.model.get_ref(), *t.get_ref())
                .map_err(|why| r(t.span().start, why))?;
            Some(*t.get_ref())
        }
        None => None,
    };
    let (headers, query, extra_body) = tables(decl, &key_header, r)?;
    Ok(WireKeys {
        provider,
        key_header,
        length_key,
        temperature,
        headers,
        query,
        extra_body,
    })
}

/// `h` with its name lowercased, to compare header names.
fn lower(h: &KeyHeader) -> KeyHeader {
    match h {
        KeyHeader::Bearer => KeyHeader::Bearer,
        KeyHeader::Named(n) => KeyHeader::Named(n.to_ascii_lowercase()),
    }
}

/// A positive number of seconds under `key`, or `default`.
pub(super) fn secs(
    v: &Option<Spanned<f64>>,
    key: &str,
    default: f64,
    r: &Refuse<'_>,
) -> anyhow::Result<Duration> {
    match v {
        Some(s) if !(s.get_ref().is_finite() && *s.get_ref() > 0.0) => Err(r(
            s.span().start,
            format!("{key} must be a positive number of seconds (default {default})"),
        )),
        Some(s) => Ok(Duration::from_secs_f64(*s.get_ref())),
        None => Ok(Duration::from_secs_f64(default)),
    }
}

/// `[headers]` (never the key), `[query]` and `[extra_body]` (never a key navbench
/// sets itself), checked.
#[allow(clippy::type_complexity)]
fn tables(
    decl: &AgentDecl,
    key_header: &KeyHeader,
    r: &Refuse<'_>,
) -> anyhow::Result<(
    BTreeMap<String, String>,
    BTreeMap<String, String>,
    serde_json::Map<String, serde_json::Value>,
)> {
    let headers = decl.headers.as_ref().map_or(Ok(BTreeMap::new()), |h| {
        for (k, v) in h.get_ref() {
            let name_ok = reqwest::header::HeaderName::from_bytes(k.as_bytes()).is_ok();
            let value_ok = reqwest::header::HeaderValue::from_str(v).is_ok();
            if !name_ok || !value_ok {
                return Err(r(h.span().start, format!("[headers] {k:?} = {v:?} is not a valid HTTP header; write name = \"value\" pairs")));
            }
            if k.eq_ignore_ascii_case("authorization") || KeyHeader::Named(k.to_ascii_lowercase()) == lower(key_header) {
                return Err(r(h.span().start, format!("[headers] {k} would carry the key: keys never go in the file; name the variable that holds it with api_key_env")));
            }
        }
        Ok(h.get_ref().clone())
    })?;
    let query = decl
        .query
        .as_ref()
        .map(|q| q.get_ref().clone())
        .unwrap_or_default();
    let extra_body = match &decl.extra_body {
        Some(t) => {
            if let Some(k) = t
                .get_ref()
                .keys()
                .find(|k| provider::OWN_KEYS.contains(&k.as_str()))
            {
                return Err(r(
                    t.span().start,
                    format!(
                        "[extra_body] may not set {k}: navbench sets it from the agent file's own keys (model, max_completion_tokens, temperature, seed; the provider picks the length key)"
                    ),
                ));
            }
            match serde_json::to_value(t.get_ref()) {
                Ok(serde_json::Value::Object(o)) => o,
                _ => {
                    return Err(r(
                        t.span().start,
                        "[extra_body] must be a table of JSON-like values".into(),
                    ));
                }
            }
        }
        None => serde_json::Map::new(),
    };
    Ok((headers, query, extra_body))
}
