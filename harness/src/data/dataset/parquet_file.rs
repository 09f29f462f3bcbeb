//! SWE-bench / Loc-Bench parquet (the files Hugging Face serves): string columns
//! `instance_id`, `repo`, `base_commit`, `problem_statement`, `patch`, and, when
//! present, `edit_functions` (a list of strings, or that list as a JSON string).
//!
//! Read row by row with the `parquet` crate's record API over only those columns, so a
//! dataset's other columns (test lists, hints, images) are never decoded. Snappy, gzip,
//! zstd and LZ4 pages are read; a file compressed otherwise is refused by name.

use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};
use parquet::schema::types::Type;

use super::{Dataset, DatasetError, Instance, Problem};

/// The columns every record needs.
const REQUIRED: [&str; 5] = [
    "instance_id",
    "repo",
    "base_commit",
    "problem_statement",
    "patch",
];

/// Reads the instances of a parquet dataset; records missing a field become
/// [`Problem`]s numbered from 1, as JSONL lines are.
pub(super) fn read(path: &Path) -> Result<(Vec<Instance>, Vec<Problem>), DatasetError> {
    let err = |message: String| DatasetError::Parquet {
        path: path.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|source| DatasetError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader =
        SerializedFileReader::new(file).map_err(|e| err(format!("{e} (is it a parquet file?)")))?;
    let root = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .clone();
    let fields = root.get_fields();
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|c| !fields.iter().any(|f| f.name() == *c))
        .collect();
    if !missing.is_empty() {
        return Err(err(format!(
            "missing column(s) {missing:?}; SWE-bench-style parquet needs {REQUIRED:?}"
        )));
    }
    let wanted: Vec<_> = fields
        .iter()
        .filter(|f| REQUIRED.contains(&f.name()) || f.name() == "edit_functions")
        .cloned()
        .collect();
    let projection = Type::group_type_builder(root.name())
        .with_fields(wanted)
        .build()
        .map_err(|e| err(e.to_string()))?;
    let rows = reader
        .get_row_iter(Some(projection))
        .map_err(|e| err(e.to_string()))?;
    let mut ds = Dataset::default();
    for (i, row) in rows.enumerate() {
        let row = row.map_err(|e| err(format!("record {}: {e}", i + 1)))?;
        ds.push_checked(i + 1, instance(&row));
    }
    Ok((ds.instances, ds.problems))
}

/// One record as an instance; absent or null fields are empty (and then refused by
/// [`Dataset::push_checked`] with the field's name).
fn instance(row: &Row) -> Instance {
    let mut inst = Instance::default();
    for (name, field) in row.get_column_iter() {
        let slot = match name.as_str() {
            "instance_id" => &mut inst.instance_id,
            "repo" => &mut inst.repo,
            "base_commit" => &mut inst.base_commit,
            "problem_statement" => &mut inst.problem_statement,
            "patch" => &mut inst.patch,
            "edit_functions" => {
                inst.edit_functions = string_list(field);
                continue;
            }
            _ => continue,
        };
        *slot = text(field).unwrap_or_default();
    }
    inst
}

/// A text value: a string, or bytes read as UTF-8 (lossily); `None` for null or a
/// value of another type.
fn text(field: &Field) -> Option<String> {
    match field {
        Field::Str(s) => Some(s.clone()),
        Field::Bytes(b) => Some(String::from_utf8_lossy(b.data()).into_owned()),
        _ => None,
    }
}

/// `edit_functions`: a list of strings, or (in some exports) that list as JSON text.
fn string_list(field: &Field) -> Option<Vec<String>> {
    match field {
        Field::ListInternal(list) => Some(list.elements().iter().filter_map(text).collect()),
        other => text(other).and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parquet::basic::Compression;
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;

    use super::*;

    /// Writes optional string columns (`None` = null) as one row group.
    fn write(path: &Path, columns: &[(&str, Vec<Option<&str>>)], compression: Compression) {
        let message = format!(
            "message schema {{ {} }}",
            columns
                .iter()
                .map(|(name, _)| format!("optional binary {name} (UTF8);"))
                .collect::<String>()
        );
        let schema = Arc::new(parse_message_type(&message).unwrap());
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(compression)
                .build(),
        );
        let file = std::fs::File::create(path).unwrap();
        let mut writer = SerializedFileWriter::new(file, schema, props).unwrap();
        let mut group = writer.next_row_group().unwrap();
        for (_, values) in columns {
            let mut col = group.next_column().unwrap().unwrap();
            let present: Vec<ByteArray> = values.iter().flatten().map(|v| (*v).into()).collect();
            let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
            col.typed::<ByteArrayType>()
                .write_batch(&present, Some(&levels), None)
                .unwrap();
            col.close().unwrap();
        }
        group.close().unwrap();
        writer.close().unwrap();
    }

    #[test]
    fn records_load_and_incomplete_ones_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ds.parquet");
        write(
            &path,
            &[
                ("instance_id", vec![Some("o__r-1"), Some("o__r-2")]),
                ("repo", vec![Some("o/r"), Some("o/r")]),
                ("base_commit", vec![Some("c1"), None]),
                ("problem_statement", vec![Some("p1"), Some("p2")]),
                ("patch", vec![Some("d1"), Some("d2")]),
                // A column the loader does not read.
                ("hints_text", vec![Some("h"), None]),
                (
                    "edit_functions",
                    vec![Some(r#"["a.py:f", "a.py:C.m"]"#), None],
                ),
            ],
            Compression::SNAPPY,
        );
        let ds = Dataset::load(&path).unwrap();
        assert_eq!(ds.instances.len(), 1);
        let inst = &ds.instances[0];
        assert_eq!(inst.instance_id, "o__r-1");
        assert_eq!(
            (inst.base_commit.as_str(), inst.patch.as_str()),
            ("c1", "d1")
        );
        assert_eq!(
            inst.edit_functions.as_deref(),
            Some(&["a.py:f".to_string(), "a.py:C.m".to_string()][..])
        );
        assert_eq!(ds.problems.len(), 1);
        assert_eq!(ds.problems[0].record, 2);
    }

    #[test]
    fn zstd_pages_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ds.parquet");
        let one = |v: &'static str| vec![Some(v)];
        write(
            &path,
            &[
                ("instance_id", one("o__r-9")),
                ("repo", one("o/r")),
                ("base_commit", one("c9")),
                ("problem_statement", one("p")),
                ("patch", one("d")),
            ],
            Compression::ZSTD(Default::default()),
        );
        let ds = Dataset::load(&path).unwrap();
        assert_eq!(ds.instances[0].instance_id, "o__r-9");
    }

    #[test]
    fn missing_columns_and_foreign_files_are_explained() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ds.parquet");
        write(
            &path,
            &[("instance_id", vec![Some("x")])],
            Compression::UNCOMPRESSED,
        );
        let e = Dataset::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("missing column(s)") && e.contains("patch"),
            "{e}"
        );
        let bogus = dir.path().join("bogus.parquet");
        std::fs::write(&bogus, "instance_id,repo\n").unwrap();
        let e = Dataset::load(&bogus).unwrap_err().to_string();
        assert!(e.contains("is it a parquet file?"), "{e}");
    }
}
