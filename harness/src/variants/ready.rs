//! [`ReadyVariant`]: a variant resolved by name, its server binary found and its
//! preparation (e.g. the retrieval model) done, as a run needs it before any instance.

use std::path::{Path, PathBuf};

use super::{Preparation, Prepared, Variant, by_name};

/// A variant ready to run: its binary found, its preparation done.
pub struct ReadyVariant {
    pub variant: &'static dyn Variant,
    pub binary: PathBuf,
    /// What [`Variant::prepare`] learned for the server's command line.
    pub prepared: Prepared,
}

/// Validates variant names and finds their binaries before anything runs.
pub fn resolve(names: &[String], server_dir: Option<&Path>) -> anyhow::Result<Vec<ReadyVariant>> {
    let mut out = Vec::new();
    for n in names {
        let v = by_name(n).map_err(anyhow::Error::msg)?;
        let bin = v.locate(server_dir)?;
        out.push(ReadyVariant {
            variant: v,
            binary: bin,
            prepared: Prepared::default(),
        });
    }
    Ok(out)
}

/// Prepares each variant (e.g. installs the retrieval model on first use). A failure
/// is reported and the run goes on: that variant's servers then fail to start with
/// their own error, recorded per instance in the CSVs.
pub fn prepare_all(variants: &mut [ReadyVariant], cache: &Path) {
    for rv in variants {
        match rv.variant.prepare(&rv.binary, cache, Preparation::Install) {
            Ok(p) => rv.prepared = p,
            Err(e) => eprintln!(
                "navbench: preparing variant '{}' failed: {e:#}; its instances will record the error",
                rv.variant.name()
            ),
        }
    }
}
