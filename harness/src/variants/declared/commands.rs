//! `navbench variant list` and `navbench variant install NAME`.

use std::fmt::Write as _;
use std::path::Path;

use super::{Package, declaration_files, install, load};
use crate::variants::{self, Variant};

/// One line per variant: name, kind, what it serves, and for declared ones the file,
/// the package and whether it is installed in `cache`. A file that does not load is
/// listed with its refusal.
pub fn list(cache: &Path) -> String {
    let mut out = String::new();
    for v in variants::all() {
        let _ = writeln!(out, "{:<16} built-in  {}", v.name(), v.about());
    }
    for file in declaration_files() {
        match load(&file) {
            Ok(d) => {
                let pkg = match &d.package {
                    None => "no install".to_string(),
                    Some(Package::Npm { name, version, .. }) => format!("npm {name}@{version}"),
                    Some(Package::Pip { name, version, .. }) => format!("pip {name}=={version}"),
                };
                let state = match (&d.package, install::installed(d, cache)) {
                    (None, _) => String::new(),
                    (Some(_), Some(i)) => format!(
                        ", installed ({:.0} MB, {:.0} s)",
                        i.bytes as f64 / 1e6,
                        i.seconds
                    ),
                    (Some(_), None) => ", not installed".to_string(),
                };
                let _ = writeln!(
                    out,
                    "{:<16} declared  {} [{}; {pkg}{state}]",
                    d.name(),
                    d.about(),
                    file.display()
                );
            }
            Err(e) => {
                let _ = writeln!(out, "{:<16} refused   {e:#}", file.display());
            }
        }
    }
    out
}

/// Installs the declared variant `name` (a name from `variants/` or a file) into
/// `cache`; returns what was installed, its size and time.
pub fn install(name: &str, cache: &Path) -> anyhow::Result<String> {
    let v = variants::by_name(name).map_err(anyhow::Error::msg)?;
    let Some(d) = v.declared() else {
        anyhow::bail!(
            "'{name}' is a built-in variant: it is built with cargo, not installed; give a declared variant (navbench variant list)"
        );
    };
    eprintln!(
        "navbench: installing variant '{}' into {}",
        d.name,
        d.install_dir(cache).display()
    );
    let i = install::install(d, cache)?;
    Ok(format!(
        "installed {}@{} for variant '{}' in {:.1} s, {:.1} MB under {}",
        i.package,
        i.version,
        d.name,
        i.seconds,
        i.bytes as f64 / 1e6,
        d.install_dir(cache).display()
    ))
}
