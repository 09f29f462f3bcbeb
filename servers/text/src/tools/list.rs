//! `list_files`: the repository's files, sorted, honouring `.gitignore`.

use super::*;

impl TextTools {
    /// Lists repo-relative file paths, sorted, honouring `.gitignore`.
    pub fn list_files(
        &self,
        args: &ListFilesArgs,
    ) -> Result<ToolOutput<ListFilesOutput>, ToolError> {
        let max = bounded(
            "max_results",
            args.max_results,
            self.limits.list_default_max,
            1,
            LIST_MAX_RESULTS_LIMIT,
        )?;
        let glob = nonblank(args.glob.as_deref());
        let all = self.files_matching(glob)?;
        let total = all.len();
        let mut files = Vec::new();
        let mut text = String::new();
        for file in all.into_iter().take(max) {
            if !text.is_empty() && text.len() + file.rel.len() + 1 > self.limits.max_output_bytes {
                break;
            }
            text.push_str(&file.rel);
            text.push('\n');
            files.push(file.rel);
        }
        let truncated = total - files.len();
        if total == 0 {
            text = match glob {
                Some(g) => format!(
                    "No files match glob '{g}'. Try a broader pattern such as '**/*.py', or omit glob to list everything."
                ),
                None => "The repository has no (non-ignored) files.".to_string(),
            };
        } else if truncated > 0 {
            let advice = if files.len() < max {
                "output size limit reached; narrow with glob (e.g. 'src/**/*.py')".to_string()
            } else {
                format!(
                    "narrow with glob (e.g. 'src/**/*.py') or raise max_results (at most {LIST_MAX_RESULTS_LIMIT})"
                )
            };
            text.push_str(&format!(
                "... [truncated: {truncated} more files ({total} in total); {advice}]"
            ));
        }
        Ok(ToolOutput {
            is_error: false,
            meta: None,
            text: text.trim_end_matches('\n').to_string(),
            data: ListFilesOutput {
                files,
                total_files: total,
                truncated,
            },
        })
    }
}
