//! MCP resources: `repositories://list`, `repository://{id}`, `code://{id}/{path}` and
//! `chunk://[{id}/]{chunk id}`, read as JSON or file text.

use serde::Serialize;

use navbench_server_support::sandbox::Sandbox;

use super::{RetrievalTools, ToolError, chunk_uri, lock, read};
use crate::chunk::Chunk;
use crate::registry::{RepoRecord, RepoStatus};

/// Longest a resource's file content is served, in bytes.
const MAX_RESOURCE_BYTES: u64 = 2_000_000;

/// A resource read: MIME type and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceText {
    /// The URI read.
    pub uri: String,
    /// MIME type.
    pub mime_type: String,
    /// Content.
    pub text: String,
}

/// A concrete resource for `resources/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// URI.
    pub uri: String,
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
}

impl RetrievalTools {
    // Resources

    /// Concrete resources: the repository list and one entry per repository.
    pub fn list_resources(&self) -> Vec<ResourceEntry> {
        let mut out = vec![ResourceEntry {
            uri: "repositories://list".to_string(),
            name: "All indexed repositories".to_string(),
            description: "JSON list of the registered repositories and their status".to_string(),
        }];
        for r in lock(&self.shared.registry).list() {
            out.push(ResourceEntry {
                uri: format!("repository://{}", r.id),
                name: r.name.clone(),
                description: format!(
                    "Repository {} ({}, {} chunks)",
                    r.name,
                    r.status.as_str(),
                    r.chunks
                ),
            });
        }
        out
    }

    /// Reads `repositories://list`, `repository://{id}`, `code://{id}/{path}` or
    /// `chunk://[{id}/]{chunk id}`.
    pub fn read_resource(&self, uri: &str) -> Result<ResourceText, ToolError> {
        let json = |value: &dyn erased::Json| -> Result<ResourceText, ToolError> {
            Ok(ResourceText {
                uri: uri.to_string(),
                mime_type: "application/json".to_string(),
                text: value.to_json()?,
            })
        };
        if uri == "repositories://list" {
            return json(&self.list_repositories()?.data);
        }
        if let Some(id) = uri.strip_prefix("repository://") {
            return json(&self.repository_info(id.trim_end_matches('/'))?);
        }
        if let Some(rest) = uri.strip_prefix("code://") {
            let (id, path) = rest.split_once('/').ok_or_else(|| {
                ToolError::Invalid(format!(
                    "'{uri}' lacks a file path; use code://{{repo_id}}/{{path}}, e.g. code://{}/src/app.py",
                    rest
                ))
            })?;
            return self.read_code(uri, id, path);
        }
        if let Some(rest) = uri.strip_prefix("chunk://") {
            return self.read_chunk(uri, rest);
        }
        Err(ToolError::NotFound(format!(
            "unknown resource '{uri}'; use repositories://list, repository://{{repo_id}}, code://{{repo_id}}/{{path}} or chunk://{{repo_id}}/{{chunk_id}}"
        )))
    }

    fn read_code(&self, uri: &str, id: &str, path: &str) -> Result<ResourceText, ToolError> {
        let record = self.resolve(id)?;
        let index = self.ready_index(&record)?;
        let path = path.trim_start_matches("./");
        let indexed = read(&index).files().binary_search(&path).is_ok();
        if !indexed {
            return Err(ToolError::NotFound(format!(
                "'{path}' is not an indexed file of {} ({}); get_repository_info lists the indexed files",
                record.name, record.id
            )));
        }
        let sandbox =
            Sandbox::new(&record.local_path).map_err(|e| ToolError::NotFound(e.to_string()))?;
        let abs = sandbox
            .resolve(path)
            .map_err(|e| ToolError::NotFound(e.to_string()))?;
        let size = std::fs::metadata(&abs).map(|m| m.len()).unwrap_or(0);
        if size > MAX_RESOURCE_BYTES {
            return Err(ToolError::Invalid(format!(
                "'{path}' is {size} bytes, more than the {MAX_RESOURCE_BYTES} served as a resource; use search_code or chunk:// resources"
            )));
        }
        let text = std::fs::read_to_string(&abs)
            .map_err(|e| ToolError::NotFound(format!("cannot read '{path}': {e}")))?;
        let mime = if path.ends_with(".py") || path.ends_with(".pyi") {
            "text/x-python"
        } else if path.ends_with(".md") {
            "text/markdown"
        } else {
            crate::chunk::code_language(path).map_or("text/plain", |l| source_mime(l.name()))
        };
        Ok(ResourceText {
            uri: uri.to_string(),
            mime_type: mime.to_string(),
            text,
        })
    }

    fn read_chunk(&self, uri: &str, rest: &str) -> Result<ResourceText, ToolError> {
        #[derive(Serialize)]
        struct ChunkResource<'a> {
            repo_id: &'a str,
            chunk_uri: String,
            #[serde(flatten)]
            chunk: &'a Chunk,
        }
        let records: Vec<RepoRecord> = lock(&self.shared.registry)
            .list()
            .into_iter()
            .filter(|r| r.status == RepoStatus::Ready)
            .cloned()
            .collect();
        // chunk://{repo_id or prefix}/{chunk id}
        if let Some((prefix, chunk_id)) = rest.split_once('/')
            && let Ok(record) = lock(&self.shared.registry).resolve(prefix).cloned()
            && let Ok(index) = self.ready_index(&record)
        {
            let index = read(&index);
            if let Some(chunk) = index.chunk_by_id(chunk_id) {
                let text = serde_json::to_string_pretty(&ChunkResource {
                    repo_id: &record.id,
                    chunk_uri: chunk_uri(&record.id, chunk),
                    chunk,
                })
                .map_err(|e| ToolError::Invalid(e.to_string()))?;
                return Ok(ResourceText {
                    uri: uri.to_string(),
                    mime_type: "application/json".into(),
                    text,
                });
            }
        }
        // chunk://{chunk id}: look in every ready repository.
        let mut found: Vec<(String, String)> = Vec::new();
        for record in &records {
            if let Ok(index) = self.ready_index(record) {
                let index = read(&index);
                if let Some(chunk) = index.chunk_by_id(rest) {
                    let text = serde_json::to_string_pretty(&ChunkResource {
                        repo_id: &record.id,
                        chunk_uri: chunk_uri(&record.id, chunk),
                        chunk,
                    })
                    .map_err(|e| ToolError::Invalid(e.to_string()))?;
                    found.push((record.id.clone(), text));
                }
            }
        }
        match found.len() {
            1 => {
                let (_, text) = found.remove(0);
                Ok(ResourceText {
                    uri: uri.to_string(),
                    mime_type: "application/json".into(),
                    text,
                })
            }
            0 => Err(ToolError::NotFound(format!(
                "no chunk '{rest}'; chunk ids look like 'path/file.py:12-40' and come from search_code results (chunk_uri)"
            ))),
            _ => Err(ToolError::Invalid(format!(
                "chunk '{rest}' exists in several repositories; use one of: {}",
                found
                    .iter()
                    .map(|(id, _)| format!("chunk://{id}/{rest}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Serialize-to-JSON behind a trait object (resource bodies of several types).
mod erased {
    use super::ToolError;

    pub trait Json {
        fn to_json(&self) -> Result<String, ToolError>;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> Result<String, ToolError> {
            serde_json::to_string_pretty(self)
                .map_err(|e| ToolError::Invalid(format!("cannot encode the resource: {e}")))
        }
    }
}

/// The MIME type of a source file in the `navbench_lang` language `name`.
fn source_mime(name: &str) -> &'static str {
    match name {
        "typescript" | "tsx" => "text/typescript",
        "javascript" => "text/javascript",
        "java" => "text/x-java",
        "go" => "text/x-go",
        "rust" => "text/x-rust",
        _ => "text/plain",
    }
}
